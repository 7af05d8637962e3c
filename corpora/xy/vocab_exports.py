"""The merged VoCAP vocabulary in the forms its users read: a Hugging Face fast tokenizer with the
same ids (training.recipes.xylent loads it), and the plot of each language's ALP curve."""
from __future__ import annotations

import io

from corpora.xy.vocap import BOS_ID, EOS_ID, UNK_ID, load_model_proto


def hf_tokenizer(model: bytes):
    """The merged model as a Hugging Face fast tokenizer with the same ids (needs `transformers`).

    transformers 5's XLMRobertaTokenizer(vocab_file=...) may ignore the file, and its converter
    assumes XLM-R's own layout (<unk> <s> </s> first, fairseq offset): build the tokenizers object
    from our pieces directly instead, SentencePiece's normaliser included.
    """
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        normalizers,
        pre_tokenizers,
        processors,
    )
    from tokenizers.models import Unigram
    from transformers import PreTrainedTokenizerFast

    pb = load_model_proto()
    proto = pb.ModelProto()
    proto.ParseFromString(model)
    vocab = [(p.piece, p.score) for p in proto.pieces]
    tok = Tokenizer(Unigram(vocab, unk_id=UNK_ID, byte_fallback=False))
    charsmap = proto.normalizer_spec.precompiled_charsmap
    steps = [normalizers.Precompiled(charsmap)] if charsmap else []
    # SentencePiece's remove_extra_whitespaces: strip, and runs of spaces count as one
    tok.normalizer = normalizers.Sequence(
        steps + [normalizers.Strip(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", BOS_ID), ("</s>", EOS_ID)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", sep_token="</s>",
        cls_token="<s>", pad_token="<pad>", mask_token="<mask>",
    )


def plot_curves(curves: dict[str, list[tuple[int, float]]], chosen: dict[str, tuple[int, float]], title: str) -> bytes:
    """PNG of each language's ALP curve (size, alp) with its allocated point marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    for lang in sorted(curves):
        xs, ys = zip(*curves[lang]) if curves[lang] else ((), ())
        (line,) = ax.plot(xs, ys, marker=".", label=lang)
        if lang in chosen:
            ax.plot([chosen[lang][0]], [chosen[lang][1]], marker="o", markersize=10, fillstyle="none",
                    color=line.get_color())
    ax.set_xlabel("vocabulary size (pieces)")
    ax.set_ylabel("ALP (mean held-out log-probability per sentence)")
    ax.set_title(title)
    ax.legend(ncol=2, fontsize="small")
    ax.grid(alpha=0.3)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()
