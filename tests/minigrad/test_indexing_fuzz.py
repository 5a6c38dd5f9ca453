"""A differential fuzzer for indexing: `x[idx]`, `x[idx] = v` and the index ops, in minigrad and in PyTorch.

hypothesis draws a tensor (0-d to 4-d, size-0 and size-1 dims; float64, float32, int64 or bool) and an
index made of any mix of ints (negative, out of range), slices (negative bounds, steps, empty, negative
steps), None, Ellipsis, Python bools, lists (nested too), integer and boolean index tensors (int64, int32,
uint8, bool; 0-d too, broadcasting against each other), masks and numpy arrays. The same index is built for
both libraries; they must agree on

* whether it raises, the exception family and its message,
* the result's values, shape and dtype, whether it is a view (writes through, shares memory),
* the grad_fn name and, for float64, the gradient of a weighted sum;

for an assignment, on the values written, the refusal on a leaf that requires grad, the CopySlices
gradients of both sides, and the version counter a later backward checks. A third test draws the
index ops (index_put_ with accumulate, index_select, index_add_, index_copy_, index_fill_, masked_fill_,
masked_scatter_, take, put_) with random arguments.

CI runs a fixed, derandomized slice. A longer run:

    MINIGRAD_FUZZ_EXAMPLES=20000 PYTHONPATH=$PWD python -m pytest tests/minigrad/test_indexing_fuzz.py -q

(`MINIGRAD_FUZZ_SEED=<n>` picks another random slice instead of the fixed one.)
"""
import warnings

import numpy as np
import pytest
from tests.fuzz_settings import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg

torch = pytest.importorskip("torch")

FUZZ = fuzz_settings("MINIGRAD_FUZZ_EXAMPLES", 150)

DTYPES = ["float64", "float32", "int64", "bool"]
TOL = {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=1e-6, atol=1e-6)}


