# Rewrites each module as its docstrings say, keeping its constants (SEP, TAX_PERCENT).
import re
from pathlib import Path

parse = Path("ledger/parse.py").read_text()
sep = re.search(r'^SEP = (".*")$', parse, re.M).group(1)
money = Path("ledger/money.py").read_text()
tax = re.search(r"^TAX_PERCENT = (\d+)$", money, re.M).group(1)

Path("ledger/parse.py").write_text(f"""from .money import to_cents

SEP = {sep}


def parse_line(line):
    date, account, amount, category = line.split(SEP)
    return {{
        "date": date.strip(),
        "account": account.strip(),
        "amount_cents": to_cents(amount.strip()),
        "category": category.strip().lower(),
    }}


def parse_file(path):
    with open(path) as f:
        return [
            parse_line(line.rstrip("\\n"))
            for line in f
            if line.strip() and not line.startswith("#")
        ]
""")
Path("ledger/money.py").write_text(f"""from decimal import ROUND_HALF_UP, Decimal

TAX_PERCENT = {tax}


def _round(value):
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def to_cents(text):
    return _round(Decimal(text) * 100)


def apply_discount(cents, percent):
    return _round(Decimal(cents) * (100 - Decimal(percent)) / 100)


def add_tax(cents):
    return _round(Decimal(cents) * (100 + TAX_PERCENT) / 100)
""")
Path("ledger/summary.py").write_text("""def totals_by_account(entries):
    totals = {}
    for entry in entries:
        totals[entry["account"]] = totals.get(entry["account"], 0) + entry["amount_cents"]
    return dict(sorted(totals.items()))


def balance(entries, account, start, end):
    return sum(
        e["amount_cents"]
        for e in entries
        if e["account"] == account and start <= e["date"] <= end
    )
""")
print("done")
