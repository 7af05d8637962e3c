"""The vocabulary xy_corpus encodes with, of one of two kinds:

- a vocap SentencePiece model (`spm.model`, corpora/xy/vocap.py): the ids SentencePiece gives, with
  `<s> <pad> </s> <unk> <mask>` at 0..4; for pre-training from scratch;
- a Hugging Face tokenizer folder (`tokenizer.json`, e.g. a converted multilingual-e5-small or any
  XLM-R): the ids its fast tokenizer gives, the ids the encoder's embedding rows mean. XLM-R's
  (fairseq's) layout is `<s> <pad> </s> <unk>` at 0..3, the SentencePiece pieces shifted by one,
  `<mask>` last; for continued pre-training of that encoder.

Either way the rows are built with `<s>`=0, `<pad>`=1, `</s>`=2 (corpora/xy/shards.py, the trainer's
padding), so a tokenizer folder must have those three there; `<unk>` and `<mask>` may be anywhere.
"""
from __future__ import annotations

from apache_beam.io.filesystems import FileSystems

TOKENIZER_JSON = "tokenizer.json"
# What AutoTokenizer reads from a fast tokenizer's folder; copied beside the rows when present.
TOKENIZER_FILES = (TOKENIZER_JSON, "tokenizer_config.json", "special_tokens_map.json", "sentencepiece.bpe.model")
OUTPUT_FOLDER = "tokenizer"  # where the job copies a tokenizer folder, beside the shards
FIXED_IDS = {"<s>": 0, "<pad>": 1, "</s>": 2}  # the ids corpora/xy/shards.py and the trainer's padding use
REQUIRED = ("<unk>", "<mask>")


def is_tokenizer_folder(path: str) -> bool:
    return not path.endswith(".model") and FileSystems.exists(FileSystems.join(path, TOKENIZER_JSON))


class TokenizerVocabulary:
    """A fast tokenizer with SentencePieceProcessor's two calls that the job's transforms make."""

    def __init__(self, tokenizer_json: bytes):
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
        self.tokenizer.no_truncation()  # the job packs and drops by --max_len itself
        self.tokenizer.no_padding()
        self._unk = self.tokenizer.token_to_id("<unk>")

    def encode(self, texts: list[str], num_threads: int = 1) -> list[list[int]]:
        """Ids without specials; one text at a time, in this thread (no tokenizers thread pool inside
        a Beam worker)."""
        return [self.tokenizer.encode(text, add_special_tokens=False).ids for text in texts]

    def unk_id(self) -> int:
        return self._unk

    def id_problem(self) -> str | None:
        """Why the rows could not use this vocabulary's ids, or None."""
        where = {token: self.tokenizer.token_to_id(token) for token in (*FIXED_IDS, *REQUIRED)}
        wrong = [f"{token}={where[token]}" for token, expected in FIXED_IDS.items() if where[token] != expected]
        missing = [token for token in REQUIRED if where[token] is None]
        if wrong:
            return (f"its special ids are {' '.join(wrong)}; the rows need <s>=0 <pad>=1 </s>=2 "
                    "(XLM-R's layout, as multilingual-e5 and xlm-roberta have it)")
        if missing:
            return f"no {' '.join(missing)} token"
        return None


def tokenizer_folder_problem(path: str) -> str | None:
    """Why the folder's tokenizer cannot give the rows' ids, or None."""
    try:
        with FileSystems.open(FileSystems.join(path, TOKENIZER_JSON)) as f:
            loaded = TokenizerVocabulary(f.read())
    except Exception as error:  # tokenizers raises its own Exception type on a bad file
        return f"{TOKENIZER_JSON} does not load as a tokenizer ({str(error).splitlines()[0][:100]})"
    return loaded.id_problem()


def load(path: str):
    """A vocap model file -> SentencePieceProcessor; a tokenizer folder -> TokenizerVocabulary."""
    if is_tokenizer_folder(path):
        with FileSystems.open(FileSystems.join(path, TOKENIZER_JSON)) as f:
            return TokenizerVocabulary(f.read())
    import sentencepiece as spm

    with FileSystems.open(path) as f:
        return spm.SentencePieceProcessor(model_proto=f.read())


def copy_tokenizer_folder(source: str, target: str) -> str:
    """The folder's tokenizer files (TOKENIZER_FILES present) into `target`; `target`."""
    for name in TOKENIZER_FILES:
        path = FileSystems.join(source, name)
        if not FileSystems.exists(path):
            continue
        with FileSystems.open(path) as f:
            data = f.read()
        with FileSystems.create(FileSystems.join(target, name)) as sink:
            sink.write(data)
    return target

