"""The README.md dataset card every job writes beside its output (DESIGN.md §6).

The card's YAML block is what the Hugging Face Hub and `datasets.load_dataset(OUTPUT)` read: one
config per table the job writes, each pointing at its own files, so the rows load with their full
schema and `stats.parquet` or `dead_letter/` are never read as rows. Without the card, `datasets`
would infer one table from every Parquet file under the folder. The folder can be pushed to the Hub
unchanged (`huggingface-cli upload`), and the card also tells a human reader what made it.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from apache_beam.io.filesystems import FileSystems

from corpora.manifests import MANIFEST
from corpora.schemas import DEAD_LETTER_SCHEMA, STATS_SCHEMA

CARD = "README.md"
# The project's own licence: the bundled samples were written for it (corpora/samples/*/README.md).
SAMPLE_LICENSE = "apache-2.0"


@dataclass(frozen=True)
class CardConfig:
    """One table of the output: its name on the Hub, the file pattern of each split, its schema."""

    name: str
    splits: dict[str, str]  # split -> glob relative to the output folder
    schema: pa.Schema
    description: str = ""


@dataclass(frozen=True)
class DatasetCard:
    title: str
    summary: str
    license: str  # a Hub licence id: cc-by-sa-4.0, apache-2.0, other, ...
    source: str  # where the rows come from and under which terms
    configs: list[CardConfig] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)


def bookkeeping_configs() -> list[CardConfig]:
    """The two tables every job writes besides its rows; their own configs keep them out of the rows."""
    return [
        CardConfig("stats", {"train": "stats.parquet"}, STATS_SCHEMA,
                   "every record counted: (lang, metric, value)"),
        CardConfig("dead_letter", {"train": "dead_letter/*.parquet"}, DEAD_LETTER_SCHEMA,
                   "every rejected record with its reason"),
    ]


def hub_features(schema: pa.Schema) -> list[dict]:
    """An Arrow schema as the card's `dataset_info.features` list (the Hub's YAML form)."""
    return [{"name": f.name, **_hub_type(f.type)} for f in schema]


def _hub_type(arrow_type: pa.DataType) -> dict:
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        inner = arrow_type.value_type
        if pa.types.is_struct(inner):
            return {"list": [{"name": f.name, **_hub_type(f.type)} for f in inner]}
        inner_type = _hub_type(inner)
        return {"list": inner_type["dtype"] if set(inner_type) == {"dtype"} else inner_type}
    if pa.types.is_struct(arrow_type):
        return {"struct": [{"name": f.name, **_hub_type(f.type)} for f in arrow_type]}
    names = {pa.string(): "string", pa.large_string(): "large_string", pa.bool_(): "bool",
             pa.int8(): "int8", pa.int16(): "int16", pa.int32(): "int32", pa.int64(): "int64",
             pa.float32(): "float32", pa.float64(): "float64"}
    if arrow_type not in names:
        raise TypeError(f"no dataset-card type for Arrow type {arrow_type}")
    return {"dtype": names[arrow_type]}


def _matching_files(output: str, pattern: str) -> list[str]:
    found = FileSystems.match([FileSystems.join(output, pattern)])[0].metadata_list
    return sorted(m.path for m in found if not m.path.endswith("/"))


def _count_rows(paths: list[str]) -> tuple[int, int]:
    """Rows and uncompressed bytes of Parquet files, from their footers alone."""
    rows = size = 0
    for path in paths:
        with FileSystems.open(path, compression_type="uncompressed") as f:
            meta = pq.ParquetFile(f).metadata
        rows += meta.num_rows
        size += sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    return rows, size


def render_card(card: DatasetCard, present: dict[str, dict[str, tuple[int, int]]], command: str,
                empty: list[str] = ()) -> str:
    """The card's text; `present[config][split]` = (rows, bytes) of each split with rows; `empty`: the
    configs whose files hold no row, left out of the configs (`datasets` cannot load a split of 0 rows)."""
    configs = [c for c in card.configs if present.get(c.name)]
    header = {
        "license": card.license,
        **({"language": sorted(card.languages)} if card.languages else {}),
        "configs": [
            {"config_name": c.name, **({"default": True} if i == 0 else {}),
             "data_files": [{"split": s, "path": c.splits[s]} for s in c.splits if s in present[c.name]]}
            for i, c in enumerate(configs)
        ],
        "dataset_info": [
            {"config_name": c.name, "features": hub_features(c.schema),
             "splits": [{"name": s, "num_bytes": present[c.name][s][1], "num_examples": present[c.name][s][0]}
                        for s in c.splits if s in present[c.name]]}
            for c in configs
        ],
    }
    lines = ["---", yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
             f"# {card.title}", "", card.summary, "",
             "| config | split | rows | files | what |", "| --- | --- | ---: | --- | --- |"]
    for c in configs:
        for s in c.splits:
            if s in present[c.name]:
                lines.append(f"| `{c.name}` | {s} | {present[c.name][s][0]:,} | `{c.splits[s]}` | {c.description} |")
    imports, read = _pandas_read(configs[0], present[configs[0].name]) if configs else ("datasets, pandas", "")
    lines += ["", "```python", f"import {imports}",
              f'rows = datasets.load_dataset("path/to/this/folder")  # the `{configs[0].name}` config' if configs else "",
              read,
              "```", "",
              *([f"Empty, so not listed as configs: {', '.join(f'`{name}`' for name in empty)} (0 rows).", ""]
                if empty else []),
              "## Manifest", "",
              f"`{MANIFEST}` lists every file of this folder with its rows, bytes and sha256, each table's shards, "
              "the command, the code version, the inputs' sizes and hashes and the job's stats totals; it is written "
              "last, so a folder without it (or with another state than `complete`) is not a finished output. The "
              "project's readers check it before they read (docs/manifest.md).", "",
              "## Source and licence", "", card.source, "",
              "## How it was made", "", "```bash", command, "```", ""]
    return "\n".join(line for line in lines if line is not None)


def _folder_of(config: CardConfig) -> str:
    return next(iter(config.splits.values())).rsplit("/", 1)[0]


def _pandas_read(config: CardConfig, present: dict[str, tuple[int, int]]) -> tuple[str, str]:
    """(the modules to import, the line that reads the rows). pandas reads a folder whole: where it
    holds two splits (wiki_mrc's train and test), one split's files are read instead, or the test
    rows would be read as training rows."""
    folders = {config.splits[s].rsplit("/", 1)[0] for s in present}
    if len(present) == 1 or len(folders) == len(present):
        return "datasets, pandas", f'frame = pandas.read_parquet("path/to/this/folder/{_folder_of(config)}")'
    split = next(s for s in config.splits if s in present)
    return "glob, datasets, pandas", (f'frame = pandas.concat(pandas.read_parquet(f) for f in sorted(glob.glob('
                                      f'"path/to/this/folder/{config.splits[split]}")))  # the {split} split')


def write_dataset_card(output: str, card: DatasetCard, command: str) -> str:
    """Count each config's rows from the Parquet footers and write OUTPUT/README.md; return its path.

    No date or host in it: the same input and seed give the same folder, card included."""
    present: dict[str, dict[str, tuple[int, int]]] = {}
    written = set()
    for config in card.configs:
        for split, pattern in config.splits.items():
            files = _matching_files(output, pattern)
            if files:
                written.add(config.name)
                counted = _count_rows(files)
                if counted[0]:
                    present.setdefault(config.name, {})[split] = counted
    empty = [c.name for c in card.configs if c.name in written and c.name not in present]
    path = FileSystems.join(output, CARD)
    with FileSystems.create(path) as sink:
        sink.write(render_card(card, present, command, empty).encode("utf-8"))
    return path


def manifest_tables(output: str, card: DatasetCard | None) -> tuple[dict[str, dict[str, list[str]]], str | None]:
    """Each config's shards per split, as paths relative to the output (the manifest's `tables`), and
    the default table (the card's first: the job's rows)."""
    if card is None:
        return {}, None
    prefix = output.rstrip("/") + "/"
    tables: dict[str, dict[str, list[str]]] = {}
    for config in card.configs:
        for split, pattern in config.splits.items():
            files = [f[len(prefix):] if f.startswith(prefix) else f for f in _matching_files(output, pattern)]
            if files:
                tables.setdefault(config.name, {})[split] = files
    return tables, (card.configs[0].name if card.configs else None)


def job_command(job: str, argv: list[str]) -> str:
    return shlex.join(["python", "-m", f"pipelines.{job}", *argv])
