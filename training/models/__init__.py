"""One module per model, each readable top to bottom (STYLE.md: HF modeling files, nanoGPT)."""


def register_auto_classes() -> None:
    """Make the Auto classes know the project's own model types, so that a saved model loads with
    `trust_remote_code=False`: transformers prefers a registered local class to the copy of
    models/xylent.py that `save_pretrained` puts beside the weights, and runs no code from the folder.

    Only XY-LENT needs it: mPMR and CLISM save a stock `xlm-roberta` config (their extra fields ride
    on it), which the Auto classes know already."""
    from transformers import AutoConfig, AutoModel, AutoModelForMaskedLM, AutoModelForPreTraining

    from training.models import xylent

    AutoConfig.register(xylent.XYLentConfig.model_type, xylent.XYLentConfig, exist_ok=True)
    AutoModel.register(xylent.XYLentConfig, xylent.XYLentModel, exist_ok=True)
    AutoModelForPreTraining.register(xylent.XYLentConfig, xylent.XYLentDiscriminator, exist_ok=True)
    AutoModelForMaskedLM.register(xylent.XYLentConfig, xylent.XYLentForMaskedLM, exist_ok=True)
