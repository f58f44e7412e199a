# Run by every Python kernel of the sandbox service before the first cell (IPKernelApp's
# exec_files): the displays E2B's code-interpreter template gives.
#
# - `e2b/chart`: a matplotlib Figure that is displayed also carries its structured chart, as
#   extracted by the `e2b-charts` package (absent when the runtime does not have it).
# - `e2b/data`: a pandas DataFrame that is displayed also carries its columns as lists.
#   Either is left out when too large for the service's output budget (see `max_size`).
# - PIL: `Image.show()` displays the image in the cell's output, and `Image.save(path)` displays
#   what it saved (so does `plt.savefig(path)` to a raster format, which saves through PIL).
#
# Kernel start time matters, so nothing here imports matplotlib, pandas or PIL: the formatters
# look for the classes in sys.modules (an object of a class whose module was never imported
# cannot exist), and PIL is patched by an import hook the moment `PIL.Image` is first imported.
# Every hook swallows its own failures: a display without its extras beats a broken cell.
# The setup runs inside two functions, deleted at the end: the user's namespace stays clean.


def _mcpgym_formatters():
    """Registers the `e2b/chart` and `e2b/data` display formatters."""
    import enum
    import math
    import sys

    from IPython import get_ipython
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    shell = get_ipython()
    if shell is None:
        return

    # The service keeps about 2 MiB of rich output per cell and cuts a display that does not
    # fit down to its text: an oversized chart or data would cost the figure its PNG or the
    # frame its HTML. Above a quarter of that they are left out instead, measured as the
    # service measures (a string its length, any other scalar 8, a container its items).
    max_size = 512 * 1024

    def size(value):
        if isinstance(value, str):
            return len(value)
        if isinstance(value, list):
            return sum(map(size, value)) + len(value)
        if isinstance(value, dict):
            return sum(len(key) + size(item) + 4 for key, item in value.items())
        return 8

    def small_enough(value):
        """`value` if it fits in `max_size`, else None."""
        return value if size(value) <= max_size else None

    def loaded_class(module, name):
        """The class `module.name` if its module is already imported, else None."""
        loaded = sys.modules.get(module)
        return getattr(loaded, name, None) if loaded is not None else None

    class ChartFormatter(BaseFormatter):
        """`e2b/chart`: the structured chart of a matplotlib Figure."""

        format_type = Unicode("e2b/chart")
        print_method = ObjectName("_repr_e2b_chart_")
        _return_type = (dict,)

        def __call__(self, obj):
            figure = loaded_class("matplotlib.figure", "Figure")
            if figure is None or not isinstance(obj, figure):
                return super().__call__(obj)  # objects with their own _repr_e2b_chart_
            try:
                from e2b_charts import chart_figure_to_chart

                chart = chart_figure_to_chart(obj)
                # Not pydantic's JSON mode: it rejects the numpy numbers the charts may hold.
                return small_enough(to_json(chart.model_dump(warnings=False))) if chart else None
            except Exception:  # no chart rather than a failing display
                return None

    def to_json(value):  # noqa: PLR0911 - one return per kind of value
        """Plain JSON for the kernel's messages: numpy scalars as numbers, timestamps as ISO
        strings, NaN and missing values as null, enums as their values."""
        if value is None or type(value) in (bool, int, str):
            return value
        if isinstance(value, float):  # numpy's float64 too
            return float(value) if math.isfinite(value) else None
        if isinstance(value, enum.Enum):
            return to_json(value.value)
        if isinstance(value, (list, tuple)):
            return [to_json(item) for item in value]
        if isinstance(value, dict):
            return {str(key): to_json(item) for key, item in value.items()}
        pandas = sys.modules.get("pandas")
        if pandas is not None and (value is pandas.NaT or value is pandas.NA):
            return None
        for method, convert in (("isoformat", str), ("item", to_json)):
            found = getattr(value, method, None)
            if callable(found):
                return convert(found())
        for kind in (bool, int, str):
            if isinstance(value, kind):
                return kind(value)
        return str(value)

    class DataFormatter(BaseFormatter):
        """`e2b/data`: a pandas DataFrame's columns, each as a list of its values."""

        format_type = Unicode("e2b/data")
        print_method = ObjectName("_repr_e2b_data_")
        _return_type = (dict,)

        def __call__(self, obj):
            frame = loaded_class("pandas", "DataFrame")
            if frame is None or not isinstance(obj, frame):
                return super().__call__(obj)  # objects with their own _repr_e2b_data_
            try:
                if obj.size > max_size:  # a value costs at least 1: cannot fit
                    return None
                data = {str(name): to_json(column.tolist()) for name, column in obj.items()}
                return small_enough(data)
            except Exception:  # the text and HTML still show the frame
                return None

    formatters = shell.display_formatter.formatters
    formatters["e2b/chart"] = ChartFormatter(parent=shell.display_formatter)
    formatters["e2b/data"] = DataFormatter(parent=shell.display_formatter)


def _mcpgym_pil_hook():
    """Patches PIL's Image.save and ImageShow when (if ever) the cell imports them."""
    import contextlib
    import functools
    import os
    import sys

    from IPython.display import display

    def patch_image(module):
        """`Image.save(path)` also displays the image it saved."""
        original = module.Image.save

        @functools.wraps(original)
        def save(self, fp, format=None, **params):  # PIL's own parameter names
            original(self, fp, format, **params)
            if isinstance(fp, (str, bytes, os.PathLike)):
                # The file is saved; its display is a bonus.
                with contextlib.suppress(Exception):
                    display(self)

        module.Image.save = save

    def patch_image_show(module):
        """`Image.show()` displays the image instead of looking for an image viewer."""

        class DisplayViewer(module.Viewer):
            def show(self, image, **options):
                display(image)
                return 1

        module.register(DisplayViewer, order=-1)

    patches = {"PIL.Image": patch_image, "PIL.ImageShow": patch_image_show}

    class PatchingLoader:
        """Runs a module's own loader, then patches the module; anything else is the loader's."""

        def __init__(self, loader, patch):
            self._loader = loader
            self._patch = patch

        def create_module(self, spec):
            return self._loader.create_module(spec)

        def exec_module(self, module):
            self._loader.exec_module(module)
            # If patching fails, PIL works as it would without the hook.
            with contextlib.suppress(Exception):
                self._patch(module)

        def __getattr__(self, name):
            return getattr(self._loader, name)

    class PatchOnImport:
        """A finder consulted first on each new import: for the modules in `patches`, it finds
        the spec the way the other finders would and wraps its loader; it leaves once done."""

        def find_spec(self, name, path, target=None):
            patch = patches.pop(name, None)
            if patch is None:
                return None
            finders = [finder for finder in sys.meta_path if finder is not self]
            if not patches and self in sys.meta_path:
                sys.meta_path.remove(self)
            for finder in finders:
                find = getattr(finder, "find_spec", None)
                spec = find(name, path, target) if find is not None else None
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = PatchingLoader(spec.loader, patch)
                    return spec
            return None

    # Modules imported already (not normally at start) are patched now.
    for name in list(patches):
        if name in sys.modules:
            patches.pop(name)(sys.modules[name])
    if patches:
        sys.meta_path.insert(0, PatchOnImport())


try:
    _mcpgym_formatters()
    _mcpgym_pil_hook()
finally:
    del _mcpgym_formatters, _mcpgym_pil_hook
