"""The wiki_mrc audit: each check flags what breaks it and nothing else; on every real excerpt the
job's rows pass it (the slow test runs the job)."""
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from corpora.mrc.audit import CHECKS, audit_row, audit_rows, title_leaks
from corpora.wiki.languages import wiki_language
from corpora.mrc.audit import _markup_re
from conftest import SHARED_DATA

WIKIPEDIA = SHARED_DATA / "wikipedia"


def row(query, context, answers=((0, 0),), answerable=True, lang="en", entity="Paris"):
    return {
        "lang": lang, "entity": entity, "query_words": query.split(), "context_words": context.split(),
        "answers": [{"start": s, "end": e} for s, e in answers] if answerable else [], "answerable": answerable,
        "definition_page": 1, "mention_page": 2,
    }


def checks(r, titles=None, linked=()):
    language = wiki_language(r["lang"])
    titles = titles if titles is not None else ((r["entity"].casefold(),),)
    return set(audit_row(r, list(titles), _markup_re(r["lang"]), language.dab_phrase_re, linked))


def test_a_derivation_is_neither_a_leak_nor_a_mention():
    # "the Angolan economy" names no Angola: English inflects no name (corpora/wiki/inflections.py).
    angolan = row("[MASK] is a country . The Angolan economy grew .", "Angola exports oil ; Angolan troops", entity="Angola")
    assert checks(angolan) == set()


CLEAN = row("[MASK] is the capital of France .", "Paris is big and old .")


@pytest.mark.parametrize(
    "bad, check",
    [
        (row("[MASK] is the capital .", "Paris thumb|right|The view"), "markup"),
        (row("[MASK] is the capital .", "Paris is 250px wide"), "markup"),
        (row("[MASK] is [[the]] capital .", "Paris is big"), "markup"),
        (row("[MASK] ( ; ; ) is the capital .", "Paris is big"), "empty_brackets"),
        (row("[MASK] was founded 17751783 .", "Paris is big"), "glued_numbers"),
        (row("[MASK] քաղաք է ։", "Փարիզը մայրաքաղաքն է։", lang="hy"), "glued_marks"),
        (row("[MASK] is Paris .", "Paris is big"), "title_in_query"),
        (row("[MASK] : η ιστορία της Κρήτης .", "Κρήτη είναι", lang="el", entity="Κρήτη"), "title_in_query"),  # genitive
        (row("[MASK] ঢাকার জিডিপি ১৬২ বিলিয়ন ।", "ঢাকা শহর", lang="bn", entity="ঢাকা"), "title_in_query"),
        (row("[MASK] দেশ ।", "ভারত একটি দেশ । ভারতের রাজধানী", lang="bn", entity="ভারত"), "unmarked_mention"),
        (row("[MASK] is the capital .", "Paris is big and paris is old", answers=[(0, 0)]), "unmarked_mention"),
        (row("[MASK] is the capital .", "Rome and Paris", answerable=False), "unmarked_mention"),
        (row("[MASK] is the capital .", "Paris may refer to : a city"), "disambiguation"),
        (row("[MASK] είναι πόλη .", "Paris μικρογραφία|Η πόλη", lang="el"), "markup"),
    ],
)
def test_each_check_flags_what_breaks_it(bad, check):
    assert check in checks(bad)
    assert checks(CLEAN) == set()


def test_what_is_text_is_not_flagged():
    # A danda typed as "|" in Bengali, an HTML tag named in prose, a title inside a longer link.
    assert checks(row("[MASK] একটি শহর ।", "Paris বড় | শহর", lang="bn")) == set()
    assert checks(row("[MASK] is a city .", "Paris : < s > is an HTML tag")) == set()
    # Marks of a word: an Armenian abbreviation (մ․թ․ա․, "BC") and question accent; a lone "।".
    assert checks(row("[MASK] քաղաք է ։", "Փարիզը մ․թ․ա․ ինչու՞ է ։", lang="hy")) == set()
    # A number written without separators is no range of years: a range runs forward (hy "11351000 km2").
    assert checks(row("[MASK] ( 11351000 km2 ) .", "Paris is big")) == set()
    assert title_leaks("[MASK] uses the GNU Project licence".split(), [("gnu",)], [("GNU", "Project")], True, True) is None
    assert title_leaks("[MASK] and GNU".split(), [("gnu",)], [("GNU", "Project")], True, True) == ("gnu",)
    # A prefix glued before the link ("و[[جامعة القاهرة]]", "and Cairo University") is the same link.
    cairo = "تقع أهرامات الجيزة وجامعة القاهرة .".split()
    assert title_leaks(cairo, [("القاهرة",)], [("جامعة", "القاهرة")], True, False) is None
    assert title_leaks(cairo + ["القاهرة"], [("القاهرة",)], [("جامعة", "القاهرة")], True, False) == ("القاهرة",)


def test_report_counts_rows_per_language():
    rows = [CLEAN, row("[MASK] is Paris .", "Paris is big"), row("[MASK] ( ) x", "Paris ok", lang="de")]
    totals, flagged, _ = audit_rows(rows, lambda lang, titles: [t.split() for t in titles])
    assert totals == {"en": 2, "de": 1}
    assert flagged["en", "title_in_query"] == 1 and flagged["en", "any"] == 1 and flagged["de", "empty_brackets"] == 1
    assert set(CHECKS) >= {"markup", "title_in_query"}