def make_array(shape, dtype, seed):
    """Distinct floats (so a duplicate write is visible), small ints, random bools."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        a = rng.random(n) < 0.5
    elif dtype == "int64":
        a = rng.integers(-5, 6, n)
    else:
        a = rng.permutation(n) + rng.uniform(0.1, 0.9, n)
    return a.reshape(shape).astype(dtype)


# ---- an index, as a description both libraries build from ----------------------------------------------
shapes = st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple)


def int_near(n):
    """An int for a dim of size n: mostly in range (negative too), sometimes just out of it."""
    return st.one_of(st.integers(-n, n - 1) if n else st.nothing(), st.sampled_from([n, -n - 1, n + 2]))


@st.composite
def components(draw, shape, k):
    """One index component for dim k of shape (k may be past the end: then anything small)."""
    n = shape[k] if k < len(shape) else 2
    kind = draw(st.sampled_from(["int", "int", "slice", "slice", "none", "ellipsis", "bool", "list", "nested",
                                 "tensor", "tensor", "tensor0d", "mask", "numpy"]))
    if kind == "int":
        return ("int", draw(int_near(n)))
    if kind == "slice":
        bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
        step = draw(st.one_of(st.none(), st.integers(1, 3), st.sampled_from([-1, 0]) if draw(st.integers(0, 9)) == 0
                              else st.none()))
        return ("slice", draw(bound), draw(bound), step)
    if kind in ("none", "ellipsis"):
        return (kind,)
    if kind == "bool":
        return ("bool", draw(st.booleans()))
    if kind == "list":
        return ("list", draw(st.lists(int_near(n), min_size=0, max_size=4)))
    if kind == "nested":
        w = draw(st.integers(1, 3))
        return ("list", draw(st.lists(st.lists(int_near(n), min_size=w, max_size=w), min_size=1, max_size=3)))
    if kind == "tensor0d":
        return ("tensor", "int64", np.array(draw(int_near(n))))
    if kind == "mask":  # over the next few dims: all of them, or a prefix, rarely a wrong size
        left = list(shape[k:]) or [1]
        m = draw(st.integers(1, len(left)))
        mshape = left[:m]
        if draw(st.integers(0, 9)) == 0:
            mshape[0] += 1
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        return ("tensor", "bool", rng.random(mshape) < 0.5)
    ishape = draw(st.sampled_from([(2,), (3,), (1,), (0,), (2, 1), (1, 2), (2, 2)]))
    values = np.array(draw(st.lists(int_near(n), min_size=int(np.prod(ishape)), max_size=int(np.prod(ishape))))
                      ).reshape(ishape).astype(np.int64)
    if kind == "numpy":
        return ("numpy", values)
    dtype = draw(st.sampled_from(["int64", "int64", "int32", "uint8", "bool"]))
    if dtype == "uint8":
        values = (values % 2).astype(np.uint8)  # a byte mask, read as bools
    elif dtype == "bool":
        values = values > 0
    return ("tensor", dtype, values)


@st.composite
def indices(draw, shape):
    """A tuple of components, or one bare component (then maybe a bare list)."""
    count = draw(st.integers(1, max(1, len(shape) + 1)))
    parts, k = [], 0
    for _ in range(count):
        c = draw(components(shape, k))
        if c == ("ellipsis",) and c in parts:
            continue  # (several: a deliberate difference, below)
        parts.append(c)
        if c[0] in ("int", "slice", "list", "numpy") or c[0] == "tensor" and c[1] not in ("bool", "uint8"):
            k += 1
        elif c[0] == "tensor":
            k += np.asarray(c[2]).ndim
    if count == 1 and draw(st.booleans()):
        return parts[0]
    return tuple(parts)


def build(L, spec):
    """The index object of a description, for library L."""
    if isinstance(spec, tuple) and spec and isinstance(spec[0], tuple):
        return tuple(build(L, s) for s in spec)
    if spec == ():
        return ()
    kind = spec[0]
    if kind == "int":
        return spec[1]
    if kind == "slice":
        return slice(*spec[1:])
    if kind == "none":
        return None
    if kind == "ellipsis":
        return Ellipsis
    if kind == "bool":
        return spec[1]
    if kind == "list":
        return list(spec[1])
    if kind == "numpy":
        return spec[1].copy()
    return L.tensor(np.asarray(spec[2]).tolist(), dtype=getattr(L, spec[1]))


def outcome(fn):
    """(value, None) or (None, (family, message)), warnings silenced (both warn on uint8 and sequence indices)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except (IndexError, TypeError, ValueError, RuntimeError, NotImplementedError) as e:
        for k in (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError):
            if isinstance(e, k):
                return None, (k.__name__, str(e).split("\n")[0])


def same_error(g, w):
    assert (g is None) == (w is None), f"raises: minigrad {g}, torch {w}"
    if g is not None:  # (each names itself: `[torch.DoubleTensor [1]]`, `torch::autograd::CopySlices`)
        w = (w[0], w[1].replace("torch::autograd::", "minigrad::autograd::").replace("torch.", "minigrad."))
        assert g == w, f"error: minigrad {g}, torch {w}"


def same_values(g, w, what=""):
    assert tuple(g.shape) == tuple(w.shape), f"{what} shape {tuple(g.shape)} vs torch {tuple(w.shape)}"
    assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], f"{what} dtype {g.dtype} vs {w.dtype}"
    gv, wv = g.detach().numpy(), w.detach().numpy()
    if gv.dtype.kind == "f":
        np.testing.assert_allclose(gv, wv, err_msg=what, **TOL[str(gv.dtype)])
    else:
        np.testing.assert_array_equal(gv, wv, err_msg=what)


def grad_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__.split("::")[-1]


# ---- (a) reading -----------------------------------------------------------------------------------
def read(L, shape, dtype, spec, seed):
    a = make_array(shape, dtype, seed)
    x = L.tensor(a, requires_grad=dtype == "float64")
    base = x.detach() if dtype == "float64" else x
    y, err = outcome(lambda: base[build(L, spec)])
    if err:
        return err, None
    info = {"value": y.clone(), "view": y._is_view(), "shares": y.numel() > 0 and y._is_view() and y.data_ptr() - base.data_ptr()}
    if y.numel() > 0 and y._is_view():  # a write through the view reaches the base, and bumps both versions
        before = base._version
        first = (0,) * y.dim()  # (not y.view(-1)[0]: a view that strides over the base has no flat view)
        y[first] = 1 if dtype != "bool" else not bool(y[first])
        info["writes"] = (base.clone(), base._version - before, y._version)
    if dtype == "float64":
        z = x[build(L, spec)]
        info["grad_fn"] = grad_name(z)
        w = L.tensor(make_array(tuple(z.shape), "float64", seed + 1))
        (z * w).sum().backward()
        info["grad"] = x.grad
    return None, info


