"""nn.save / nn.load: exact round trips, atomic writes, and clear errors on bad files."""
import json
import math
import os

import numpy as np
import pytest
import safetensors
import safetensors.numpy

import minigrad
import nn
from nn import CheckpointError


def _model():
    minigrad.manual_seed(0)
    m = nn.Sequential(nn.Embedding(11, 4), nn.LayerNorm(4, bias=False), nn.Linear(4, 11, bias=False))
    m[2].weight = m[0].weight  # tied
    return m


def test_state_dict_round_trip_is_bit_exact(tmp_path):
    model = _model()
    sd = model.state_dict()
    nn.save(sd, tmp_path / "m.safetensors")
    loaded = nn.load(tmp_path / "m.safetensors")
    assert list(loaded) == list(sd)
    for k in sd:
        assert type(loaded[k]) is minigrad.Tensor and loaded[k].dtype == sd[k].dtype
        assert loaded[k].array.tobytes() == sd[k].array.tobytes()
    # the tied weight is stored once and comes back as one tensor
    with safetensors.safe_open(tmp_path / "m.safetensors", framework="np") as f:
        assert sorted(f.keys()) == ["0.weight", "1.weight"]  # a state dict's keys name its tensors
    assert loaded["0.weight"] is loaded["2.weight"]
    fresh = nn.Sequential(nn.Embedding(11, 4), nn.LayerNorm(4, bias=False), nn.Linear(4, 11, bias=False))
    fresh.load_state_dict(loaded)
    np.testing.assert_array_equal(fresh[2].weight.array, model[0].weight.array)


def test_dtypes_shapes_and_python_values_round_trip(tmp_path):
    obj = {
        "tensors": [minigrad.tensor(np.arange(6, dtype=dt).reshape(2, 3)) for dt in
                    (np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8)],
        "scalar": minigrad.tensor(3.5, dtype=minigrad.float64),
        "empty": minigrad.zeros(0, 3),
        "mask": minigrad.tensor([True, False]),
        "strided": minigrad.Tensor(np.arange(12.0).reshape(3, 4).T),
        "array": np.array([[1, 2]], dtype=np.int16),
        "param": nn.Parameter(minigrad.ones(2)),
        "frozen": nn.Parameter(minigrad.ones(1), requires_grad=False),
        "leaf": minigrad.ones(1, requires_grad=True),
        "state": {0: {"step": 7, "betas": (0.9, 0.95)}, 12: None},
        "mixed_keys": {1: "int", "1": "str", 2.5: "float", None: "none", False: "bool", (1, "a"): "tuple"},
        "tag_like": {"__tensor__": "not a tensor"},
        "numbers": [0, -1, 2**70, 1.5, 1e-300, math.inf, -math.inf, math.nan, np.float32(0.25), np.int64(3)],
        "misc": [None, True, False, "text", "", [], {}, ()],
    }
    nn.save(obj, tmp_path / "o.safetensors")
    back = nn.load(tmp_path / "o.safetensors")
    for a, b in zip(obj["tensors"], back["tensors"]):
        assert b.array.dtype == a.array.dtype and b.array.tobytes() == a.array.tobytes()
    assert back["scalar"].shape == () and back["scalar"].item() == 3.5 and back["scalar"].dtype == minigrad.float64
    assert back["empty"].shape == (0, 3) and back["empty"].dtype == minigrad.float32
    assert back["mask"].tolist() == [True, False]
    np.testing.assert_array_equal(back["strided"].array, obj["strided"].array)
    assert isinstance(back["array"], np.ndarray) and back["array"].dtype == np.int16
    assert type(back["param"]) is nn.Parameter and back["param"].requires_grad
    assert type(back["frozen"]) is nn.Parameter and not back["frozen"].requires_grad
    assert type(back["leaf"]) is minigrad.Tensor and back["leaf"].requires_grad
    assert back["state"] == {0: {"step": 7, "betas": (0.9, 0.95)}, 12: None}
    assert back["mixed_keys"] == obj["mixed_keys"] and list(back["mixed_keys"]) == list(obj["mixed_keys"])
    assert back["tag_like"] == {"__tensor__": "not a tensor"}
    nums = back["numbers"]
    assert nums[:7] == [0, -1, 2**70, 1.5, 1e-300, math.inf, -math.inf] and math.isnan(nums[7])
    assert nums[8:] == [0.25, 3] and type(nums[0]) is int and type(nums[3]) is float
    assert back["misc"] == [None, True, False, "text", "", [], {}, ()]


