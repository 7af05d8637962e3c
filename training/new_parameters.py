"""Which parameters of a model its --init did not supply: new heads and tables, which
`--new_params_lr` trains at their own peak rate (training/run_setup.py: param_groups)."""
from __future__ import annotations

from collections.abc import Iterable

import torch

# The attribute a pretrained build sets on its model: names of the parameters --init did not supply
# (new heads, new tables), which --new_params_lr trains at their own peak rate.
NEW_PARAMETERS = "new_parameter_names"


def mark_new_parameters(model: torch.nn.Module, names: Iterable[str]) -> torch.nn.Module:
    """Record which of `model`'s parameters are new (names as in named_parameters; others ignored)."""
    own = {name for name, _ in model.named_parameters()}
    setattr(model, NEW_PARAMETERS, frozenset(n for n in names if n in own))
    return model
