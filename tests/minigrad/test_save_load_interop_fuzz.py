"""A differential fuzzer of checkpoint interchange with PyTorch: random nested objects saved by one library
and loaded by the other must come back with the same structure, types, dtypes, shapes, strides, bits,
requires_grad, Parameter-ness and storage sharing; hostile, legacy and broken files are refused in one line.

Each seed builds the same random object twice, once of torch values and once of minigrad values, so both
directions are checked against what was saved: torch.save -> minigrad.load and minigrad.save -> torch.load."""
import collections
import io
import os
import pickle
import random
import struct
import zipfile

import numpy as np
import pytest

import minigrad
import nn
from minigrad.serialization import CheckpointError

DTYPES = ["bool", "uint8", "int8", "int16", "uint16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]
SEEDS = range(24)


# ---- one random object, built of either library's values ----------------------------------------------
def _values(rng, dtype, n):
    """n random values of `dtype`, with the floats' awkward bit patterns (nan, inf, -0.0, subnormals)."""
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if d.kind in "iu":
        info = np.iinfo(d)
        return rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
    real = np.dtype(d.char.lower()) if d.kind == "f" else np.dtype(np.float32 if d == np.complex64 else np.float64)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(real).tiny / 2, np.finfo(real).max], dtype=real)
    out = (rng.standard_normal(n) * 1e3).astype(real)
    pick = rng.random(n) < 0.25
    out[pick] = rng.choice(special, pick.sum())
    if d.kind == "c":
        out = out + 1j * (rng.standard_normal(n) * 10).astype(real)
    return out.astype(d)


# views of a 2-d base (applied identically to both libraries, and to an array of storage positions)
VIEWS = [
    ("whole", lambda x: x),
    ("transposed", lambda x: x.T),
    ("rows stepped", lambda x: x[1::2]),
    ("cols stepped", lambda x: x[:, ::3]),
    ("block", lambda x: x[1:3, 2:5]),
    ("row", lambda x: x[2]),
    ("column", lambda x: x[:, 1]),
    ("element", lambda x: x[1, 2]),
    ("empty", lambda x: x[1:1]),
]


