import hashlib
import json
import os
import socket

import numpy as np
import pytest
import minigrad
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpt import data
from gpt.data import BatchSampler, DataError, Dataset, default_corpus_text, prepare_dataset
from gpt.tokenizer import GPT2Tokenizer


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No test may reach the network, nor find GPT-2 ranks on the machine by accident."""
    def refuse(*args, **kwargs):
        raise OSError("network access in a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    monkeypatch.delenv("MINIGRAD_GPT2_TIKTOKEN", raising=False)


@pytest.fixture
def data_dir(tmp_path):
    return tmp_path / "data"


@pytest.fixture
def shakespeare_path(shared_data):
    return shared_data / "tinyshakespeare.txt"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def all_ids(dataset):
    return np.concatenate([np.fromfile(dataset.bin_path(s), dtype=np.uint16) for s in Dataset.SPLITS])


# --- preparing ---

def test_char_tiny_shakespeare(data_dir, shakespeare_path):
    path = prepare_dataset("shakespeare_char", data_dir, input=shakespeare_path)
    ds = Dataset.load(path)
    assert (ds.num_tokens("train"), ds.num_tokens("val")) == (1_003_854, 111_540)
    assert ds.vocab_size == 65
    assert ds.meta["sha256"] == hashlib.sha256(shakespeare_path.read_bytes()).hexdigest()
    assert ds.tokenizer().decode(all_ids(ds)) == shakespeare_path.read_text(encoding="utf-8")


def test_gpt2_tiny_shakespeare(data_dir, shared_data, shakespeare_path):
    path = prepare_dataset("shakespeare", data_dir, input=shakespeare_path, ranks_path=shared_data / "gpt2.tiktoken")
    ds = Dataset.load(path)
    assert (ds.num_tokens("train"), ds.num_tokens("val")) == (301_966, 36_059)
    assert ds.vocab_size == 50257 and ds.meta["tokenizer"] == {"kind": "gpt2"}
    assert isinstance(ds.tokenizer(shared_data / "gpt2.tiktoken"), GPT2Tokenizer)


def test_default_dataset_is_prepared_offline(data_dir):
    ds = Dataset.load(prepare_dataset("default", data_dir))
    text = default_corpus_text()
    assert len(text) > 100_000
    assert ds.meta["tokenizer"]["kind"] == "char"
    assert ds.num_tokens("train") == int(len(text) * 0.9)
    assert ds.num_tokens("train") + ds.num_tokens("val") == len(text)
    assert "pydoc_data" in ds.meta["source"]
    assert ds.tokenizer().decode(all_ids(ds)) == text


def test_meta_json_records_the_preparation(data_dir):
    path = prepare_dataset("notes", data_dir, input=write(data_dir.parent / "n.txt", "hello world\n" * 10))
    meta = json.loads((path / "meta.json").read_text())
    assert meta["tokenizer"]["kind"] == "char"
    assert meta["vocab_size"] == len(meta["tokenizer"]["chars"]) == 9
    assert meta["train_tokens"] == 108 and meta["val_tokens"] == 12
    assert meta["sha256"] == hashlib.sha256(("hello world\n" * 10).encode()).hexdigest()
    assert meta["source"].endswith("n.txt")


def test_prepare_once_then_again_only_when_the_source_changes(data_dir):
    source = write(data_dir.parent / "in.txt", "abcdefghij" * 20)
    meta = prepare_dataset("mine", data_dir, input=source) / "meta.json"
    first = meta.stat().st_mtime_ns
    prepare_dataset("mine", data_dir, input=source)
    prepare_dataset("mine", data_dir)  # without input: what was prepared is used
    assert meta.stat().st_mtime_ns == first
    write(source, "klmnopqrst" * 20)
    ds = Dataset.load(prepare_dataset("mine", data_dir, input=source))
    assert ds.tokenizer().chars[0] == "k"
    os.utime(meta, ns=(first, first))
    prepare_dataset("mine", data_dir, input=source, force=True)
    assert meta.stat().st_mtime_ns != first


def test_an_existing_datasets_tokenizer_is_kept_unless_asked(data_dir, shared_data):
    ranks = shared_data / "gpt2.tiktoken"
    source = write(data_dir.parent / "in.txt", "some words, some more words\n" * 20)
    prepare_dataset("mine", data_dir, input=source, tokenizer="gpt2", ranks_path=ranks)
    path = prepare_dataset("mine", data_dir, input=source)  # tokenizer auto: stays gpt2
    assert Dataset.load(path).meta["tokenizer"] == {"kind": "gpt2"}
    path = prepare_dataset("mine", data_dir, input=source, tokenizer="char")
    assert Dataset.load(path).meta["tokenizer"]["kind"] == "char"


def test_folder_input(data_dir, tmp_path):
    root = tmp_path / "corpus"
    write(root / "b.txt", "bee")
    write(root / "a" / "z.md", "zed")
    write(root / "a.rst", "ay")
    write(root / ".git" / "x.txt", "hidden")
    (root / "image.png").write_bytes(b"\x89PNG\x00\xff")
    ds = Dataset.load(prepare_dataset("folder", data_dir, input=root))
    # sorted by relative path: "a.rst" < "a/z.md" < "b.txt"
    assert ds.tokenizer().decode(all_ids(ds)) == "ay\nzed\nbee"


def test_shakespeare_is_downloaded_once_and_kept(data_dir, shakespeare_path, monkeypatch):
    text = shakespeare_path.read_text(encoding="utf-8")
    calls = []
    monkeypatch.setattr(data, "download_text", lambda url, timeout=10.0: calls.append(url) or text)
    ds = Dataset.load(prepare_dataset("shakespeare_char", data_dir))
    assert calls == [data.SHAKESPEARE_URL]
    assert ds.vocab_size == 65
    assert (data_dir / "shakespeare_char" / "input.txt").read_text(encoding="utf-8") == text

    def no_download(url, timeout=10.0):
        raise AssertionError("downloaded again")

    monkeypatch.setattr(data, "download_text", no_download)
    prepare_dataset("shakespeare_char", data_dir, force=True)


def test_shakespeare_download_failure_says_to_pass_input(data_dir, monkeypatch):
    def fail(url, timeout=10.0):
        raise DataError(f"could not download {url}: no network")

    monkeypatch.setattr(data, "download_text", fail)
    with pytest.raises(DataError, match=r"could not download .*pass --input=PATH"):
        prepare_dataset("shakespeare_char", data_dir)
    assert not (data_dir / "shakespeare_char" / "meta.json").exists()


def test_a_download_that_is_not_shakespeare_is_refused(data_dir, monkeypatch):
    monkeypatch.setattr(data, "download_text", lambda url, timeout=10.0: "<html>captive portal</html>")
    with pytest.raises(DataError, match="is not Tiny Shakespeare"):
        prepare_dataset("shakespeare_char", data_dir)


def test_download_text_turns_network_failure_into_data_error():
    with pytest.raises(DataError, match="could not download http://example.invalid/x"):
        data.download_text("http://example.invalid/x", timeout=1)


# --- bad input ---

def test_missing_input_is_named(data_dir, tmp_path):
    with pytest.raises(DataError, match=r"input '.*missing\.txt' does not exist"):
        prepare_dataset("x", data_dir, input=tmp_path / "missing.txt")


def test_empty_input(data_dir, tmp_path):
    with pytest.raises(DataError, match=r"empty\.txt' is empty"):
        prepare_dataset("x", data_dir, input=write(tmp_path / "empty.txt", ""))


def test_folder_without_text_files(data_dir, tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "a.png").write_bytes(b"\x89PNG")
    with pytest.raises(DataError, match="has no text files"):
        prepare_dataset("x", data_dir, input=tmp_path / "bin")


def test_input_that_is_not_utf8(data_dir, tmp_path):
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1\.txt' is not UTF-8 text \(byte 3"):
        prepare_dataset("x", data_dir, input=tmp_path / "latin1.txt")


def test_input_too_short_to_split(data_dir, tmp_path):
    with pytest.raises(DataError, match="the train split is empty"):
        prepare_dataset("x", data_dir, input=write(tmp_path / "one.txt", "a"))


def test_unknown_dataset_without_input(data_dir):
    with pytest.raises(DataError, match=r"dataset 'openwebtext' is not prepared .* pass --input=PATH"):
        prepare_dataset("openwebtext", data_dir)


@pytest.mark.parametrize("name", ["../up", "a/b", "", ".hidden"])
def test_dataset_name_must_be_a_plain_folder_name(data_dir, name):
    with pytest.raises(DataError, match="not a plain folder name"):
        prepare_dataset(name, data_dir)


def test_builtin_datasets_keep_their_tokenizer(data_dir, shakespeare_path):
    with pytest.raises(DataError, match="'shakespeare_char' is tokenized with 'char', not 'gpt2'"):
        prepare_dataset("shakespeare_char", data_dir, input=shakespeare_path, tokenizer="gpt2")
    with pytest.raises(DataError, match="unknown tokenizer 'bpe'"):
        prepare_dataset("mine", data_dir, input=shakespeare_path, tokenizer="bpe")


def test_gpt2_dataset_without_ranks_fails_with_how_to(data_dir, tmp_path):
    source = write(tmp_path / "t.txt", "hello there\n" * 5)
    with pytest.raises(DataError, match="whisper/assets/gpt2.tiktoken"):
        prepare_dataset("mine", data_dir, input=source, tokenizer="gpt2")


def test_vocabulary_too_large_for_uint16(data_dir, tmp_path):
    chars = [chr(c) for c in range(0x100, 0x100 + 65_537 + 2048) if not 0xD800 <= c <= 0xDFFF]
    with pytest.raises(DataError, match="vocabulary of 65537 tokens does not fit"):
        prepare_dataset("x", data_dir, input=write(tmp_path / "wide.txt", "".join(chars)))


def test_block_size_too_large_for_the_corpus(data_dir, tmp_path):
    ds = Dataset.load(prepare_dataset("x", data_dir, input=write(tmp_path / "t.txt", "abcdefghij" * 10)))
    ds.check_block_size(9)  # the val split has 10 tokens: one window of 9 + 1
    with pytest.raises(DataError, match=r"val split has 10 tokens, too few for block_size=64 \(it needs at least 65\)"):
        ds.check_block_size(64)
    with pytest.raises(DataError, match="block_size=10"):
        BatchSampler(ds, batch_size=2, block_size=10, seed=0)


def test_token_ids_outside_the_vocabulary_are_found_on_load(data_dir, tmp_path):
    path = prepare_dataset("x", data_dir, input=write(tmp_path / "t.txt", "abcdefghij" * 10))
    ids = np.fromfile(path / "val.bin", dtype=np.uint16)
    ids[3] = 500
    ids.tofile(path / "val.bin")
    with pytest.raises(DataError, match=r"val\.bin': token id 500 at position 3 is outside the vocabulary of size 10"):
        Dataset.load(path)


def test_truncated_token_file_and_broken_meta(data_dir, tmp_path):
    source = write(tmp_path / "t.txt", "abcdefghij" * 10)
    path = prepare_dataset("x", data_dir, input=source)
    with open(path / "train.bin", "r+b") as f:
        f.truncate(10)
    with pytest.raises(DataError, match=r"train\.bin' has 10 bytes, but meta.json says 90 uint16 tokens"):
        Dataset.load(path)
    prepare_dataset("x", data_dir, input=source)  # an incomplete dataset is prepared again
    Dataset.load(path)
    (path / "meta.json").write_text("{not json")
    with pytest.raises(DataError, match=r"cannot read '.*meta\.json'"):
        Dataset.load(path)
    (path / "meta.json").write_text('{"vocab_size": 3}')
    with pytest.raises(DataError, match="has no key 'tokenizer'"):
        Dataset.load(path)
    with pytest.raises(DataError, match="not a prepared dataset"):
        Dataset.load(tmp_path)


def test_an_interrupted_prepare_never_looks_complete(data_dir, tmp_path, monkeypatch):
    source = write(tmp_path / "t.txt", "abcdefghij" * 10)
    path = prepare_dataset("x", data_dir, input=source)
    real_write = data.atomic_write

    def crash_on_val(target, fill):
        if target.name == "val.bin":
            raise KeyboardInterrupt
        real_write(target, fill)

    monkeypatch.setattr(data, "atomic_write", crash_on_val)
    with pytest.raises(KeyboardInterrupt):
        prepare_dataset("x", data_dir, input=write(source, "klmnopqrst" * 10))
    assert not (path / "meta.json").exists()
    assert not [p for p in path.iterdir() if p.name.endswith(".tmp")]
    with pytest.raises(DataError, match="not a prepared dataset"):
        Dataset.load(path)
    monkeypatch.setattr(data, "atomic_write", real_write)
    assert Dataset.load(prepare_dataset("x", data_dir, input=source)).tokenizer().chars[0] == "k"


# --- chunked tokenizing ---

@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="as '1.\n\n\r\t\x0b\x1c\xa0\u2028\u00e9", max_size=200), st.integers(1, 20))
def test_chunks_cut_where_gpt2_tokens_do_not_change(shared_data, text, size):
    tok = GPT2Tokenizer(shared_data / "gpt2.tiktoken")
    chunks = list(data._bpe_safe_chunks(text, size))
    assert "".join(chunks) == text
    assert [i for c in chunks for i in tok.encode(c, allow_special=False)] == tok.encode(text, allow_special=False)


# --- batches ---

@pytest.fixture
def counting(data_dir, tmp_path):
    """A dataset whose token ids count up 0, 1, 2, ...: the text's characters are distinct and
    sorted, so every window is a run of consecutive ids."""
    text = "".join(chr(0x100 + i) for i in range(2000))
    return Dataset.load(prepare_dataset("counting", data_dir, input=write(tmp_path / "c.txt", text)))


def test_batches_are_shifted_windows(counting):
    x, y = counting.get_batch("train", 8, 16, np.random.default_rng(0))
    assert x.shape == y.shape == (8, 16)
    assert x.dtype == y.dtype == np.int64
    assert x.flags.c_contiguous and y.flags.c_contiguous
    np.testing.assert_array_equal(y, x + 1)
    np.testing.assert_array_equal(np.diff(x, axis=1), 1)
    assert y.max() < counting.num_tokens("train")
    xv, yv = counting.get_batch("val", 8, 16, np.random.default_rng(0))
    assert xv.min() >= counting.num_tokens("train") and yv.max() < 2000


def test_batches_reach_both_ends_of_a_split(counting):
    n = counting.num_tokens("val")
    x, y = counting.get_batch("val", 2000, n - 1, np.random.default_rng(0))
    assert x.min() == 1800 and y.max() == 1999


def test_batches_follow_the_generator(counting):
    a = counting.get_batch("train", 4, 8, np.random.default_rng(7))
    b = counting.get_batch("train", 4, 8, np.random.default_rng(7))
    np.testing.assert_array_equal(a[0], b[0])
    with pytest.raises(DataError, match="unknown split 'test'"):
        counting.get_batch("test", 4, 8, np.random.default_rng(7))


def test_sampler_resumes_exactly(counting):
    straight = BatchSampler(counting, batch_size=4, block_size=8, seed=1337)
    expected = [straight.get_batch()[0] for _ in range(10)]

    first = BatchSampler(counting, batch_size=4, block_size=8, seed=1337)
    got = [first.get_batch("train")[0] for _ in range(4)]
    saved = json.loads(json.dumps(first.state_dict()))
    resumed = BatchSampler(counting, batch_size=4, block_size=8, seed=0)
    resumed.load_state_dict(saved)
    got += [resumed.get_batch()[0] for _ in range(6)]
    for want, have in zip(expected, got, strict=True):
        np.testing.assert_array_equal(want, have)
    assert resumed.batches_drawn == 10 and resumed.seed == 1337


def test_samplers_with_the_same_seed_draw_the_same_batches(counting):
    a, b = (BatchSampler(counting, batch_size=4, block_size=8, seed=5) for _ in range(2))
    for split in ("train", "val", "val", "train"):
        np.testing.assert_array_equal(a.get_batch(split)[1], b.get_batch(split)[1])
    other = BatchSampler(counting, batch_size=4, block_size=8, seed=6)
    assert not np.array_equal(a.get_batch()[0], other.get_batch()[0])


def test_batch_stream_is_not_the_initialisation_stream(counting):
    # train.py seeds both from one seed; the batches must not reuse the bits that drew the weights
    minigrad.manual_seed(1337)
    init_state = minigrad.get_rng_state()["cpu"]["state"]
    sampler = BatchSampler(counting, batch_size=4, block_size=8, seed=1337)
    assert sampler.state_dict()["bit_generator"]["state"] != init_state


def test_malformed_sampler_state(counting):
    sampler = BatchSampler(counting, batch_size=4, block_size=8, seed=1)
    with pytest.raises(DataError, match="batch sampler state is malformed"):
        sampler.load_state_dict({"seed": 1})
    with pytest.raises(DataError, match="batch sampler state is malformed"):
        sampler.load_state_dict({"seed": 1, "batches_drawn": 0, "bit_generator": {"bit_generator": "MT19937"}})
