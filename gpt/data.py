"""Datasets: prepare a text corpus into token files once, then sample training batches from them.

A prepared dataset is a folder ``data_dir/<name>/`` holding

    train.bin   the first 90% of the text's characters, as np.uint16 token ids
    val.bin     the last 10%
    meta.json   {"tokenizer": {...}, "vocab_size", "source", "sha256", "train_tokens", ...}

as nanoGPT's prepare.py scripts make them. meta.json is written last, so a folder without it is
an unfinished preparation and is made again.

Built-in datasets:
    default            the Python documentation in the standard library (pydoc_data), characters;
                       every Python has it, so training works offline with no data step
    shakespeare_char   Tiny Shakespeare, characters (nanoGPT's shakespeare_char)
    shakespeare        Tiny Shakespeare, GPT-2 BPE (nanoGPT's shakespeare)
Any other name is prepared from ``input=``, a text file or a folder of text files.
"""

import hashlib
import json
import os
import re
import sys
from pathlib import Path

import numpy as np

from gpt.tokenizer import CharTokenizer, DataError, GPT2Tokenizer, tokenizer_from_meta
from minigrad._atomic_files import atomic_write

__all__ = [
    "BatchSampler",
    "DataError",
    "Dataset",
    "default_corpus_text",
    "download_text",
    "prepare_dataset",
    "read_text_source",
]

SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
# datasets whose name promises a tokenizer; every other name takes the one asked for (char by default)
FIXED_TOKENIZER = {"shakespeare_char": "char", "shakespeare": "gpt2"}
TOKENIZER_KINDS = ("char", "gpt2")
TRAIN_FRACTION = 0.9
TOKEN_DTYPE = np.uint16
# suffixes read from an input folder; other files (images, archives...) are skipped
TEXT_SUFFIXES = frozenset(
    ".txt .text .md .markdown .rst .tex .html .htm .xml .json .csv .yaml .yml .toml .ini .cfg "
    ".py .c .h .cc .cpp .hpp .java .js .ts .go .rs .sh".split()
)
PROGRESS_MIN_CHARS = 1 << 22  # smaller inputs tokenize in well under a second: no bar
CHUNK_CHARS = 1 << 18
META_KEYS = ("tokenizer", "vocab_size", "source", "sha256", "train_tokens", "val_tokens")


def prepare_dataset(name, data_dir="data", input=None, tokenizer=None, ranks_path=None, force=False):
    """Make sure ``data_dir/name`` holds a prepared dataset and return its path (a Path).

    name:       "default", "shakespeare_char", "shakespeare", or any folder name with ``input``
    input:      a text file or folder of text files to prepare from (str or Path, optional)
    tokenizer:  "char", "gpt2", or None/"auto": the dataset's own (gpt2 for shakespeare), else
                the kind it was prepared with before, else "char"
    ranks_path: GPT-2 ranks file for the gpt2 tokenizer (see GPT2Tokenizer)
    force:      prepare again even when the prepared data matches its source

    Returns at once when meta.json records the same source text (by sha256) and tokenizer.
    Tiny Shakespeare is downloaded (``download_text``) only when no copy is at hand. Problems
    raise DataError.
    """
    _check_name(name)
    out = Path(data_dir) / name
    with _Preparing(Path(data_dir)) as lock:  # one process writes at a time: the others then find it prepared
        return _prepare(name, out, input, tokenizer, ranks_path, force, lock)


