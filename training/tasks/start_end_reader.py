"""Extractive QA with the standard head on any encoder `transformers.AutoModel` loads: a fresh
per-token start/end classifier over `last_hidden_state` (XLMRobertaForQuestionAnswering's
`qa_outputs`), softmax over the passage. `training.finetune_clism --head standard` uses it for an
encoder that is not XLM-R (an XY-LENT discriminator), where CLISMForQuestionAnswering cannot hold
the weights; it has the same `span_logits` and `forward` as that class's standard head.

`save_pretrained(folder)`: the encoder's own folder (AutoModel loads it alone) with the classifier
beside it, which `from_pretrained` restores.
"""
from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoModel

from training.models.clism import mask_logits
from training.tasks.reader import load_weights

HEAD_WEIGHTS = "qa_outputs.safetensors"


class StartEndReader(nn.Module):
    def __init__(self, encoder: nn.Module):
        super().__init__()
        self.encoder = encoder
        self.qa_outputs = nn.Linear(encoder.config.hidden_size, 2)
        std = getattr(encoder.config, "initializer_range", 0.02)
        nn.init.normal_(self.qa_outputs.weight, std=std)  # as XLMRobertaForQuestionAnswering's
        nn.init.zeros_(self.qa_outputs.bias)

    @property
    def config(self):
        return self.encoder.config

    def span_logits(self, input_ids, attention_mask, passage_mask, que_position=None):
        """Start and end logits [B, T], -inf-like outside the passage."""
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        hidden = out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]
        start, end = self.qa_outputs(hidden).unbind(-1)
        allowed = passage_mask.bool()
        return mask_logits(start, allowed), mask_logits(end, allowed)

    def forward(self, input_ids, attention_mask, passage_mask, que_position=None, answer_start=None,
                answer_end=None, **_):
        start, end = self.span_logits(input_ids, attention_mask, passage_mask)
        if answer_start is None:
            return start, end
        loss = F.cross_entropy(start, answer_start) + F.cross_entropy(end, answer_end)
        return loss, {"qa_loss": loss.detach()}

    def save_pretrained(self, folder: str | Path) -> None:
        from safetensors.torch import save_file

        folder = Path(folder)
        self.encoder.save_pretrained(folder)
        save_file({k: v.detach().cpu().contiguous() for k, v in self.qa_outputs.state_dict().items()},
                  str(folder / HEAD_WEIGHTS))

    @classmethod
    def from_pretrained(cls, folder: str | Path, trust_remote_code: bool = False) -> StartEndReader:
        """An encoder folder; its start/end classifier too when the folder has one (else fresh)."""
        from safetensors.torch import load_file

        folder = Path(folder)
        reader = cls(load_weights(AutoModel, folder, trust_remote_code))
        if (folder / HEAD_WEIGHTS).is_file():
            reader.qa_outputs.load_state_dict(load_file(str(folder / HEAD_WEIGHTS)))
        return reader
