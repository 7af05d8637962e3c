"""XY-LENT: an ELECTRA generator and discriminator trained with MRTD and TRTD (XY-LENT §4, XLM-E).

Full definition of the model, all of it in this file (the gated relative position bias is in
gated_rel_pos.py beside it):
  x          <s> w_1 … w_n (MRTD: packed monolingual text)  or  <s> x </s> y </s> (TRTD: a translation pair)
  masked     15% of the tokens, never <s> (the paper's change: "we do not mask the [CLS] token")
  G          a smaller encoder (default 4 layers, the discriminator's width, no dropout: Meng et al. 2021)
             trained with MLM on the masked positions: L_G = CE(G(x_masked), x) over masked tokens
  x̂          x with each masked position replaced by a token sampled from G's softmax (no gradient)
  D          the encoder users fine-tune, trained with replaced token detection:
             L_D = BCE(D(x̂), 1[x̂_i ≠ x_i]) over every real token; a masked position where G sampled
             the original token is labelled 0 (ELECTRA)
  loss       L_G + λ·L_D, λ = 50 (ELECTRA)
G and D share the token embeddings (ELECTRA); every attention layer of both carries the gated
relative position bias. With --dro the TRTD language pairs are resampled from the χ²-ball best
response to their recent losses (Eq. 3, Zhou et al. 2021), see `chi2_best_response`.

Saved for users: D with `save_pretrained` (AutoModel with trust_remote_code, this file and
gated_rel_pos.py copied beside the weights), G separately in `generator/`.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers import PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput

from .gated_rel_pos import GatedRelativePositionBias, PositionGate, gated_bias

# The vocap model's fixed special ids (corpora/xy/vocap.py), the defaults; an encoder's own vocabulary
# (XLM-R's: <mask> last) brings its ids in the config.
BOS_ID, PAD_ID, EOS_ID, UNK_ID, MASK_ID = range(5)


class XYLentConfig(PretrainedConfig):
    """The discriminator's shape, plus what the pre-training model needs to rebuild its generator."""

    model_type = "xylent"

    def __init__(self, vocab_size: int = 2000, hidden_size: int = 768, num_hidden_layers: int = 12,
                 num_attention_heads: int = 12, intermediate_size: int = 3072, max_position_embeddings: int = 512,
                 embedding_size: int | None = None, hidden_dropout_prob: float = 0.1,
                 attention_probs_dropout_prob: float = 0.1, layer_norm_eps: float = 1e-5,
                 initializer_range: float = 0.02, rel_pos_buckets: int = 32, rel_pos_max_distance: int = 128,
                 generator_layers: int = 4, generator_hidden_size: int | None = None,
                 generator_intermediate_size: int | None = None, generator_heads: int | None = None,
                 mask_prob: float = 0.15, mask_token_share: float = 0.85, disc_weight: float = 50.0,
                 dro: bool = False, dro_rho: float = 0.1, dro_resamples: int = 10,
                 pair_names: list[str] | None = None, pair_probs: list[float] | None = None,
                 pad_token_id: int = PAD_ID, bos_token_id: int = BOS_ID, eos_token_id: int = EOS_ID,
                 mask_token_id: int = MASK_ID, token_count: int | None = None, **kwargs):
        super().__init__(pad_token_id=pad_token_id, bos_token_id=bos_token_id, eos_token_id=eos_token_id, **kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.max_position_embeddings = max_position_embeddings
        self.embedding_size = embedding_size  # None: hidden_size (a generator narrower than D projects it)
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.layer_norm_eps = layer_norm_eps
        self.initializer_range = initializer_range
        self.rel_pos_buckets = rel_pos_buckets
        self.rel_pos_max_distance = rel_pos_max_distance
        self.generator_layers = generator_layers
        self.generator_hidden_size = generator_hidden_size
        self.generator_intermediate_size = generator_intermediate_size
        self.generator_heads = generator_heads
        self.mask_prob = mask_prob
        self.mask_token_share = mask_token_share
        self.disc_weight = disc_weight
        self.dro = dro
        self.dro_rho = dro_rho
        self.dro_resamples = dro_resamples
        self.pair_names = list(pair_names or [])  # TRTD language pairs (DRO), filled from pair_probs.parquet
        self.pair_probs = list(pair_probs or [])
        self.mask_token_id = mask_token_id
        # The tokenizer's size; embedding rows from it on stand for no token (a converted encoder's
        # matrix is rounded up: e5-small has 250,037 rows for 250,002 tokens) and are never sampled.
        self.token_count = token_count

    def unmaskable_ids(self) -> tuple[int, int, int]:
        return self.bos_token_id, self.eos_token_id, self.mask_token_id

    def unsampled_ids(self) -> tuple[int, int]:
        return self.pad_token_id, self.mask_token_id

    def generator_config(self) -> XYLentConfig:
        """G: generator_layers deep, D's width unless told otherwise, no dropout (XY-LENT §5, Meng et al.)."""
        hidden = self.generator_hidden_size or self.hidden_size
        heads = self.generator_heads or max(1, self.num_attention_heads * hidden // self.hidden_size)
        return XYLentConfig(
            vocab_size=self.vocab_size, hidden_size=hidden, num_hidden_layers=self.generator_layers,
            num_attention_heads=heads, intermediate_size=self.generator_intermediate_size or self.intermediate_size * hidden // self.hidden_size,
            max_position_embeddings=self.max_position_embeddings, embedding_size=self.hidden_size,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, layer_norm_eps=self.layer_norm_eps,
            initializer_range=self.initializer_range, rel_pos_buckets=self.rel_pos_buckets,
            rel_pos_max_distance=self.rel_pos_max_distance, generator_layers=0, pad_token_id=self.pad_token_id,
            bos_token_id=self.bos_token_id, eos_token_id=self.eos_token_id, mask_token_id=self.mask_token_id,
            token_count=self.token_count)


# ---- building blocks ----

class Embeddings(nn.Module):
    """Token + learned absolute position embeddings, LayerNorm, dropout (ELECTRA/XLM-R); the
    relative bias is added in attention on top. A generator narrower than D projects D's width."""

    def __init__(self, config: XYLentConfig):
        super().__init__()
        width = config.embedding_size or config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, width, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, width)
        self.LayerNorm = nn.LayerNorm(width, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.project = nn.Linear(width, config.hidden_size) if width != config.hidden_size else None

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        t = input_ids.shape[1]
        if t > self.position_embeddings.num_embeddings:
            raise ValueError(f"sequence of {t} tokens; this model has {self.position_embeddings.num_embeddings} positions")
        positions = torch.arange(t, device=input_ids.device)
        h = self.dropout(self.LayerNorm(self.word_embeddings(input_ids) + self.position_embeddings(positions)[None]))
        return self.project(h) if self.project is not None else h


class SelfAttention(nn.Module):
    def __init__(self, config: XYLentConfig):
        super().__init__()
        self.num_heads = config.num_attention_heads
        if config.hidden_size % self.num_heads:
            raise ValueError(f"hidden size {config.hidden_size} is not a multiple of {self.num_heads} heads")
        self.head_dim = config.hidden_size // self.num_heads
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size)
        self.out = nn.Linear(config.hidden_size, config.hidden_size)
        self.gate = PositionGate(self.num_heads, self.head_dim)
        self.dropout = config.attention_probs_dropout_prob

    def forward(self, hidden: torch.Tensor, table_bias: torch.Tensor, pad_bias: torch.Tensor) -> torch.Tensor:
        b, t, d = hidden.shape
        q, k, v = self.qkv(hidden).view(b, t, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        # The gate is computed from this layer's input (WavLM's `query` before projection).
        bias = gated_bias(self.gate(hidden), table_bias).to(q.dtype) + pad_bias.to(q.dtype)
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=self.dropout if self.training else 0.0)
        return self.out(attn.transpose(1, 2).reshape(b, t, d))


class Layer(nn.Module):
    """Post-LayerNorm Transformer layer (BERT/ELECTRA/XLM-R, which XLM-E follows)."""

    def __init__(self, config: XYLentConfig):
        super().__init__()
        self.attention = SelfAttention(config)
        self.attention_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.ffn = nn.Sequential(nn.Linear(config.hidden_size, config.intermediate_size), nn.GELU(),
                                 nn.Linear(config.intermediate_size, config.hidden_size))
        self.ffn_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden, table_bias, pad_bias):
        hidden = self.attention_norm(hidden + self.dropout(self.attention(hidden, table_bias, pad_bias)))
        return self.ffn_norm(hidden + self.dropout(self.ffn(hidden)))