def compare_read(shape, dtype, spec, seed):
    g_err, g = read(mg, shape, dtype, spec, seed)
    w_err, w = read(torch, shape, dtype, spec, seed)
    same_error(g_err, w_err)
    if w_err:
        return
    same_values(g["value"], w["value"], "x[idx]")
    assert g["view"] == w["view"], f"is a view: minigrad {g['view']}, torch {w['view']}"
    assert g["shares"] == w["shares"], f"data_ptr offset: minigrad {g['shares']}, torch {w['shares']}"
    assert ("writes" in g) == ("writes" in w)
    if "writes" in w:
        same_values(g["writes"][0], w["writes"][0], "after a write through the view")
        assert g["writes"][1:] == w["writes"][1:], f"versions: minigrad {g['writes'][1:]}, torch {w['writes'][1:]}"
    if dtype == "float64":
        assert g["grad_fn"] == w["grad_fn"], f"grad_fn {g['grad_fn']} vs torch {w['grad_fn']}"
        same_values(g["grad"], w["grad"], "gradient")


@FUZZ
@given(st.data())
def test_getitem_matches_torch(data):
    shape = data.draw(shapes, "shape")
    dtype = data.draw(st.sampled_from(DTYPES), "dtype")
    spec = data.draw(indices(shape), "index")
    compare_read(shape, dtype, spec, data.draw(st.integers(0, 2**16), "seed"))


# Reads the fuzzer once found, kept as regressions (shape, dtype, index).
@pytest.mark.parametrize("case", [
    ((), "float64", ("int", 1)),  # PyTorch: any int but 0 into a 0-d tensor is out of bounds of a size-0 dim
    ((0,), "float64", (("int", 0), ("bool", False))),  # an int before a mask: its own error
    ((2, 3), "float64", (("none",), ("int", 5), ("bool", False))),  # the int's place in the index is named
    ((2, 3, 4), "float64", (("ellipsis",), ("int", 9), ("bool", True))),
    ((), "float64", (("tensor", "bool", np.array([False, True])),)),  # too many indices, before the mask's shape
    ((2, 2), "float64", (("int", 5), ("tensor", "bool", np.array([True, False, True])))),  # ints before masks
    ((1, 2), "float64", (("int", 0), ("tensor", "uint8", np.array([0], dtype=np.uint8)))),  # mask meets [2]
    ((2, 3, 4), "float64", (("none",), ("int", 0), ("ellipsis",), ("tensor", "bool", np.array([1, 0, 1]) > 0))),
    ((2, 2), "float64", (("slice", 0, 0, None), ("tensor", "bool", np.array([True, False, True])))),
    ((1, 0), "float64", (("int", 0), ("slice", 1, None, None))),  # a slice that only comes to all: recorded
    ((2, 2), "float64", (("slice", None, None, None), ("slice", -5, None, None))),
    ((2, 2), "float64", (("slice", None, None, None), ("slice", 0, 7, None))),  # written as all: skipped
    ((1, 1), "float64", (("slice", None, 0, None), ("list", [1]))),  # no elements: ids unchecked
    ((2, 2), "float64", (("list", [5]), ("slice", 0, 0, None))),
    ((2, 3), "float64", (("slice", None, None, -1), ("list", [0]))),  # numpy takes a negative step
    ((2, 3), "float64", (("tensor", "bool", np.array(True)), ("tensor", "bool", np.array([True, True, False])))),
    ((), "float64", ("slice", None, None, -1)),  # the step before the 0-d tensor's refusal
    ((1, 2, 2, 2), "float64", (("int", 0), ("slice", None, None, None), ("int", 0))),  # a view with no flat view
])
def test_read_regressions(case):
    compare_read(*case, seed=0)


