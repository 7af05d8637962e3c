"""One module per model, each readable top to bottom (STYLE.md: HF modeling files, nanoGPT)."""