class Maker:
    """Builds an object of torch values (lib='torch') or minigrad values (lib='minigrad') from one seed.

    Records, for every group of tensors that share one storage, the paths to them and the storage
    positions of their elements, so sharing can be checked after a load by writing through one."""

    def __init__(self, lib, torch):
        self.lib, self.torch = lib, torch
        self.groups = []  # [(path, positions array), ...] per shared storage

    # tensors
    def tensor(self, array, requires_grad=False):
        if self.lib == "torch":
            t = self.torch.from_numpy(array.copy())  # (into a fresh tensor: contiguous strides, even when empty)
            return self.torch.empty(t.shape, dtype=t.dtype).copy_(t).requires_grad_(requires_grad)
        return minigrad.tensor(array.copy(), requires_grad=requires_grad)

    def parameter(self, t, requires_grad):
        if self.lib == "torch":
            return self.torch.nn.Parameter(t, requires_grad=requires_grad)
        return nn.Parameter(t, requires_grad=requires_grad)

    def size(self, dims):
        return self.torch.Size(dims) if self.lib == "torch" else minigrad.Size(dims)

    def dtype(self, name):
        return getattr(self.torch if self.lib == "torch" else minigrad, name)

    def device(self, spec):
        return self.torch.device(spec) if self.lib == "torch" else minigrad.device(spec)

    # the tree
    def build(self, seed):
        rng = np.random.default_rng(seed)
        r = random.Random(seed)
        slots = []  # (container, key) a shared tensor may be put into
        obj = self.node(r, rng, 0, slots, ("root",))
        top = obj if isinstance(obj, dict) else {"x": obj}
        for _ in range(r.randint(1, 2)):
            self.shared_group(r, rng, top, len(self.groups))
        if r.random() < 0.5:
            top["model"] = self.state_dict(seed)
        if r.random() < 0.5:
            top["optim"] = self.optimizer_state(seed, r.choice(["SGD", "Adam"]))
        return top

    def node(self, r, rng, depth, slots, path):
        kinds = ["tensor", "tensor", "scalar", "meta"] + (["dict", "odict", "list", "tuple"] if depth < 3 else [])
        kind = r.choice(kinds)
        if kind in ("dict", "odict"):
            out = {} if kind == "dict" else collections.OrderedDict()
            for i in range(r.randint(0, 4)):
                key = r.choice([f"k{i}", i, f"ключ{i}", -i - 1])
                out[key] = self.node(r, rng, depth + 1, slots, path + (key,))
            return out
        if kind in ("list", "tuple"):
            items = [self.node(r, rng, depth + 1, slots, path + (i,)) for i in range(r.randint(0, 4))]
            return items if kind == "list" else tuple(items)
        if kind == "scalar":
            return r.choice([0, -7, 2**63 - 1, -2**70, 1.5, -0.0, float("nan"), float("inf"), 1e-310, "", "text ✓",
                             True, False, None, b"", b"\x00\xff\x80raw"])
        if kind == "meta":
            return r.choice([self.size(()), self.size((2, 0, 3)), self.dtype(r.choice(DTYPES)),
                             self.dtype("float32"), self.device("cpu"), self.device("cuda:1")])
        return self.lone_tensor(r, rng)

    def lone_tensor(self, r, rng):
        dtype = r.choice(DTYPES)
        shape = r.choice([(), (0,), (3,), (2, 3), (2, 0, 4), (1, 5, 1), (4, 3, 2)])
        array = _values(rng, dtype, int(np.prod(shape))).reshape(shape)
        floating = np.dtype(dtype).kind in "fc"
        t = self.tensor(array, requires_grad=floating and r.random() < 0.3)
        if floating and r.random() < 0.2:
            return self.parameter(t.detach(), r.random() < 0.7)
        return t

    def shared_group(self, r, rng, top, g):
        """A base tensor and views of it, put under top[f"shared{g}"] (a list) and maybe elsewhere too."""
        dtype = r.choice(DTYPES)
        array = _values(rng, dtype, 24).reshape(4, 6)
        positions = np.arange(24).reshape(4, 6)
        base = self.tensor(array)
        picked = r.sample(VIEWS, r.randint(2, 4))
        members, group = [], []
        for i, (_, view) in enumerate(picked):
            members.append(view(base))
            group.append(((f"shared{g}", i), view(positions)))
        if r.random() < 0.3 and np.dtype(dtype).kind == "f":  # a Parameter over a view keeps the sharing too
            members[0] = self.parameter(members[0], True)
        top[f"shared{g}"] = members
        self.groups.append(group)

    def state_dict(self, seed):
        if self.lib == "torch":
            self.torch.manual_seed(seed)
            m = self.torch.nn.Sequential(self.torch.nn.Linear(3, 4), self.torch.nn.BatchNorm1d(4),
                                         self.torch.nn.LayerNorm(4))
        else:
            minigrad.manual_seed(seed)
            m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.LayerNorm(4))
        return m.state_dict()

    def optimizer_state(self, seed, name):
        rng = np.random.default_rng(seed)
        w = rng.standard_normal((3, 2)).astype(np.float32)
        g = rng.standard_normal((3, 2)).astype(np.float32)
        lib_nn = self.torch.nn if self.lib == "torch" else nn
        optim = self.torch.optim if self.lib == "torch" else nn.optim
        p = lib_nn.Parameter(self.tensor(w))
        opt = optim.SGD([p], lr=0.1, momentum=0.9) if name == "SGD" else optim.Adam([p], lr=0.01)
        p.grad = self.tensor(g)
        opt.step()
        return opt.state_dict()


# ---- comparing what one library saved with what the other loaded ---------------------------------------
def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).tobytes() if a.size else b""