def test_optimizer_state_round_trip(tmp_path):
    model = _model()
    opt = nn.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    model(minigrad.tensor([[1, 2, 3]])).sum().backward()
    opt.step()
    nn.save(opt.state_dict(), tmp_path / "opt.safetensors")
    sd = nn.load(tmp_path / "opt.safetensors")
    assert list(sd["state"]) == [0, 1] and sd["state"][0]["step"] == 1
    assert sd["param_groups"][0]["betas"] == (0.9, 0.95) and sd["param_groups"][0]["params"] == [0, 1]
    np.testing.assert_array_equal(sd["state"][0]["exp_avg"].array, opt.state[model[0].weight]["exp_avg"].array)


def test_load_to_device_cpu(tmp_path):
    nn.save({"w": minigrad.ones(2)}, tmp_path / "d.safetensors")
    assert nn.load(tmp_path / "d.safetensors", device="cpu")["w"].device == minigrad.device("cpu")


def test_unsupported_object_is_refused_before_writing(tmp_path):
    with pytest.raises(TypeError, match="cannot store a object at model/extra: checkpoints hold tensors"):
        nn.save({"model": {"extra": object()}}, tmp_path / "x.safetensors")
    assert os.listdir(tmp_path) == []


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.safetensors"):
        nn.load(tmp_path / "nope.safetensors")


def test_crash_mid_write_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
    nn.save({"iter": 1, "w": minigrad.ones(3)}, path)

    def crash(tensors, filename, metadata=None):
        with open(filename, "wb") as f:
            f.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.numpy, "save_file", crash)
    with pytest.raises(OSError, match="disk full"):
        nn.save({"iter": 2, "w": minigrad.zeros(3)}, path)
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]  # no temporary file left behind
    assert nn.load(path)["iter"] == 1


def _corrupt(path, edit):
    data = bytearray(path.read_bytes())
    path.write_bytes(bytes(edit(data)))


@pytest.mark.parametrize("what,edit,message", [
    ("truncated", lambda d: d[: len(d) - 10], "corrupted or truncated"),
    ("cut in the header", lambda d: d[:40], "bad header"),
    ("tiny", lambda d: d[:5], "too short"),
    ("empty", lambda d: b"", "too short"),
    ("garbage header", lambda d: b"\xff" * 8 + d[8:], "bad header"),
    ("text file", lambda d: b"model weights: 1 2 3\n" * 5, "bad header"),
    ("flipped data byte", lambda d: d[:-3] + bytes([d[-3] ^ 1]) + d[-2:], "checksum mismatch"),
])
def test_bad_files_raise_checkpoint_error_naming_the_file(tmp_path, what, edit, message):
    path = tmp_path / "ckpt.safetensors"
    nn.save({"w": minigrad.arange(64, dtype=minigrad.float32)}, path)
    _corrupt(path, edit)
    with pytest.raises(CheckpointError, match=message) as err:
        nn.load(path)
    assert str(path) in str(err.value)


def test_wrong_tree_in_header(tmp_path):
    path = tmp_path / "t.safetensors"
    arrays = {"w": np.ones(2, dtype=np.float32)}
    meta = {"format": "minigrad", "minigrad.format_version": "1", "minigrad.crc32": "cdd1c8e0"}
    for tree, message in [("{not json", "not valid JSON"), (json.dumps({"__tensor__": "v"}), "tensor 'v'"),
                          (json.dumps({}), "not referenced")]:
        from nn.serialization import _checksum

        meta.update({"minigrad.tree": tree, "minigrad.crc32": _checksum(arrays)})
        safetensors.numpy.save_file(arrays, path, metadata=meta)
        with pytest.raises(CheckpointError, match=message):
            nn.load(path)
    meta["minigrad.format_version"] = "99"
    safetensors.numpy.save_file(arrays, path, metadata=meta)
    with pytest.raises(CheckpointError, match="format version 99"):
        nn.load(path)


