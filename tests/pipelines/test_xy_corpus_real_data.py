"""xy_corpus on real text: English Wikipedia paragraphs and the awesome-align gold bitext (en-fr,
and ro-en with Romanian first), with a vocabulary from the vocap job on the same text.

Real bitext that installs offline is English-centric, so this is also the paper's failure case for
Eq. 2 on real counts: the mass that the balanced plan must put on pairs with no data is reported.
"""
from __future__ import annotations

import collections
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import sentencepiece as spm

from corpora.dumps import pages as dumps
from corpora.xy import sinkhorn
from corpora.xy.vocap import BOS_ID, EOS_ID
from corpora.wikitext.parse import parse_wikitext
from pipelines import common
from pipelines import vocap as vocap_job
from pipelines import xy_corpus as job
from test_xy_corpus_job import rows
from conftest import SHARED_DATA

SHARED = SHARED_DATA
GOLD = SHARED / "alignment-gold"
pytestmark = [pytest.mark.skipif(not GOLD.exists(), reason="../shared/data is not beside this checkout"),
              pytest.mark.slow]  # the whole job on real NTREX and Wikipedia text


def wikipedia_paragraphs(n: int) -> list[str]:
    """The first n paragraphs (over 40 characters) of the English excerpt, rendered to plain text."""
    path = SHARED / "wikipedia" / "enwiki-excerpt.xml.bz2"
    lines = []
    with open(path, "rb") as f:
        for page in dumps.iter_pages_from_file(f, str(path), "bz2"):
            if isinstance(page, dumps.RawPage) and page.ns == 0 and not page.redirect:
                lines += [s.strip() for s in parse_wikitext(page.text, "en").text.split("\n") if len(s.strip()) > 40]
            if len(lines) >= n:
                return lines[:n]
    return lines


def gold_side(name: str, side: int) -> list[str]:
    return [line.split(" ||| ")[side].strip() for line in (GOLD / name).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("real")
    texts = {"en": wikipedia_paragraphs(300), "fr": gold_side("enfr.src-tgt", 1), "ro": gold_side("roen.src-tgt", 0)}
    mono = []
    for lang, lines in texts.items():
        (tmp / f"{lang}.txt").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        mono += ["--mono", f"{lang}={tmp / f'{lang}.txt'}"]
    vocap_job.run([*mono, "--vocab_size", "2000", "--grid", "400:1600:400", "--output", str(tmp / "vocap")])
    out = tmp / "xy"
    stats = common.stats_by_lang(job.run([
        *mono, "--bitext", f"en-fr={GOLD / 'enfr.src-tgt'}", "--bitext", f"ro-en={GOLD / 'roen.src-tgt'}",
        "--vocab", str(tmp / "vocap" / "spm.model"), "--output", str(out)]))
    return tmp, out, stats, texts


def test_real_english_centric_counts(real_run):
    _, out, stats, _ = real_run
    assert stats["en-fr"]["pairs/usable"] == 447 and stats["en-ro"]["pairs/usable"] == 248
    probs = {(r["src_lang"], r["tgt_lang"]): r for r in pq.read_table(out / "pair_probs.parquet").to_pylist()}
    assert set(k for k, r in probs.items() if r["prob"] > 0) == {("en", "fr"), ("en", "ro")}
    # English is in every pair: the pairs with data carry 2·m_en of the plan, the rest is removed
    shares = sinkhorn.language_shares(sinkhorn.count_matrix({("en", "fr"): 447, ("en", "ro"): 248})[1])
    m_en = sinkhorn.temperature_marginal(shares, job.DEFAULT_TEMPERATURE)[0]
    removed = sum(r["plan_mass"] for r in probs.values() if not r["pairs"])
    assert removed == pytest.approx(1 - 2 * m_en, abs=1e-6)
    assert stats["all"]["sinkhorn/removed_mass_ppb"] == pytest.approx(removed * 1e9, abs=2)
    # ro-en was given with Romanian first: its rows keep that order unless flipped
    trtd = [r for r in rows(out, "trtd") if "ro" in (r["src_lang"], r["tgt_lang"])]
    assert trtd and all((r["src_lang"] == "ro") != r["flipped"] for r in trtd)


def test_real_paragraphs_span_sequences_and_keep_every_token(real_run):
    tmp, out, stats, texts = real_run
    sp = spm.SentencePieceProcessor(model_file=str(tmp / "vocap" / "spm.model"))
    by_lang = collections.defaultdict(list)
    for r in rows(out, "mrtd"):
        assert len(r["input_ids"]) <= 512 and r["input_ids"][0] == BOS_ID
        by_lang[r["lang"]].append(r)
    encoded = {lang: [sp.encode(line) for line in lines] for lang, lines in texts.items()}
    assert max(len(ids) for ids in encoded["en"]) > 512  # some paragraphs continue in the next sequence
    for lang, sequences in by_lang.items():
        stream = [t for r in sorted(sequences, key=lambda r: r["id"]) for t in r["input_ids"][1:]]
        assert stream == [t for ids in encoded[lang] for t in (*ids, EOS_ID)], lang


def test_unknown_tokens_are_counted_and_a_language_the_vocabulary_lacks_is_named(real_run, tmp_path, capsys):
    tmp, out, stats, _ = real_run
    unk = spm.SentencePieceProcessor(model_file=str(tmp / "vocap" / "spm.model")).unk_id()
    for lang in ("en", "fr", "ro"):
        in_rows = sum(r["input_ids"].count(unk) for r in rows(out, "mrtd") if r["lang"] == lang)
        assert stats[lang].get("mrtd/unknown_tokens", 0) == in_rows, lang
    # Greek (NTREX) through the en/fr/ro vocabulary: mostly <unk>, which only this line said.
    greek = tmp_path / "el.txt"
    greek.write_text("".join((SHARED / "parallel" / "ntrex128" / "el.txt").read_text(encoding="utf-8").splitlines(True)[:50]),
                     encoding="utf-8")
    capsys.readouterr()
    job.run(["--mono", f"en={tmp / 'en.txt'}", "--mono", f"fr={tmp / 'fr.txt'}", "--mono", f"el={greek}",
             "--bitext", f"en-fr={GOLD / 'enfr.src-tgt'}",
             "--vocab", str(tmp / "vocap" / "spm.model"), "--output", str(tmp_path / "xy")])
    warnings = [line for line in capsys.readouterr().err.splitlines() if "<unk>" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: el: ") and "python -m pipelines.vocap" in warnings[0]
