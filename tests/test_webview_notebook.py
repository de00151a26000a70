"""The example notebook runs an experiment and shows it live: executed here with nbclient."""

from __future__ import annotations

import ast
from pathlib import Path

import nbclient
import nbformat
import pytest

pytestmark = pytest.mark.slow

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "34_web_view.ipynb"


def test_the_web_view_notebook_runs_and_shows_the_view_in_a_cell(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    frames = [o for o in outputs if o.output_type == "execute_result"]
    html = frames[0]["data"]["text/html"]
    assert html.startswith('<iframe src="http://127.0.0.1:') and 'title="pccbullet web view"' in html
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "151 samples recorded" in text
    report = ast.literal_eval(frames[-1]["data"]["text/plain"])
    assert report["published"] >= 2 and report["received"] == report["published"]
