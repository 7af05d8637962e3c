"""CLISM + CACR + MLM: an XLM-R masked LM pre-trained to answer `[QUE]` questions across languages.

Full definition of the model, all of it in this file (Chen et al., "Bridging the Gap between Language
Models and Cross-Lingual Sequence Labeling", §3):

  X = <s> ŝˢ </s></s> sᵗ </s>      ŝˢ: source with each selected span replaced by one [QUE]
  H = M(X)                                                                        [B, T, d]   (Eq. 5)
  CLISM  for each [QUE] q:  s_q = W_s x_q,  e_q = W_e x_q                                     (Eq. 1)
         P(s = k) = softmax_k(x_kᵀ s_q),  P(e = k) = softmax_k(x_kᵀ e_q), k over the target   (Eq. 2–3)
         L_clism = −log P(s = aˢ) − log P(e = aᵉ), averaged over every [QUE] of the batch       (Eq. 4)
  CACR   r̂ˢ = mean(Ĥˢ), rᵗ = mean(Hᵗ) from the joint pass, rˢ = mean(M(<s> sˢ </s>)) (second pass)
         L(a, b) = −log exp(Ψ(aᵢ, bᵢ)·κ) / Σⱼ exp(Ψ(aᵢ, bⱼ)·κ), Ψ cosine, in-batch negatives (Eq. 7)
         L_cacr = L(rᵗ, r̂ˢ) + L(rˢ, r̂ˢ) + L(rᵗ, rˢ)                                           (Eq. 8)
  MLM    the backbone's own LM head on 15% of the tokens, never [QUE], specials or answers (§3.3)
  L = L_clism + L_cacr + L_mlm                                                                (Eq. 9)

Readings where the paper is not explicit (docs/clism_model.md has the measurements):
* "τ = 20" (§4.2) cannot divide the cosine: Ψ/20 ∈ [−0.05, 0.05] makes every softmax over the batch
  nearly uniform and L_cacr stays at 3·log B. Read as a scale, κ = 20 (i.e. τ = 1/20 = 0.05, SimCSE's
  temperature), it trains. `cacr_tau_reading` = "scale" (default, κ = τ) or "divide" (κ = 1/τ).
* rᵗ is taken from the joint input, as Eq. 5–6 write it (Hᵗ is a slice of H = M(X)); only the source
  gets a second pass. Eq. 7 is one-directional (anchor a, candidates b over the batch), as written.
* The start/end softmax runs over the target subwords only (the answer is always there); Eq. 2–3's
  "each token in X" would also let a [QUE] point into its own source sentence.
* W_s and W_e carry no bias (Eq. 1).
* In-batch negatives are the global batch: under DDP each rank's anchors are contrasted with every
  rank's candidates (all-gathered with their gradient, which flows back to the rank that made them),
  so 8 ranks of 8 pairs contrast 64 pairs, as the paper's batch of 64 does, not 8.
"""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_nn
import torch.nn.functional as F
from torch import nn
from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaPreTrainedModel
from transformers.models.xlm_roberta.modeling_xlm_roberta import XLMRobertaLMHead

TAU_READINGS = ("scale", "divide")


# ---- losses (plain functions: tested against hand-computed values) ----

def masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The aggregation layer 𝒜 of Eq. 6: mean over the masked positions. [B, T, d], [B, T] -> [B, d].
    In float32: a bf16 sum over 128 tokens loses the small differences the cosines compare."""
    mask = mask.float().unsqueeze(-1)
    return (hidden.float() * mask).sum(1) / mask.sum(1).clamp(min=1)


def contrastive_loss(anchor: torch.Tensor, candidates: torch.Tensor, temperature: float, reading: str = "scale",
                     offset: int = 0) -> torch.Tensor:
    """Eq. 7, averaged over the anchors: anchor i's positive is candidate offset + i, every other
    candidate is a negative (candidates may be the whole global batch, `offset` where ours start)."""
    if reading not in TAU_READINGS:
        raise ValueError(f"cacr_tau_reading={reading!r}: choose from {', '.join(TAU_READINGS)}")
    scale = temperature if reading == "scale" else 1.0 / temperature
    cosine = F.normalize(anchor.float(), dim=-1) @ F.normalize(candidates.float(), dim=-1).T  # Ψ, [B, N]
    return F.cross_entropy(cosine * scale, offset + torch.arange(anchor.shape[0], device=anchor.device))


def gather_batch(x: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Every DDP rank's rows of x, concatenated in rank order, and where this rank's rows start.

    Autograd-aware (torch.distributed.nn): the gradient a rank's loss sends to another rank's rows
    reaches that rank in backward, so the averaged DDP gradient equals one process on the global
    batch. Ranks may hold different numbers of rows (an epoch's short last batch): rows are padded to
    the largest, gathered, and the padding cut off. One process: x itself."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return x, 0
    world, rank = dist.get_world_size(), dist.get_rank()
    sizes = [torch.zeros(1, dtype=torch.long, device=x.device) for _ in range(world)]
    dist.all_gather(sizes, torch.tensor([x.shape[0]], dtype=torch.long, device=x.device))
    sizes = [int(n) for n in sizes]
    padded = F.pad(x, (0, 0, 0, max(sizes) - x.shape[0]))
    parts = dist_nn.all_gather(padded)
    return torch.cat([part[:n] for part, n in zip(parts, sizes)]), sum(sizes[:rank])


def cacr_loss(r_t: torch.Tensor, r_hat_s: torch.Tensor, r_s: torch.Tensor, temperature: float,
              reading: str = "scale") -> torch.Tensor:
    """Eq. 8: every two members of the positive triple {rˢ, rᵗ, r̂ˢ} pulled together, each anchor
    against the candidates of the global batch (gather_batch)."""
    all_r_hat_s, offset = gather_batch(r_hat_s)
    all_r_s, _ = gather_batch(r_s)
    return (contrastive_loss(r_t, all_r_hat_s, temperature, reading, offset)
            + contrastive_loss(r_s, all_r_hat_s, temperature, reading, offset)
            + contrastive_loss(r_t, all_r_s, temperature, reading, offset))


def span_cross_entropy(logits: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Sum of −log softmax(logits)[position] over the slots whose position is not −100, and their number."""
    flat_logits, flat_pos = logits.reshape(-1, logits.shape[-1]).float(), positions.reshape(-1)
    n = int((flat_pos != -100).sum())
    return F.cross_entropy(flat_logits, flat_pos, ignore_index=-100, reduction="sum"), n


def clism_loss(start_logits: torch.Tensor, end_logits: torch.Tensor, answer_start: torch.Tensor,
               answer_end: torch.Tensor) -> torch.Tensor:
    """Eq. 4 (start term + end term) averaged over the questions of the batch; 0 (with a graph) for none."""
    start, n = span_cross_entropy(start_logits, answer_start)
    end, _ = span_cross_entropy(end_logits, answer_end)
    return (start + end) / max(n, 1)