def test_several_ellipses_as_pytorch():  # (each all the dims no component names; a slice past the last skipped)
    compare_read((2, 3), "float64", (("ellipsis",), ("ellipsis",)), seed=0)


# ---- (b) writing -----------------------------------------------------------------------------------
@st.composite
def values(draw, target_shape, dtype):
    """A value to assign: a number, a 0-d tensor, a tensor broadcasting to the target (or not), another dtype."""
    kind = draw(st.sampled_from(["number", "zero_d", "tensor", "tensor", "other_dtype"]))
    if kind == "number":
        return ("number", draw(st.sampled_from([2.5, -1, 0, True, 7])))
    vshape = list(target_shape) if target_shape is not None else []
    if kind != "zero_d" and vshape and draw(st.booleans()):
        vshape = vshape[draw(st.integers(0, len(vshape))):]
    vshape = [1 if draw(st.integers(0, 3)) == 0 else s for s in vshape]
    if vshape and draw(st.integers(0, 15)) == 0:
        vshape[0] += 1  # does not broadcast: both refuse
    if kind == "zero_d":
        vshape = []
    vdtype = draw(st.sampled_from(DTYPES)) if kind == "other_dtype" else dtype
    return ("tensor", tuple(vshape), vdtype)


def make_value(L, vspec, seed, requires_grad):
    if vspec[0] == "number":
        return vspec[1]
    v = L.tensor(make_array(vspec[1], vspec[2], seed) * (10 if vspec[2][0] == "f" else 1))
    return v.requires_grad_(True) if requires_grad and vspec[2] == "float64" else v


def written_places(shape, spec):
    """How the write lands: the flat places it touches, with their repeats (None if the read fails)."""
    ids = torch.arange(int(np.prod(shape)) if shape else 1).reshape(shape)
    got, err = outcome(lambda: ids[build(torch, spec)])
    return None if err else got.reshape(-1).tolist()


def write(L, shape, dtype, spec, vspec, seed, mode):
    """mode: 'plain' (no grad), 'leaf' (a leaf that requires grad), 'clone' (a non-leaf, then backward)."""
    a = make_array(shape, dtype, seed)
    grad = dtype == "float64" and mode != "plain"
    x = L.tensor(a, requires_grad=grad)
    v = make_value(L, vspec, seed + 2, mode == "clone")
    target = x if mode != "clone" else x.clone()
    saved = target.sin() if grad and mode == "clone" else None  # sin saves its input: the write must spoil it
    _, err = outcome(lambda: target.__setitem__(build(L, spec), v))
    if err:
        return err, None
    info = {"value": target.detach().clone(), "version": target._version}
    if grad and mode == "clone":
        info["grad_fn"] = grad_name(target)
        w = L.tensor(make_array(tuple(target.shape), "float64", seed + 1))
        (target * w).sum().backward()
        info["grad"] = x.grad
        info["value_grad"] = v.grad if isinstance(v, L.Tensor) else None
        info["stale"] = outcome(lambda: saved.sum().backward())[1]
    return None, info


def compare_write(shape, dtype, spec, vspec, seed, mode):
    g_err, g = write(mg, shape, dtype, spec, vspec, seed, mode)
    w_err, w = write(torch, shape, dtype, spec, vspec, seed, mode)
    same_error(g_err, w_err)
    if w_err:
        return
    places = written_places(shape, spec)
    repeated = places is not None and len(set(places)) < len(places)
    if not repeated or vspec[0] == "number" or vspec[1] in ((), (1,)):  # PyTorch leaves which repeat wins open
        same_values(g["value"], w["value"], "x after x[idx] = v")
    assert g["version"] == w["version"], f"version: minigrad {g['version']}, torch {w['version']}"
    if "grad_fn" in w:
        assert g["grad_fn"] == w["grad_fn"], f"grad_fn {g['grad_fn']} vs torch {w['grad_fn']}"
        same_values(g["grad"], w["grad"], "gradient of x")
        assert (g["value_grad"] is None) == (w["value_grad"] is None)
        if w["value_grad"] is not None:
            same_values(g["value_grad"], w["value_grad"], "gradient of the value")
        same_error(g["stale"], w["stale"])


