"""VoCAP (Zheng et al., 2021), as used by XY-LENT §3.3: per-language vocabulary capacity and one
merged SentencePiece model. Plain Python over lists of sentences; pipelines/vocap.py runs it in Beam.

1. Per language, unigram SentencePiece models over a size grid (`train_unigram`).
2. ALP of each (`average_log_probability`): mean over held-out sentences of the sum of the log
   unigram probabilities of their pieces, the probabilities estimated from piece counts of the same
   model on the language's training sentences (add-one smoothed over the model's pieces, so that a
   held-out piece seen zero times in training has a finite log-probability).
3. Allocation (`allocate`): maximise Σ_i q_i^β · ALP_i(V_i) subject to |∪_i V_i| = T - |SPECIALS|.
   Each measured curve is replaced by its upper concave hull, so that marginal gains decrease and
   the greedy choice over marginal gain per added piece is the threshold solution; steps are taken
   until the next would overshoot, and the last pieces come from the best next step's model, by
   score, so that the union is exactly T - |SPECIALS| (unless the grid holds fewer distinct pieces).
4. Merge (`merge_models`): the union of the allocated pieces in one unigram ModelProto, special
   tokens first, scores re-estimated by Viterbi passes over a q^β-weighted mixed sample.

Special tokens: `<s> <pad> </s> <unk> <mask>` at ids 0..4. The first four are XLM-R's (fairseq)
ids; `<mask>` is 4 instead of XLM-R's last id so that it does not move with T. So the ids
SentencePiece gives are the model's ids: no fairseq offset anywhere.

Determinism: training reads the sentences in the given order (no shuffling, one thread, the
generator seeded with `set_random_generator_seed`), and every sample is chosen by a keyed hash.
"""
from __future__ import annotations

import io
import math
from collections import Counter
from dataclasses import dataclass, field

import sentencepiece as spm

from corpora.seeding import stable_hash

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
BOS_ID, PAD_ID, EOS_ID, UNK_ID, MASK_ID = range(5)
CHARACTER_COVERAGE = 0.9995
# sentencepiece_model_pb2 piece types
NORMAL, UNKNOWN, CONTROL, USER_DEFINED = 1, 2, 3, 4


def parse_grid(spec: str) -> list[int]:
    """'1000:50000:1000' -> [1000, 2000, ..., 50000]; '100,200,400' -> [100, 200, 400]."""
    try:
        if ":" in spec:
            start, stop, step = (int(x) for x in spec.split(":"))
            if step < 1 or start < 1 or stop < start:
                raise ValueError
            return list(range(start, stop + 1, step))
        sizes = sorted({int(x) for x in spec.split(",") if x.strip()})
        if not sizes or sizes[0] < 1:
            raise ValueError
        return sizes
    except ValueError:
        raise ValueError(f"--grid {spec!r}: expected START:STOP:STEP (e.g. 1000:50000:1000) or sizes a,b,c") from None


def split_heldout(sentences: list[str], fraction: float, seed: int, lang: str) -> tuple[list[str], list[str]]:
    """Held-out sentences chosen by a keyed hash of (seed, lang, text): the same whatever the order."""
    threshold = fraction * 2**64
    train, heldout = [], []
    for s in sentences:
        (heldout if stable_hash(seed, "heldout", lang, s) < threshold else train).append(s)
    if not heldout and len(train) > 1:  # a tiny language still needs one held-out sentence
        heldout.append(train.pop())
    return train, heldout


def train_unigram(sentences: list[str], vocab_size: int, seed: int = 0) -> bytes | None:
    """A serialized unigram model of at most `vocab_size` pieces (its own `<unk>` included), or None
    when the size is below what the text's characters need."""
    spm.set_random_generator_seed(seed + 1)  # 0 would mean "seed from the clock"
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences), model_writer=model, model_type="unigram",
            vocab_size=vocab_size, character_coverage=CHARACTER_COVERAGE, num_threads=1,
            shuffle_input_sentence=False, input_sentence_size=0, hard_vocab_limit=False,
            bos_id=-1, eos_id=-1, pad_id=-1, unk_id=0, minloglevel=2,
            max_sentence_length=1 << 16, train_extremely_large_corpus=False,
        )
    except RuntimeError as error:
        if "Vocabulary size is smaller than required_chars" in str(error):
            return None
        raise
    return model.getvalue()


