"""Converts a question/files/answer dataset into an mcpgym task file (JSON Lines).

Many public Jupyter-agent datasets share one layout: a record per question, naming the data
files it needs and giving the expected answer. This script turns such a dataset into the task
file `mcpgym jupyter --tasks FILE` reads:

    python convert_dataset.py questions.jsonl --data-dir data/ --out tasks.jsonl
    python convert_dataset.py qa.csv --question-field query --files-field files_used \\
        --answer-field expected --split test --out held_out.jsonl

Input: JSON Lines, a JSON array, or CSV. Each record has a question, the files (a list, or a
string of names separated by commas or semicolons; paths relative to --data-dir), and the
answer. A numeric answer is graded as a number, with the tolerance its written precision
implies ("3.14" accepts 3.135 to 3.145); anything else must match one of the spellings given
(case-insensitive; several spellings separated by "|" with --alternatives).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The dataset's records, from JSON Lines, a JSON array or CSV."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".csv":
        yield from csv.DictReader(text.splitlines())
    elif text.lstrip().startswith("["):
        yield from json.loads(text)
    else:
        for line in text.splitlines():
            if line.strip():
                yield json.loads(line)


def file_list(value: Any) -> list[str]:
    """The record's file names, from a list or a separated string."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(name) for name in value]
    return [name.strip() for name in re.split(r"[,;]", str(value)) if name.strip()]


def grader(answer: Any, alternatives: bool) -> dict[str, Any]:
    """An mcpgym grader for the expected answer."""
    text = str(answer).strip()
    if NUMBER.match(text):
        decimals = len(text.split(".")[1].split("e")[0].split("E")[0]) if "." in text else 0
        tolerance = 0.5 * 10.0**-decimals if decimals else 0.0
        return {"numeric": {"value": float(text), "abs_tol": tolerance}}
    spellings = [s.strip() for s in text.split("|")] if alternatives else [text]
    return {"one_of": [s for s in spellings if s]}


def convert(
    records: Iterator[dict[str, Any]],
    data_dir: Path,
    out_dir: Path,
    fields: tuple[str, str, str],
    split: str,
    alternatives: bool,
) -> list[dict[str, Any]]:
    """The task lines for `records`; file sources are made relative to `out_dir`."""
    question_field, files_field, answer_field = fields
    tasks = []
    for number, record in enumerate(records):
        question = str(record.get(question_field) or "").strip()
        answer = record.get(answer_field)
        if not question or answer is None or str(answer).strip() == "":
            print(f"record {number}: no question or no answer; skipped", file=sys.stderr)
            continue
        names = file_list(record.get(files_field))
        files = []
        for name in names:
            source = (data_dir / name).resolve()
            if not source.is_file():
                raise SystemExit(f"record {number}: {source} does not exist")
            relative = Path(name).name if Path(name).is_absolute() else name
            files.append({"path": relative, "source": str(relative_to(source, out_dir))})
        listed = ", ".join(f["path"] for f in files)
        where = f" The files ({listed}) are in your home directory, /home/user." if files else ""
        prompt = (
            f"{question}{where} Call final_answer with the answer only"
            " (a number without units, or the exact value asked for)."
        )
        task_id = str(record.get("id") or f"{split}-{number:05d}")
        tasks.append(
            {
                "id": re.sub(r"\s+", "-", task_id),
                "split": split,
                "kind": "data_analysis",
                "prompt": prompt,
                "files": files,
                "grader": grader(answer, alternatives),
            }
        )
    return tasks


def relative_to(path: Path, folder: Path) -> Path:
    """`path` relative to `folder` when it is inside it, else absolute."""
    try:
        return path.relative_to(folder.resolve())
    except ValueError:
        return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="JSON Lines, JSON array or CSV")
    parser.add_argument("--data-dir", type=Path, help="where the files are (default: beside it)")
    parser.add_argument("--out", type=Path, required=True, help="the task file to write")
    parser.add_argument("--question-field", default="question")
    parser.add_argument("--files-field", default="files")
    parser.add_argument("--answer-field", default="answer")
    parser.add_argument("--split", choices=["train", "test"], default="train")
    parser.add_argument("--alternatives", action="store_true", help='answers "a|b" accept a or b')
    args = parser.parse_args(argv)
    data_dir = args.data_dir or args.dataset.parent
    fields = (args.question_field, args.files_field, args.answer_field)
    tasks = convert(
        read_records(args.dataset),
        data_dir,
        args.out.parent,
        fields,
        args.split,
        args.alternatives,
    )
    with args.out.open("w", encoding="utf-8") as out:
        for task in tasks:
            out.write(json.dumps(task, ensure_ascii=False) + "\n")
    print(f"wrote {len(tasks)} tasks to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
