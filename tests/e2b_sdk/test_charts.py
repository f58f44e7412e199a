"""Charts: a matplotlib figure's result carries the structured chart E2B's SDK parses
(`result.chart`) beside its PNG, for each kind of chart the SDK models."""

import textwrap

from e2b_code_interpreter import Sandbox
from e2b_code_interpreter.charts import (
    BarChart,
    BoxAndWhiskerChart,
    Chart,
    ChartType,
    LineChart,
    PieChart,
    ScaleType,
    ScatterChart,
    SuperChart,
)
from e2b_code_interpreter.models import Result


def figure_result(sandbox: Sandbox, code: str) -> Result:
    """Runs a cell that shows one figure; returns its one result, checked to have a PNG."""
    execution = sandbox.run_code(textwrap.dedent(code))
    assert execution.error is None, execution.error
    assert len(execution.results) == 1, execution.results
    result = execution.results[0]
    assert result.png
    assert "Figure" in (result.text or "")
    return result


def test_line_chart_has_title_labels_units_and_points(sandbox: Sandbox) -> None:
    result = figure_result(
        sandbox,
        """
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.plot([0, 1, 2, 3], [0, 1, 4, 9], label="squares")
        ax.plot([0, 1, 2, 3], [3, 2, 1, 0], label="countdown")
        ax.set_title("Growth")
        ax.set_xlabel("Time (s)")
        ax.set_ylabel("Length [cm]")
        ax.legend()
        plt.show()
        """,
    )
    chart = result.chart
    assert isinstance(chart, LineChart)
    assert chart.type == ChartType.LINE
    assert chart.title == "Growth"
    assert (chart.x_label, chart.y_label) == ("Time (s)", "Length [cm]")
    assert (chart.x_unit, chart.y_unit) == ("s", "cm")
    assert (chart.x_scale, chart.y_scale) == (ScaleType.LINEAR, ScaleType.LINEAR)
    assert chart.x_ticks and all(isinstance(tick, float) for tick in chart.x_ticks)
    assert len(chart.x_tick_labels) == len(chart.x_ticks)
    assert all(isinstance(label, str) for label in chart.y_tick_labels)
    assert [line.label for line in chart.elements] == ["squares", "countdown"]
    assert chart.elements[0].points == [(0, 0), (1, 1), (2, 4), (3, 9)]
    assert chart.elements[1].points == [(0, 3), (1, 2), (2, 1), (3, 0)]
    # The chart does not leak into `extra`, where unknown MIME types go.
    assert not result.extra


def test_scatter_chart_has_one_element_per_series(sandbox: Sandbox) -> None:
    chart = figure_result(
        sandbox,
        """
        import matplotlib.pyplot as plt

        plt.scatter([1, 2, 3], [10, 20, 15], label="north")
        plt.scatter([1.5, 2.5], [12, 18], label="south")
        plt.title("Rainfall")
        plt.xlabel("Month")
        plt.ylabel("Rain (mm)")
        plt.show()
        """,
    ).chart
    assert isinstance(chart, ScatterChart)
    assert chart.type == ChartType.SCATTER
    assert chart.title == "Rainfall"
    assert (chart.x_label, chart.y_label, chart.y_unit) == ("Month", "Rain (mm)", "mm")
    assert [series.label for series in chart.elements] == ["north", "south"]
    assert chart.elements[0].points == [(1, 10), (2, 20), (3, 15)]
    assert chart.elements[1].points == [(1.5, 12), (2.5, 18)]


def test_bar_chart_has_labels_values_and_groups(sandbox: Sandbox) -> None:
    chart = figure_result(
        sandbox,
        """
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.bar(["apples", "pears", "plums"], [30, 50, 20], label="2024")
        ax.set_title("Harvest")
        ax.set_xlabel("Fruit")
        ax.set_ylabel("Weight [kg]")
        plt.show()
        """,
    ).chart
    assert isinstance(chart, BarChart)
    assert chart.type == ChartType.BAR
    assert chart.title == "Harvest"
    assert (chart.x_label, chart.y_label, chart.y_unit) == ("Fruit", "Weight [kg]", "kg")
    assert [(bar.label, bar.value, bar.group) for bar in chart.elements] == [
        ("apples", 30, "2024"),
        ("pears", 50, "2024"),
        ("plums", 20, "2024"),
    ]


def test_pie_chart_has_angles_and_radii(sandbox: Sandbox) -> None:
    chart = figure_result(
        sandbox,
        """
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.pie([60, 30, 10], labels=["rent", "food", "fun"])
        ax.set_title("Budget")
        plt.show()
        """,
    ).chart
    assert isinstance(chart, PieChart)
    assert chart.type == ChartType.PIE
    assert chart.title == "Budget"
    assert [(part.label, part.angle, part.radius) for part in chart.elements] == [
        ("rent", 216, 1),
        ("food", 108, 1),
        ("fun", 36, 1),
    ]