def test_pytorch_pickle_is_refused_not_unpickled(torch, tmp_path):
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(CheckpointError, match="never unpickles"):
        nn.load(path)


def test_plain_safetensors_file_loads_as_a_dict_of_tensors(tmp_path):
    path = tmp_path / "hf.safetensors"
    safetensors.numpy.save_file({"wte": np.ones((2, 3), dtype=np.float32)}, path, metadata={"format": "pt"})
    loaded = nn.load(path)
    assert list(loaded) == ["wte"] and loaded["wte"].shape == (2, 3)


def test_loading_mismatched_shapes_leaves_model_unchanged(tmp_path):
    nn.save(nn.Linear(5, 3).state_dict(), tmp_path / "small.safetensors")
    model = nn.Linear(4, 3)
    before = {k: v.array.copy() for k, v in model.state_dict().items()}
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape "
                                           r"minigrad.Size\(\[3, 5\]\)"):
        model.load_state_dict(nn.load(tmp_path / "small.safetensors"))
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.array, before[k])


def test_an_edited_tree_fails_its_checksum(tmp_path):
    path = tmp_path / "t.safetensors"
    nn.save({"iter_num": 6, "w": minigrad.ones(2)}, path)
    with safetensors.safe_open(str(path), framework="np") as f:
        meta, arrays = dict(f.metadata()), {k: f.get_tensor(k) for k in f.keys()}
    meta["minigrad.tree"] = meta["minigrad.tree"].replace("6", "7")  # a hand edit
    safetensors.numpy.save_file(arrays, path, metadata=meta)
    with pytest.raises(CheckpointError, match="object tree was edited or is corrupted"):
        nn.load(path)


@pytest.mark.parametrize("tree", [{"__tuple__": 5}, {"__float__": "many"}, {"__dict__": 3}, {"__dict__": [[1]]}])
def test_malformed_tags_raise_checkpoint_error(tmp_path, tree):
    from nn.serialization import _checksum, _text_checksum

    path = tmp_path / "t.safetensors"
    arrays = {"w": np.ones(2, dtype=np.float32)}
    text = json.dumps({"w": {"__ndarray__": "w"}, "x": tree})
    safetensors.numpy.save_file(arrays, path, metadata={
        "format": "minigrad", "minigrad.format_version": "1", "minigrad.tree": text,
        "minigrad.tree_crc32": _text_checksum(text), "minigrad.crc32": _checksum(arrays)})
    with pytest.raises(CheckpointError, match=r"t\.safetensors: corrupted checkpoint: (malformed object tree|bad dict)"):
        nn.load(path)


def test_temporaries_are_the_files_a_cut_off_save_leaves(tmp_path, monkeypatch):
    from nn.serialization import temporaries

    path = tmp_path / "ckpt.safetensors"
    nn.save({"w": minigrad.ones(3)}, path)
    left = []

    def killed(tensors, filename, metadata=None):  # a save that never returns, as under kill -9
        left.append(filename)
        with open(filename, "wb") as f:
            f.write(b"partial")
        raise SystemExit  # (atomic_write removes its temporary on the way out: put one back)

    monkeypatch.setattr(safetensors.numpy, "save_file", killed)
    with pytest.raises(SystemExit):
        nn.save({"w": minigrad.zeros(3)}, path)
    (tmp_path / os.path.basename(left[0])).write_bytes(b"partial")
    (tmp_path / ".ckpt.safetensors.mine.tmp").write_text("not a save's")
    assert temporaries(path) == [left[0]]
    assert temporaries(tmp_path / "best.safetensors") == []


def test_nn_loads_its_checkpoint_code_on_first_use(tmp_path):
    # a script that saves nothing does not import safetensors; nn.save, nn.load and CheckpointError
    # are there all the same, the first use importing them
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import minigrad, minigrad.nn as nn\n"
        "assert 'safetensors' not in sys.modules and 'nn.serialization' not in sys.modules\n"
        "from nn import CheckpointError, load, save\n"
        f"save({{'w': minigrad.ones(2)}}, {str(tmp_path / 'w.safetensors')!r})\n"
        f"assert load({str(tmp_path / 'w.safetensors')!r})['w'].tolist() == [1.0, 1.0]\n"
        "assert nn.save is save and issubclass(CheckpointError, Exception)\n"
        "print('ok')\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
