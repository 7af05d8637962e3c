"""Held-out evaluation during pre-training: numbers that say whether the model learns.

The training losses do not: mPMR's WAE loss is a mean over ~33k span cells per row against one to
three positives and the [CLS] cell, so "no span anywhere" already makes it tiny (0.0003 after 40
steps on the Greek excerpt, having learnt nothing). Every `--eval_every` steps `training.run` runs
one pass over at most `--eval_batches` held-out batches and logs, per model:

- mPMR: answerability accuracy and ROC AUC from the [CLS] cell; on answerable rows the best context
  span's exact match and token F1, at the decoding threshold (sigmoid(S) > 0.5: below it the model
  answers nothing, which scores 0), and the same F1 without the threshold (is the argmax right yet?).
- CLISM: exact match of the `[QUE]` answers (start and end argmax both right) and CACR retrieval
  accuracy: each source sentence, encoded alone, retrieves its translation, encoded alone, among the
  batch's targets by cosine of the mean-pooled states (chance: 1 / batch size, logged beside it).
- XY-LENT: the generator's MLM accuracy on the masked tokens and the discriminator's precision,
  recall and F1 on the replaced tokens (masks and samples from a generator seeded per eval batch, so
  every pass sees the same corruption and the training RNG is never touched).

Each metric overall and per language (mPMR `lang`; CLISM the target language; XY-LENT the MRTD
language or the TRTD pair). DDP: every rank evaluates its share of the batches (batch k on rank
k mod world) and the ranks' tallies (sums and counts, [CLS] scores for the AUC) are gathered and
added before any division, so the numbers are those of one process on all the batches.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import torch
import torch.nn.functional as F

from corpora.seeding import stable_hash
from corpora.schemas import XY_MRTD_SCHEMA, XY_TRTD_SCHEMA, XY_TRTD_SCHEMA_V1
from training.data import check_shards, data_root, list_shards, read_metadata, read_row_group
from training.eval_tally import OVERALL, Tally, f1_from_counts, gather, ratio, roc_auc, word_span_f1
from training.run_setup import autocast_for

DECODING_THRESHOLD = 0.5  # sigmoid(S) > 0.5, i.e. logit > 0: training.finetune's --threshold default


class EvalDataError(ValueError):
    """Held-out data asked for but missing or unusable: one line naming the flag."""


# ---- held-out data ----

def _root(data_dir: str | Path, flag: str = "--data") -> Path:
    return data_root(data_dir, flag)  # the job's --output, or a folder inside it (corpora/outputs/manifests.py)


def split_files(root: Path, sub: str, split: str, flag: str) -> list[Path]:
    """A split's shards of the table `sub` ("" = the job's rows), checked against the manifest; [] when
    the job wrote no such split."""
    return list_shards(root, split, table=sub or None, required=False, flag=flag)


def read_rows(files: list[Path], columns: list[str], limit: int, optional_columns: list[str] = ()) -> list[dict]:
    """The first `limit` rows in file order, a row group at a time (the jobs write rows in a seeded
    random order, so the first rows are a fair sample of the split); `optional_columns` too where a
    file has them."""
    rows: list[dict] = []
    for f in files:
        meta = read_metadata(f)
        present = set(meta.schema.to_arrow_schema().names)
        wanted = [*columns, *(c for c in optional_columns if c in present)]
        for group in range(meta.num_row_groups):
            if len(rows) >= limit:
                return rows
            rows.extend(read_row_group(f, group, wanted)[: limit - len(rows)])
    return rows


def find_eval_files(data: str, eval_data: str | None, subfolders: tuple[str, ...] = ("",)) -> tuple[list[list[Path]], str] | None:
    """The held-out shards, one list per sub-folder (XY-LENT: mrtd, trtd), and where they are; None when
    there are none. Default: --data's `test-*` split (wiki_mrc --test_entities). --eval_data DIR: its
    `test-*` split, else its `train-*` shards (another job's output kept apart for evaluation)."""
    def describe(root: Path, split: str) -> str:
        inner = "" if subfolders == ("",) else "{" + ",".join(subfolders) + "}/"
        return f"{root}/{inner}{split}-*.parquet"

    if eval_data is None:
        found = [split_files(_root(data), sub, "test", "--data") for sub in subfolders]
        return (found, describe(_root(data), "test")) if all(found) else None
    if not Path(eval_data).exists():
        raise EvalDataError(f"--eval_data {eval_data}: folder not found")
    for split in ("test", "train"):
        found = [split_files(_root(eval_data, "--eval_data"), sub, split, "--eval_data") for sub in subfolders]
        if all(found):
            return found, describe(_root(eval_data), split)
    raise EvalDataError(f"--eval_data {eval_data}: no test-*.parquet or train-*.parquet shards in "
                        f"{describe(_root(eval_data), '*').replace('/*-*.parquet', '')}")


def batch_rng(seed: int, index: int, device: torch.device) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(stable_hash(seed, "eval", index))


# ---- per model ----

def tally_mpmr(span_logits: torch.Tensor, batch: dict, groups: list[str], tally: Tally) -> None:
    """Add one batch's mPMR counts: from the span logits S [B, T, T] and the collated batch alone."""
    from training.models.mpmr import best_spans

    spans, best_logits, cls_logits = (t.cpu() for t in best_spans(span_logits, batch["context_mask"]))
    context_word = batch["context_word"].cpu()
    gold: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for b, i, j in batch["answer_spans"].tolist():  # the collated answers: those the truncation left
        gold[b].append((int(context_word[b, i]), int(context_word[b, j])))
    answerable = batch["answerable"].bool().tolist()
    for b, group in enumerate(groups):
        cls = float(cls_logits[b])
        tally.score(group, cls, answerable[b])
        tally.add(group, rows=1, answerable=answerable[b],
                  answerable_right=(cls > 0) == answerable[b])  # logit > 0 <=> sigmoid > 0.5
        if not (answerable[b] and gold[b]):  # a sentence-pair row is answerable without spans
            continue
        top1 = (int(context_word[b, spans[b, 0]]), int(context_word[b, spans[b, 1]]))
        decoded = top1 if float(best_logits[b]) > 0 else None  # under the threshold: no answer
        tally.add(group, span_rows=1, no_span=decoded is None,
                  span_em=decoded in gold[b], span_f1=max(word_span_f1(decoded, g) for g in gold[b]),
                  top1_span_em=top1 in gold[b], top1_span_f1=max(word_span_f1(top1, g) for g in gold[b]))


class MPMREvaluator:
    metrics = ("loss", "answerable_acc", "answerable_auc", "answerable_share", "span_em", "span_f1", "top1_span_em",
               "top1_span_f1", "no_span_share")
    # Not span_f1 at the threshold: on the Greek excerpt it stays 0 for the first 200+ steps of a tiny run
    # (every answer cell still under 0.5) while the top-1 span already improves; ties at 0 would keep the
    # first pass as best/. Top-1 is also how the QA fine-tuning the paper selects by decodes.
    default_select = "top1_span_f1"

    def __init__(self, spec, cfg, tokenizer):
        self.collate = spec.collator(cfg, tokenizer)
        self.columns = [*spec.columns, "lang"]

    def prepare(self, rows: list[dict], index: int) -> tuple[dict, list[str]]:
        return self.collate(rows), [r["lang"] for r in rows]

    @torch.no_grad()
    def tally(self, model, batch: dict, groups: list[str], index: int, tally: Tally) -> None:
        from training.models.mpmr import wae_loss

        logits = model.span_logits(batch["input_ids"], batch["attention_mask"]).float()
        loss = wae_loss(logits, batch["context_mask"], batch["answerable"], batch["answer_spans"])
        tally.add(OVERALL, loss_sum=float(loss), batches=1)
        tally_mpmr(logits, batch, groups, tally)

    @staticmethod
    def summarize(tally: Tally, group: str) -> dict[str, float]:
        s = {name: tally.sums[(group, name)] for g, name in tally.sums if g == group}
        out = {"loss": ratio(s.get("loss_sum", 0), s.get("batches", 0))} if group == OVERALL else {}
        scored = [(score, label) for g, score, label in tally.scores if group in (OVERALL, g)]
        out["answerable_acc"] = ratio(s.get("answerable_right", 0), s.get("rows", 0))
        out["answerable_auc"] = roc_auc([x for x, _ in scored], [y for _, y in scored])
        out["answerable_share"] = ratio(s.get("answerable", 0), s.get("rows", 0))
        for name in ("span_em", "span_f1", "top1_span_em", "top1_span_f1"):
            out[name] = ratio(s.get(name, 0), s.get("span_rows", 0))
        out["no_span_share"] = ratio(s.get("no_span", 0), s.get("span_rows", 0))
        return out

    @staticmethod
    def rows_evaluated(tally: Tally) -> int:
        return int(tally.sums[(OVERALL, "rows")])


class CLISMEvaluator:
    metrics = ("clism_loss", "que_em", "cacr_retrieval_acc", "cacr_retrieval_chance")
    default_select = "que_em"

    def __init__(self, spec, cfg, tokenizer):
        # No MLM noise in the held-out input, and the source-alone pass that CACR retrieval needs.
        self.collate = spec.collator(cfg.replace(no_mlm=True, no_cacr=False), tokenizer)
        self.columns = [*spec.columns, "tgt_lang"]
        self.bos, self.eos, self.pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id

    def prepare(self, rows: list[dict], index: int) -> tuple[dict, list[str]]:
        return self.collate(rows), [r["tgt_lang"] for r in rows]

    def _target_alone(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`<s> target </s>` per row, cut out of the joint input (unmasked: the eval collator has no MLM)."""
        targets = [ids[mask] for ids, mask in zip(batch["input_ids"], batch["target_mask"])]
        longest = max(len(t) for t in targets) + 2
        ids = torch.full((len(targets), longest), self.pad, dtype=torch.long, device=batch["input_ids"].device)
        inner = torch.zeros_like(ids, dtype=torch.bool)
        for b, t in enumerate(targets):
            ids[b, 0], ids[b, 1:len(t) + 1], ids[b, len(t) + 1] = self.bos, t, self.eos
            inner[b, 1:len(t) + 1] = True
        attention = (torch.arange(longest, device=ids.device)[None] < torch.tensor(
            [len(t) + 2 for t in targets], device=ids.device)[:, None]).long()
        return ids, attention, inner

    @torch.no_grad()
    def tally(self, model, batch: dict, groups: list[str], index: int, tally: Tally) -> None:
        from training.models.clism import clism_loss, masked_mean

        hidden = model.encode(batch["input_ids"], batch["attention_mask"])
        start, end = model.question_logits(hidden, batch["que_positions"], batch["target_mask"])
        asked = batch["answer_start"] != -100
        right = (start.argmax(-1) == batch["answer_start"]) & (end.argmax(-1) == batch["answer_end"]) & asked
        tally.add(OVERALL, loss_sum=float(clism_loss(start, end, batch["answer_start"], batch["answer_end"])),
                  batches=1)
        r_s = masked_mean(model.encode(batch["source_input_ids"], batch["source_attention_mask"]),
                          batch["source_alone_mask"])
        ids, attention, inner = self._target_alone(batch)
        r_t = masked_mean(model.encode(ids, attention), inner)
        cosine = F.normalize(r_s, dim=-1) @ F.normalize(r_t, dim=-1).T
        retrieved = (cosine.argmax(1) == torch.arange(len(groups), device=cosine.device)).tolist()
        asked_n, right_n = asked.sum(1).tolist(), right.sum(1).tolist()
        for b, group in enumerate(groups):
            tally.add(group, rows=1, questions=asked_n[b], que_right=right_n[b], retrieved=retrieved[b],
                      chance=1 / len(groups))

    @staticmethod
    def summarize(tally: Tally, group: str) -> dict[str, float]:
        s = {name: tally.sums[(group, name)] for g, name in tally.sums if g == group}
        out = {"clism_loss": ratio(s.get("loss_sum", 0), s.get("batches", 0))} if group == OVERALL else {}
        out.update({"que_em": ratio(s.get("que_right", 0), s.get("questions", 0)),
                    "cacr_retrieval_acc": ratio(s.get("retrieved", 0), s.get("rows", 0)),
                    "cacr_retrieval_chance": ratio(s.get("chance", 0), s.get("rows", 0))})
        return out

    @staticmethod
    def rows_evaluated(tally: Tally) -> int:
        return int(tally.sums[(OVERALL, "rows")])


def tally_rtd(masked: torch.Tensor, gen_right: torch.Tensor, replaced: torch.Tensor, predicted: torch.Tensor,
              real: torch.Tensor, groups: list[str], tally: Tally) -> None:
    """Add one batch's XY-LENT counts, all [B, T] bool: masked for G, G's argmax right, replaced in D's
    input, D says "replaced", a real (not padding) token."""
    counts = {"masked": masked.sum(1), "gen_right": (gen_right & masked).sum(1), "replaced": (replaced & real).sum(1),
              "true_positive": (predicted & replaced & real).sum(1), "predicted_replaced": (predicted & real).sum(1)}
    counts = {k: v.tolist() for k, v in counts.items()}
    for b, group in enumerate(groups):
        tally.add(group, rows=1, **{k: v[b] for k, v in counts.items()})


class XYLentEvaluator:
    metrics = ("gen_acc", "disc_precision", "disc_recall", "disc_f1", "replaced_share")
    default_select = "disc_f1"
    subfolders = ("mrtd", "trtd")

    def __init__(self, spec, cfg, tokenizer):
        self.cfg = cfg

    def prepare(self, rows: list[dict], index: int) -> tuple[dict, list[str]]:
        from training.data.xylent import collate, pair_key

        batch = collate(rows, max_len=self.cfg.max_seq_len)
        groups = [r["lang"] if "lang" in r else pair_key(r["src_lang"], r["tgt_lang"]) for r in rows]
        return batch, groups

    @torch.no_grad()
    def tally(self, model, batch: dict, groups: list[str], index: int, tally: Tally) -> None:
        from training.models.xylent import choose_masked, rtd_inputs, sample_replacements

        cfg = model.config
        ids, attention = batch["input_ids"], batch["attention_mask"]
        rng = batch_rng(self.cfg.seed, index, ids.device)
        # The training step's corruption (XYLentForPreTraining.forward), with this batch's own generator.
        masked = choose_masked(ids, attention, cfg.mask_prob, generator=rng, special_ids=cfg.unmaskable_ids())
        to_mask = masked & (torch.rand(ids.shape, device=ids.device, generator=rng) < cfg.mask_token_share)
        hidden = model.generator.xylent(ids.masked_fill(to_mask, cfg.mask_token_id), attention).last_hidden_state
        gen_logits = model.generator.vocab_logits(hidden[masked])
        gen_right = torch.zeros(masked.shape, dtype=torch.bool, device=ids.device)
        gen_right[masked] = gen_logits.argmax(-1) == ids[masked]
        sampled = sample_replacements(gen_logits, generator=rng, banned=cfg.unsampled_ids(), token_count=cfg.token_count)
        disc_input, replaced = rtd_inputs(ids, masked, sampled)
        predicted = model.discriminator(disc_input, attention) > 0
        tally_rtd(masked, gen_right, replaced, predicted, attention.bool(), groups, tally)

    @staticmethod
    def summarize(tally: Tally, group: str) -> dict[str, float]:
        s = {name: tally.sums[(group, name)] for g, name in tally.sums if g == group}
        precision = ratio(s.get("true_positive", 0), s.get("predicted_replaced", 0))
        recall = ratio(s.get("true_positive", 0), s.get("replaced", 0))
        return {"gen_acc": ratio(s.get("gen_right", 0), s.get("masked", 0)),
                "disc_precision": precision, "disc_recall": recall,
                "disc_f1": f1_from_counts(s.get("true_positive", 0), s.get("predicted_replaced", 0), s.get("replaced", 0)),
                "replaced_share": ratio(s.get("replaced", 0), s.get("masked", 0))}

    @staticmethod
    def rows_evaluated(tally: Tally) -> int:
        return int(tally.sums[(OVERALL, "rows")])


EVALUATORS = {"mpmr": MPMREvaluator, "clism": CLISMEvaluator, "xylent": XYLentEvaluator}


def check_select_by(model_name: str, metric: str, downstream: list[str] = ()) -> None:
    """`downstream`: the run's downstream metric names (training/downstream.py), selectable too."""
    names = EVALUATORS[model_name].metrics
    if metric.split("/")[0] not in names and metric not in downstream:
        more = f", or {', '.join(downstream)}" if downstream else ""
        raise EvalDataError(f"--select_by {metric}: not a held-out metric of --model {model_name}; "
                            f"choose from {', '.join(names)} (optionally /LANG, e.g. {names[1]}/el){more}")


# ---- the pass ----

class HeldOut:
    """The held-out batches of one run (read and collated once) and the pass over them."""

    def __init__(self, model_name: str, spec, cfg, tokenizer, files: list[list[Path]], description: str,
                 rank: int, world: int, device: torch.device):
        self.evaluator = EVALUATORS[model_name](spec, cfg, tokenizer)
        self.description = description
        self.rank, self.world, self.device = rank, world, device
        limit = cfg.eval_batches * cfg.batch_size
        if model_name == "xylent":
            check_shards(files[0], XY_MRTD_SCHEMA)
            check_shards(files[1], XY_TRTD_SCHEMA, older=(XY_TRTD_SCHEMA_V1,))
            # Half the batches from each task; a TRTD pair longer than the model is skipped, as in training.
            mrtd = read_rows(files[0], ["lang", "input_ids"], (cfg.eval_batches + 1) // 2 * cfg.batch_size)
            trtd = [r for r in read_rows(files[1], ["src_lang", "tgt_lang", "input_ids"], 4 * limit)
                    if len(r["input_ids"]) <= cfg.max_seq_len][: cfg.eval_batches // 2 * cfg.batch_size]
            chunks = [part[k:k + cfg.batch_size] for part in (mrtd, trtd) for k in range(0, len(part), cfg.batch_size)]
        else:
            check_shards(files[0], spec.schema, spec.older_schemas)
            rows = read_rows(files[0], self.evaluator.columns, limit, spec.optional_columns)
            chunks = [rows[k:k + cfg.batch_size] for k in range(0, len(rows), cfg.batch_size)]
        self.total_batches = len(chunks)
        self.total_rows = sum(len(c) for c in chunks)
        # Batch k is rank k mod world's: each rank collates only its own share.
        self.batches = [(k, *self.evaluator.prepare(chunk, k)) for k, chunk in enumerate(chunks) if k % world == rank]

    def run(self, model) -> tuple[dict[str, float], int]:
        """Metric name -> value (overall, and NAME/GROUP per language), and the rows evaluated."""
        was_training = model.training
        model.eval()
        tally = Tally()
        autocast = autocast_for(self.device)
        try:
            with autocast:
                for index, batch, groups in self.batches:
                    batch = {k: v.to(self.device) for k, v in batch.items() if k != "counts"}
                    self.evaluator.tally(model, batch, groups, index, tally)
        finally:
            model.train(was_training)
        total = gather(tally, self.world)
        out: dict[str, float] = {}
        for group in total.groups():
            for name, value in self.evaluator.summarize(total, group).items():
                out[name if group == OVERALL else f"{name}/{group}"] = value
        return out, self.evaluator.rows_evaluated(total)