EXCERPTS = {"en": "enwiki-excerpt.xml.bz2", "de": "dewiki-excerpt.xml.bz2", "el": "elwiki-excerpt.xml.bz2",
            "ja": "jawiki-excerpt.xml.bz2", "vi": "viwiki-excerpt.xml.bz2"}


@pytest.mark.slow
def test_every_real_excerpt_passes_the_audit(tmp_path):
    """The issue's bar: on each real excerpt (min mentions 2) at most 1% of rows flagged and none
    holding markup. Measured: el 7,291 rows, en 160, ja 1,388 and vi 2,486, none flagged (el had one
    before links on disambiguation pages stopped being mentions); de's 20 articles link outside the
    excerpt and give no entity."""
    paths = {lang: WIKIPEDIA / name for lang, name in EXCERPTS.items()}
    if not all(p.exists() for p in paths.values()):
        pytest.skip("the real excerpts are not in ../shared/data/wikipedia")
    dump_flags = [f"--dump={lang}={path}" for lang, path in paths.items()]
    out = tmp_path / "all"
    subprocess.run([sys.executable, "-m", "pipelines.wiki_mrc", "--runner", "DirectRunner", *dump_flags,
                    "--min_mentions_en", "2", "--min_mentions", "2", "--output", str(out)], check=True, capture_output=True)
    result = subprocess.run([sys.executable, "-m", "corpora.mrc.audit", str(out), *dump_flags], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    rows = ds.dataset(out / "data", format="parquet").to_table().to_pylist()
    langs = {r["lang"] for r in rows}
    assert langs >= {"el", "en", "ja", "vi"}
    counts = {r["lang"]: 0 for r in rows}
    for r in rows:
        counts[r["lang"]] += 1
    report = result.stdout.splitlines()
    assert report[0].split()[4] == "markup", report[0]
    audited = {line.split()[0]: line.split() for line in report[1 : 1 + len(langs)]}
    assert set(audited) == langs
    for lang, columns in audited.items():
        assert int(columns[1].replace(",", "")) == counts[lang], columns
        assert int(columns[4].replace(",", "")) == 0, f"{lang}: rows holding markup\n{result.stdout}"


def test_another_jobs_folder_is_refused_with_one_line(tmp_path):
    """A clism_pairs folder (its own schema, no `lang` column) stops with one line naming the schema;
    it used to end in a KeyError traceback."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from corpora.schemas import CLISM_SCHEMA

    (tmp_path / "data").mkdir()
    pq.write_table(pa.Table.from_pylist([], schema=CLISM_SCHEMA), tmp_path / "data" / "train-00000-of-00001.parquet")
    done = subprocess.run([sys.executable, "-m", "corpora.mrc.audit", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("rows of schema 'clism', not wiki_mrc's; give the --output folder of a wiki_mrc run")
    empty = subprocess.run([sys.executable, "-m", "corpora.mrc.audit", str(tmp_path / "none")], capture_output=True, text=True)
    assert empty.returncode == 1 and "no Parquet files" in empty.stderr and "Traceback" not in empty.stderr


def test_without_dump_flags_the_audit_reads_the_dumps_the_job_was_run_on(tmp_path, capsys):
    """A user who ran the job has named its dumps once: the audit takes them from the output's card
    (the bundled samples when the command had no --dump). Without them, run with
    `--names_in_longer_names keep`, 15 of the 42 ar sample rows were flagged title_in_query for titles
    kept inside longer links."""
    from corpora.mrc import audit as mrc_audit
    from pipelines import wiki_mrc

    out = tmp_path / "sample"
    wiki_mrc.run(["--output", str(out), "--names_in_longer_names", "keep"])
    assert mrc_audit.main([str(out)]) == 0
    assert "the dumps the job read" in capsys.readouterr().err
    card = out / "README.md"
    en = mrc_audit.recorded_dumps(out)[0]
    card.write_text(card.read_text().replace("--output", f"--dump={en} --dump 'hi=/no/such dump.xml.bz2' --output"))
    assert sorted(mrc_audit.recorded_dumps(out)) == sorted([en, "hi=/no/such dump.xml.bz2"])  # both spellings
    card.unlink()
    assert mrc_audit.main([str(out)]) == 1  # ar's kept titles count again, and the user is told why
    assert "without --dump" in capsys.readouterr().err


def test_a_title_inside_a_longer_link_is_counted_apart_from_leaks():
    from corpora.mrc.audit import title_in_longer_link

    query = "[MASK] là một hệ điều hành . [MASK] được cấp phép theo GPL của GNU Project .".split()
    titles, links = [("gnu",)], [("GNU", "Project")]
    assert title_leaks(query, titles, links, True, False, "vi") is None
    assert title_in_longer_link(query, titles, links, True, False)
    assert title_leaks(query, titles, [], True, False, "vi") == ("gnu",)  # without the dump: a leak
    assert not title_in_longer_link(query[:6], titles, links, True, False)
