#!/usr/bin/env bash
# End to end on a CPU, in a few minutes: sample dumps -> wiki_mrc Parquet -> mPMR tiny pre-training
# -> QA fine-tuning and evaluation (SQuAD v1.1 metric) on questions made from held-out entities.
#
#   bash examples/walkthrough.sh [WORK_DIR]        (default: ./output/walkthrough)
#   PRETRAIN_STEPS=200 FINETUNE_STEPS=100 bash examples/walkthrough.sh
#   FINETUNE_ARGS="--max_seq_len 192 --batch_size 4" bash examples/walkthrough.sh   # any training.finetune flag
#
# Needs torch, then the project with its train extra: on a CPU-only machine
#   pip install torch --index-url https://download.pytorch.org/whl/cpu && pip install -e ".[train]"
# (docs/install.md, "torch: CPU-only or CUDA").
# The numbers are a smoke test of the whole path, not a result: a tiny random encoder trained for
# seconds on the ~17 articles per language of the bundled sample.
set -euo pipefail

WORK="${1:-./output/walkthrough}"
PRETRAIN_STEPS="${PRETRAIN_STEPS:-60}"
FINETUNE_STEPS="${FINETUNE_STEPS:-40}"
read -r -a FINETUNE_EXTRA <<< "${FINETUNE_ARGS:-}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export HF_HUB_OFFLINE=1  # nothing in this path may download: the tiny config builds its tokenizer from the data

echo "== 1. wiki_mrc: the bundled sample dumps (en zh th ar hi) -> MRC rows in Parquet"
python -m pipelines.wiki_mrc --runner DirectRunner --output "$WORK/wiki_mrc" --seed 0

echo "== 2. mPMR pre-training, tiny config, ${PRETRAIN_STEPS} steps"
python -m training.run --model mpmr --data "$WORK/wiki_mrc" --output "$WORK/pretrain" --config tiny \
    --max_steps "$PRETRAIN_STEPS" --no_progress --no_tensorboard --overwrite  # a rerun replaces the demo run

echo "== 3. QA data: answerable rows -> SQuAD v1.1 train/eval JSON, split by entity"
python "$HERE/mrc_to_squad.py" "$WORK/wiki_mrc/data" "$WORK/squad"

echo "== 4. fine-tune the pre-trained reader on QA and evaluate (exact match / F1)"
python -m training.finetune --task squad --init "$WORK/pretrain/final" \
    --train "$WORK/squad/train.json" --eval "$WORK/squad/eval.json" \
    --output "$WORK/qa" --max_steps "$FINETUNE_STEPS" ${FINETUNE_EXTRA[@]+"${FINETUNE_EXTRA[@]}"}

python - "$WORK/qa/metrics.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
m = result["metrics"]
print(f"QA on {result['eval_examples']} held-out questions: exact match {m['exact_match']:.1f}, F1 {m['f1']:.1f}"
      f" (after {result['steps']} fine-tuning steps on {result['train_examples']} questions)")
PY
echo "done: $WORK"
