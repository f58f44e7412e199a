"""Rich results: a pandas DataFrame as the cell's value gives `result.data`; PIL images are
displayed as PNGs when shown, saved or left as the cell's value; saved figures still show."""

import base64
import textwrap

from e2b_code_interpreter import Sandbox
from e2b_code_interpreter.charts import LineChart
from e2b_code_interpreter.models import Execution

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

MAKE_IMAGE = """
from PIL import Image

image = Image.new("RGBA", (12, 8), (200, 30, 30, 255))
"""


def run(sandbox: Sandbox, code: str) -> Execution:
    execution = sandbox.run_code(textwrap.dedent(code))
    assert execution.error is None, execution.error
    return execution


def png_size(png: str) -> tuple[int, int]:
    """The width and height of a base64 PNG, from its IHDR chunk."""
    raw = base64.b64decode(png)
    assert raw.startswith(PNG_SIGNATURE)
    return int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")


def test_dataframe_value_gives_data_by_column(sandbox: Sandbox) -> None:
    execution = run(
        sandbox,
        """
        import pandas as pd

        pd.DataFrame(
            {
                "city": ["Oslo", "Lima", "Pune"],
                "visitors": [120, 85, 240],
                "rating": [4.5, None, 3.75],
                "opened": pd.to_datetime(
                    ["2021-05-01", "2022-11-30 08:15:00", None], format="ISO8601"
                ),
            }
        )
        """,
    )
    [result] = execution.results
    assert result.is_main_result
    assert result.data == {
        "city": ["Oslo", "Lima", "Pune"],
        "visitors": [120, 85, 240],
        "rating": [4.5, None, 3.75],
        "opened": ["2021-05-01T00:00:00", "2022-11-30T08:15:00", None],
    }
    # The usual text and HTML renderings are still there.
    assert "Oslo" in result.text
    assert result.html and "<table" in result.html
    assert result.chart is None
    assert "data" in result.formats()


def test_dataframe_with_unusual_column_names(sandbox: Sandbox) -> None:
    execution = run(
        sandbox,
        """
        import pandas as pd

        pd.DataFrame([[1, 2], [3, 4]], columns=[10, "b"])
        """,
    )
    [result] = execution.results
    assert result.data == {"10": [1, 3], "b": [2, 4]}


def test_other_values_have_no_data(sandbox: Sandbox) -> None:
    # Only DataFrames have data, not Series.
    execution = run(sandbox, "import pandas as pd\npd.Series([1, 2], name='n')")
    [result] = execution.results
    assert "Name: n" in result.text
    assert result.data is None


def test_image_show_displays_a_png(sandbox: Sandbox) -> None:
    execution = run(sandbox, MAKE_IMAGE + "image.show()\nprint('shown')")
    [result] = execution.results
    assert not result.is_main_result
    assert png_size(result.png) == (12, 8)
    assert "".join(execution.logs.stdout) == "shown\n"
    assert execution.logs.stderr == []


def test_image_as_the_cells_value_is_a_png(sandbox: Sandbox) -> None:
    execution = run(sandbox, MAKE_IMAGE + "image")
    [result] = execution.results
    assert result.is_main_result
    assert png_size(result.png) == (12, 8)


def test_image_save_to_a_path_displays_it(sandbox: Sandbox) -> None:
    execution = run(
        sandbox,
        MAKE_IMAGE
        + """
import io
import os

image.save("red.png")
image.save(io.BytesIO(), format="PNG")  # not a path: nothing to show
print(os.path.getsize("red.png") > 0)
""",
    )
    [result] = execution.results
    assert png_size(result.png) == (12, 8)
    assert "".join(execution.logs.stdout) == "True\n"


def test_savefig_then_show_displays_both(sandbox: Sandbox) -> None:
    execution = run(
        sandbox,
        """
        import os
        import matplotlib.pyplot as plt

        plt.figure(figsize=(4, 3), dpi=50)
        plt.plot([1, 2, 3], [3, 1, 2])
        plt.title("Saved and shown")
        plt.savefig("plot.png")
        plt.show()
        print(os.path.exists("plot.png"))
        """,
    )
    saved, shown = execution.results
    # As on E2B, saving to a raster file also displays the saved image ...
    assert png_size(saved.png) == (200, 150)
    assert saved.chart is None
    # ... and the figure itself is shown as usual, with its chart.
    assert shown.png
    assert isinstance(shown.chart, LineChart)
    assert shown.chart.title == "Saved and shown"
    assert "".join(execution.logs.stdout) == "True\n"


def test_startup_leaves_the_namespace_clean(sandbox: Sandbox) -> None:
    execution = run(
        sandbox,
        """
        import sys

        print(sorted(name for name in dir() if "mcpgym" in name))
        print([name for name in ("pandas", "matplotlib", "PIL") if name in sys.modules])
        """,
    )
    assert "".join(execution.logs.stdout) == "[]\n[]\n"


def test_an_oversized_frame_keeps_its_html_without_data(sandbox: Sandbox) -> None:
    execution = run(sandbox, "import pandas as pd\npd.DataFrame({'n': range(300_000)})")
    [result] = execution.results
    assert result.html and "<table" in result.html
    assert result.data is None