@pytest.mark.parametrize("case", [
    ((0,), "float64", (("int", 0),), ("tensor", (), "float64"), 0, "plain"),  # the int's own error
    ((), "float64", (("int", 0),), ("tensor", (), "float64"), 0, "leaf"),  # too many indices, in PyTorch's words
    ((0,), "float64", (("slice", None, None, None),), ("tensor", (), "float64"), 0, "clone"),  # FillBackward3
    ((0,), "float64", (("slice", 1, None, None),), ("number", 2.5), 0, "clone"),  # a view written: CopySlices
    ((0, 0), "float64", (("tensor", "bool", np.array([False, False])),), ("tensor", (), "float64"), 0, "plain"),
    ((2, 3), "float64", (("list", [0, 1]),), ("tensor", (1,), "float32"), 0, "plain"),  # index_put_ casts nothing
    ((2, 3), "float64", (("tensor", "bool", np.array([True, False])),), ("tensor", (1,), "float32"), 0, "plain"),
    ((2, 3), "float64", (("none",), ("list", [0])), ("number", 2.5), 0, "leaf"),  # index_put_ into a view
    ((2, 3), "float64", (("slice", 0, 1, None), ("list", [0])), ("number", 2.5), 0, "leaf"),
    ((2, 3), "float64", (("slice", 0, 5, None), ("list", [0])), ("number", 2.5), 0, "leaf"),  # all of the dim
    ((0,), "float64", (("bool", False), ("tensor", "bool", np.array([False]))), ("tensor", (), "float64"), 0,
     "plain"),  # the mask is matched in the view the bool's unsqueeze left: [1, 0] at index 1
    ((2, 3), "float64", (("tensor", "bool", np.array(True)), ("tensor", "bool", np.array([True, True, False]))),
     ("number", 2.5), 0, "plain"),  # a 0-d mask too
    ((0,), "float64", (("tensor", "bool", np.array([], dtype=bool)),), ("number", 2.5), 0, "clone"),  # t itself:
    ((3,), "float64", (("list", [0, 1]),), ("tensor", (2,), "float64"), 0, "clone"),  # IndexPutBackward0
    ((2, 3), "float64", (("tensor", "bool", np.array(True)), ("list", [0])), ("number", 2.5), 0, "clone"),  # a view
    ((0,), "float64", (("none",), ("tensor", "bool", np.array([False]))), ("tensor", (), "float64"), 0, "leaf"),
    ((2,), "float64", (("tensor", "bool", np.array([True, False, True])),), ("number", 2.5), 0, "leaf"),  # autograd's
    ((2,), "float64", (("list", [0]),), ("tensor", (1,), "float32"), 0, "leaf"),  # refusal before index_put_'s checks
    ((2,), "float64", (("bool", False), ("tensor", "bool", np.array([True, True]))), ("tensor", (), "float64"), 0,
     "clone"),  # a recorded write's errors in PyTorch's words too
    ((0,), "float64", (("slice", None, None, -1),), ("tensor", (), "float64"), 0, "plain"),  # numpy takes it
    ((2, 3), "float64", (("slice", None, None, -1), ("int", 9)), ("number", 2.5), 0, "plain"),  # in order
    ((2, 3), "float64", (("list", [0]), ("slice", None, None, -1)), ("number", 2.5), 0, "plain"),
    ((2,), "bool", (("bool", False), ("tensor", "bool", np.array([True, True]))), ("tensor", (), "int64"), 0,
     "plain"),  # the index's shapes, then the value's, then its dtype
    ((0,), "float64", (("numpy", np.array([0, 0])),), ("tensor", (), "float32"), 0, "plain"),  # ids into an empty dim
    ((0, 0), "float64", (("none",),), ("tensor", (2, 1, 1), "float64"), 0, "leaf"),  # expand's error before the leaf's
    ((0,), "bool", (("none",), ("tensor", "bool", np.array([], dtype=bool))), ("tensor", (), "bool"), 0,
     "plain"),  # one mask beside None, one value: masked_fill_, which casts it
    ((1, 0), "float64", (("int", 0), ("list", [0, -1]), ("bool", False)), ("tensor", (), "float64"), 0, "plain"),
    ((), "float64", ("bool", True), ("tensor", (2,), "float64"), 0, "plain"),  # a plain True: None, expand's words
    ((3,), "float64", (("tensor", "uint8", np.array([0, 0, 0], dtype=np.uint8)),), ("number", 2.5), 0, "plain"),
    ((3,), "bool", (("tensor", "uint8", np.array([0, 0, 0], dtype=np.uint8)),), ("tensor", (), "bool"), 0,
     "plain"),  # one uint8 mask, one value: masked_fill_, which refuses a uint8 mask
])
def test_write_regressions(case):
    compare_write(*case)


