"""Load everything a worker loads, with the network cut: fails if anything would be downloaded.

Run at image build time (docker/*.Dockerfile), so that an image whose workers would fetch a model,
a dictionary or tokeniser data at start-up is never pushed; and by tests/test_scale_docker.py on
the development environment. It also leaves caches that are built on first use (jieba's prefix
dictionary) in the image, so that workers start warm.

    python docker/check_offline.py            # the Beam worker: every wiki_mrc tokeniser, spaCy NER
    python docker/check_offline.py --train    # the training image: torch, transformers, training.run
"""
from __future__ import annotations

import argparse
import socket
import sys
import time


class NetworkCut(OSError):
    pass


def cut_network() -> None:
    """Every outgoing connection (and DNS look-up) raises: a download attempt cannot go unnoticed."""

    def refuse(*args, **kwargs):
        raise NetworkCut(f"network access attempted at image check: {args[1:] or kwargs}")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse


def check_beam_worker() -> None:
    from corpora.clism.ner_spans import load_ner_pipeline
    from corpora.words import SUPPORTED_LANGS, get_tokenizer

    text = "Paris (French: Paris) is 42 km from Versailles."
    for lang in SUPPORTED_LANGS:
        started = time.time()
        words = get_tokenizer(lang).tokenize(text)
        assert words, f"{lang}: the tokeniser returned no words"
        print(f"tokeniser {lang}: {len(words)} words, {time.time() - started:.1f}s", flush=True)
    nlp = load_ner_pipeline("en_core_web_sm")
    entities = [(e.text, e.label_) for e in nlp("Barack Obama visited Paris in 2009.").ents]
    assert entities, "en_core_web_sm found no entity"
    print(f"spaCy NER en_core_web_sm: {entities}", flush=True)
    import apache_beam

    print(f"apache-beam {apache_beam.__version__}", flush=True)


def check_training() -> None:
    import torch
    import transformers

    from training import run  # noqa: F401  (the entry point imports without Beam)

    assert "apache_beam" not in sys.modules, "training must not import Beam"
    print(f"torch {torch.__version__} (CUDA build {torch.version.cuda}), transformers {transformers.__version__}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="check the training image instead of the Beam worker")
    args = parser.parse_args(argv)
    cut_network()
    check_training() if args.train else check_beam_worker()
    print("offline check passed", flush=True)


if __name__ == "__main__":
    main()
