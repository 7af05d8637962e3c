"""Rebuild the bundled X-Y bitext sample of `pipelines.xy_corpus` (see README.md here).

    python corpora/samples/bitext/build_bitext_samples.py

X-Y pairs by pivoting the hand-written English-X sample of ../parallel through English: its four
files translate the same 42 English sentences line by line (checked here), so line k of en-ar and
line k of en-fr give an ar-fr pair. Each X-Y pair takes a different, fixed range of lines, so that
the pair counts differ, and three pairs (fr-hi, fr-vi, ar-vi) get none: the sample then has the
zero-data pairs that the Sinkhorn sampling has to handle. One file layout per reader, as ../parallel.
"""
from __future__ import annotations

import pathlib

HERE = pathlib.Path(__file__).resolve().parent
PARALLEL = HERE.parent / "parallel"
# pair -> (first line, last line), 1-based inclusive, of the 42 pivot sentences; the key's order is
# the files' column order (not English-centric, not alphabetical either: any direction is allowed).
RANGES = {"fr-ar": (1, 30), "vi-hi": (11, 30), "ar-hi": (31, 42)}


def english_x() -> dict[str, list[tuple[str, str]]]:
    """lang -> [(English, X)] from the four layouts of ../parallel."""
    def lines(name: str) -> list[str]:
        return (PARALLEL / name).read_text(encoding="utf-8").splitlines()

    pairs = {"fr": list(zip(lines("en-fr.en"), lines("en-fr.fr"))),
             "ar": [tuple(line.split("\t")) for line in lines("en-ar.tsv")],
             "vi": [tuple(line.split("\t")) for line in lines("en-vi.tsv")],
             "hi": [tuple(line.split(" ||| ")) for line in lines("en-hi.txt")]}
    english = [en for en, _ in pairs["fr"]]
    for lang, rows in pairs.items():
        if [en for en, _ in rows] != english:
            raise SystemExit(f"en-{lang}: the English side differs from en-fr.en; cannot pivot")
    return pairs


def main() -> None:
    pairs = english_x()
    side = {lang: [x for _, x in rows] for lang, rows in pairs.items()}

    def pivot(key: str) -> list[tuple[str, str]]:
        x, y = key.split("-")
        first, last = RANGES[key]
        return list(zip(side[x][first - 1:last], side[y][first - 1:last]))

    fr_ar = pivot("fr-ar")
    (HERE / "fr-ar.fr").write_text("".join(f"{a}\n" for a, _ in fr_ar), encoding="utf-8")
    (HERE / "fr-ar.ar").write_text("".join(f"{b}\n" for _, b in fr_ar), encoding="utf-8")
    (HERE / "vi-hi.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in pivot("vi-hi")), encoding="utf-8")
    (HERE / "ar-hi.txt").write_text("".join(f"{a} ||| {b}\n" for a, b in pivot("ar-hi")), encoding="utf-8")


if __name__ == "__main__":
    main()
