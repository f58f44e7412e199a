"""The example converter turns a question/files/answer dataset into a task file that the real
`mcpgym jupyter --tasks` loads, lists and grades."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from helpers import REPO

from mcpgym import Server

EXAMPLE = REPO / "examples" / "jupyter-tasks"


def converter() -> ModuleType:
    spec = importlib.util.spec_from_file_location("convert_dataset", EXAMPLE / "convert_dataset.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_converted_dataset_is_served_and_graded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "scores.csv").write_text("name,score\nada,3.5\nben,4.25\nzoe,1.0\n")
    records = [
        {"id": "mean score", "question": "What is the mean score in scores.csv?",
         "files_used": ["scores.csv"], "expected": "2.92"},
        {"question": "Who has the highest score in scores.csv?",
         "files_used": "scores.csv", "expected": "ben|Ben"},
        {"question": "No answer: skipped.", "files_used": [], "expected": ""},
    ]  # fmt: skip
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "tasks.jsonl"
    converter().main(
        [str(dataset), "--out", str(out), "--data-dir", str(data), "--files-field", "files_used",
         "--answer-field", "expected", "--alternatives"]
    )  # fmt: skip
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["mean-score", "train-00001"]
    assert lines[0]["grader"] == {"numeric": {"value": 2.92, "abs_tol": 0.005}}
    assert lines[1]["grader"] == {"one_of": ["ben", "Ben"]}
    assert lines[0]["files"] == [{"path": "scores.csv", "source": "data/scores.csv"}]

    with Server("jupyter", "--tasks", str(out)) as server, server.client() as client:
        assert client.tasks() == ["mean-score", "train-00001"]
        assert client.tasks(split="test") == []
        with client.start(task="mean-score") as episode:
            cell = "import pandas as pd\nprint(round(pd.read_csv('scores.csv').score.mean(), 2))"
            printed = episode.call("add_and_execute_code_cell", code=cell).text.strip()
            step = episode.call("final_answer", answer=printed.splitlines()[-1])
            assert step.done and step.reward == 1.0, step.text
        with client.start(task="train-00001") as episode:
            step = episode.call("final_answer", answer="BEN")
            assert step.reward == 1.0, step.text