def _prepare(name, out, input, tokenizer, ranks_path, force, lock):
    meta, problem = _prepared_meta(out)
    downloaded = False
    kind = _tokenizer_kind(name, tokenizer, meta)
    if input:
        text, source = read_text_source(input)
    elif name == "default":
        text, source = default_corpus_text(), f"pydoc_data.topics of Python {sys.version.split()[0]}"
    elif name in FIXED_TOKENIZER:
        text, source = _local_shakespeare(out.parent), SHAKESPEARE_URL
        if text is None:
            if meta is not None and not force:
                return out
            text, downloaded = _download_shakespeare(out.name), True
    elif meta is not None and not force:
        return out
    elif problem is not None:  # damaged, and nothing to prepare it again from
        raise DataError(f"dataset {name!r} is damaged ({problem}): pass --input=PATH to prepare it again")
    else:
        raise DataError(
            f"dataset {name!r} is not prepared in {str(out)!r}: pass --input=PATH "
            "(a text file or a folder of text files) to prepare it"
        )
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    for locked in (False, True):  # checked again under the lock: another process may have prepared it meanwhile
        if meta is not None and not force and meta["sha256"] == sha and meta["tokenizer"]["kind"] == kind:
            return out
        if meta is not None and input and not force and meta["sha256"] != sha and meta["source"] != source:
            # two files named input.txt both make a dataset "input": the second must not take the first's place
            raise DataError(
                f"dataset {name!r} in {str(out)!r} was prepared from {meta['source']}, and {source} is another "
                f"text: give it a name of its own with --dataset=NAME (or delete {str(out)!r} to replace it)")
        if not locked:
            lock.acquire()
            meta, _ = _prepared_meta(out)
    if downloaded:  # a copy, so that the other shakespeare dataset needs no download
        try:
            out.mkdir(parents=True, exist_ok=True)
            atomic_write(out / "input.txt", lambda tmp: Path(tmp).write_bytes(text.encode("utf-8")))
        except OSError as e:
            raise DataError(f"cannot write dataset {str(out)!r}: {e}") from None
    tok = CharTokenizer.from_text(text) if kind == "char" else GPT2Tokenizer(ranks_path)
    _write_dataset(out, text, tok, {"source": source, "sha256": sha})
    return out


class _Preparing:
    """An exclusive lock on the data_dir folder, taken (`acquire`) only to write a dataset there
    and held until the block ends (the OS drops it when the process ends, even by kill -9)."""

    def __init__(self, data_dir):
        self.data_dir, self.fd = data_dir, None

    def __enter__(self):
        return self

    def acquire(self):
        try:
            import fcntl
        except ImportError:  # no flock (Windows): no lock
            return
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.data_dir, os.O_RDONLY)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError as e:
            self.__exit__()
            raise DataError(f"cannot use data_dir {str(self.data_dir)!r}: {e.strerror or e}") from None

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # closing the last descriptor releases the lock
            self.fd = None


def default_corpus_text():
    """The default corpus (str, ~465k characters): the English Python documentation topics that
    ship with the standard library in pydoc_data.topics, in key order, blank-line separated."""
    try:
        from pydoc_data.topics import topics
    except ImportError:
        raise DataError(
            "this Python has no pydoc_data module, which the 'default' dataset reads; "
            "use --dataset=NAME --input=PATH with a text file of your own"
        ) from None
    return "\n\n".join(topics[key].strip("\n") for key in sorted(topics))