@FUZZ
@given(st.data())
def test_setitem_matches_torch(data):
    shape = data.draw(shapes, "shape")
    dtype = data.draw(st.sampled_from(DTYPES), "dtype")
    spec = data.draw(indices(shape), "index")
    places = written_places(shape, spec)
    target = None
    if places is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target = tuple(torch.zeros(shape)[build(torch, spec)].shape)
    vspec = data.draw(values(target, dtype), "value")
    mode = data.draw(st.sampled_from(["plain", "leaf", "clone"]), "mode")
    compare_write(shape, dtype, spec, vspec, data.draw(st.integers(0, 2**16), "seed"), mode)


# ---- (c) the index ops -----------------------------------------------------------------------------
INDEX_OPS = ["index_put_", "index_put", "index_select", "index_add_", "index_copy_", "index_fill_", "index_reduce_",
             "masked_fill_", "masked_fill", "masked_scatter_", "masked_select", "take", "put_", "take_along_dim",
             "gather", "scatter", "scatter_add", "scatter_reduce"]


@st.composite
def index_op_cases(draw):
    """(op, shape, dtype, params): the index tensors as (values, dtype), a source's shape, the op's options."""
    op = draw(st.sampled_from(INDEX_OPS))
    shape = draw(st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple))
    dtype = draw(st.sampled_from(["float64", "float64", "float32", "int64"]))
    nd = max(len(shape), 1)
    dim = draw(st.integers(-nd - (draw(st.integers(0, 9)) == 0), nd - 1 + (draw(st.integers(0, 9)) == 0)))
    n = shape[dim] if -len(shape) <= dim < len(shape) else 1
    numel = int(np.prod(shape)) if shape else 1
    idtype = draw(st.sampled_from(["int64", "int64", "int32"]))
    p = {"dim": dim, "idtype": idtype, "seed": draw(st.integers(0, 2**16))}
    if op in ("index_select", "index_add_", "index_copy_", "index_fill_", "index_reduce_"):
        k = draw(st.integers(0, 3))
        p["index"] = np.array(draw(st.lists(int_near(n), min_size=k, max_size=k)), dtype=np.int64)
        if draw(st.integers(0, 9)) == 0:
            p["index"] = p["index"][:1].reshape(()) if k else p["index"]
        src = list(shape) or [1]
        if -len(src) <= dim < len(src):
            src[dim] = p["index"].size
        p["src"] = tuple(src) if shape else ()
        if op == "index_add_":
            p["alpha"] = draw(st.sampled_from([1, 2, -0.5]))
        if op == "index_reduce_":
            p["reduce"] = draw(st.sampled_from(["prod", "mean", "amax", "amin"]))
            p["include_self"] = draw(st.booleans())
        if op == "index_fill_":
            p["value"] = draw(st.sampled_from([1.5, -2, "tensor"]))
    elif op in ("index_put_", "index_put"):
        k = draw(st.integers(1, max(1, len(shape))))
        w = draw(st.integers(0, 3))
        p["indices"] = [np.array(draw(st.lists(int_near(shape[j] if j < len(shape) else 1), min_size=w, max_size=w)),
                                 dtype=np.int64) for j in range(k)]
        p["accumulate"] = draw(st.booleans())
        p["src"] = (w,) + tuple(shape[k:]) if draw(st.booleans()) else ()
    elif op in ("masked_fill_", "masked_fill", "masked_scatter_", "masked_select"):
        mshape = list(shape[draw(st.integers(0, len(shape))):])
        mshape = [1 if draw(st.integers(0, 3)) == 0 else s for s in mshape]
        p["mask"] = np.random.default_rng(p["seed"]).random(mshape) < 0.5
        p["value"] = draw(st.sampled_from([2.5, -1, "tensor"]))
        p["src"] = (numel + draw(st.sampled_from([0, 0, 1, -1])),)
    elif op in ("take", "put_"):
        w = draw(st.integers(0, 3))
        p["index"] = np.array(draw(st.lists(int_near(numel), min_size=w, max_size=w)), dtype=np.int64)
        p["accumulate"] = draw(st.booleans())
        p["src"] = (w,)
    else:  # take_along_dim, gather, scatter*: an index of self's dims, each at most self's size
        ishape = [draw(st.integers(0, s)) for s in shape]
        if ishape and draw(st.integers(0, 9)) == 0:
            ishape[0] += 1
        p["index"] = np.array(draw(st.lists(int_near(n), min_size=int(np.prod(ishape)), max_size=int(np.prod(ishape))))
                              if ishape else draw(int_near(n)), dtype=np.int64).reshape(ishape)
        p["src"] = tuple(ishape) if draw(st.booleans()) else tuple(shape)
        p["reduce"] = draw(st.sampled_from(["sum", "prod", "mean", "amax", "amin"]))
        p["include_self"] = draw(st.booleans())
        p["value"] = draw(st.sampled_from([None, 2.5]))
    return op, shape, dtype, p


