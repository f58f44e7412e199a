"""Prints where a test run's time went, from cargo-nextest's JUnit report.

Usage: python3 .ci/timings.py target/nextest/ci/junit.xml [COUNT]

Each test binary's wall time (from its first test's start to its last test's end: binaries run
side by side, so these overlap) and the COUNT (10) slowest tests. Standard library only: it runs
on the system's Python before any venv exists.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime
from xml.etree import ElementTree


@dataclass
class Case:
    binary: str
    name: str
    start: float
    seconds: float
    outcome: str


def outcome(case: ElementTree.Element) -> str:
    for child in case:
        if child.tag in ("failure", "error"):
            return "FAILED"
        if child.tag == "skipped":
            return "skipped"
    return ""


def cases(path: str) -> list[Case]:
    found = []
    for suite in ElementTree.parse(path).getroot().iter("testsuite"):
        for case in suite.iter("testcase"):
            stamp = case.get("timestamp")
            start = datetime.fromisoformat(stamp).timestamp() if stamp else 0.0
            found.append(
                Case(
                    binary=suite.get("name", "?"),
                    name=case.get("name", "?"),
                    start=start,
                    seconds=float(case.get("time", "0")),
                    outcome=outcome(case),
                )
            )
    return found


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 10
    run = cases(sys.argv[1])
    if not run:
        print(f"no tests in {sys.argv[1]}")
        return 0
    print("=== wall time by test binary (they overlap)")
    binaries: dict[str, list[Case]] = {}
    for case in run:
        binaries.setdefault(case.binary, []).append(case)
    spans = {
        binary: max(c.start + c.seconds for c in group) - min(c.start for c in group)
        for binary, group in binaries.items()
    }
    for binary, span in sorted(spans.items(), key=lambda item: -item[1]):
        print(f"  {binary:<40} {span:7.1f} s  ({len(binaries[binary])} tests)")
    print(f"=== the {count} slowest tests")
    for case in sorted(run, key=lambda c: -c.seconds)[:count]:
        mark = f"  {case.outcome}" if case.outcome else ""
        print(f"  {case.seconds:7.1f} s  {case.binary} {case.name}{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
