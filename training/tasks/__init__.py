"""Downstream tasks in the MRC formulation of the mPMR paper (Table 6; docs/design.md §4).

Every task is turned into MRC rows (`query_words`, `context_words`, `answers` as word spans,
`answerable`), the exact input of `training.data.mpmr.MPMRCollator`, so that fine-tuning reuses
the pre-training collator and the WAE loss, and every prediction is read off the span matrix S:

* `squad`: extractive QA from SQuAD v1.1 JSON (SQuAD, MLQA, XQuAD): query = question, answer = span.
* `conll`: NER from CoNLL BIO files: one row per (sentence, entity type), query = label description.
* `pair_cls`: sentence-pair classification (XNLI, PAWS-X TSV): one row per (pair, label), the [CLS]
  cell scores the label; rationales are the best spans of S.

`reader` holds the model side shared by all of them (any encoder + the span extractor), `spans` the
decoding of S into word spans, `words` the script-aware word splitter for raw text.
"""