def read_text_source(path):
    """Read a text file, or every text file under a folder, as UTF-8.

    A folder's files (suffixes in TEXT_SUFFIXES, hidden files and folders skipped) are read
    recursively in sorted order of their relative paths and joined with "\\n".
    Returns (text, source): str, and the resolved path as a str. Missing, empty or undecodable
    input raises DataError naming the file.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        files = sorted(
            (f for f in p.rglob("*") if f.suffix.lower() in TEXT_SUFFIXES and f.is_file()
             and not any(part.startswith(".") for part in f.relative_to(p).parts)),
            key=lambda f: f.relative_to(p).as_posix(),
        )
        if not files:
            raise DataError(f"input folder {str(p)!r} has no text files (looked for {' '.join(sorted(TEXT_SUFFIXES))})")
        text = "\n".join(_read_utf8(f) for f in files)
    elif p.is_file():
        text = _read_utf8(p)
    elif p.exists():  # a device, a pipe...: not a corpus that can be prepared again to the same data
        raise DataError(f"input {str(p)!r} is not a text file or a folder of text files")
    else:
        raise DataError(f"input {str(p)!r} does not exist")
    if not text:
        raise DataError(f"input {str(p)!r} is empty")
    return text, str(p.resolve())


def download_text(url, timeout=10.0):
    """GET ``url`` and return its body decoded as UTF-8; any failure raises DataError.

    The only network access in minigrad's data code; tests replace it.
    """
    try:
        import urllib.request  # here: only a download needs it (its import, http and email, is 25 ms of train.py's start)

        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read().decode("utf-8")
    except (OSError, ValueError) as e:  # URLError and timeouts are OSErrors, bad UTF-8 a ValueError
        raise DataError(f"could not download {url}: {e}") from None


class Dataset:
    """A prepared dataset: meta.json plus train.bin / val.bin token files.

    Open with ``Dataset.load(path)``; ``get_batch`` reads windows from the files directly.
    """

    SPLITS = ("train", "val")

    def __init__(self, path, meta):
        self.path = Path(path)
        self.meta = meta

    @classmethod
    def load(cls, path):
        """Open the dataset folder ``path``, checking meta.json, the files' sizes, and that every
        token id lies inside the vocabulary. Problems raise DataError naming the file."""
        path = Path(path)
        meta = _read_meta(path)
        if meta is None:
            raise DataError(
                f"{str(path)!r} is not a prepared dataset (no meta.json); prepare it with prepare_dataset()"
            )
        dataset = cls(path, meta)
        for split in cls.SPLITS:
            _check_token_file(dataset.bin_path(split), meta[f"{split}_tokens"], meta["vocab_size"])
        return dataset

    @property
    def name(self):
        """The dataset's folder name (str)."""
        return self.path.name

    @property
    def vocab_size(self):
        """Number of token ids (int)."""
        return self.meta["vocab_size"]

    def num_tokens(self, split):
        """Number of tokens (int) in split "train" or "val"."""
        self.bin_path(split)  # an unknown split gets bin_path's clear error, not a KeyError
        return self.meta[f"{split}_tokens"]

    def bin_path(self, split):
        """Path of the token file of split "train" or "val"."""
        if split not in self.SPLITS:
            raise DataError(f"unknown split {split!r} (known: 'train', 'val')")
        return self.path / f"{split}.bin"

    def tokenizer(self, ranks_path=None):
        """The tokenizer the dataset was prepared with (ranks_path: see GPT2Tokenizer)."""
        return tokenizer_from_meta(self.meta["tokenizer"], ranks_path)

    def check_block_size(self, block_size):
        """Raise DataError unless both splits hold at least one window of block_size + 1 tokens
        (a block and its next-token targets)."""
        if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
            raise DataError(f"block_size must be a positive integer, got {block_size!r}")
        for split in self.SPLITS:
            n = self.num_tokens(split)
            if n < block_size + 1:
                raise DataError(
                    f"dataset {self.name!r}: the {split} split has {n} tokens, too few for "
                    f"block_size={block_size} (it needs at least {block_size + 1}); "
                    "use a smaller block_size or a larger corpus"
                )

    def get_batch(self, split, batch_size, block_size, rng):
        """Sample ``batch_size`` windows at random offsets drawn from ``rng``
        (a numpy.random.Generator).

        Returns (x, y), both np.int64 of shape (batch_size, block_size), with
        y[:, t] == x[:, t + 1] for t < block_size - 1: y is x shifted left by one token.
        """
        self.check_block_size(block_size)
        # a fresh memmap per batch, as nanoGPT does: a long-lived one keeps every page it has
        # touched mapped, which looks like a memory leak over a long run
        data = np.memmap(self.bin_path(split), dtype=TOKEN_DTYPE, mode="r")
        ix = rng.integers(0, len(data) - block_size, size=batch_size)
        window = data[ix[:, None] + np.arange(block_size + 1)].astype(np.int64)
        return np.ascontiguousarray(window[:, :-1]), np.ascontiguousarray(window[:, 1:])


BATCH_STREAM = 0xBA7C4  # sets the batch stream of a seed apart from its default stream


class BatchSampler:
    """The batches of one run from one PCG64 generator, resumable exactly.

    ``state_dict()`` saves the generator as JSON-serialisable data, so a run restored with
    ``load_state_dict`` at iteration N draws the same batches as one never stopped. Evaluation
    should use a sampler of its own (seeded, say, by the iteration), so that it never shifts
    the training stream.
    """

    def __init__(self, dataset, batch_size, block_size, seed):
        dataset.check_block_size(block_size)
        self.dataset = dataset
        self.batch_size = batch_size
        self.block_size = block_size
        self.seed = seed
        # a stream of its own, not minigrad.manual_seed(seed)'s (numpy's default_rng(seed)): with
        # one stream for both, the batch offsets would come from the bits that initialised the weights
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, BATCH_STREAM])))
        self.batches_drawn = 0

    def get_batch(self, split="train"):
        """Next batch (x, y) of ``split``: np.int64 arrays of shape (batch_size, block_size),
        y shifted one token ahead of x (see Dataset.get_batch)."""
        batch = self.dataset.get_batch(split, self.batch_size, self.block_size, self.rng)
        self.batches_drawn += 1
        return batch

    def state_dict(self):
        """JSON-serialisable state: {"seed": int, "batches_drawn": int, "bit_generator": {...}}."""
        return {"seed": self.seed, "batches_drawn": self.batches_drawn, "bit_generator": self.rng.bit_generator.state}

    def load_state_dict(self, state):
        """Continue the stream saved by ``state_dict()``; a malformed state raises DataError."""
        try:
            seed, drawn = state["seed"], int(state["batches_drawn"])
            self.rng.bit_generator.state = state["bit_generator"]  # checks the state's shape
            self.seed, self.batches_drawn = seed, drawn
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"batch sampler state is malformed ({type(e).__name__}: {e})") from None


