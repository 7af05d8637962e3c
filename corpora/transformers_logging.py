"""transformers' loading messages that say nothing to the user of a job."""
from __future__ import annotations

import contextlib
import logging


class _WithoutLoadReport(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "LOAD REPORT" not in record.getMessage()


@contextlib.contextmanager
def without_load_report():
    """transformers logs a many-line "LOAD REPORT" table for every checkpoint whose keys differ from
    the model's, expected or not: a CLISM checkpoint's MLM head, a fresh QA head, the pooler an
    encoder checkpoint lacks (unused by the aligners and readers here). Only that record is dropped;
    callers that care say in one line what was not expected."""
    logger = logging.getLogger("transformers.modeling_utils")
    quiet = _WithoutLoadReport()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)
