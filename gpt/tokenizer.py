"""Tokenizers: characters, or GPT-2's byte-pair encoding through tiktoken, always offline.

Both kinds share one small interface: ``encode(str) -> list[int]``, ``decode(ids) -> str``,
``vocab_size`` and ``to_meta()``, a JSON-serialisable dict from which ``tokenizer_from_meta``
rebuilds an equal tokenizer (it is stored in a dataset's meta.json).
"""

import base64
import functools
import hashlib
import operator
import os
import tempfile
from pathlib import Path


class DataError(ValueError):
    """Bad data or data setup (a missing file, an unknown character, a wrong token id...).

    The message alone says what is wrong and where, so a command line can print it as one line.
    """


class CharTokenizer:
    """Character-level tokenizer: token id i is the i-th character of ``chars``.

    ``chars`` is a sequence of distinct one-character strings; ``from_text`` builds it as the
    sorted distinct characters of a text, as nanoGPT's shakespeare_char does.
    """

    kind = "char"

    def __init__(self, chars):
        chars = list(chars)
        for c in chars:
            if not isinstance(c, str) or len(c) != 1:
                raise DataError(f"char tokenizer: vocabulary entry {c!r} is not a single character")
        self.stoi = {c: i for i, c in enumerate(chars)}
        if len(self.stoi) != len(chars):
            dup = next(c for c in chars if chars.count(c) > 1)
            raise DataError(f"char tokenizer: character {dup!r} appears twice in the vocabulary")
        self.chars = chars

    @classmethod
    def from_text(cls, text):
        """Vocabulary of the sorted distinct characters of ``text`` (a str)."""
        return cls(sorted(set(text)))

    @property
    def vocab_size(self):
        """Number of token ids (int); ids are 0 .. vocab_size - 1."""
        return len(self.chars)

    def encode(self, text, allow_special=True):
        """str -> list[int] of length len(text). An unknown character raises DataError.

        ``allow_special`` is there so both tokenizers are called alike; characters have no
        special tokens.
        """
        try:
            return [self.stoi[c] for c in text]
        except KeyError as e:
            c = e.args[0]
            raise DataError(
                f"char tokenizer: character {c!r} (U+{ord(c):04X}) at position {text.index(c)} "
                f"is not in the vocabulary of {self.vocab_size} characters"
            ) from None

    def decode(self, ids):
        """Sequence of ints (list or 1-D integer array) -> str. An id outside the vocabulary
        raises DataError."""
        ids = _checked_ids(ids, self.vocab_size, "char tokenizer")
        return "".join([self.chars[i] for i in ids])

    def to_meta(self):
        """JSON-serialisable description: {"kind": "char", "chars": [str, ...]}."""
        return {"kind": self.kind, "chars": list(self.chars)}


# GPT-2's ranks, byte-identical to tiktoken's r50k_base.tiktoken (and whisper/assets/gpt2.tiktoken)
GPT2_RANKS_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
GPT2_RANKS_ENV = "MINIGRAD_GPT2_TIKTOKEN"
R50K_URL = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"
# tiktoken.get_encoding("gpt2"), which nanoGPT's prepare scripts call, caches these two files
# instead; together they hold the same ranks in the older data-gym format.
GPT2_VOCAB_BPE = (
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
    "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
)
GPT2_ENCODER_JSON = (
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
    "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
)

GPT2_HOWTO = (
    "GPT-2's BPE ranks file gpt2.tiktoken was not found and is never downloaded. Get it "
    "(sha256 306cd27f...) from the openai-whisper source distribution, where it is "
    "whisper/assets/gpt2.tiktoken, or copy tiktoken's cached r50k_base.tiktoken from a machine "
    f"with network; then pass --gpt2_tiktoken=PATH or set {GPT2_RANKS_ENV}=PATH"
)


class GPT2Tokenizer:
    """GPT-2 BPE (50257 ids, ``<|endoftext|>`` = 50256) as a ``tiktoken.Encoding`` built offline.

    The ranks are read from ``ranks_path``, else ``$MINIGRAD_GPT2_TIKTOKEN``, else tiktoken's
    cache; a file that is missing or not GPT-2's ranks raises DataError at once.
    """

    kind = "gpt2"
    vocab_size = 50257
    eot_token = 50256

    def __init__(self, ranks_path=None):
        self.enc = _gpt2_encoding(*_find_gpt2_ranks(ranks_path))

    def encode(self, text, allow_special=True):
        """str -> list[int]. With ``allow_special`` the text "<|endoftext|>" becomes id 50256;
        without, it is encoded as ordinary text (safe for untrusted input)."""
        if allow_special:
            return self.enc.encode(text, allowed_special="all")
        return self.enc.encode_ordinary(text)

    def decode(self, ids):
        """Sequence of ints -> str; bytes that are not valid UTF-8 become U+FFFD. An id outside
        0..50256 raises DataError."""
        return self.enc.decode(_checked_ids(ids, self.vocab_size, "gpt2 tokenizer"))

    def to_meta(self):
        """JSON-serialisable description: {"kind": "gpt2"}."""
        return {"kind": self.kind}


