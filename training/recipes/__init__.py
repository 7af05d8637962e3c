"""One recipe a model: its TrainConfig fields and presets, its flags, its hooks and its `SPEC`
(training/registry.py). `training.run --model NAME` reads `training.recipes.NAME.SPEC`."""