def _check_name(name):
    # the name becomes a folder under data_dir, so it must not climb out of it
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise DataError(f"dataset name {name!r} is not a plain folder name (letters, digits, '_', '-', '.')")


def _tokenizer_kind(name, requested, meta):
    """Resolve the tokenizer argument of prepare_dataset to "char" or "gpt2"."""
    fixed = FIXED_TOKENIZER.get(name)
    if requested in (None, "", "auto"):
        return fixed or (meta["tokenizer"]["kind"] if meta else "char")
    if requested not in TOKENIZER_KINDS:
        raise DataError(f"unknown tokenizer {requested!r} (known: 'auto', 'char', 'gpt2')")
    if fixed and requested != fixed:
        raise DataError(
            f"dataset {name!r} is tokenized with {fixed!r}, not {requested!r}; to use {requested!r} "
            f"prepare a dataset of your own: --dataset=NAME --input=PATH --tokenizer={requested}"
        )
    return requested


def _local_shakespeare(data_dir):
    """Text of a Tiny Shakespeare copy downloaded earlier into either shakespeare dataset, or None."""
    for name in FIXED_TOKENIZER:
        path = data_dir / name / "input.txt"
        if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == SHAKESPEARE_SHA256:
            return path.read_text(encoding="utf-8")
    return None


def _download_shakespeare(name):
    """Download Tiny Shakespeare (for dataset `name`) and return its text."""
    try:
        text = download_text(SHAKESPEARE_URL)
    except DataError as e:
        raise DataError(
            f"{e}. Tiny Shakespeare is needed for dataset {name!r}: download it yourself "
            "and pass --input=PATH"
        ) from None
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != SHAKESPEARE_SHA256:
        raise DataError(f"the text downloaded from {SHAKESPEARE_URL} is not Tiny Shakespeare; pass --input=PATH")
    return text


def _read_utf8(path):
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{str(path)!r} is not UTF-8 text (byte {e.start}: {e.reason})") from None
    except OSError as e:
        raise DataError(f"cannot read {str(path)!r}: {e.strerror}") from None


def _write_dataset(out, text, tok, info):
    """Tokenize ``text``, split 90/10 by characters, and write the dataset folder atomically."""
    if tok.vocab_size > np.iinfo(TOKEN_DTYPE).max + 1:
        raise DataError(f"vocabulary of {tok.vocab_size} tokens does not fit the uint16 token files (at most 65536)")
    n = int(len(text) * TRAIN_FRACTION)
    splits = {"train": _encode(tok, text[:n], "train"), "val": _encode(tok, text[n:], "val")}
    for split, ids in splits.items():
        if len(ids) == 0:
            raise DataError(f"input of {len(text)} characters is too short: the {split} split is empty")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for stale in out.glob("*.tmp"):  # left by an interrupted preparation
            stale.unlink()
        # without meta.json the old data no longer looks complete while its files are replaced
        (out / "meta.json").unlink(missing_ok=True)
        for split, ids in splits.items():
            atomic_write(out / f"{split}.bin", ids.tofile)
        meta = {
            "tokenizer": tok.to_meta(),
            "vocab_size": tok.vocab_size,
            **info,
            "train_tokens": len(splits["train"]),
            "val_tokens": len(splits["val"]),
            "dtype": "uint16",
        }
        atomic_write(out / "meta.json", lambda tmp: Path(tmp).write_text(json.dumps(meta, indent=1), encoding="utf-8"))
    except OSError as e:
        raise DataError(f"cannot write dataset {str(out)!r}: {e}") from None