def processor(model: bytes) -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_proto=model)


def model_pieces(model: bytes) -> list[tuple[str, float]]:
    """The normal pieces of a model with their scores, best first (the model's own order)."""
    sp = processor(model)
    return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())
            if not (sp.is_unknown(i) or sp.is_control(i) or sp.is_unused(i))]


def unigram_log_probs(segmented: list[list[str]], pieces: list[str]) -> dict[str, float]:
    """log p(piece) = log((count + 1) / (N + |pieces|)), counts over the segmented sentences."""
    counts = Counter(p for sentence in segmented for p in sentence)
    vocab = set(pieces) | set(counts)
    total = sum(counts.values()) + len(vocab)
    return {p: math.log((counts.get(p, 0) + 1) / total) for p in vocab}


def alp_of_segmentations(train: list[list[str]], heldout: list[list[str]], pieces: list[str]) -> float:
    """ALP from segmentations: the definition, separate from SentencePiece so it can be hand-checked."""
    if not heldout:
        return float("nan")
    log_p = unigram_log_probs(train, pieces)
    return sum(sum(log_p[p] for p in sentence) for sentence in heldout) / len(heldout)


def average_log_probability(model: bytes, train: list[str], heldout: list[str]) -> float:
    sp = processor(model)
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    return alp_of_segmentations(segment(sp, train), segment(sp, heldout), pieces)


def segment(sp: spm.SentencePieceProcessor, sentences: list[str]) -> list[list[str]]:
    """Pieces by id, so that an unknown character counts as `<unk>` (out_type=str gives its surface)."""
    return [[sp.id_to_piece(i) for i in ids] for ids in sp.encode(sentences)]


@dataclass
class GridPoint:
    size: int  # the model's piece count (may be below the requested size for small text)
    requested: int
    alp: float
    model: bytes = field(repr=False)


def alp_curve(train: list[str], heldout: list[str], grid: list[int], seed: int = 0,
              progress=None) -> list[GridPoint]:
    """One model per grid size; sizes the text cannot fill give the same model and are kept once."""
    points: list[GridPoint] = []
    for requested in grid:
        model = train_unigram(train, requested, seed)
        if model is None:
            continue
        size = processor(model).get_piece_size()
        if points and size <= points[-1].size:
            break  # the text holds no more pieces: larger sizes give the same model
        points.append(GridPoint(size, requested, average_log_probability(model, train, heldout), model))
        if progress:
            progress(points[-1])
    return points


def smoothed_shares(sizes: dict[str, int], alpha: float) -> dict[str, float]:
    """q_i = n_i^α / Σ_j n_j^α (XLM-R/VoCAP style exponent smoothing of the data shares)."""
    weights = {lang: max(n, 1) ** alpha for lang, n in sizes.items()}
    total = sum(weights.values())
    return {lang: w / total for lang, w in weights.items()}