def tokenizer_from_meta(meta, ranks_path=None):
    """Rebuild the tokenizer described by ``meta`` (a dict made by ``to_meta()``).

    ``ranks_path`` is passed on to GPT2Tokenizer. An unknown kind or a malformed entry raises
    DataError.
    """
    kind = meta.get("kind") if isinstance(meta, dict) else None
    if kind == CharTokenizer.kind:
        chars = meta.get("chars")
        if not isinstance(chars, list):
            raise DataError('char tokenizer description has no list "chars"')
        return CharTokenizer(chars)
    if kind == GPT2Tokenizer.kind:
        return GPT2Tokenizer(ranks_path)
    raise DataError(f"unknown tokenizer kind {kind!r} (known: 'char', 'gpt2')")


def _checked_ids(ids, vocab_size, who):
    """ids -> list of Python ints, each checked to lie in [0, vocab_size)."""
    try:
        ids = [operator.index(i) for i in ids]
    except TypeError:
        raise DataError(f"{who}: token ids must be integers, got {ids!r:.80}") from None
    for i in ids:
        # checked here because a negative id would silently index from the end
        if not 0 <= i < vocab_size:
            raise DataError(f"{who}: token id {i} is outside the vocabulary of size {vocab_size}")
    return ids


def _tiktoken_cache_dir():
    """Where tiktoken caches downloads (same rules as tiktoken.load), or None when disabled."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _cached_blob(url):
    """Path tiktoken would cache ``url`` under (it may not exist), or None when caching is off."""
    cache = _tiktoken_cache_dir()
    return cache / hashlib.sha1(url.encode()).hexdigest() if cache else None


def _find_gpt2_ranks(ranks_path):
    """-> (kind, path, fingerprint) of the first GPT-2 ranks source found; DataError if none.

    kind is "tiktoken" (a gpt2.tiktoken file) or "data-gym" (the cached vocab.bpe whose
    encoder.json lies beside it). An explicitly named file that is missing is an error of its
    own rather than a reason to look elsewhere.
    """
    for explicit, origin in ((ranks_path, "ranks_path"), (os.environ.get(GPT2_RANKS_ENV), GPT2_RANKS_ENV)):
        if explicit:
            path = Path(explicit).expanduser()
            if not path.is_file():
                raise DataError(f"GPT-2 ranks file {str(path)!r} (from {origin}) does not exist. {GPT2_HOWTO}")
            return "tiktoken", str(path.resolve()), _fingerprint(path)
    blob = _cached_blob(R50K_URL)
    if blob and blob.is_file() and _sha256(blob) == GPT2_RANKS_SHA256:
        return "tiktoken", str(blob), _fingerprint(blob)
    bpe, enc_json = _cached_blob(GPT2_VOCAB_BPE[0]), _cached_blob(GPT2_ENCODER_JSON[0])
    pairs = ((bpe, GPT2_VOCAB_BPE[1]), (enc_json, GPT2_ENCODER_JSON[1]))
    if bpe and all(p.is_file() and _sha256(p) == h for p, h in pairs):
        return "data-gym", str(bpe), _fingerprint(bpe)
    raise DataError(GPT2_HOWTO)


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _fingerprint(path):
    # part of the cache key below, so that a file replaced in place is read again
    st = Path(path).stat()
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=4)
def _gpt2_encoding(kind, path, fingerprint):
    """Build tiktoken's "gpt2" Encoding from a local source; cached because it takes ~0.3 s."""
    import tiktoken
    from tiktoken_ext.openai_public import ENDOFTEXT, r50k_pat_str

    if kind == "tiktoken":
        ranks = _read_tiktoken_ranks(path)
    else:
        # the hashes were checked, so tiktoken reads both files from its cache, never the network
        from tiktoken.load import data_gym_to_mergeable_bpe_ranks

        ranks = data_gym_to_mergeable_bpe_ranks(
            GPT2_VOCAB_BPE[0], GPT2_ENCODER_JSON[0], GPT2_VOCAB_BPE[1], GPT2_ENCODER_JSON[1]
        )
    return tiktoken.Encoding(
        name="gpt2",
        pat_str=r50k_pat_str,
        mergeable_ranks=ranks,
        special_tokens={ENDOFTEXT: GPT2Tokenizer.eot_token},
        explicit_n_vocab=GPT2Tokenizer.vocab_size,
    )


def _read_tiktoken_ranks(path):
    """Parse a .tiktoken file (lines "base64(token) rank") after checking its sha256.

    Parsed here rather than with tiktoken.load.load_tiktoken_bpe, which would also copy the
    local file into tiktoken's download cache and report a bad file as a "corrupted download".
    """
    data = Path(path).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != GPT2_RANKS_SHA256:
        raise DataError(
            f"{path!r} is not GPT-2's ranks file (sha256 {digest[:12]}..., "
            f"expected {GPT2_RANKS_SHA256[:12]}...). {GPT2_HOWTO}"
        )
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks
