# Training image: CUDA torch, the project with its `train` extra, `python -m training.run` / torchrun.
# Build from the repository root:
#   docker build -f docker/train.Dockerfile -t REGION-docker.pkg.dev/PROJECT/REPO/train:0.1.0 .
# Pick the CUDA build of torch with TORCH_INDEX_URL (e.g. https://download.pytorch.org/whl/cu128);
# the default, PyPI's Linux x86_64 torch wheel, is a CUDA build that brings its CUDA runtime as
# nvidia-* wheels, so the host needs only the NVIDIA driver and the container toolkit.
FROM python:3.11-slim-bookworm

ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://pypi.org/simple

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    HF_HOME=/opt/hf

WORKDIR /opt/xlu
# torch first, from the chosen index, so that the project's `torch>=2.6` is already satisfied and
# pip never swaps in another build.
RUN pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"

COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY corpora/ corpora/
COPY pipelines/ pipelines/
COPY training/ training/
COPY docker/check_offline.py docker/check_offline.py
# The project itself, from the context: its versions are pyproject's ranges, as in CI (DL3013 is
# about unpinned packages from an index, not a local path).
# hadolint ignore=DL3013
RUN pip install ".[train]" \
    && pip check \
    && python docker/check_offline.py --train

# Models from the Hugging Face hub (--init xlm-roberta-base) are read from HF_HOME: mount a volume
# there, or bake them in a derived image; runs write to the mounted --output directory.
CMD ["python", "-m", "training.run", "--help"]