def _encode(tok, text, desc):
    """Tokenize ``text`` in chunks (showing a bar for large inputs) -> 1-D np.uint16 array."""
    pieces = []
    disable = True if len(text) < PROGRESS_MIN_CHARS else None  # None: only on a terminal
    from tqdm import tqdm  # here: only preparing a dataset draws a bar (train.py's start need not import it)

    with tqdm(total=len(text), desc=f"tokenizing {desc}", unit="char", unit_scale=True, disable=disable) as bar:
        for chunk in _bpe_safe_chunks(text, CHUNK_CHARS):
            pieces.append(np.asarray(tok.encode(chunk, allow_special=False), dtype=TOKEN_DTYPE))
            bar.update(len(chunk))
    return np.concatenate(pieces) if pieces else np.zeros(0, TOKEN_DTYPE)


# GPT-2's pre-tokenizer never joins a newline that follows a non-space to a non-space after it,
# so cutting there encodes each chunk exactly as it is encoded inside the whole text. A cut
# before or inside a run of blank lines would not: "\n\n" at a chunk's end is one token.
_SAFE_CUT = re.compile(r"(?<=\S\n)(?=\S)")


def _bpe_safe_chunks(text, size):
    """Split ``text`` into pieces of about ``size`` characters at cuts that leave GPT-2's (and a
    char tokenizer's) encoding unchanged: "".join(pieces) == text."""
    start = 0
    while start < len(text):
        cut = _SAFE_CUT.search(text, start + size) if start + size < len(text) else None
        end = cut.start() if cut else len(text)
        yield text[start:end]
        start = end


def _prepared_meta(out):
    """(meta.json of the complete prepared dataset in ``out``, None) or, if it is absent or
    damaged (then it is prepared again, where there is a source), (None, the problem or None)."""
    try:
        meta = _read_meta(out)
        if meta is not None:
            for split in Dataset.SPLITS:
                _check_file_size(out / f"{split}.bin", meta[f"{split}_tokens"])
        return meta, None
    except DataError as e:
        return None, e


def _read_meta(path):
    """Parsed and checked meta.json of dataset folder ``path``; None if there is none."""
    file = Path(path) / "meta.json"
    try:
        meta = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise DataError(f"cannot read {str(file)!r}: {e}") from None
    if not isinstance(meta, dict):
        raise DataError(f"{str(file)!r} does not hold a JSON object")
    for key in META_KEYS:
        if key not in meta:
            raise DataError(f"{str(file)!r} has no key {key!r}")
    for key in ("vocab_size", "train_tokens", "val_tokens"):
        if isinstance(meta[key], bool) or not isinstance(meta[key], int) or meta[key] < 0:
            raise DataError(f"{str(file)!r}: {key} must be a non-negative integer, got {meta[key]!r}")
    if not isinstance(meta["tokenizer"], dict) or meta["tokenizer"].get("kind") not in TOKENIZER_KINDS:
        raise DataError(f"{str(file)!r}: unknown tokenizer {meta['tokenizer']!r}")
    # the vocabulary must be the tokenizer's: a wrong one trains a model sample.py cannot decode
    if meta["tokenizer"]["kind"] == "char":
        try:
            size = tokenizer_from_meta(meta["tokenizer"]).vocab_size
        except DataError as e:
            raise DataError(f"{str(file)!r}: {e}") from None
    else:
        size = GPT2Tokenizer.vocab_size
    if meta["vocab_size"] != size:
        raise DataError(f"{str(file)!r}: vocab_size {meta['vocab_size']} is not its tokenizer's {size} "
                        "(was the file edited? prepare the dataset again)")
    return meta


def _check_file_size(file, n_tokens):
    try:
        size = file.stat().st_size
    except OSError:
        raise DataError(f"token file {str(file)!r} is missing") from None
    if size != n_tokens * TOKEN_DTYPE().itemsize:
        raise DataError(f"token file {str(file)!r} has {size} bytes, but meta.json says {n_tokens} uint16 tokens")


def _check_token_file(file, n_tokens, vocab_size):
    """File size matches meta.json, and every id is < vocab_size (a wrong id would otherwise
    surface much later, as an index error deep inside the model)."""
    _check_file_size(file, n_tokens)
    if n_tokens == 0:
        return
    data = np.memmap(file, dtype=TOKEN_DTYPE, mode="r")
    if int(data.max()) >= vocab_size:
        at = int(np.argmax(data >= vocab_size))
        raise DataError(
            f"token file {str(file)!r}: token id {int(data[at])} at position {at} "
            f"is outside the vocabulary of size {vocab_size}"
        )
