"""Start-up of a job's process without the modules Beam and pyarrow import but the job never uses.

`import apache_beam` imports every optional client library it finds installed: pandas (for the
DataFrame API's type hints) and Google Cloud's clients (GCS, Dataflow, BigQuery, Pub/Sub, ...).
Each import is wrapped in Beam in `try/except ImportError`, as they are optional extras,
so hiding a module while Beam loads makes Beam behave as in an install without it. A module is
hidden only while Beam loads and only if nothing imported it before, so a later `import pandas`
works as usual.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

# What hiding these saves at start-up: benchmarks/README.md, "Choices in the code".
# (MongoDB's client stays: it is cheap, and Beam logs a warning when it is missing.)
_GCP_CLIENTS = ("google.cloud", "google.api_core", "google.auth", "apitools", "oauth2client", "googleapiclient")


def uses_google_cloud(argv: list[str]) -> bool:
    """Does the command line name a gs:// path, the Dataflow runner or a GCP project? Then Beam needs
    Google Cloud's clients (gcsio, the Dataflow client), and nothing of them is hidden."""
    text = " ".join(argv).lower()
    return "gs://" in text or "dataflow" in text or "--project" in text or "--temp_location" in text


@contextmanager
def _hidden(names):
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # "import name" (and of its submodules) raises ImportError
    try:
        yield
    finally:
        for name in hidden:
            del sys.modules[name]


def import_beam(command_line: list[str] | None) -> None:
    """Imports Beam without pandas; with the process's `command_line` (the job runs as __main__) and
    no Google Cloud resource named in it, without GCP's clients too (a saving in every run where
    `pip install ".[gcp]"` put them). Imported as a module (tests, the Dask runner's workers, a
    notebook), only pandas is hidden: the process may go on to use GCS."""
    if "apache_beam" in sys.modules:
        return
    names = ("pandas",)
    if command_line is not None and not uses_google_cloud(command_line):
        names += _GCP_CLIENTS
    with _hidden(names):
        import apache_beam  # noqa: F401


def pyarrow_without_pandas() -> None:
    """pyarrow imports pandas at its first array built from a Python list, to ask whether the list is
    a pandas object (a costly import; the Parquet writer builds every table so). The job never hands
    pyarrow pandas objects: run from the command line, its process lets pyarrow's first look find
    pandas absent, which pyarrow then stops asking about. (An explicit `to_pandas()` still imports
    pandas: pyarrow tries again where pandas is required.)"""
    if "pandas" in sys.modules:
        return

    class HidePandas:  # pyarrow's compiled import would take a None in sys.modules as the module
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "pandas":
                raise ModuleNotFoundError("hidden while pyarrow looks", name="pandas")
            return None

    sys.meta_path.insert(0, HidePandas)
    try:
        import pyarrow

        pyarrow.array(["a list, not a pandas object"])
    finally:
        sys.meta_path.remove(HidePandas)
