"""Which vocabulary an xy_corpus folder's token ids are from: its vocap `spm.model`, or `tokenizer/`, the
copy of an encoder's tokenizer (xy_corpus --vocab FOLDER, corpora/xy/vocabulary.py); both checked
against the folder's manifest."""
from __future__ import annotations

from pathlib import Path

from corpora.outputs import manifests
from training.data import DataFolderError, data_root

TOKENIZER_FOLDER = "tokenizer"  # corpora/xy/vocabulary.py OUTPUT_FOLDER (that module imports Beam)


def _root(data_dir: str | Path) -> Path:
    return data_root(data_dir)  # the job's --output, or a folder inside it (corpora/outputs/manifests.py)


def artefact(data_dir: str | Path, name: str) -> Path:
    path = _root(data_dir) / name
    if not path.exists():
        raise FileNotFoundError(f"--data {data_dir}: {name} not found; it is written by pipelines.xy_corpus")
    try:
        return manifests.verified_file(path, "--data")
    except manifests.ManifestError as e:
        raise DataFolderError(str(e)) from None


def tokenizer_folder(data_dir: str | Path) -> Path | None:
    """The copy of an encoder's tokenizer whose ids the rows are (xy_corpus --vocab FOLDER), its files
    checked against the folder's manifest; None for a folder of vocap ids."""
    root = _root(data_dir)
    folder = root / TOKENIZER_FOLDER
    if not (folder / "tokenizer.json").is_file():
        return None
    manifest = manifests.read_manifest(root)
    if manifest is not None:
        listed = {rel: entry for rel, entry in manifest.get("files", {}).items() if rel.startswith(f"{TOKENIZER_FOLDER}/")}
        try:
            if f"{TOKENIZER_FOLDER}/tokenizer.json" not in listed:
                raise manifests.ManifestError(f"--data {data_dir}: {TOKENIZER_FOLDER}/tokenizer.json is not among the "
                                              "files of its manifest; rerun `python -m pipelines.xy_corpus`")
            for rel, entry in listed.items():
                manifests.check_file(root, rel, entry, True, "rerun `python -m pipelines.xy_corpus`")
        except manifests.ManifestError as e:
            raise DataFolderError(str(e)) from None
    return folder


def vocabulary_file(data_dir: str | Path) -> Path:
    """The file that says which vocabulary the ids are from: tokenizer/tokenizer.json or spm.model."""
    folder = tokenizer_folder(data_dir)
    return folder / "tokenizer.json" if folder is not None else artefact(data_dir, "spm.model")


def data_tokenizer(data_dir: str | Path):
    """The fast tokenizer whose ids the rows are."""
    folder = tokenizer_folder(data_dir)
    if folder is not None:
        from training.tokenizer import load_tokenizer

        return load_tokenizer(str(folder))
    from corpora.xy import vocab_exports

    return vocab_exports.hf_tokenizer(artefact(data_dir, "spm.model").read_bytes())
