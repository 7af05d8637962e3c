"""Word aligners behind one interface, and span projection through an alignment.

Three aligners, two of the kinds docs/design.md §2 asks for clism_pairs:

* `FastAlignAligner` — statistical, deterministic (Dyer et al. 2013: IBM Model 2 with a diagonal-
  favouring prior, fitted by EM; `corpora/clism/fast_align.py`, numpy). Learns from the corpus it is given,
  like eflomal, and gives the same links for the same input bit for bit, so the job's output is
  reproducible; weaker than eflomal on small corpora (see docs/clism_pairs.md).
* `EflomalAligner` — statistical (Östling & Tiedemann 2016, a Bayesian HMM+fertility model fitted
  by Gibbs sampling). It needs no weights: it learns from the corpus it is given, so it must be given
  many pairs at once (a whole language pair, or a shard of it), never one sentence. It aligns in both
  directions and symmetrises with grow-diag-final-and, like the GIZA++/fast_align set-ups the CLISM
  paper and awesome-align compare against.
* `SimAlignAligner` — neural (Jalili Sabet et al. 2020): cosine similarity of contextual subword
  embeddings from one layer of a multilingual encoder, then argmax / itermax / max-weight matching.
  The matching functions are simalign's own; the embeddings are computed here in padded batches
  (simalign embeds one pair at a time), on GPU when there is one. A call may hold any number of
  pairs: its sentences go through the encoder in length-sorted slices of at most
  `max_batch_tokens` padded subwords, so memory is set by that bound, not by the input.

Alignments are sets of 0-based (source word, target word) pairs.
"""
from __future__ import annotations

import abc
import os
import tempfile
from collections.abc import Sequence

from corpora.transformers_logging import without_load_report

Alignment = frozenset  # of (src_index, tgt_index), 0-based
WordPair = tuple[Sequence[str], Sequence[str]]

SYMMETRISATIONS = ("grow-diag-final-and", "intersection", "union", "forward", "reverse")
SIMALIGN_METHODS = {"argmax": "inter", "itermax": "itermax", "match": "mwmf"}


# ───────────────────────────── symmetrisation ─────────────────────────────

_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def symmetrise(forward: set, reverse: set, method: str = "grow-diag-final-and") -> Alignment:
    """Combine source→target and target→source links (both as (src, tgt)) into one alignment.

    grow-diag-final-and is Koehn et al.'s heuristic as in Moses/fast_align's atools: start from the
    intersection, grow into diagonal neighbours that are in the union and cover an unaligned word,
    then add union links whose both words are still unaligned.
    """
    if method == "forward":
        return Alignment(forward)
    if method == "reverse":
        return Alignment(reverse)
    union = forward | reverse
    if method == "union":
        return Alignment(union)
    alignment = set(forward & reverse)
    if method == "intersection":
        return Alignment(alignment)
    if method != "grow-diag-final-and":
        raise ValueError(f"unknown symmetrisation {method!r}: one of {', '.join(SYMMETRISATIONS)}")
    aligned_src = {i for i, _ in alignment}
    aligned_tgt = {j for _, j in alignment}
    grew = True
    while grew:
        grew = False
        for i, j in sorted(alignment):
            for di, dj in _NEIGHBOURS:
                link = (i + di, j + dj)
                if link in union and link not in alignment and (
                    link[0] not in aligned_src or link[1] not in aligned_tgt
                ):
                    alignment.add(link)
                    aligned_src.add(link[0])
                    aligned_tgt.add(link[1])
                    grew = True
    for directed in (forward, reverse):  # final-and
        for i, j in sorted(directed):
            if i not in aligned_src and j not in aligned_tgt:
                alignment.add((i, j))
                aligned_src.add(i)
                aligned_tgt.add(j)
    return Alignment(alignment)


def parse_pharaoh(line: str, reverse: bool = False) -> set[tuple[int, int]]:
    """`0-0 1-2` -> {(0, 0), (1, 2)}; with reverse, links written target-source are flipped."""
    links = set()
    for token in line.split():
        a, _, b = token.partition("-")
        links.add((int(b), int(a)) if reverse else (int(a), int(b)))
    return links


# ───────────────────────────── the interface ─────────────────────────────


