"""Beam jobs: each module is options + a few composite PTransforms over `corpora` + `run(argv)`."""
import logging


class _QuietOptionalBeamImports(logging.Filter):
    """Beam logs a warning at import when its optional GCP client libraries are absent.

    A data job run locally does not need them (install the `gcp` extra for Dataflow and gs://),
    and a newcomer's first run should not open with a warning about BigQuery.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("apitools not found")


logging.getLogger().addFilter(_QuietOptionalBeamImports())
