import hashlib
import json
import shutil
import socket
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpt.tokenizer import (
    GPT2_RANKS_ENV,
    GPT2_RANKS_SHA256,
    R50K_URL,
    CharTokenizer,
    DataError,
    GPT2Tokenizer,
    tokenizer_from_meta,
)

@pytest.fixture(autouse=True)
def offline_and_isolated(tmp_path, monkeypatch):
    """No network, and no GPT-2 ranks but those a test puts in place: an empty tiktoken cache."""
    def refuse(*args, **kwargs):
        raise OSError("network access in a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.delenv(GPT2_RANKS_ENV, raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def ranks_path(shared_data):
    """GPT-2's ranks from ../shared/data (the shared_data fixture of tests/conftest.py)."""
    return shared_data / "gpt2.tiktoken"


@pytest.fixture
def shakespeare(shared_data):
    return (shared_data / "tinyshakespeare.txt").read_text(encoding="utf-8")


# --- characters ---

@settings(max_examples=200, deadline=None)
@given(st.text())
def test_char_round_trip(text):
    tok = CharTokenizer.from_text(text)
    ids = tok.encode(text)
    assert len(ids) == len(text)
    assert all(0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(ids) == text


def test_char_vocabulary_is_sorted_distinct_characters():
    tok = CharTokenizer.from_text("hello, world")
    assert tok.chars == sorted(set("hello, world"))
    assert tok.vocab_size == 9
    assert tok.encode(" ") == [0]


def test_char_meta_survives_json():
    tok = CharTokenizer.from_text("ab\n\u00e9\U0001f600")
    again = tokenizer_from_meta(json.loads(json.dumps(tok.to_meta())))
    assert isinstance(again, CharTokenizer)
    assert again.chars == tok.chars
    assert tok.to_meta()["kind"] == "char"


def test_char_unknown_character_is_named():
    tok = CharTokenizer.from_text("abc")
    with pytest.raises(DataError, match=r"character 'z' \(U\+007A\) at position 2"):
        tok.encode("abzc")


@pytest.mark.parametrize("bad", [3, -1, 1000])
def test_char_decode_rejects_ids_outside_vocabulary(bad):
    tok = CharTokenizer.from_text("abc")
    with pytest.raises(DataError, match=rf"token id {bad} is outside the vocabulary of size 3"):
        tok.decode([0, bad])


def test_char_decode_accepts_numpy_ids_but_not_floats():
    np = pytest.importorskip("numpy")
    tok = CharTokenizer.from_text("abc")
    assert tok.decode(np.array([2, 1, 0], dtype=np.uint16)) == "cba"
    with pytest.raises(DataError, match="must be integers"):
        tok.decode([1.0])


def test_char_vocabulary_must_be_distinct_single_characters():
    with pytest.raises(DataError, match="appears twice"):
        CharTokenizer(["a", "b", "a"])
    with pytest.raises(DataError, match="not a single character"):
        CharTokenizer(["ab"])


def test_unknown_tokenizer_kind():
    with pytest.raises(DataError, match="unknown tokenizer kind 'sentencepiece'"):
        tokenizer_from_meta({"kind": "sentencepiece"})
    with pytest.raises(DataError, match="no list \"chars\""):
        tokenizer_from_meta({"kind": "char"})


# --- GPT-2 ---

def test_gpt2_known_ids(ranks_path):
    tok = GPT2Tokenizer(ranks_path)
    assert tok.encode("Hello world<|endoftext|>") == [15496, 995, 50256]
    assert tok.decode([15496, 995, 50256]) == "Hello world<|endoftext|>"
    assert tok.vocab_size == 50257 and tok.eot_token == 50256
    assert tok.to_meta() == {"kind": "gpt2"}


def test_gpt2_without_special_tokens_encodes_them_as_text(ranks_path):
    tok = GPT2Tokenizer(ranks_path)
    ids = tok.encode("a<|endoftext|>", allow_special=False)
    assert 50256 not in ids
    assert tok.decode(ids) == "a<|endoftext|>"


def test_gpt2_tiny_shakespeare_token_counts(ranks_path, shakespeare):
    tok = GPT2Tokenizer(ranks_path)
    n = int(len(shakespeare) * 0.9)
    train = tok.encode(shakespeare[:n], allow_special=False)
    val = tok.encode(shakespeare[n:], allow_special=False)
    assert (len(train), len(val)) == (301_966, 36_059)
    assert tok.decode(val) == shakespeare[n:]


def test_gpt2_equals_tiktokens_own_encoding(ranks_path, shakespeare, offline_and_isolated):
    """tiktoken itself, given the ranks in its cache, builds r50k_base (= gpt2) without network."""
    import tiktoken

    assert hashlib.sha256(ranks_path.read_bytes()).hexdigest() == GPT2_RANKS_SHA256
    shutil.copy(ranks_path, offline_and_isolated / hashlib.sha1(R50K_URL.encode()).hexdigest())
    reference = tiktoken.get_encoding("r50k_base")
    ours = GPT2Tokenizer(ranks_path)
    for text in [shakespeare[:3000], shakespeare[-3000:], "  x\n\n\n  y's 1234 \u00e9\U0001f600 <|endoftext|>"]:
        assert ours.encode(text) == reference.encode(text, allowed_special="all")


def test_gpt2_is_found_in_tiktokens_cache(ranks_path, offline_and_isolated):
    shutil.copy(ranks_path, offline_and_isolated / hashlib.sha1(R50K_URL.encode()).hexdigest())
    assert GPT2Tokenizer().encode("Hello world") == [15496, 995]


def test_gpt2_is_found_through_the_environment(ranks_path, monkeypatch):
    monkeypatch.setenv(GPT2_RANKS_ENV, str(ranks_path))
    assert GPT2Tokenizer().encode("Hello world") == [15496, 995]
    assert isinstance(tokenizer_from_meta({"kind": "gpt2"}), GPT2Tokenizer)


def test_gpt2_without_ranks_fails_fast_with_how_to():
    with pytest.raises(DataError) as err:
        GPT2Tokenizer()
    message = str(err.value)
    assert "whisper/assets/gpt2.tiktoken" in message
    assert "r50k_base.tiktoken" in message
    assert GPT2_RANKS_ENV in message


def test_gpt2_explicit_missing_file_is_named(tmp_path):
    with pytest.raises(DataError, match="nope.tiktoken.*does not exist"):
        GPT2Tokenizer(tmp_path / "nope.tiktoken")


def test_gpt2_rejects_a_wrong_ranks_file(tmp_path, monkeypatch):
    bad = tmp_path / "gpt2.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\n")
    with pytest.raises(DataError, match="is not GPT-2's ranks file"):
        GPT2Tokenizer(bad)
    monkeypatch.setenv(GPT2_RANKS_ENV, str(bad))
    with pytest.raises(DataError, match="is not GPT-2's ranks file"):
        GPT2Tokenizer()


def test_gpt2_decode_rejects_ids_outside_vocabulary(ranks_path):
    with pytest.raises(DataError, match="token id 50257 is outside the vocabulary of size 50257"):
        GPT2Tokenizer(ranks_path).decode([50257])