class WordAligner(abc.ABC):
    """Aligns a list of (source words, target words) pairs; one alignment per pair, in order.

    `learns_from_corpus` tells the job how to feed it: a corpus-level aligner gets every pair of a
    language pair (or shard) in one call; a per-sentence aligner gets batches.
    """

    name = "aligner"
    learns_from_corpus = False

    @abc.abstractmethod
    def align(self, pairs: Sequence[WordPair]) -> list[Alignment]:
        """One alignment per pair, in order."""


class FastAlignAligner(WordAligner):
    """fast_align's model (numpy, `corpora.clism.fast_align`) over the whole corpus given, both directions,
    symmetrised. No randomness: the same pairs in the same order give the same alignments."""

    name = "fast_align"
    learns_from_corpus = True

    def __init__(self, symmetrisation: str = "grow-diag-final-and", iterations: int = 5, tension: float = 4.0,
                 p0: float = 0.08, alpha: float = 0.01, identity_prior: float = 1.0,
                 prior_stop_words: frozenset[str] = frozenset(), prefix_len: int = 0):
        if symmetrisation not in SYMMETRISATIONS:
            raise ValueError(f"unknown symmetrisation {symmetrisation!r}: one of {', '.join(SYMMETRISATIONS)}")
        self.symmetrisation = symmetrisation
        self.options = {"iterations": iterations, "tension": tension, "p0": p0, "alpha": alpha,
                        "identity_prior": identity_prior, "prior_stop_words": prior_stop_words, "prefix_len": prefix_len}

    def align(self, pairs: Sequence[WordPair]) -> list[Alignment]:
        from corpora.clism.fast_align import align_both

        if not pairs:
            return []
        forward, reverse = align_both(pairs, **self.options)
        return [symmetrise(f, r, self.symmetrisation) for f, r in zip(forward, reverse)]


class EflomalAligner(WordAligner):
    """eflomal over the whole corpus it is given, symmetrised.

    eflomal seeds its sampler from /dev/urandom and has no seed option, so two runs can differ in a
    few links; `n_samplers` independent samplers are averaged, which keeps that variation small.
    """

    name = "eflomal"
    learns_from_corpus = True

    def __init__(self, symmetrisation: str = "grow-diag-final-and", n_samplers: int = 3,
                 rel_iterations: float = 1.0, null_prior: float = 0.2, prefix_len: int = 0,
                 identity_prior: float = 1.0, prior_stop_words: frozenset[str] = frozenset()):
        if symmetrisation not in SYMMETRISATIONS:
            raise ValueError(f"unknown symmetrisation {symmetrisation!r}: one of {', '.join(SYMMETRISATIONS)}")
        self.symmetrisation = symmetrisation
        self.n_samplers, self.rel_iterations, self.null_prior = n_samplers, rel_iterations, null_prior
        # eflomal can see words by their first prefix_len characters only (a crude stemmer): on a
        # few hundred pairs that pools the counts of inflected forms (gold en-fr AER 0.18 -> 0.14 at
        # 4); on large corpora full forms are as good or better, and it suits only alphabetic scripts.
        self.prefix_len = prefix_len
        # Names, numbers and acronyms are often written identically in both languages, which a few
        # hundred pairs cannot teach the model: a Dirichlet prior of `identity_prior` per pair in
        # which a word occurs on both sides links it to itself (gold en-fr AER 0.18 -> 0.16, NER
        # spans projected exactly 0.72 -> 0.76). Stop words are left out: French "a" is not "a".
        self.identity_prior, self.prior_stop_words = identity_prior, prior_stop_words

    def align(self, pairs: Sequence[WordPair]) -> list[Alignment]:
        import eflomal

        if not pairs:
            return []
        # eflomal reads whitespace-separated lines; a word with whitespace inside would shift indices.
        src_lines = [" ".join(_clean_word(w) for w in src) for src, _ in pairs]
        tgt_lines = [" ".join(_clean_word(w) for w in tgt) for _, tgt in pairs]
        aligner = eflomal.Aligner(n_samplers=self.n_samplers, rel_iterations=self.rel_iterations,
                                  null_prior=self.null_prior, source_prefix_len=self.prefix_len,
                                  target_prefix_len=self.prefix_len)
        priors = identity_priors(src_lines, tgt_lines, self.identity_prior, self.prior_stop_words)
        with tempfile.TemporaryDirectory(prefix="eflomal-") as tmp:
            fwd_path, rev_path = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
            aligner.align(src_lines, tgt_lines, links_filename_fwd=fwd_path, links_filename_rev=rev_path,
                          priors_input=priors or None, quiet=True)
            with open(fwd_path, encoding="utf-8") as f:
                forward = [parse_pharaoh(line) for line in f]
            with open(rev_path, encoding="utf-8") as f:
                # eflomal writes reverse links as source-target too (the `-r` file of atools).
                reverse = [parse_pharaoh(line) for line in f]
        if len(forward) != len(pairs) or len(reverse) != len(pairs):
            raise RuntimeError(f"eflomal returned {len(forward)}/{len(reverse)} alignments for {len(pairs)} pairs")
        return [symmetrise(f, r, self.symmetrisation) for f, r in zip(forward, reverse)]


def identity_priors(src_lines, tgt_lines, alpha: float, skip: frozenset[str]) -> list[str]:
    """eflomal `LEX word word alpha*n` prior lines for words found on both sides of n pairs."""
    if alpha <= 0:
        return []
    counts: dict[str, int] = {}
    for src, tgt in zip(src_lines, tgt_lines):
        tgt_words = set(tgt.lower().split())
        for word in set(src.lower().split()) & tgt_words:
            if word not in skip and any(ch.isalnum() for ch in word):
                counts[word] = counts.get(word, 0) + 1
    return [f"LEX\t{w}\t{w}\t{alpha * n:g}\n" for w, n in sorted(counts.items())]


def _clean_word(word: str) -> str:
    return "".join(word.split()) or "_"


def default_layer(num_hidden_layers: int) -> int:
    """simalign's layer 8 of 12 (2/3 of the depth, its best layer for mBERT and XLM-R), scaled.

    simalign hard-codes layer=8, which does not exist in a small model; hidden_states[0] is the
    embedding layer, so any depth from 1 to num_hidden_layers is valid.
    """
    return max(1, min(num_hidden_layers, round(num_hidden_layers * 2 / 3)))


class SimAlignAligner(WordAligner):
    """simalign's matching on embeddings from `model` (a Hugging Face name or a local directory)."""

    name = "simalign"
    learns_from_corpus = False

    def __init__(self, model: str, method: str = "itermax", layer: int | None = None,
                 device: str | None = None, max_length: int = 512, max_batch_tokens: int = 8192):
        import torch
        from transformers import AutoModel, AutoTokenizer

        if method not in SIMALIGN_METHODS:
            raise ValueError(f"unknown simalign method {method!r}: one of {', '.join(SIMALIGN_METHODS)}")
        self.method = method
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        if not self.tokenizer.is_fast:
            raise ValueError(f"--aligner_model {model}: needs a fast tokenizer (word_ids) for batched alignment")
        with without_load_report():  # the pooler a masked-LM checkpoint lacks is not used here
            self.model = AutoModel.from_pretrained(model).to(self.device).eval()
        n_layers = self.model.config.num_hidden_layers
        self.layer = default_layer(n_layers) if layer is None else layer
        if not 0 <= self.layer <= n_layers:
            raise ValueError(f"--aligner_layer {self.layer}: {model} has layers 0..{n_layers}")
        self.max_length = min(max_length, getattr(self.tokenizer, "model_max_length", max_length) or max_length)
        self.max_batch_tokens = max_batch_tokens  # a longer sentence still goes through, alone

    def _subword_vectors(self, sentences: Sequence[Sequence[str]], layers: Sequence[int] | None = None):
        """Per sentence: ({layer: vectors of its subwords}, the word index of each subword).

        The encoder sees slices of the sentences sorted by length, each at most `max_batch_tokens`
        padded subwords: the hidden states of every layer (and attention's length² scores) of a slice
        are the memory, so that bound, not the number of sentences, sets the peak; sorting keeps
        padding, and so wasted compute, small.
        """
        layers = [self.layer] if layers is None else list(layers)
        lengths = [len(ids) for ids in self.tokenizer([list(s) for s in sentences], is_split_into_words=True,
                                                      truncation=True, max_length=self.max_length)["input_ids"]]
        order = sorted(range(len(sentences)), key=lambda i: lengths[i])
        out: list = [None] * len(sentences)
        start = 0
        while start < len(order):
            end = start + 1  # sorted: the slice's last sentence is its longest, its padded length
            while end < len(order) and (end + 1 - start) * lengths[order[end]] <= self.max_batch_tokens:
                end += 1
            chosen = order[start:end]
            for i, vectors in zip(chosen, self._encode([sentences[i] for i in chosen], layers)):
                out[i] = vectors
            start = end
        return out

    def _encode(self, sentences: Sequence[Sequence[str]], layers: list[int]) -> list:
        import torch

        enc = self.tokenizer([list(s) for s in sentences], is_split_into_words=True, padding=True,
                             truncation=True, max_length=self.max_length, return_tensors="pt")
        with torch.no_grad():
            inputs = {k: v.to(self.device) for k, v in enc.items()}
            states = self.model(**inputs, output_hidden_states=True).hidden_states
            hidden = {layer: states[layer].float().cpu().numpy() for layer in layers}
            del states
        out = []
        for b in range(len(sentences)):
            word_ids = enc.word_ids(b)
            keep = [t for t, w in enumerate(word_ids) if w is not None]  # drop [CLS]/[SEP]/padding
            out.append(({layer: h[b, keep] for layer, h in hidden.items()}, [word_ids[t] for t in keep]))
        return out

    @staticmethod
    def _match(src_vec, src_words, tgt_vec, tgt_words, method: str) -> Alignment:
        from simalign import SentenceAligner

        if len(src_vec) == 0 or len(tgt_vec) == 0:
            return Alignment()
        sim = SentenceAligner.get_similarity(src_vec, tgt_vec)
        if method == "argmax":
            fwd, rev = SentenceAligner.get_alignment_matrix(sim)
            matrix = fwd * rev
        elif method == "itermax":
            matrix = SentenceAligner.iter_max(sim)
        else:
            matrix = SentenceAligner.get_max_weight_match(sim)
        # simalign's "bpe" mode: align subwords, a word pair is linked if any of its subwords are.
        return Alignment((src_words[i], tgt_words[j]) for i, j in zip(*matrix.nonzero()))

    def align(self, pairs: Sequence[WordPair]) -> list[Alignment]:
        return self.align_layers(pairs, [self.layer], [self.method])[self.layer, self.method]

    def align_layers(self, pairs: Sequence[WordPair], layers: Sequence[int],
                     methods: Sequence[str]) -> dict[tuple[int, str], list[Alignment]]:
        """Alignments for every (layer, method) from one forward pass: choosing a layer costs one
        encoder run, not one per candidate."""
        for layer in layers:
            if not 0 <= layer <= self.model.config.num_hidden_layers:
                raise ValueError(f"layer {layer}: the model has layers 0..{self.model.config.num_hidden_layers}")
        for method in methods:
            if method not in SIMALIGN_METHODS:
                raise ValueError(f"unknown simalign method {method!r}: one of {', '.join(SIMALIGN_METHODS)}")
        out = {(layer, method): [] for layer in layers for method in methods}
        if not pairs:
            return out
        vectors = self._subword_vectors([s for s, _ in pairs] + [t for _, t in pairs], layers)
        n = len(pairs)
        for k in range(n):
            (src_vec, src_words), (tgt_vec, tgt_words) = vectors[k], vectors[n + k]
            for layer in layers:
                for method in methods:
                    out[layer, method].append(self._match(src_vec[layer], src_words, tgt_vec[layer], tgt_words, method))
        return out


