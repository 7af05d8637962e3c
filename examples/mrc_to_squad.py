"""wiki_mrc answerable rows -> SQuAD v1.1 JSON (train and eval files), for the walkthrough's QA step.

    python examples/mrc_to_squad.py OUTPUT/wiki_mrc/data SQUAD_DIR [--eval_every 5]

question and context are the words joined as the text had them (their space flags, schema v2; one
space between words in rows without flags); each answer span (inclusive word offsets) becomes
{"text", "answer_start"} with the character offset of its first word in that joined context. Rows are split by entity (a hash), so no entity's query is seen in both files.
Unanswerable rows are left out: SQuAD v1.1 questions always have an answer.
"""
from __future__ import annotations

import argparse
import json
import zlib
from pathlib import Path

import pyarrow.parquet as pq

from corpora.outputs import manifests
from corpora.spacing import join_words


def squad_answers(context_words: list[str], answers: list[dict], spaces: list[bool] | None = None
                  ) -> tuple[str, list[dict]]:
    """The joined context and each span's text and character start in it."""
    spaces = spaces if spaces is not None else [True] * len(context_words)
    starts, offset = [], 0
    for word, space in zip(context_words, spaces):
        starts.append(offset)
        offset += len(word) + space
    context = join_words(context_words, spaces)
    out = []
    for span in answers:
        text = join_words(context_words[span["start"]:span["end"] + 1], spaces[span["start"]:span["end"] + 1])
        start = starts[span["start"]]
        assert context[start:start + len(text)] == text
        out.append({"text": text, "answer_start": start})
    return context, out


def convert(data_dir: Path, out_dir: Path, eval_every: int = 5) -> dict[str, int]:
    splits: dict[str, list] = {"train": [], "eval": []}
    try:  # the job's train shards, once its folder was checked against its manifest
        shards = manifests.verified_shards(data_dir, split="train")
    except manifests.ManifestError as error:
        raise SystemExit(str(error)) from None
    for shard in shards:
        for row in pq.read_table(shard).to_pylist():
            if not row["answerable"]:
                continue
            context, answers = squad_answers(row["context_words"], row["answers"], row.get("context_spaces"))
            split = "eval" if zlib.crc32(f"{row['lang']}:{row['entity']}".encode()) % eval_every == 0 else "train"
            splits[split].append({
                "title": f"{row['lang']}:{row['entity']}",
                "paragraphs": [{"context": context, "qas": [
                    {"id": row["id"], "question": join_words(row["query_words"], row.get("query_spaces")
                                                             or [True] * len(row["query_words"])),
                     "answers": answers}]}],
            })
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, articles in splits.items():
        if not articles:
            raise SystemExit(f"{data_dir}: no answerable rows for the {split} split; lower --eval_every or add data")
        (out_dir / f"{split}.json").write_text(json.dumps({"version": "1.1", "data": articles}, ensure_ascii=False), encoding="utf-8")
        counts[split] = len(articles)
    return counts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="wiki_mrc's OUTPUT (or OUTPUT/data)")
    parser.add_argument("out_dir", type=Path, help="receives train.json and eval.json")
    parser.add_argument("--eval_every", type=int, default=5, help="one entity in N goes to eval.json")
    args = parser.parse_args(argv)
    counts = convert(args.data_dir, args.out_dir, args.eval_every)
    print(f"SQuAD v1.1: {counts['train']} train and {counts['eval']} eval questions in {args.out_dir}")


if __name__ == "__main__":
    main()