def same(m, t, torch, path="obj"):
    """minigrad value m holds exactly what torch value t holds (bits, dtypes, shapes, strides, types)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(m, minigrad.Tensor), (path, type(m))
        assert isinstance(t, torch.nn.Parameter) == isinstance(m, nn.Parameter), path
        assert str(t.dtype) == f"torch.{m.dtype.name}", (path, t.dtype, m.dtype)
        assert tuple(t.shape) == tuple(m.shape), (path, t.shape, m.shape)
        assert t.stride() == m.stride(), (path, t.stride(), m.stride())
        assert t.requires_grad == m.requires_grad, path
        assert _bits(t.detach().numpy()) == _bits(m.detach().numpy()), path
    elif isinstance(t, torch.Size):
        assert type(m) is minigrad.Size and tuple(m) == tuple(t), path
    elif isinstance(t, torch.dtype):
        assert isinstance(m, type(minigrad.float32)) or m is minigrad.bfloat16, (path, m)
        assert str(t) == f"torch.{m.name}", (path, m)
    elif isinstance(t, torch.device):
        assert isinstance(m, minigrad.device) and str(m) == str(t), (path, m)
    elif isinstance(t, dict):
        assert type(m) is type(t), (path, type(m), type(t))
        assert list(m) == list(t), path
        for k in t:
            same(m[k], t[k], torch, f"{path}[{k!r}]")
        assert getattr(m, "_metadata", None) == getattr(t, "_metadata", None), path
    elif isinstance(t, (list, tuple)):
        assert type(m) is type(t) and len(m) == len(t), (path, type(m), type(t))
        for i, (a, b) in enumerate(zip(m, t)):
            same(a, b, torch, f"{path}[{i}]")
    elif isinstance(t, float):
        assert type(m) is float and struct.pack("<d", m) == struct.pack("<d", t), (path, m, t)
    else:
        assert type(m) is type(t) and m == t, (path, m, t)


def _at(obj, path):
    for k in path:
        obj = obj[k]
    return obj


def check_sharing(loaded, groups, sentinel_fill, to_numpy):
    """Writing through the first non-empty member of each group changes exactly the elements of the other
    members that lie on the same storage positions (so the storage is shared, as PyTorch keeps it)."""
    for group in groups:
        tensors = [(_at(loaded, p), pos) for p, pos in group]
        writer = next(((t, pos) for t, pos in tensors if pos.size), None)
        if writer is None:
            continue
        before = [to_numpy(t).copy() for t, _ in tensors]
        value = sentinel_fill(writer[0])
        written = set(np.ravel(writer[1]).tolist())
        for (t, pos), old in zip(tensors, before):
            now = to_numpy(t)
            hit = np.isin(pos, list(written))
            expected = np.where(hit, np.array(value, dtype=old.dtype), old)
            assert _bits(now) == _bits(expected), "a view lost its storage sharing after loading"


def _fill_torch(torch):
    def fill(t):
        value = True if t.dtype == torch.bool else 5
        with torch.no_grad():
            t.fill_(value)
        return value
    return fill


def _fill_minigrad(t):
    value = True if t.dtype == minigrad.bool else 5
    with minigrad.no_grad():
        t.fill_(value)
    return value


# ---- the two directions ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_torch_save_then_minigrad_load(torch, tmp_path, seed):
    maker = Maker("torch", torch)
    obj = maker.build(seed)
    r = random.Random(seed)
    protocol = r.choice([2, 3, 4, 5])
    how = r.choice(["path", "bytesio", "file"])
    where = r.choice([None, "cpu", minigrad.device("cpu"), {"cpu": "cpu"}, lambda storage, location: storage,
                      lambda storage, location: None, "mmap"])
    path = tmp_path / "t.pt"
    torch.save(obj, path, pickle_protocol=protocol)
    args = {"mmap": True} if where == "mmap" else {"map_location": where}
    if how == "path":
        back = minigrad.load(path, **args)
    elif how == "bytesio":
        back = minigrad.load(io.BytesIO(path.read_bytes()), **args)
    else:
        with open(path, "rb") as f:
            back = minigrad.load(f, **args)
    same(back, obj, torch)
    check_sharing(back, maker.groups, _fill_minigrad, lambda t: t.detach().numpy())


@pytest.mark.parametrize("seed", SEEDS)
def test_minigrad_save_then_torch_load(torch, tmp_path, seed):
    maker = Maker("minigrad", torch)
    obj = maker.build(seed)
    r = random.Random(seed)
    protocol = 2  # (the only one PyTorch's weights_only reader reads bytes and frames of: see the protocol test)
    path = tmp_path / "m.pt"
    if r.random() < 0.5:
        buf = io.BytesIO()
        minigrad.save(obj, buf, pickle_protocol=protocol)
        path.write_bytes(buf.getvalue())
    else:
        minigrad.save(obj, path, pickle_protocol=protocol)
    mmap = r.random() < 0.3
    back = torch.load(path, weights_only=True, mmap=mmap) if mmap else torch.load(
        io.BytesIO(path.read_bytes()), weights_only=True)
    same(obj, back, torch)
    same(minigrad.load(path), back, torch)  # and minigrad reads its own file as PyTorch does
    check_sharing(back, maker.groups, _fill_torch(torch), lambda t: t.detach().numpy())