def mask_logits(logits: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    # finfo.min rather than -inf: a padding question slot (no allowed token is ever all-masked, but a
    # softmax over a row of -inf would be NaN) stays finite; in float32 so that bf16 never overflows.
    logits = logits.float()
    return logits.masked_fill(~allowed, torch.finfo(logits.dtype).min)


# ---- the model ----

class CLISMForPreTraining(XLMRobertaPreTrainedModel):
    """`roberta` + `lm_head` exactly as XLMRobertaForMaskedLM (so any XLM-R checkpoint loads both), plus
    W_s and W_e. Loss settings live on the XLM-R config (que_token_id, cacr_temperature,
    cacr_tau_reading, use_cacr, use_mlm) so that save_pretrained/from_pretrained and resuming from a
    checkpoint round-trip the whole model with the stock config class."""

    _tied_weights_keys = {
        "lm_head.decoder.weight": "roberta.embeddings.word_embeddings.weight",
        "lm_head.decoder.bias": "lm_head.bias",
    }

    def __init__(self, config: XLMRobertaConfig):
        super().__init__(config)
        self.roberta = XLMRobertaModel(config, add_pooling_layer=False)
        self.lm_head = XLMRobertaLMHead(config)
        self.w_s = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.w_e = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.post_init()
        if not getattr(config, "use_mlm", True):
            # Unused parameters would stop DDP (no find_unused_parameters in the shared loop). The
            # decoder weight is the tied input embedding and stays trainable through the encoder.
            for p in (*self.lm_head.dense.parameters(), *self.lm_head.layer_norm.parameters(), self.lm_head.bias):
                p.requires_grad_(False)

    def get_output_embeddings(self):
        return self.lm_head.decoder

    def set_output_embeddings(self, new_embeddings):
        self.lm_head.decoder = new_embeddings

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.roberta(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    def question_logits(self, hidden: torch.Tensor, que_positions: torch.Tensor,
                        candidate_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Eq. 1–3 for every [QUE] at once: start and end logits [B, Q, T] over the candidate tokens.

        One batched matmul per head: x_q gathered per example ([B, Q, d]), then (W x_q) · Hᵀ."""
        x_q = hidden.gather(1, que_positions.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        allowed = candidate_mask.bool().unsqueeze(1)
        start = torch.bmm(self.w_s(x_q), hidden.transpose(1, 2))
        end = torch.bmm(self.w_e(x_q), hidden.transpose(1, 2))
        return mask_logits(start, allowed), mask_logits(end, allowed)

    def mlm_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden)

    def forward(self, input_ids, attention_mask, source_mask=None, target_mask=None, que_positions=None,
                answer_start=None, answer_end=None, mlm_labels=None, source_input_ids=None,
                source_attention_mask=None, source_alone_mask=None, **_):
        """-> (loss, logs) in training (STYLE.md): logs hold each term of Eq. 9 and the share of
        questions whose start and end are both argmax-right (clism_exact)."""
        cfg = self.config
        hidden = self.encode(input_ids, attention_mask)
        start, end = self.question_logits(hidden, que_positions, target_mask)
        l_clism = clism_loss(start, end, answer_start, answer_end)
        loss, logs = l_clism, {"clism_loss": l_clism.detach()}
        asked = answer_start != -100
        if asked.any():
            right = (start.argmax(-1) == answer_start) & (end.argmax(-1) == answer_end)
            logs["clism_exact"] = right[asked].float().mean().detach()

        if getattr(cfg, "use_cacr", True):
            # rˢ: a second pass over the unmasked source alone, so that the joint pass's [QUE] and
            # <mask> noise cannot make r̂ˢ and rˢ agree trivially (§3.2, after Luo et al. 2021).
            source_hidden = self.encode(source_input_ids, source_attention_mask)
            r_hat_s = masked_mean(hidden, source_mask)
            r_t = masked_mean(hidden, target_mask)
            r_s = masked_mean(source_hidden, source_alone_mask)
            l_cacr = cacr_loss(r_t, r_hat_s, r_s, cfg.cacr_temperature, cfg.cacr_tau_reading)
            loss = loss + l_cacr
            logs["cacr_loss"] = l_cacr.detach()

        if getattr(cfg, "use_mlm", True):
            predicted = mlm_labels != -100
            # The vocabulary projection only on the predicted positions: with XLM-R's 250K-row
            # decoder, projecting all T positions would dominate the step.
            logits = self.lm_head(hidden[predicted])
            l_mlm = (F.cross_entropy(logits.float(), mlm_labels[predicted], reduction="sum")
                     / max(int(predicted.sum()), 1))
            loss = loss + l_mlm
            logs["mlm_loss"] = l_mlm.detach()
        return loss, logs


class CLISMForQuestionAnswering(XLMRobertaPreTrainedModel):
    """Fine-tuning for extractive QA (§3.4, Eq. 10).

    qa_head = "que" (the paper's): input `<s> Q [QUE] </s></s> P </s>`, start/end over the passage from
    the [QUE] representation through the pre-trained W_s, W_e, exactly as in pre-training.
    qa_head = "standard": no [QUE]; a fresh per-token start/end classifier (XLMRobertaForQuestionAnswering's
    `qa_outputs`), the usual fine-tune the paper compares against.
    Loads from a saved CLISMForPreTraining (roberta, W_s, W_e kept; lm_head dropped) or any XLM-R."""

    def __init__(self, config: XLMRobertaConfig):
        super().__init__(config)
        self.roberta = XLMRobertaModel(config, add_pooling_layer=False)
        if qa_head(config) == "que":
            self.w_s = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
            self.w_e = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        else:
            self.qa_outputs = nn.Linear(config.hidden_size, 2)
        self.post_init()

    def span_logits(self, input_ids, attention_mask, passage_mask, que_position=None):
        """Start and end logits [B, T], -inf-like outside the passage."""
        hidden = self.roberta(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if qa_head(self.config) == "que":
            x_q = hidden[torch.arange(hidden.shape[0], device=hidden.device), que_position]  # [B, d]
            start = torch.einsum("btd,bd->bt", hidden, self.w_s(x_q))
            end = torch.einsum("btd,bd->bt", hidden, self.w_e(x_q))
        else:
            start, end = self.qa_outputs(hidden).unbind(-1)
        allowed = passage_mask.bool()
        return mask_logits(start, allowed), mask_logits(end, allowed)

    def forward(self, input_ids, attention_mask, passage_mask, que_position=None, answer_start=None,
                answer_end=None, **_):
        start, end = self.span_logits(input_ids, attention_mask, passage_mask, que_position)
        if answer_start is None:
            return start, end
        # Eq. 4 again ("the following process is the same as Section 3.1").
        loss = F.cross_entropy(start, answer_start) + F.cross_entropy(end, answer_end)
        return loss, {"qa_loss": loss.detach()}


def qa_head(config) -> str:
    return getattr(config, "qa_head", "que")