def make_aligner(name: str, **options) -> WordAligner:
    if name == "fast_align":
        return FastAlignAligner(**{k: v for k, v in options.items() if k in ("symmetrisation", "iterations", "tension", "p0", "alpha", "identity_prior", "prior_stop_words", "prefix_len")})
    if name == "eflomal":
        return EflomalAligner(**{k: v for k, v in options.items() if k in ("symmetrisation", "n_samplers", "prefix_len", "identity_prior", "prior_stop_words")})
    if name == "simalign":
        return SimAlignAligner(options["model"], options.get("method", "itermax"), options.get("layer"),
                               options.get("device"))
    raise ValueError(f"unknown aligner {name!r}: fast_align, eflomal or simalign")


# ───────────────────────────── span projection ─────────────────────────────


def project_span(alignment, src_start: int, src_end: int, max_gap: int) -> tuple[int, int] | str:
    """The target span min..max of the words aligned to source words src_start..src_end (inclusive).

    Returns (tgt_start, tgt_end) or the reason it is rejected: "unaligned" when no source word of
    the span is aligned, "scattered" when two consecutive aligned target words are more than
    max_gap unaligned words apart (the span would swallow words that belong to something else).
    """
    targets = sorted({j for i, j in alignment if src_start <= i <= src_end})
    if not targets:
        return "unaligned"
    if any(b - a - 1 > max_gap for a, b in zip(targets, targets[1:])):
        return "scattered"
    return targets[0], targets[-1]
