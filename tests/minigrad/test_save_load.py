"""minigrad.save / minigrad.load: PyTorch's checkpoint format both ways, whole modules, map_location,
and a loader that runs no code from the file (a refused global is one line, and nothing runs)."""
import collections
import io
import os
import pickle
import re
import subprocess
import sys
import types
import zipfile
from pathlib import Path

import numpy as np
import pytest

import minigrad
import nn
from minigrad.serialization import CheckpointError

ROOT = Path(__file__).resolve().parents[2]


def roundtrip(obj, **load_args):
    buf = io.BytesIO()
    minigrad.save(obj, buf)
    buf.seek(0)
    return minigrad.load(buf, **load_args)


def same_tensor(a, b):
    assert type(a) is type(b)
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape) and a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def zip_with(pickled, extra=()):
    """A zip checkpoint whose data.pkl is `pickled` (how a hostile file would look)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pickled)
        z.writestr("archive/version", "3\n")
        for name, data in extra:
            z.writestr(name, data)
    buf.seek(0)
    return buf


# ---- what comes back -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                                   "uint16", "bool"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4)])
def test_tensors_keep_dtype_shape_and_values(dtype, shape):
    a = (np.arange(int(np.prod(shape))) % 5 * 3 - 4).reshape(shape).astype(dtype)
    t = minigrad.tensor(a)
    same_tensor(roundtrip(t), t)


def test_requires_grad_parameters_and_containers():
    p = nn.Parameter(minigrad.randn(2, 3))
    q = nn.Parameter(minigrad.ones(2), requires_grad=False)
    obj = {
        "p": p, "q": q, "t": minigrad.ones(3, requires_grad=True), "od": collections.OrderedDict(a=1, b=[2, 3]),
        "nested": [(1, 2.5, "s"), {"k": None, 3: True}], "bytes": b"\x00\xffab", "set": {1, 2}, "frozen": frozenset("ab"),
        "complex": 1 - 2j, "inf": float("inf"), "big": 2**70, "np": np.arange(6, dtype=np.int32).reshape(2, 3),
        "np_scalar": np.float32(1.5), "size": minigrad.Size([2, 3]), "device": minigrad.device("cpu"),
        "dtype": minigrad.float16, "counter": collections.Counter("aab"),
    }
    back = roundtrip(obj)
    assert set(back) == set(obj)
    for k in ("p", "q", "t"):
        same_tensor(back[k], obj[k])
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad and not back["q"].requires_grad
    for k in ("od", "nested", "bytes", "set", "frozen", "complex", "inf", "big", "np_scalar", "counter"):
        assert back[k] == obj[k] and type(back[k]) is type(obj[k])
    np.testing.assert_array_equal(back["np"], obj["np"])
    assert back["np"].dtype == np.int32
    assert type(back["size"]) is minigrad.Size and back["size"] == (2, 3)
    assert back["device"] == minigrad.device("cpu") and back["dtype"] is minigrad.float16


def test_shared_arrays_stay_shared():
    w = nn.Parameter(minigrad.randn(4, 3))
    x = minigrad.arange(12.0).reshape(3, 4)
    back = roundtrip({"a": w, "tied": w, "x": x, "row": x[1], "col": x[:, 2], "t": x.T})
    assert back["a"] is back["tied"]
    for k, want in (("row", x[1]), ("col", x[:, 2]), ("t", x.T)):
        same_tensor(back[k], want)
        assert np.shares_memory(back[k].array, back["x"].array)  # one storage, as in PyTorch


def test_a_path_a_pathlike_and_a_file_object(tmp_path):
    sd = nn.Linear(3, 2).state_dict()
    minigrad.save(sd, str(tmp_path / "a.pt"))
    minigrad.save(sd, tmp_path / "b.pt")
    with open(tmp_path / "c.pt", "wb") as f:
        minigrad.save(sd, f)
    for name in "abc":
        with open(tmp_path / f"{name}.pt", "rb") as f:
            back = minigrad.load(f) if name == "c" else minigrad.load(tmp_path / f"{name}.pt")
        assert list(back) == ["weight", "bias"] and type(back) is collections.OrderedDict
        for k in sd:
            same_tensor(back[k], sd[k])
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "b.pt").read_bytes()  # the same object, the same bytes


def test_a_model_and_optimizer_resume_exactly(tmp_path):
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = minigrad.randn(16, 4), minigrad.randn(16, 2)

    def step(m, o):
        loss = ((m(x) - y) ** 2).mean()
        o.zero_grad()
        loss.backward()
        o.step()
        return loss.item()

    step(model, opt)
    minigrad.save({"model": model.state_dict(), "opt": opt.state_dict(), "iter": 1}, tmp_path / "ckpt.pt")
    ckpt = minigrad.load(tmp_path / "ckpt.pt", map_location="cpu")
    model2 = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
    model2.load_state_dict(ckpt["model"])
    opt2 = nn.optim.AdamW(model2.parameters(), lr=1e-2)
    opt2.load_state_dict(ckpt["opt"])
    assert ckpt["iter"] == 1
    assert [step(model, opt) for _ in range(3)] == [step(model2, opt2) for _ in range(3)]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.head = nn.Linear(4, 2, bias=False)
        self.act = nn.functional.gelu  # a reference to a tensor function is kept
        self.scale = 0.5
        self.register_buffer("offset", minigrad.ones(2))
        self.register_buffer("scratch", minigrad.zeros(2), persistent=False)

    def forward(self, x):
        return self.head(self.act(self.body(x))) * self.scale + self.offset


def test_a_whole_module_loads_with_weights_only_false(tmp_path):
    net = Net().eval()
    minigrad.save(net, tmp_path / "net.pt")
    back = minigrad.load(tmp_path / "net.pt", weights_only=False)
    assert type(back) is Net and not back.training and back.scale == 0.5 and back.act is nn.functional.gelu
    assert list(dict(back.named_parameters())) == list(dict(net.named_parameters()))
    assert isinstance(back.head.weight, nn.Parameter) and back._non_persistent_buffers_set == {"scratch"}
    x = minigrad.randn(5, 3)
    same_tensor(back(x).detach(), net(x).detach())
    with pytest.raises(pickle.UnpicklingError, match=rf"GLOBAL {re.escape(Net.__module__)}\.Net was not an "
                                                     r"allowed global.*weights_only=False"):
        minigrad.load(tmp_path / "net.pt")
    with minigrad.serialization.safe_globals([Net, nn.Sequential, nn.Linear, nn.Tanh, nn.functional.gelu]):
        assert type(minigrad.load(tmp_path / "net.pt")) is Net  # listed classes load with weights_only=True too


def test_a_module_class_is_never_imported_for_a_file(tmp_path):
    mod = types.ModuleType("mg_test_models")
    exec("import nn\nclass Small(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.fc = nn.Linear(2, 2)\n", mod.__dict__)
    mod.Small.__module__ = "mg_test_models"
    sys.modules["mg_test_models"] = mod
    try:
        minigrad.save(mod.Small(), tmp_path / "m.pt")
    finally:
        del sys.modules["mg_test_models"]
    with pytest.raises(pickle.UnpicklingError, match="mg_test_models is not imported"):
        minigrad.load(tmp_path / "m.pt", weights_only=False)
    assert "mg_test_models" not in sys.modules
    sys.modules["mg_test_models"] = mod
    try:
        assert type(minigrad.load(tmp_path / "m.pt", weights_only=False)) is mod.Small
    finally:
        del sys.modules["mg_test_models"]


# ---- nothing runs --------------------------------------------------------------------------------
class _System:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


class _Eval:
    def __reduce__(self):
        return eval, ("__import__('os').system('touch /nonexistent-minigrad-marker')",)


class _Plain:
    def __init__(self):
        self.n = 3


class _EvilModule(nn.Module):
    def __reduce__(self):
        return os.system, ("echo module",)


@pytest.mark.parametrize("weights_only", [True, False, None])
def test_os_system_in_a_pickle_is_refused_and_not_run(tmp_path, weights_only):
    marker = tmp_path / "MARKER"
    for f in (zip_with(pickle.dumps({"w": _System(marker)}, protocol=2)), zip_with(pickle.dumps(_System(marker), 4))):
        with pytest.raises(pickle.UnpicklingError) as e:
            minigrad.load(f, weights_only=weights_only)
        assert "\n" not in str(e.value) and "GLOBAL posix.system" in str(e.value)
    with pytest.raises(pickle.UnpicklingError):  # a Module subclass whose __reduce__ is hostile: its callable is refused
        minigrad.load(zip_with(pickle.dumps(_EvilModule(), protocol=2)), weights_only=weights_only)
    assert not marker.exists()


@pytest.mark.parametrize("weights_only", [True, False])
def test_eval_and_other_globals_are_refused_with_one_line_naming_them(weights_only):
    cases = [
        (pickle.dumps(_Eval(), protocol=2), "GLOBAL eval was not an allowed global by default. Please use "
                                            "`minigrad.serialization.add_safe_globals([eval])`"),
        (b"\x80\x02cbuiltins\ngetattr\n.", "GLOBAL getattr was not an allowed global"),
        (b"\x80\x02csubprocess\nPopen\n(X\x04\x00\x00\x00trueK\x00tR.", "GLOBAL subprocess.Popen was not"),
        (pickle.dumps(_Plain(), protocol=2), f"GLOBAL {_Plain.__module__}._Plain was not an allowed global"),
        (b"\x80\x02ccopyreg\n_reconstructor\n.", "GLOBAL copyreg._reconstructor"),
    ]
    for pickled, message in cases:
        with pytest.raises(pickle.UnpicklingError) as e:
            minigrad.load(zip_with(pickled), weights_only=weights_only)
        text = str(e.value)
        assert text.startswith("Weights only load failed: ") and message in text and "\n" not in text


def test_allowed_names_are_not_called_unless_they_are_reconstructors():
    # tensor functions and Module classes may be named (weights_only=False), never called: no __init__ runs
    cases = [(b"\x80\x02cnn.functional\ngelu\nK\x01\x85R.", "REDUCE of nn.functional.gelu"),
             (b"\x80\x02cnn.modules.linear\nLinear\nK\x02K\x02\x86R.", "REDUCE of nn.modules.linear.Linear"),
             (b"\x80\x02cnn.modules.linear\nLinear\nK\x02K\x02\x86\x81.", "rebuilt without constructor arguments"),
             (b"\x80\x02cminigrad.tensor\nTensor\n)\x81.", "GLOBAL minigrad.tensor.Tensor was not an allowed")]
    for pickled, message in cases:
        with pytest.raises(pickle.UnpicklingError, match=message):
            minigrad.load(zip_with(pickled), weights_only=False)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported operand"):  # INST: the protocol 0 way to call
        minigrad.load(zip_with(b"(ios\nsystem\nX\x04\x00\x00\x00true."))


def test_numpy_object_arrays_are_refused():
    with pytest.raises(pickle.UnpicklingError, match="Python objects"):
        minigrad.load(zip_with(pickle.dumps(np.array([1, "a"], dtype=object), protocol=2)))


def test_dict_keys_of_unknown_types_are_refused():
    # hashing a key runs its class's __hash__: only plain values, minigrad's types and allowed classes are keys
    pickled = pickle.dumps({_Plain(): 1}, protocol=2)
    with minigrad.serialization.safe_globals([_Plain]):
        assert len(minigrad.load(zip_with(pickled))) == 1  # allowed: its instances may be keys
    with pytest.raises(pickle.UnpicklingError):
        minigrad.load(zip_with(pickled), weights_only=False)


def test_safe_globals_api(tmp_path):
    path = tmp_path / "cfg.pt"
    minigrad.save({"cfg": _Plain(), "w": minigrad.ones(1)}, path)
    assert minigrad.serialization.get_unsafe_globals_in_checkpoint(path) == [f"{_Plain.__module__}._Plain"]
    before = minigrad.serialization.get_safe_globals()
    with minigrad.serialization.safe_globals([_Plain]):
        assert _Plain in minigrad.serialization.get_safe_globals()
        assert minigrad.load(path)["cfg"].n == 3
        assert minigrad.serialization.get_unsafe_globals_in_checkpoint(path) == []
    assert minigrad.serialization.get_safe_globals() == before
    minigrad.serialization.add_safe_globals([(_Plain, f"{_Plain.__module__}._Plain")])
    try:
        assert minigrad.load(path)["cfg"].n == 3
    finally:
        minigrad.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        minigrad.load(path)


# ---- map_location ------------------------------------------------------------------------------------
def _cuda_file():
    """A checkpoint whose tensor was saved on 'cuda:0' (made by editing a CPU one's location)."""
    buf = io.BytesIO()
    minigrad.save({"w": minigrad.arange(3.0)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        records = {n: z.read(n) for n in z.namelist()}
    records["archive/data.pkl"] = records["archive/data.pkl"].replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n, data in records.items():
            z.writestr(n, data)
    return out.getvalue()


def test_map_location_forms():
    data = _cuda_file()
    seen = []

    def fn(storage, location):
        seen.append((type(storage), tuple(storage.shape), location))
        return storage

    for where in ("cpu", minigrad.device("cpu"), {"cuda:0": "cpu"}, fn):
        w = minigrad.load(io.BytesIO(data), map_location=where)["w"]
        assert w.device == minigrad.device("cpu") and w.tolist() == [0.0, 1.0, 2.0]
    assert seen == [(minigrad.Tensor, (3,), "cuda:0")]
    if not minigrad.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"^Attempting to deserialize object on a CUDA device but "
                                               r"minigrad.cuda.is_available\(\) is False"):
            minigrad.load(io.BytesIO(data))
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            minigrad.load(io.BytesIO(data), map_location={"cpu": "cpu"})  # cuda:0 is not remapped
    with pytest.raises(TypeError, match="map_location"):
        minigrad.load(io.BytesIO(data), map_location=3)


# ---- bad files -------------------------------------------------------------------------------------
def test_bad_files_give_one_line_naming_the_file(tmp_path):
    good = tmp_path / "good.pt"
    minigrad.save({"w": minigrad.arange(64.0)}, good)
    raw = good.read_bytes()
    cases = {
        "truncated.pt": (raw[: len(raw) // 2], "truncated or corrupted checkpoint"),
        "empty.pt": (b"", "empty file"),
        "text.pt": (b"hello, world\n" * 10, "not a checkpoint"),
        "bare.pkl": (pickle.dumps({"a": 1}), "a bare pickle"),
        "legacy.pt": (b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.", "PyTorch's legacy format"),
        "notckpt.zip": (None, "a zip file, but not a checkpoint"),
    }
    with zipfile.ZipFile(tmp_path / "notckpt.zip", "w") as z:
        z.writestr("readme.txt", "hi")
    i = raw.index(np.arange(64.0, dtype=np.float32).tobytes())
    cases["flipped.pt"] = (raw[:i + 5] + bytes([raw[i + 5] ^ 1]) + raw[i + 6:], "Bad CRC-32")
    for name, (data, message) in cases.items():
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        with pytest.raises(CheckpointError) as e:
            minigrad.load(path)
        text = str(e.value)
        assert text.startswith(str(path)) and message in text and "\n" not in text, text
    with pytest.raises(FileNotFoundError):
        minigrad.load(tmp_path / "missing.pt")
    with pytest.raises(IsADirectoryError):
        minigrad.load(tmp_path)


def test_a_failed_save_leaves_the_old_file_and_no_temporaries(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    minigrad.save({"iter": 1}, path)

    def broken(f, pickled, storages):
        with open(f, "wb") as out:
            out.write(b"PK\x03\x04 half")
        raise OSError("disk full")

    monkeypatch.setattr(minigrad.serialization, "_write_zip", broken)
    with pytest.raises(OSError, match="disk full"):
        minigrad.save({"iter": 2}, path)
    monkeypatch.undo()
    assert minigrad.load(path) == {"iter": 1}
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


def test_safetensors_files_of_nn_save_load_too(tmp_path):
    obj = {"model": nn.Linear(2, 2).state_dict(), "iter": 3}
    nn.save(obj, tmp_path / "ckpt.safetensors")
    back = minigrad.load(tmp_path / "ckpt.safetensors", map_location="cpu")
    assert back["iter"] == 3
    for k, v in obj["model"].items():
        same_tensor(back["model"][k], v)
    with pytest.raises(CheckpointError, match="pass its path"):
        minigrad.load(io.BytesIO((tmp_path / "ckpt.safetensors").read_bytes()))


def test_the_engine_loads_no_nn_to_save_and_load(tmp_path):
    code = (f"import sys, minigrad\np = {str(tmp_path / 'x.pt')!r}\n"
            "minigrad.save({'w': minigrad.ones(2), 'n': [1, 2]}, p)\nprint(minigrad.load(p)['n'], "
            "any(m == 'nn' or m.startswith('nn.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[1,", "2]", "False"]


# ---- PyTorch reads minigrad's files, and minigrad PyTorch's ------------------------------------------
def test_pytorch_loads_what_minigrad_saves(torch, tmp_path):
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = minigrad.arange(24.0).reshape(4, 6)
    obj = {"model": model.state_dict(), "iter": 7, "loss": minigrad.tensor(1.25), "view": x[:, 1:5:2],
           "t": x.T, "ints": minigrad.tensor([1, 2, 3]), "half": minigrad.ones(2, dtype=minigrad.float16),
           "u16": minigrad.tensor([1, 65535], dtype=minigrad.uint16), "mask": minigrad.tensor([True, False]),
           "p": nn.Parameter(minigrad.ones(2)), "size": minigrad.Size([2, 3]), "dtype": minigrad.float64}
    minigrad.save(obj, tmp_path / "m.pt")
    for mmap in (False, True):  # mmap needs the 64-byte aligned records PyTorch writes
        back = torch.load(tmp_path / "m.pt", weights_only=True, mmap=mmap)
        tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        tmodel.load_state_dict(back["model"])
        inp = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
        np.testing.assert_allclose(tmodel(torch.tensor(inp)).detach().numpy(),
                                   model(minigrad.tensor(inp)).detach().numpy(), rtol=1e-6)
        for k in ("loss", "view", "t", "ints", "half", "u16", "mask", "p"):
            assert str(back[k].dtype).split(".")[1] == str(obj[k].dtype).split(".")[1]
            np.testing.assert_array_equal(back[k].detach().numpy(), obj[k].detach().numpy())
        assert isinstance(back["p"], torch.nn.Parameter) and back["p"].requires_grad
        assert back["iter"] == 7 and back["size"] == torch.Size([2, 3]) and back["dtype"] is torch.float64


def test_minigrad_loads_what_pytorch_saves(torch, tmp_path):
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    x = torch.arange(24.0).reshape(4, 6)
    obj = {"model": tmodel.state_dict(), "view": x[:, 1:5:2], "t": x.T, "expanded": torch.ones(3, 1).expand(3, 4),
           "u16": torch.tensor([1, 65535], dtype=torch.uint16), "p": torch.nn.Parameter(torch.ones(2)),
           "np": np.arange(3.0), "device": torch.device("cpu"), "bytes": b"ab", "set": {1}}
    torch.save(obj, tmp_path / "t.pt")
    back = minigrad.load(tmp_path / "t.pt")
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model.load_state_dict(back["model"])
    assert list(back["model"]._metadata) == list(obj["model"]._metadata)  # PyTorch's state dict metadata kept
    inp = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(model(minigrad.tensor(inp)).detach().numpy(),
                               tmodel(torch.tensor(inp)).detach().numpy(), rtol=1e-6)
    for k in ("view", "t", "expanded", "u16", "p"):
        np.testing.assert_array_equal(back[k].detach().numpy(), obj[k].detach().numpy())
    assert isinstance(back["p"], nn.Parameter)
    with pytest.raises(RuntimeError, match="more than one element"):  # an expanded tensor cannot be written in place
        back["expanded"].add_(1)
    np.testing.assert_array_equal(back["np"], obj["np"])
    assert back["device"] == minigrad.device("cpu") and back["bytes"] == b"ab" and back["set"] == {1}


def test_stdlib_values_scripts_keep_in_checkpoints_load_with_weights_only_false(torch, tmp_path):
    # a training script's checkpoint: its argparse arguments, paths, a start time, a metrics history
    import argparse
    import datetime

    history = collections.defaultdict(list, loss=[0.5, 0.25])
    obj = {"args": argparse.Namespace(lr=1e-3, out=Path("/tmp/run"), layers=[2, 3]), "dir": Path("a/b"),
           "started": datetime.datetime(2025, 1, 2, 3, 4, 5), "took": datetime.timedelta(seconds=7),
           "history": history, "counts": collections.defaultdict(int, a=2), "epochs": range(0, 10, 2),
           "cfg": types.SimpleNamespace(d=4), "all": ..., "w": torch.ones(2)}
    torch.save(obj, tmp_path / "ck.pt")
    expected = torch.load(tmp_path / "ck.pt", weights_only=False)
    back = minigrad.load(tmp_path / "ck.pt", weights_only=False)
    assert sorted(back) == sorted(expected)
    for k in obj:
        if k != "w":
            assert type(back[k]) is type(expected[k]) and back[k] == expected[k], k
    assert back["history"].default_factory is list and back["counts"]["new"] == 0
    np.testing.assert_array_equal(back["w"].numpy(), obj["w"].numpy())
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL argparse.Namespace was not an allowed global"):
        minigrad.load(tmp_path / "ck.pt")  # weights_only=True refuses them, as PyTorch does
    with pytest.raises(pickle.UnpicklingError, match="default factory"):  # a factory that is not a builtin type
        minigrad.load(zip_with(b"\x80\x02ccollections\ndefaultdict\ncbuiltins\nrange\n\x85R."), weights_only=False)


class _Reduces:
    """Pickled as a call of fn(*args): what a hostile file can ask of the standard library's types."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


@pytest.mark.parametrize("call,refused", [
    ((list, (range(5),)), "REDUCE of builtins.list"),  # (a tiny file's list(range(10**9)))
    ((str, (nn.ReLU(),)), "REDUCE of builtins.str"),  # (str() would run the module's own code)
    ((Path, (nn.ReLU(),)), "is rebuilt from plain values"),  # (os.fspath of a rebuilt object)
    ((range, (nn.ReLU(),)), "is rebuilt from plain values"),  # (its __index__)
])
def test_standard_value_types_are_rebuilt_from_plain_values_only(call, refused):
    # weights_only=False rebuilds argparse.Namespace, paths, datetimes, ranges and defaultdicts, and names
    # the builtin types as a defaultdict's factory: never calls them on what the file built
    with pytest.raises(pickle.UnpicklingError, match=re.escape(refused)):
        minigrad.load(zip_with(pickle.dumps(_Reduces(*call), protocol=2)), weights_only=False)


def test_pytorch_bfloat16_is_refused_clearly(torch, tmp_path):
    torch.save({"w": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "bf.pt")
    with pytest.raises(pickle.UnpicklingError, match="torch.BFloat16Storage: minigrad has no such dtype"):
        minigrad.load(tmp_path / "bf.pt")


def test_pytorch_refusals_match_for_a_hostile_file(torch, tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"x": _Plain()}, path)
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(path)
    with pytest.raises(pickle.UnpicklingError) as ours:
        minigrad.load(path)
    clause = f"Unsupported global: GLOBAL {_Plain.__module__}._Plain was not an allowed global by default."
    assert clause in str(theirs.value) and clause in str(ours.value)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_pickle_protocol_round_trips(protocol):
    x = minigrad.arange(6.0).reshape(2, 3)
    obj = {"x": x, "t": x.T, "np": np.arange(3.0), "b": b"xy", "fs": frozenset([1]), "big": minigrad.Tensor._wrap(
        np.arange(3, dtype=">f4"))}  # (a big-endian array, which minigrad's own code may hold, is written little-endian)
    buf = io.BytesIO()
    minigrad.save(obj, buf, pickle_protocol=protocol)
    buf.seek(0)
    back = minigrad.load(buf)
    same_tensor(back["t"], x.T)
    assert back["big"].tolist() == [0.0, 1.0, 2.0] and back["b"] == b"xy" and back["fs"] == frozenset([1])
    np.testing.assert_array_equal(back["np"], obj["np"])
