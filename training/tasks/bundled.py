"""The bundled fine-tuning samples (training/tasks/samples/, licences and attribution in its README).

With no --train/--eval, `training.finetune --task T` and `training.finetune_clism` run on these, as the
data jobs run on their bundled samples: a first run needs no download. Each is a cross-lingual
set-up cut from a real, openly licensed set: train in one language, evaluate in another.

    python -m training.tasks.bundled --shared ../shared/data     # cut them again (byte-identical)

The cut is fixed (first articles / sentences / pairs in file order, no randomness), so the files are
the same whoever cuts them; tests/test_finetune_samples.py checks that against ../shared/data.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent / "samples"

# task -> (train file, eval file), relative to SAMPLES
SAMPLE_FILES = {
    "squad": ("squad/train.en.json", "squad/eval.de.json"),
    "ner": ("ner/train.en.iob", "ner/eval.de.iob"),
    "pair": ("pair/train.de.tsv", "pair/eval.de.tsv"),
}

# XQuAD: English articles 1-4 to train (135 questions: enough for finetune_clism --few_shot 64,128),
# German articles 47-48 to evaluate: other articles, so no context is seen in training.
SQUAD_TRAIN_ARTICLES = slice(0, 4)
SQUAD_EVAL_ARTICLES = slice(46, 48)
NER_TRAIN_SENTENCES, NER_EVAL_SENTENCES = 120, 80
PAIR_TRAIN_PAIRS, PAIR_EVAL_PAIRS = 120, 60


def sample_paths(task: str) -> tuple[str, str]:
    train, evaluation = SAMPLE_FILES[task]
    return str(SAMPLES / train), str(SAMPLES / evaluation)


def _squad_cut(source: Path, articles: slice) -> str:
    data = json.loads(gzip.open(source, "rt", encoding="utf-8").read())
    cut = {"data": data["data"][articles], "version": data["version"]}
    return json.dumps(cut, ensure_ascii=False, separators=(",", ":")) + "\n"


def _first_sentences(source: Path, n: int) -> str:
    """The first n blank-line-separated sentences, lines unchanged (the `en:` token prefixes too)."""
    blocks = source.read_text(encoding="utf-8").split("\n\n")
    return "\n\n".join(blocks[:n]) + "\n\n"


def _first_lines(source: Path, n: int) -> str:
    """The header and the first n pairs, unchanged."""
    return "".join(source.read_text(encoding="utf-8").splitlines(keepends=True)[: n + 1])


def cut_samples(shared_data: Path) -> dict[str, str]:
    """{file relative to SAMPLES: its text}, cut from the sets in ../shared/data/eval."""
    ev = Path(shared_data) / "eval"
    return {
        "squad/train.en.json": _squad_cut(ev / "xquad/xquad.en.json.gz", SQUAD_TRAIN_ARTICLES),
        "squad/eval.de.json": _squad_cut(ev / "xquad/xquad.de.json.gz", SQUAD_EVAL_ARTICLES),
        "ner/train.en.iob": _first_sentences(ev / "wikiann/en/train", NER_TRAIN_SENTENCES),
        "ner/eval.de.iob": _first_sentences(ev / "wikiann/de/test", NER_EVAL_SENTENCES),
        "pair/train.de.tsv": _first_lines(ev / "pawsx-de/dev.tsv", PAIR_TRAIN_PAIRS),
        "pair/eval.de.tsv": _first_lines(ev / "pawsx-de/test.tsv", PAIR_EVAL_PAIRS),
    }


def main(argv=None) -> None:
    from corpora.cli_flags import CommandParser

    parser = CommandParser(prog="python -m training.tasks.bundled", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", required=True, metavar="DIR", help="the real-data folder (../shared/data)")
    parser.add_argument("--output", default=str(SAMPLES), metavar="DIR", help="where to write (default: the package's)")
    args = parser.parse_args(argv)
    for name, text in cut_samples(Path(args.shared)).items():
        path = Path(args.output) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"{path}: {len(text.encode()):,} bytes")


if __name__ == "__main__":
    main()