def run_index_op(L, op, shape, dtype, p):
    """The op on a fresh self (a non-leaf clone for float64, then a weighted sum's gradients of self and src)."""
    grad = dtype == "float64"
    x0 = L.tensor(make_array(shape, dtype, p["seed"]), requires_grad=grad)
    src = L.tensor(make_array(p["src"], dtype, p["seed"] + 1), requires_grad=grad)
    x = x0.clone() if grad else x0

    def ix(a):
        return L.tensor(a, dtype=getattr(L, p["idtype"]))
    d = p["dim"]
    if op in ("index_put_", "index_put"):
        out = getattr(x, op)(tuple(ix(i) for i in p["indices"]), src, accumulate=p["accumulate"])
    elif op == "index_select":
        out = x.index_select(d, ix(p["index"]))
    elif op == "index_add_":
        out = x.index_add_(d, ix(p["index"]), src, alpha=p["alpha"])
    elif op == "index_copy_":
        out = x.index_copy_(d, ix(p["index"]), src)
    elif op == "index_fill_":
        out = x.index_fill_(d, ix(p["index"]), src.sum() if p["value"] == "tensor" else p["value"])
    elif op == "index_reduce_":
        out = x.index_reduce_(d, ix(p["index"]), src, p["reduce"], include_self=p["include_self"])
    elif op in ("masked_fill_", "masked_fill"):
        out = getattr(x, op)(L.tensor(p["mask"]), src.sum() if p["value"] == "tensor" else p["value"])
    elif op == "masked_scatter_":
        out = x.masked_scatter_(L.tensor(p["mask"]), src)
    elif op == "masked_select":
        out = x.masked_select(L.tensor(p["mask"]))
    elif op == "take":
        out = x.take(ix(p["index"]))
    elif op == "put_":
        out = x.put_(ix(p["index"]), src, accumulate=p["accumulate"])
    elif op == "take_along_dim":
        out = L.take_along_dim(x, ix(p["index"]), dim=d)
    elif op == "gather":
        out = x.gather(d, ix(p["index"]))
    elif op == "scatter":
        out = x.scatter(d, ix(p["index"]), src if p["value"] is None else p["value"])
    elif op == "scatter_add":
        out = x.scatter_add(d, ix(p["index"]), src)
    else:
        out = x.scatter_reduce(d, ix(p["index"]), src, p["reduce"], include_self=p["include_self"])
    info = {"value": out.detach().clone(), "grad_fn": grad_name(out)}
    if grad:
        w = L.tensor(make_array(tuple(out.shape), "float64", p["seed"] + 3))
        (out * w).sum().backward()
        info["grads"] = (x0.grad, src.grad)
    return info