def upper_hull(points: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Upper concave hull of (size, alp) points sorted by size: marginal gains decrease along it."""
    hull: list[tuple[int, float]] = []
    for x, y in sorted(points):
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            # drop the middle point when it lies on or below the chord from hull[-2] to (x, y)
            if (y2 - y1) * (x - x1) <= (y - y1) * (x2 - x1):
                hull.pop()
            else:
                break
        if hull and y <= hull[-1][1]:
            continue  # a larger vocabulary that does not raise ALP is never worth choosing
        hull.append((x, y))
    return hull


@dataclass
class Allocation:
    sizes: dict[str, int]  # pieces allocated to each language
    grid_sizes: dict[str, int]  # the grid model each language's pieces come from
    alps: dict[str, float]  # ALP at the allocated size (the hull, interpolated for a partial step)
    pieces: dict[str, list[str]]  # each language's allocated pieces
    union: list[str]  # the union, languages in sorted order, each language's pieces best first
    target: int  # T - |SPECIALS|, the union size asked for


class VocabularyTooSmall(ValueError):
    """The size asked for cannot hold even the smallest grid model of every language: known only once
    the models are trained on the text, so the job counts it as fatal rather than checking up front."""


def allocate(curves: dict[str, list[GridPoint]], weights: dict[str, float], total_size: int) -> Allocation:
    """Greedy over marginal weighted ALP gain per added union piece on the concave hulls.

    `weights` are q_i^β. Every language starts at its smallest hull point (its characters); then,
    while the union is below the target, the step with the largest weight · ΔALP / Δsize is taken.
    A step replaces the language's pieces by its next hull model's (unigram models of different
    sizes are not nested), so the union is recounted. The step that would overshoot is taken in part:
    the language keeps its pieces and adds the next model's new pieces, best first, until the union
    holds exactly the target. Raises ValueError when the smallest models alone exceed the target.
    """
    target = total_size - len(SPECIALS)
    hulls, pieces_at = {}, {}
    for lang, curve in curves.items():
        by_size = {p.size: p for p in curve}
        hulls[lang] = upper_hull([(p.size, p.alp) for p in curve if not math.isnan(p.alp)]) or \
            [(curve[0].size, 0.0)]
        pieces_at[lang] = {s: [piece for piece, _ in model_pieces(by_size[s].model)] for s, _ in hulls[lang]}
    position = {lang: 0 for lang in curves}
    chosen = {lang: list(pieces_at[lang][hulls[lang][0][0]]) for lang in sorted(curves)}
    holders = Counter(p for pieces in chosen.values() for p in set(pieces))  # piece -> languages holding it
    if len(holders) > target:
        raise VocabularyTooSmall(f"vocabulary size {total_size:,} is below the {len(holders) + len(SPECIALS):,} pieces the "
                                 "smallest grid models need (special tokens included); raise --vocab_size or start --grid lower")
    alps = {lang: hulls[lang][0][1] for lang in curves}
    while len(holders) < target:
        best = None
        for lang in sorted(curves):
            i = position[lang]
            if i + 1 >= len(hulls[lang]):
                continue
            (x0, y0), (x1, y1) = hulls[lang][i], hulls[lang][i + 1]
            gain = weights[lang] * (y1 - y0) / (x1 - x0)
            if best is None or gain > best[0]:
                best = (gain, lang)
        if best is None:
            break  # every language is at its largest model: the grid holds fewer pieces than asked
        lang = best[1]
        position[lang] += 1
        (x0, y0), (x1, y1) = hulls[lang][position[lang] - 1], hulls[lang][position[lang]]
        step, old = pieces_at[lang][x1], chosen[lang]
        # Unigram models of different sizes are not nested: the step replaces the language's pieces
        after = Counter(holders)
        after.subtract(set(old))
        after.update(set(step))
        after = +after
        if len(after) <= target:
            chosen[lang], holders, alps[lang] = list(step), after, y1
            continue
        # the step overshoots: keep the old pieces and add the step's new pieces, best first, to fill
        taken = [p for p in step if p not in holders][: target - len(holders)]
        chosen[lang] = old + taken
        holders.update(taken)
        fraction = len(taken) / max(1, len([p for p in step if p not in set(old)]))
        alps[lang] = y0 + min(1.0, fraction) * (y1 - y0)
        break
    union: list[str] = []
    seen: set[str] = set()
    for lang in sorted(curves):
        for p in chosen[lang]:
            if p not in seen:
                seen.add(p)
                union.append(p)
    return Allocation(
        sizes={lang: len(chosen[lang]) for lang in sorted(curves)},
        grid_sizes={lang: hulls[lang][position[lang]][0] for lang in sorted(curves)},
        alps=alps, pieces={lang: chosen[lang] for lang in sorted(curves)}, union=union, target=target,
    )


def mixed_sample(sentences: dict[str, list[str]], weights: dict[str, float], size: int, seed: int) -> list[str]:
    """About min(size, all sentences) sentences, language i contributing a share weights_i / Σ weights,
    each language's sentences drawn (with repetition when it has too few) by keyed hash; sorted by that
    hash, so the order is a pure function of the seed and the text."""
    total = sum(weights.values())
    size = min(size, sum(len(pool) for pool in sentences.values()))
    keyed = []
    for lang in sorted(sentences):
        pool = sentences[lang]
        if not pool:
            continue
        want = max(1, round(size * weights[lang] / total))
        ranked = sorted(pool, key=lambda s: stable_hash(seed, "mix", lang, s))
        for k in range(want):
            s = ranked[k % len(ranked)]
            keyed.append((stable_hash(seed, "mix-order", lang, s, k), s))
    return [s for _, s in sorted(keyed)]


def load_model_proto():
    from sentencepiece import (
        sentencepiece_model_pb2,  # needs protobuf < 7: pin sentencepiece<0.2.2
    )
    return sentencepiece_model_pb2


def build_model(template: bytes, pieces: list[tuple[str, float]]) -> bytes:
    """A unigram ModelProto with SPECIALS at ids 0..4 then `pieces`, the normaliser of `template`."""
    pb = load_model_proto()
    proto = pb.ModelProto()
    proto.ParseFromString(template)
    del proto.pieces[:]
    for piece, kind in zip(SPECIALS, (CONTROL, CONTROL, CONTROL, UNKNOWN, USER_DEFINED)):
        proto.pieces.add(piece=piece, score=0.0, type=kind)
    for piece, score in pieces:
        proto.pieces.add(piece=piece, score=score, type=NORMAL)
    spec = proto.trainer_spec
    spec.vocab_size = len(proto.pieces)
    spec.bos_id, spec.pad_id, spec.eos_id, spec.unk_id = BOS_ID, PAD_ID, EOS_ID, UNK_ID
    spec.bos_piece, spec.pad_piece, spec.eos_piece, spec.unk_piece = SPECIALS[:4]
    del spec.user_defined_symbols[:]
    spec.user_defined_symbols.append("<mask>")
    spec.hard_vocab_limit = False
    return proto.SerializeToString()


def merge_models(template: bytes, union: list[str], initial_scores: dict[str, float],
                 mixed: list[str], passes: int = 3) -> bytes:
    """The merged model: scores from `initial_scores`, then `passes` Viterbi (hard EM) passes over the
    mixed sample: segment it with the current model, score = log((count + 1) / (N + |union|)).
    Every allocated piece stays, so the vocabulary is exactly the allocation."""
    floor = min(initial_scores.values(), default=-20.0) - 1.0
    scores = {p: initial_scores.get(p, floor) for p in union}
    model = build_model(template, _ranked(scores, union))
    for _ in range(passes):
        sp = processor(model)
        counts = Counter(p for sentence in segment(sp, mixed) for p in sentence)
        total = sum(counts.get(p, 0) for p in union) + len(union)
        scores = {p: math.log((counts.get(p, 0) + 1) / total) for p in union}
        model = build_model(template, _ranked(scores, union))
    return model


def _ranked(scores: dict[str, float], union: list[str]) -> list[tuple[str, float]]:
    order = {p: i for i, p in enumerate(union)}
    return sorted(((p, scores[p]) for p in union), key=lambda ps: (-ps[1], order[ps[0]]))


def vocab_text(model: bytes) -> str:
    """`spm.vocab`: piece TAB score per line, as spm_train writes it."""
    sp = processor(model)
    return "".join(f"{sp.id_to_piece(i)}\t{sp.get_score(i):g}\n" for i in range(sp.get_piece_size()))


def initial_scores(chosen: dict[str, list[tuple[str, float]]], weights: dict[str, float]) -> dict[str, float]:
    """A piece's starting score: log Σ_i (w_i / Σ w) · p_i(piece), p_i from language i's model scores."""
    total = sum(weights.values())
    mass: dict[str, float] = {}
    for lang, pieces in chosen.items():
        for piece, score in pieces:
            mass[piece] = mass.get(piece, 0.0) + weights[lang] / total * math.exp(score)
    return {p: math.log(m) for p, m in mass.items()}