class XYLentPreTrainedModel(PreTrainedModel):
    config_class = XYLentConfig
    base_model_prefix = "xylent"
    supports_gradient_checkpointing = False

    def _init_weights(self, module):
        super()._init_weights(module)  # Linear, Embedding, LayerNorm: normal(0, initializer_range), zeros, ones
        if isinstance(module, PositionGate):
            from transformers import initialization as init

            init.ones_(module.const)


class XYLentModel(XYLentPreTrainedModel):
    """The encoder (D, or G's body): input ids -> last_hidden_state. What AutoModel loads."""

    def __init__(self, config: XYLentConfig):
        super().__init__(config)
        self.embeddings = Embeddings(config)
        self.rel_pos = GatedRelativePositionBias(config.num_attention_heads, config.rel_pos_buckets,
                                                 config.rel_pos_max_distance)
        self.layers = nn.ModuleList(Layer(config) for _ in range(config.num_hidden_layers))
        self.post_init()

    def get_input_embeddings(self):
        return self.embeddings.word_embeddings

    def set_input_embeddings(self, value):
        self.embeddings.word_embeddings = value

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, **_) -> BaseModelOutput:
        hidden = self.embeddings(input_ids)
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        # Padding as an additive bias on the keys: one [B, 1, 1, T] tensor for every layer.
        pad_bias = (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        table_bias = self.rel_pos(input_ids.shape[1])
        for layer in self.layers:
            hidden = layer(hidden, table_bias, pad_bias)
        return BaseModelOutput(last_hidden_state=hidden)


class XYLentDiscriminator(XYLentPreTrainedModel):
    """D with its replaced-token-detection head (ELECTRA: dense, GELU, one logit per token)."""

    def __init__(self, config: XYLentConfig):
        super().__init__(config)
        self.xylent = XYLentModel(config)
        self.rtd_head = nn.Sequential(nn.Linear(config.hidden_size, config.hidden_size), nn.GELU(),
                                      nn.Linear(config.hidden_size, 1))
        self.post_init()

    def forward(self, input_ids, attention_mask=None, **_) -> torch.Tensor:
        """[B, T] logits of "this token was replaced"."""
        return self.rtd_head(self.xylent(input_ids, attention_mask).last_hidden_state).squeeze(-1)


class XYLentForMaskedLM(XYLentPreTrainedModel):
    """G: the encoder and an MLM head whose output layer is the (shared) token embedding matrix."""

    def __init__(self, config: XYLentConfig):
        super().__init__(config)
        self.xylent = XYLentModel(config)
        width = config.embedding_size or config.hidden_size
        self.lm_dense = nn.Linear(config.hidden_size, width)
        self.lm_norm = nn.LayerNorm(width, eps=config.layer_norm_eps)
        self.lm_bias = nn.Parameter(torch.zeros(config.vocab_size))
        self.post_init()

    def vocab_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits over the vocabulary for the given hidden states (only the masked ones in training:
        at 500K entries, the output layer over every position would dominate the step)."""
        h = self.lm_norm(F.gelu(self.lm_dense(hidden)))
        return F.linear(h, self.xylent.embeddings.word_embeddings.weight, self.lm_bias)

    def forward(self, input_ids, attention_mask=None, **_) -> torch.Tensor:
        return self.vocab_logits(self.xylent(input_ids, attention_mask).last_hidden_state)


# Saved folders carry this file; AutoModel(…, trust_remote_code=True) then finds the classes by name.
AUTO_MAP = {"AutoConfig": "xylent.XYLentConfig", "AutoModel": "xylent.XYLentModel",
            "AutoModelForPreTraining": "xylent.XYLentDiscriminator", "AutoModelForMaskedLM": "xylent.XYLentForMaskedLM"}
XYLentConfig.register_for_auto_class()
XYLentModel.register_for_auto_class("AutoModel")
XYLentDiscriminator.register_for_auto_class("AutoModelForPreTraining")
XYLentForMaskedLM.register_for_auto_class("AutoModelForMaskedLM")


# ---- the ELECTRA step ----

def choose_masked(input_ids: torch.Tensor, attention_mask: torch.Tensor, mask_prob: float,
                  generator: torch.Generator | None = None,
                  special_ids: tuple[int, ...] = (BOS_ID, EOS_ID, MASK_ID)) -> torch.Tensor:
    """[B, T] bool: round(mask_prob · n) of each sequence's n candidates (at least one), chosen
    uniformly; candidates are real tokens other than the special ones: <s> (XY-LENT §4: [CLS] is never
    masked), </s> and <mask>, as ELECTRA's and XLM-E's masking draw only from the text (a </s> between a
    translation pair's halves would otherwise be masked and "replaced"). <unk> stands for text: it may be.
    `special_ids`: <s>, </s> and <mask> of the vocabulary (XYLentConfig.unmaskable_ids)."""
    special = torch.isin(input_ids, torch.tensor(special_ids, device=input_ids.device))
    candidates = attention_mask.bool() & ~special
    n = candidates.sum(1)
    k = torch.where(n > 0, (n.float() * mask_prob).round().long().clamp(min=1), torch.zeros_like(n))
    scores = torch.rand(input_ids.shape, device=input_ids.device, generator=generator)
    scores = scores.masked_fill(~candidates, 2.0)  # non-candidates sort after every candidate
    ranks = scores.argsort(1).argsort(1)
    return ranks < k[:, None]


def sample_replacements(logits: torch.Tensor, generator: torch.Generator | None = None,
                        banned: tuple[int, ...] = (PAD_ID, MASK_ID), token_count: int | None = None) -> torch.Tensor:
    """One token per row of [M, V] logits from softmax(logits), never <pad> or <mask> (`banned`,
    XYLentConfig.unsampled_ids): a <mask> in D's input would be a replaced token given away, and a
    <pad> a token D never sees; nor a row from `token_count` on, which stands for no token.

    Gumbel-max written as argmax(logits − log E), E ~ Exp(1) (= −log U): two [M, V] float tensors
    at most, which matters at 500K entries and M = 15% of a 32 x 512 batch."""
    noise = torch.empty(logits.shape, dtype=torch.float32, device=logits.device).exponential_(generator=generator)
    scores = logits.detach().float() - noise.log_()
    scores[:, list(banned)] = float("-inf")
    if token_count is not None:
        scores[:, token_count:] = float("-inf")
    return scores.argmax(-1)


def rtd_inputs(input_ids: torch.Tensor, masked: torch.Tensor, sampled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """D's input (the masked positions replaced by G's samples) and its labels: 1 only where the
    sample differs from the original token; where G reproduced it, the token is original (ELECTRA)."""
    disc_input = input_ids.clone()
    disc_input[masked] = sampled
    return disc_input, disc_input != input_ids


def chi2_best_response(losses: torch.Tensor, q: torch.Tensor, rho: float, iterations: int = 100) -> torch.Tensor:
    """argmax_P Σ p_i ℓ_i over the χ² ball Σ (p_i − q_i)²/q_i ≤ ρ, Σ p = 1, p ≥ 0 (Eq. 3's sup).

    KKT gives p_i ∝ q_i · (ℓ_i − η)_+ ; the divergence E_q[r²]/E_q[r]² − 1 of r = (ℓ − η)_+ grows with
    η, so η is found by bisection (closed form while η ≤ min ℓ, where no p_i is clipped to 0)."""
    losses, q = losses.double(), q.double() / q.sum()
    mean = (q * losses).sum()
    var = (q * (losses - mean) ** 2).sum()
    if rho <= 0 or var <= 1e-18:
        return q.clone()

    def divergence(eta):
        r = (losses - eta).clamp(min=0)
        return (q * r * r).sum() / (q * r).sum() ** 2 - 1

    lo_loss, hi_loss = losses.min(), losses.max()
    if var / (mean - lo_loss) ** 2 >= rho:  # the unclipped solution: p = q (1 + (ℓ − mean) √(ρ/var))
        eta = mean - torch.sqrt(var / rho)
    else:
        top = losses >= hi_loss - 1e-12
        if 1 / q[top].sum() - 1 <= rho:  # even all mass on the worst pairs stays in the ball
            return torch.where(top, q, torch.zeros_like(q)) / q[top].sum()
        lo, hi = lo_loss, hi_loss
        for _ in range(iterations):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if divergence(mid) < rho else (lo, mid)
        eta = lo
    p = q * (losses - eta).clamp(min=0)
    return p / p.sum()


class XYLentForPreTraining(nn.Module):
    """G and D together, as the training loop sees them: `forward(**batch) -> (loss, logs)`.

    A plain module with a `config`: the loop checkpoints its state dict and config; users get D and
    G saved separately (`save_parts`)."""

    def __init__(self, config: XYLentConfig):
        super().__init__()
        self.config = config
        self.discriminator = XYLentDiscriminator(config)
        self.generator = XYLentForMaskedLM(config.generator_config())
        # ELECTRA: the generator's input and output embeddings are the discriminator's token embeddings.
        self.generator.xylent.embeddings.word_embeddings = self.discriminator.xylent.embeddings.word_embeddings
        # DRO state: the weights are persistent (resume keeps them); the running per-pair sums are not.
        p = len(config.pair_names)
        probs = torch.tensor(config.pair_probs or [1.0 / max(p, 1)] * p, dtype=torch.float64)
        self.register_buffer("dro_weights", probs.clone())
        self.register_buffer("dro_losses", torch.full((p,), float("nan"), dtype=torch.float64))
        self._pair_sums = torch.zeros(p, dtype=torch.float64)
        self._pair_counts = torch.zeros(p, dtype=torch.float64)

    def set_pairs(self, names: list[str], probs: list[float]) -> None:
        """The TRTD language pairs and their pair_probs (Q of Eq. 3), known once the data is."""
        if list(names) == self.config.pair_names:
            return
        if self.config.pair_names:
            raise ValueError(f"the model was trained on pairs {self.config.pair_names}, the data has {list(names)}")
        self.config.pair_names, self.config.pair_probs = list(names), [float(x) for x in probs]
        device = self.dro_weights.device
        self.dro_weights = torch.tensor(self.config.pair_probs, dtype=torch.float64, device=device)
        self.dro_losses = torch.full((len(names),), float("nan"), dtype=torch.float64, device=device)
        self._pair_sums = torch.zeros(len(names), dtype=torch.float64)
        self._pair_counts = torch.zeros(len(names), dtype=torch.float64)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pair_index: torch.Tensor | None = None,
                **_) -> tuple[torch.Tensor, dict]:
        cfg = self.config
        masked = choose_masked(input_ids, attention_mask, cfg.mask_prob, special_ids=cfg.unmaskable_ids())
        # ELECTRA's masking: 85% of the chosen positions become <mask>, the rest keep their token
        # (no random replacement: G's samples are the replacements).
        to_mask = masked & (torch.rand(input_ids.shape, device=input_ids.device) < cfg.mask_token_share)
        gen_input = input_ids.masked_fill(to_mask, cfg.mask_token_id)
        gen_hidden = self.generator.xylent(gen_input, attention_mask).last_hidden_state
        gen_logits = self.generator.vocab_logits(gen_hidden[masked])  # [M, V]
        targets = input_ids[masked]
        gen_token_loss = F.cross_entropy(gen_logits.float(), targets, reduction="none")
        gen_loss = gen_token_loss.mean()

        with torch.no_grad():
            sampled = sample_replacements(gen_logits, banned=cfg.unsampled_ids(), token_count=cfg.token_count)
            disc_input, replaced = rtd_inputs(input_ids, masked, sampled)
        disc_logits = self.discriminator(disc_input, attention_mask).float()
        real = attention_mask.bool()
        disc_token_loss = F.binary_cross_entropy_with_logits(disc_logits, replaced.float(), reduction="none")
        disc_loss = disc_token_loss[real].mean()
        loss = gen_loss + cfg.disc_weight * disc_loss

        with torch.no_grad():
            predicted = disc_logits > 0
            original = real & ~replaced
            logs = {
                "gen_loss": gen_loss.detach(), "disc_loss": disc_loss.detach(),
                "gen_acc": (gen_logits.argmax(-1) == targets).float().mean(),
                # NaN-free means: an all-original batch (rare) counts as fully right on replaced tokens
                "disc_acc_replaced": predicted[replaced].float().mean() if replaced.any() else torch.ones(()),
                "disc_acc_original": (~predicted[original]).float().mean(),
                "replaced_share": replaced.sum() / masked.sum().clamp(min=1),
            }
            if cfg.dro and pair_index is not None and cfg.pair_names:
                self._accumulate_pair_losses(pair_index, masked, gen_token_loss, disc_token_loss, real)
            if cfg.dro and cfg.pair_names:
                for k, name in enumerate(cfg.pair_names):
                    logs[f"dro_weight/{name}"] = self.dro_weights[k].float()
        return loss, logs

    def _accumulate_pair_losses(self, pair_index, masked, gen_token_loss, disc_token_loss, real) -> None:
        """Per-example L_G + λ·L_D of TRTD rows, summed per language pair until the next DRO update."""
        rows = pair_index >= 0
        if not rows.any():
            return
        b = masked.shape[0]
        gen_sum = torch.zeros(b, device=masked.device).index_add_(0, masked.nonzero()[:, 0], gen_token_loss.detach())
        gen_mean = gen_sum / masked.sum(1).clamp(min=1)
        disc_mean = (disc_token_loss.detach() * real).sum(1) / real.sum(1).clamp(min=1)
        per_row = (gen_mean + self.config.disc_weight * disc_mean).double().cpu()
        index = pair_index.cpu()[rows.cpu()]
        self._pair_sums.index_add_(0, index, per_row[rows.cpu()])
        self._pair_counts.index_add_(0, index, torch.ones(len(index), dtype=torch.float64))

    def dro_update(self) -> torch.Tensor:
        """Iterated best response (Zhou et al. 2021): the pairs' mean losses since the last update
        (summed over every process), then P = the χ²-ball best response around Q = pair_probs."""
        sums, counts = self._pair_sums.clone(), self._pair_counts.clone()
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            both = torch.stack([sums, counts]).to(self.dro_weights.device)
            torch.distributed.all_reduce(both)
            sums, counts = both.cpu().unbind(0)
        seen = counts > 0
        if seen.any():
            losses = self.dro_losses.cpu().clone()
            losses[seen] = sums[seen] / counts[seen]
            q = torch.tensor(self.config.pair_probs, dtype=torch.float64)
            # A pair not seen since the last update keeps its last loss, or the Q-mean if it has none.
            known = ~torch.isnan(losses)
            losses[~known] = (q[known] * losses[known]).sum() / q[known].sum()
            self.dro_losses.copy_(losses)
            self.dro_weights.copy_(chi2_best_response(losses, q, self.config.dro_rho))
        self._pair_sums.zero_()
        self._pair_counts.zero_()
        return self.dro_weights

    def save_parts(self, folder) -> None:
        """D (the model to fine-tune) in `folder`, G in `folder/generator`; both with this file."""
        from pathlib import Path

        folder = Path(folder)
        for model, where in ((self.discriminator, folder), (self.generator, folder / "generator")):
            model.config.auto_map = dict(AUTO_MAP)
            model.save_pretrained(where)

    @classmethod
    def from_parts(cls, folder) -> XYLentForPreTraining:
        """The inverse of `save_parts` (continued pre-training from a saved run)."""
        from pathlib import Path

        folder = Path(folder)
        disc = XYLentDiscriminator.from_pretrained(folder)
        model = cls(disc.config)
        model.discriminator.load_state_dict(disc.state_dict())
        gen = XYLentForMaskedLM.from_pretrained(folder / "generator")
        missing = model.generator.load_state_dict(gen.state_dict(), strict=False)
        if missing.missing_keys or missing.unexpected_keys:
            raise ValueError(f"{folder}/generator: not this model's generator ({missing})")
        model.generator.xylent.embeddings.word_embeddings = model.discriminator.xylent.embeddings.word_embeddings
        return model


def flops_per_token(config: XYLentConfig, seq_len: int) -> float:
    """Training FLOPs per token of the combined step (nanoGPT's estimate_mfu: 6N + 12·L·d·T, forward
    and backward), counting only matmuls: G's MLM output layer runs on the masked share of tokens,
    embedding lookups cost nothing."""
    def encoder(c: XYLentConfig) -> float:
        n = c.num_hidden_layers * (4 * c.hidden_size ** 2 + 2 * c.hidden_size * c.intermediate_size)
        return 6 * n + 12 * c.num_hidden_layers * c.hidden_size * seq_len

    g = config.generator_config()
    width = config.hidden_size
    heads = 6 * (width * width + width) + config.mask_prob * 6 * (g.hidden_size * width + width * config.vocab_size)
    return encoder(config) + encoder(g) + heads
