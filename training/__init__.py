"""The torch side of xlu-factory (docs/design.md §3): reads only the Parquet written by the Beam jobs.

Never imports Beam, so that a training machine needs only the `train` extra. Importing it registers
the project's model types with the transformers Auto classes (training/models/__init__.py), so that
its saved models load without `trust_remote_code`.
"""
try:
    import torch  # noqa: F401
    import transformers  # noqa: F401
except ImportError:  # no `train` extra: nothing to register, and nothing here will load a model
    pass
else:
    from training.models import register_auto_classes

    register_auto_classes()