def test_box_and_whisker_chart_has_quartiles_and_outliers(sandbox: Sandbox) -> None:
    chart = figure_result(
        sandbox,
        """
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.boxplot(
            [[1, 2, 3, 4, 5], [2, 4, 6, 8, 10, 30]],
            tick_labels=["calm", "windy"],
            patch_artist=True,
        )
        ax.set_title("Waves")
        ax.set_xlabel("Day")
        ax.set_ylabel("Height (m)")
        plt.show()
        """,
    ).chart
    assert isinstance(chart, BoxAndWhiskerChart)
    assert chart.type == ChartType.BOX_AND_WHISKER
    assert chart.title == "Waves"
    assert (chart.x_label, chart.y_label, chart.y_unit) == ("Day", "Height (m)", "m")
    calm, windy = chart.elements
    assert (calm.label, calm.min, calm.first_quartile, calm.median) == ("calm", 1, 2, 3)
    assert (calm.third_quartile, calm.max, calm.outliers) == (4, 5, [])
    assert (windy.label, windy.min, windy.first_quartile, windy.median) == ("windy", 2, 4.5, 7)
    assert (windy.third_quartile, windy.max, windy.outliers) == (9.5, 10, [30])


def test_log_scale_is_reported_per_axis(sandbox: Sandbox) -> None:
    chart = figure_result(
        sandbox,
        """
        import matplotlib.pyplot as plt

        plt.plot([1, 2, 3, 4], [1, 10, 100, 1000], label="tenfold")
        plt.yscale("log")
        plt.title("Orders of magnitude")
        plt.xlabel("Step")
        plt.ylabel("Count (log)")
        plt.show()
        """,
    ).chart
    assert isinstance(chart, LineChart)
    assert chart.title == "Orders of magnitude"
    assert (chart.x_scale, chart.y_scale) == (ScaleType.LINEAR, ScaleType.LOG)
    assert chart.y_unit == "log"
    assert chart.elements[0].label == "tenfold"
    assert chart.elements[0].points == [(1, 1), (2, 10), (3, 100), (4, 1000)]


def test_superchart_holds_one_chart_per_subplot(sandbox: Sandbox) -> None:
    chart = figure_result(
        sandbox,
        """
        import matplotlib.pyplot as plt

        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        fig.suptitle("Dashboard")
        left.plot([1, 2, 3], [2, 4, 8])
        left.set_title("Trend")
        left.set_xlabel("Week")
        right.bar(["on", "off"], [7, 3])
        right.set_title("Status")
        plt.show()
        """,
    ).chart
    assert isinstance(chart, SuperChart)
    assert chart.type == ChartType.SUPERCHART
    assert chart.title == "Dashboard"
    trend, status = chart.elements
    assert isinstance(trend, LineChart)
    assert (trend.title, trend.x_label) == ("Trend", "Week")
    assert trend.elements[0].points == [(1, 2), (2, 4), (3, 8)]
    assert isinstance(status, BarChart)
    assert status.title == "Status"
    assert [(bar.label, bar.value) for bar in status.elements] == [("on", 7), ("off", 3)]


def test_unknown_chart_keeps_its_title(sandbox: Sandbox) -> None:
    chart = figure_result(
        sandbox,
        """
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.imshow([[0, 1], [1, 0]])
        ax.set_title("Checkerboard")
        plt.show()
        """,
    ).chart
    assert isinstance(chart, Chart)
    assert chart.type == ChartType.UNKNOWN
    assert chart.title == "Checkerboard"
    assert chart.elements == []


def test_figure_as_the_cells_value_has_a_chart(sandbox: Sandbox) -> None:
    execution = sandbox.run_code(
        textwrap.dedent(
            """
            import matplotlib.pyplot as plt

            figure, axes = plt.subplots()
            axes.plot([0, 1], [1, 0])
            axes.set_title("Value")
            plt.close(figure)  # shown only as the value, not again at the end of the cell
            figure
            """
        )
    )
    assert execution.error is None, execution.error
    [result] = execution.results
    assert result.is_main_result
    assert result.png
    assert isinstance(result.chart, LineChart)
    assert result.chart.title == "Value"
    assert result.chart.elements[0].points == [(0, 1), (1, 0)]


def test_other_results_have_no_chart(sandbox: Sandbox) -> None:
    execution = sandbox.run_code("import matplotlib.pyplot as plt\n[1, 2, 3]")
    assert execution.error is None, execution.error
    [result] = execution.results
    assert result.text == "[1, 2, 3]"
    assert result.chart is None
    assert result.data is None


def test_a_failing_extraction_leaves_the_figure_without_chart(sandbox: Sandbox) -> None:
    # Runtimes without e2b-charts (a user's own `--runtime`) behave the same way.
    execution = sandbox.run_code(
        textwrap.dedent(
            """
            import sys
            import matplotlib.pyplot as plt

            sys.modules["e2b_charts"] = None  # makes its import fail
            plt.plot([1, 2], [1, 2])
            plt.show()
            """
        )
    )
    assert execution.error is None, execution.error
    assert execution.logs.stderr == []
    [result] = execution.results
    assert result.png
    assert result.chart is None


def test_an_oversized_chart_is_left_out_and_the_png_kept(sandbox: Sandbox) -> None:
    execution = sandbox.run_code(
        "import matplotlib.pyplot as plt\nplt.plot(range(100_000))\nplt.show()"
    )
    assert execution.error is None, execution.error
    [result] = execution.results
    assert result.png
    assert result.chart is None