# PyTorch's own faults, not its checks: a kernel's view past an empty self's storage (index_copy_, index_fill_,
# index_reduce_), take_along_dim's division by an empty self's size, scatter's and index_fill_'s backwards that
# refuse an empty index's gradient, index_reduce_'s backward (include_self=False) that refuses the int32 index
# its forward takes, scatter_reduce's prod backward that refuses an empty index of another shape than src's,
# index_fill_'s backward (a tensor value) that refuses the negative index its forward takes.
# minigrad does not copy them; a case that meets one is left out.
def torch_fault(op, err):
    return err is not None and (err[1].startswith(("setStorage: ", "ZeroDivisionError", "Function Scatter"))
                                or op == "index_fill_" and err[1].startswith("index_select(): ")
                                or op == "index_fill_" and err == ("IndexError", "index out of range in self")
                                or op == "index_reduce_" and err[1] == "index_fill_(): Expected dtype int64 for index."
                                or op == "scatter_reduce" and err[1].startswith("The size of tensor a "))


@FUZZ
@given(index_op_cases())
def test_index_ops_match_torch(case):
    op, shape, dtype, p = case
    g, g_err = outcome(lambda: run_index_op(mg, op, shape, dtype, p))
    w, w_err = outcome(lambda: run_index_op(torch, op, shape, dtype, p))
    if torch_fault(op, w_err):
        return
    same_error(g_err, w_err)
    if w_err:
        return
    same_values(g["value"], w["value"], op)
    assert g["grad_fn"] == w["grad_fn"], f"{op}: grad_fn {g['grad_fn']} vs torch {w['grad_fn']}"
    for what, gg, wg in zip(("self", "source"), *(r.get("grads", (None, None)) for r in (g, w))):
        assert (gg is None) == (wg is None), f"{op}: gradient of {what}: minigrad {gg}, torch {wg}"
        if wg is not None:
            same_values(gg, wg, f"{op}: gradient of {what}")


# Index ops the fuzzer once found, kept as regressions (op, shape, dtype, params).
@pytest.mark.parametrize("case", [
    ("index_put_", (), "float64", {"dim": 0, "idtype": "int64", "seed": 0, "indices": [np.array([], dtype=np.int64)],
                                  "accumulate": False, "src": ()}),  # index_put_'s count of tensors: "(got 1)"
    ("index_add_", (), "float64", {"dim": 0, "idtype": "int64", "seed": 0, "index": np.array([], dtype=np.int64),
                                  "src": (), "alpha": 1}),  # its message's source.size(dim) of a 0-d source
    ("index_reduce_", (1,), "float64", {"dim": 0, "idtype": "int64", "seed": 0, "index": np.array([0, 0]),
                                       "src": (), "reduce": "amax", "include_self": True}),
    ("take_along_dim", (), "float64", {"dim": 0, "idtype": "int64", "seed": 0, "index": np.array(0), "src": (),
                                      "reduce": "sum", "include_self": False, "value": None}),
    ("index_fill_", (2,), "float64", {"dim": 0, "idtype": "int64", "seed": 0, "index": np.array([1]), "src": (),
                                     "value": 1.5}),  # IndexFillBackward0
    ("index_fill_", (2,), "float64", {"dim": 0, "idtype": "int64", "seed": 0, "index": np.array([1]), "src": (),
                                     "value": "tensor"}),  # IndexFillBackward1
])
def test_index_op_regressions(case):
    test_index_ops_match_torch.hypothesis.inner_test(case)


def test_index_fill_records_its_own_node():  # (a fixed difference the xfailed fuzz test above found)
    for L in (mg, torch):
        x = L.ones(2, dtype=L.float64, requires_grad=True).clone()
        assert grad_name(x.index_fill_(0, L.tensor([1]), 2.0)) == "IndexFillBackward0"
