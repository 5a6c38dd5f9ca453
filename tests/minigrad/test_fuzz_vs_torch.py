"""A differential fuzzer: random programs of tensor ops run in minigrad and in PyTorch.

hypothesis draws a start tensor (0-d, size-0 and size-1 dims included; float64, float32, int64
or bool) and a chain of ops, each with arguments drawn for the shape the chain has reached
(negative and out-of-range dims, keepdim, broadcasting partners, scalars, index tensors). Both
libraries run the same program; they must agree on

* whether it raises, and the exception type,
* each step's values, dtype and shape,
* for a float64 start, the gradient of a weighted sum of the result with respect to the start.

A failure shrinks to a minimal program, printed as the list of steps.

CI runs a fixed, derandomized slice (a few hundred programs, well under a minute). A longer run:

    MINIGRAD_FUZZ_EXAMPLES=20000 PYTHONPATH=$PWD python -m pytest tests/minigrad/test_fuzz_vs_torch.py -q

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

FUZZ = fuzz_settings("MINIGRAD_FUZZ_EXAMPLES", 400)

TOL = {"float64": dict(rtol=1e-7, atol=1e-9), "float32": dict(rtol=2e-4, atol=1e-5), "float16": dict(rtol=1e-2, atol=1e-3)}
# the backward multiplies one more rounded derivative per step, so a gradient gets ten times a step's tolerance
GRAD_TOL = {dt: {k: 10 * v for k, v in tol.items()} for dt, tol in TOL.items()}


# ---- values ---------------------------------------------------------------------------------------
def make_array(shape, dtype, seed):
    """Deterministic values for a shape and dtype: floats in [-2, 2] (distinct, so no ties), ints in [-3, 3]."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        a = rng.random(n) < 0.5
    elif dtype == "int64":
        a = rng.integers(-3, 4, n)
    else:
        a = (rng.permutation(n) + rng.uniform(0.05, 0.95, n)) * (4.0 / max(n, 1)) - 2.0
    return a.reshape(shape).astype(dtype)


# ---- the ops: each is (arguments strategy given the current shape and dtype, how to apply it) ------------------
def dims(nd, allow_bad=True):
    """A dim for a tensor of nd dims: mostly valid (negative too), sometimes out of range."""
    n = max(nd, 1)
    good = st.integers(-n, n - 1)
    return st.one_of(good, st.sampled_from([n, -n - 1])) if allow_bad else good


def broadcast_partner(shape):
    """A shape that broadcasts with `shape` (dims dropped, set to 1, extra leading dims), or rarely one that does not."""
    @st.composite
    def draw(d):
        out = list(shape)
        if out and d(st.booleans()):
            out = out[d(st.integers(0, len(out))):]
        out = [1 if d(st.integers(0, 3)) == 0 else s for s in out]
        if d(st.integers(0, 4)) == 0:
            out = [d(st.integers(1, 2))] + out
        if out and d(st.integers(0, 12)) == 0:
            k = d(st.integers(0, len(out) - 1))
            out[k] = out[k] + 2  # a mismatch: both must raise
        return tuple(out)

    return draw()


UNARY = ["neg", "abs", "exp", "tanh", "sigmoid", "sin", "cos", "relu", "sign", "floor", "round", "erf", "atan",
         "square", "sqrt_abs", "log_abs", "expm1", "log1p_abs", "sinh", "asinh", "erfc", "exp2", "trunc", "frac_like",
         "tan", "asin_tanh", "acos_tanh", "atanh_tanh", "cosh", "ceil", "sigmoid", "log2_abs", "logit_sig", "nan_to_num", "sgn"]


def unary(L, x, name):
    f = {
        "sqrt_abs": lambda: (x.abs() + 0.1).sqrt() if x.is_floating_point() else x.abs().sqrt(),
        "log_abs": lambda: (x.abs() + 0.5).log() if x.is_floating_point() else x.log(),
        "log1p_abs": lambda: x.abs().log1p(),
        "frac_like": lambda: x - x.trunc(),
        "log2_abs": lambda: (x.abs() + 0.5).log2() if x.is_floating_point() else x.log2(),
        "logit_sig": lambda: x.sigmoid().logit(),
        # inside their domains: a nan gradient's spread is where libraries legitimately differ
        "asin_tanh": lambda: (x.tanh() * 0.9).asin(),
        "acos_tanh": lambda: (x.tanh() * 0.9).acos(),
        "atanh_tanh": lambda: (x.tanh() * 0.9).atanh(),
        "nan_to_num": lambda: (x / 0).nan_to_num() if x.is_floating_point() else x.nan_to_num(),
    }.get(name)
    return f() if f else getattr(x, name)()


REDUCTIONS = ["sum", "mean", "amax", "amin", "prod", "logsumexp", "std", "var", "softmax", "log_softmax", "cumsum",
              "cumprod", "logcumsumexp", "cummax", "cummin", "max_dim", "min_dim", "argmax", "argmin", "all", "any",
              "norm", "median_dim", "sort", "flip", "roll", "unsqueeze", "squeeze", "select", "narrow"]


def reduction(L, x, name, dim, keepdim):
    if name in ("softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp"):
        return getattr(x, name)(dim)
    if name in ("cummax", "cummin"):
        return getattr(x, name)(dim)[0]
    if name in ("max_dim", "min_dim", "median_dim"):
        return getattr(x, name[:-4])(dim, keepdim=keepdim)[0]
    if name == "sort":
        return x.sort(dim, descending=keepdim)[0]
    if name == "flip":
        return x.flip(dim)
    if name == "roll":
        return x.roll(2 if keepdim else -1, dim)
    if name == "unsqueeze":
        return x.unsqueeze(dim)
    if name == "squeeze":
        return x.squeeze(dim)
    if name == "select":
        return x.select(dim, -1 if keepdim else 0)
    if name == "narrow":
        return x.narrow(dim, 0, 1)
    if name == "norm":
        return x.norm(dim=dim, keepdim=keepdim)
    return getattr(x, name)(dim, keepdim=keepdim)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "where", "atan2", "lerp", "logaddexp", "pow_pos",
          "eq", "lt", "hypot", "copysign", "bitwise_and"]


def binary(L, x, y, name):
    if name == "where":
        return L.where(y > 0, x, y)
    if name == "lerp":
        return L.lerp(x, y.to(x.dtype), 0.25)
    if name == "pow_pos":
        return (x.abs() + 0.5) ** y if x.is_floating_point() else x.abs() ** y.abs()
    if name == "div":
        return x / (y.abs() + 0.5) if y.is_floating_point() else x / y
    if name == "bitwise_and":
        return x & y
    arith = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "eq": lambda: x == y, "lt": lambda: x < y}
    if name in arith:
        return arith[name]()
    return getattr(L, name)(x, y)


SCALAR = ["radd", "rmul", "rsub", "rdiv", "pow2", "pow_half_abs", "clamp", "mul_int", "floordiv", "mod", "fmod"]


def scalar(L, x, name, s):
    return {
        "radd": lambda: s + x, "rmul": lambda: x * s, "rsub": lambda: s - x, "rdiv": lambda: x / s if s else x / 2,
        "pow2": lambda: x ** 2, "pow_half_abs": lambda: x.abs() ** 0.5 if x.is_floating_point() else x ** 2,
        "clamp": lambda: x.clamp(-abs(s), abs(s) + 0.5), "mul_int": lambda: x * 3,
        "floordiv": lambda: x // (abs(s) + 1.25), "mod": lambda: x % (abs(s) + 1.25), "fmod": lambda: x.fmod(abs(s) + 1.25),
    }[name]()


SHAPE_OPS = ["reshape_flat", "transpose", "permute", "t", "flatten", "T", "repeat", "expand", "diagonal", "unfold",
             "index_int", "index_slice", "index_list", "index_mask", "gather", "index_select", "masked_fill", "tile",
             "contiguous_t", "double", "float", "long", "bool", "matmul", "cat", "stack", "scatter_add", "einsum_t",
             "repeat_interleave", "trace_like", "split0", "chunk", "scatter_reduce", "index_add", "tril", "triu",
             "take_along_dim", "outer_flat", "movedim", "rot90", "kron_small", "cumsum_dtype", "where_scalar"]


@st.composite
def step(draw, shape, dtype):
    """One op, with arguments that fit (or, sometimes, do not fit) the current shape."""
    nd = len(shape)
    kind = draw(st.sampled_from(["unary", "reduction", "binary", "scalar", "shape", "shape"]))
    if kind == "unary":
        return ("unary", draw(st.sampled_from(UNARY)))
    if kind == "reduction":
        name = draw(st.sampled_from(REDUCTIONS))
        return ("reduction", name, draw(dims(nd + (name == "unsqueeze")) | st.none() if name in
                                        ("sum", "mean", "amax", "amin", "std", "var", "all", "any", "norm") else
                                        dims(nd + (name == "unsqueeze"))), draw(st.booleans()))
    if kind == "binary":
        pdtype = draw(st.sampled_from([dtype, dtype, "float64", "float32", "int64", "bool"]))
        return ("binary", draw(st.sampled_from(BINARY)), draw(broadcast_partner(shape)), pdtype, draw(st.integers(0, 99)))
    if kind == "scalar":
        return ("scalar", draw(st.sampled_from(SCALAR)), draw(st.sampled_from([2, -1, 0.5, -1.5, True, 3])))
    name = draw(st.sampled_from(SHAPE_OPS))
    return ("shape", name, draw(st.integers(0, 2 ** 16)))


def shape_op(L, x, name, seed):
    rng = np.random.default_rng(seed)
    nd, shape = x.dim(), tuple(x.shape)
    d = int(rng.integers(-max(nd, 1), max(nd, 1)))
    if name == "reshape_flat":
        return x.reshape(-1)
    if name == "transpose":
        return x.transpose(d, int(rng.integers(-max(nd, 1), max(nd, 1))))
    if name == "permute":
        return x.permute(*[int(p) for p in rng.permutation(nd)])
    if name == "t":
        return x.t()
    if name == "T":
        return x.mT if nd >= 2 else x
    if name == "flatten":
        return x.flatten(int(rng.integers(0, max(nd, 1))))
    if name == "repeat":
        return x.repeat(*[int(r) for r in rng.integers(1, 3, nd + int(rng.integers(0, 2)))])
    if name == "tile":
        return x.tile(tuple(int(r) for r in rng.integers(1, 3, int(rng.integers(1, 3)))))
    if name == "expand":
        return x.expand(*[2 if s == 1 else -1 for s in shape])
    if name == "diagonal":
        return x.diagonal(int(rng.integers(-1, 2)), 0, -1)
    if name == "unfold":
        return x.unfold(d, int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    if name == "index_int":
        return x[int(rng.integers(-2, 2))]
    if name == "index_slice":
        return x[..., int(rng.integers(-2, 1)):] if nd else x[...]
    if name == "index_list":
        n = shape[0] if nd else 1
        return x[[int(i) for i in rng.integers(-n, max(n, 1), 3)]] if nd else x[None]
    if name == "index_mask":
        return x[L.tensor(make_array(shape, "bool", seed))]
    if name in ("gather", "scatter_add"):
        if nd == 0:
            return x.gather(0, L.tensor(np.zeros((), np.int64)))
        dd = d % nd
        n = shape[dd]
        ishape = tuple(int(rng.integers(0, s + 1)) for s in shape)
        idx = L.tensor(rng.integers(0, max(n, 1), ishape).astype(np.int64))
        if name == "gather":
            return x.gather(d, idx)
        return x.scatter_add(d, idx, L.tensor(make_array(ishape, "float64", seed)).to(x.dtype))
    if name == "index_select":
        n = shape[d % nd] if nd else 1
        return x.index_select(d, L.tensor(rng.integers(0, max(n, 1), 2).astype(np.int64)))
    if name == "masked_fill":
        return x.masked_fill(L.tensor(make_array(shape[1:], "bool", seed)), -0.5 if x.is_floating_point() else 1)
    if name == "contiguous_t":
        return x.transpose(0, -1).contiguous() if nd else x.contiguous()
    if name in ("double", "float", "long", "bool"):
        return getattr(x, name)()
    if name == "matmul":
        k = shape[-1] if nd else 1
        other = (k,) if rng.integers(0, 2) else (k, 2)
        y = L.tensor(make_array(other, "float64", seed)).to(x.dtype)
        return x @ y
    if name == "cat":
        return L.cat([x, x * 2], d)
    if name == "stack":
        return L.stack([x, -x if x.dtype != L.bool else x], d if nd else 0)
    if name == "einsum_t":
        letters = "abcd"[:nd]
        return L.einsum(f"{letters}->{letters[::-1]}", x) if x.is_floating_point() else x
    if name == "repeat_interleave":
        return x.repeat_interleave(2, dim=d if nd else None)
    if name == "trace_like":
        return x.diagonal().sum() if nd >= 2 else x.sum()
    if name == "scatter_reduce":
        if nd == 0:
            return x
        dd = d % nd
        ishape = tuple(int(rng.integers(0, s + 1)) for s in shape)
        idx = L.tensor(rng.integers(0, max(shape[dd], 1), ishape).astype(np.int64))
        reduce = ["sum", "prod", "mean", "amax", "amin"][int(rng.integers(0, 5))]
        src = L.tensor(make_array(ishape, "float64", seed)).to(x.dtype)
        return x.scatter_reduce(d, idx, src, reduce, include_self=bool(rng.integers(0, 2)))
    if name == "index_add":
        if nd == 0:
            return x
        dd = d % nd
        idx = rng.integers(0, max(shape[dd], 1), 3).astype(np.int64)
        sshape = list(shape)
        sshape[dd] = 3
        return x.index_add(d, L.tensor(idx), L.tensor(make_array(tuple(sshape), "float64", seed)).to(x.dtype), alpha=2)
    if name in ("tril", "triu"):
        return getattr(x, name)(int(rng.integers(-1, 2)))
    if name == "take_along_dim":
        if nd == 0:
            return x
        ishape = list(shape)
        ishape[d % nd] = 2
        return L.take_along_dim(x, L.tensor(rng.integers(0, max(shape[d % nd], 1), ishape).astype(np.int64)), d)
    if name == "outer_flat":
        v = x.reshape(-1)[:3]
        return L.outer(v, v)
    if name == "movedim":
        return x.movedim(d, 0)
    if name == "rot90":
        return x.rot90(int(rng.integers(-1, 3)), (0, 1)) if nd >= 2 else x
    if name == "kron_small":
        # (contiguous: PyTorch's kron views a transposed input and fails)
        return L.kron(x.contiguous(), L.tensor(make_array((2,), "float64", seed)).to(x.dtype)) if nd <= 2 else x
    if name == "cumsum_dtype":
        return x.cumsum(d, dtype=L.float64)
    if name == "where_scalar":
        return L.where(x > 0, x, 0.5 if x.is_floating_point() else 1)
    if name == "split0":
        return x.split(1, d)[0] if nd else x
    if name == "chunk":
        return x.chunk(2, d)[-1] if nd else x
    raise AssertionError(name)


def apply_step(L, x, s):
    kind = s[0]
    if kind == "unary":
        return unary(L, x, s[1])
    if kind == "reduction":
        return reduction(L, x, s[1], s[2], s[3])
    if kind == "binary":
        _, name, pshape, pdtype, seed = s
        return binary(L, x, L.tensor(make_array(pshape, pdtype, seed)), name)
    if kind == "scalar":
        return scalar(L, x, s[1], s[2])
    return shape_op(L, x, s[1], s[2])


def start_shapes():
    sizes = st.sampled_from([1, 2, 3, 0, 4])
    return st.lists(sizes, min_size=0, max_size=3).map(tuple)


@st.composite
def programs(draw):
    shape = draw(start_shapes())
    dtype = draw(st.sampled_from(["float64", "float64", "float64", "float32", "int64", "bool"]))
    steps = []
    cur_shape, cur_dtype = shape, dtype
    x = torch.tensor(make_array(shape, dtype, 0))
    for _ in range(draw(st.integers(1, 4))):
        s = draw(step(cur_shape, cur_dtype))
        steps.append(s)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x = apply_step(torch, x, s)
        except Exception:  # noqa: BLE001 - a raising step ends the program; both libraries must raise alike
            break
        if not isinstance(x, torch.Tensor) or x.numel() > 4096:
            break
        big = 1e4 if x.dtype == torch.float64 else 50.0
        if x.is_floating_point() and x.numel() and float(x.detach().abs().nan_to_num(0, 0, 0).max()) > big:
            break  # float32 sin/cos/exp of huge arguments differ by implementation: keep magnitudes modest
        cur_shape, cur_dtype = tuple(x.shape), str(x.dtype).split(".")[-1]
    return shape, dtype, steps


def run(L, shape, dtype, steps):
    """(per-step results or the exception type, the start's gradient) in library L."""
    grad_on = dtype == "float64"
    x0 = L.tensor(make_array(shape, dtype, 0), requires_grad=grad_on)
    x, outs = x0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in steps:
            try:
                x = apply_step(L, x, s)
            except Exception as e:  # noqa: BLE001
                return outs, _kind(e), None
            outs.append((tuple(x.shape), str(x.dtype).split(".")[-1], x.detach().numpy().copy()))
        grad = None
        if grad_on and x.requires_grad and x.is_floating_point():
            w = L.tensor(np.cos(np.arange(x.numel()) + 0.5).reshape(tuple(x.shape)), dtype=x.dtype)
            try:
                (x * w).sum().backward()
            except RuntimeError:  # PyTorch has no derivative for some ops (floor_divide, ...)
                return outs, None, "unsupported"
            grad = None if x0.grad is None else _array(x0.grad)
    return outs, None, grad


def _array(t):
    try:
        return t.numpy().copy()
    except RuntimeError:  # PyTorch's ZeroTensor (sgn's gradient) refuses numpy()
        return np.zeros(tuple(t.shape))


def _kind(e):
    # PyTorch raises subclasses of these; the fuzzer compares the family
    for k in (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError):
        if isinstance(e, k):
            return k.__name__
    return type(e).__name__


def check(shape, dtype, steps):
    g_outs, g_err, g_grad = run(mg, shape, dtype, steps)
    w_outs, w_err, w_grad = run(torch, shape, dtype, steps)
    assert g_err == w_err, f"exceptions differ: minigrad {g_err}, torch {w_err}"
    assert len(g_outs) == len(w_outs)
    loosest = "float64" if dtype != "float32" else "float32"
    for k, ((gs, gd, gv), (ws, wd, wv)) in enumerate(zip(g_outs, w_outs)):
        assert (gs, gd) == (ws, wd), f"step {k}: shape/dtype {gs} {gd} vs torch {ws} {wd}"
        if gd in TOL and TOL[gd]["rtol"] > TOL[loosest]["rtol"]:
            loosest = gd  # a float64 result computed from float32 values carries float32's rounding
        if gv.dtype.kind == "f":
            np.testing.assert_allclose(gv, wv, equal_nan=True, err_msg=f"step {k}", **TOL[loosest])
        else:
            np.testing.assert_array_equal(gv, wv, err_msg=f"step {k}")
    if isinstance(w_grad, str):  # PyTorch cannot differentiate this program
        return
    assert (g_grad is None) == (w_grad is None), f"gradient: minigrad {g_grad is not None}, torch {w_grad is not None}"
    if w_grad is not None:
        np.testing.assert_allclose(g_grad, w_grad, equal_nan=True, err_msg="gradient", **GRAD_TOL[loosest])


@FUZZ
@given(programs())
def test_random_programs_match_torch(program):
    check(*program)


# Programs the fuzzer once found, kept as regressions.
@pytest.mark.parametrize("program", [
    ((), "float64", [("reduction", "softmax", -1, False)]),
    ((), "float64", [("reduction", "logsumexp", 0, True)]),
    ((2, 3), "int64", [("scalar", "radd", True), ("shape", "bool", 0)]),
    ((3, 1), "float64", [("shape", "gather", 7), ("reduction", "cumsum", 0, False)]),
    ((), "bool", [("unary", "neg")]),
    ((), "int64", [("shape", "transpose", 866)]),
    ((), "float64", [("shape", "scatter_add", 440), ("scalar", "mul_int", 2), ("shape", "index_select", 162)]),
    ((3,), "float64", [("shape", "double", 1544), ("unary", "relu"), ("scalar", "pow_half_abs", 3)]),
    ((3, 1, 1), "float64", [("unary", "round"), ("scalar", "pow_half_abs", True)]),
    ((3, 1, 1), "float64", [("binary", "minimum", (1,), "bool", 64), ("binary", "div", (2, 3, 1, 1), "bool", 61),
                            ("unary", "frac_like")]),
    ((), "int64", [("scalar", "clamp", 3), ("shape", "flatten", 2337)]),
    ((4, 2, 4), "int64", [("reduction", "logsumexp", -3, False), ("reduction", "mean", 0, False)]),
    ((2, 2, 0), "float64", [("shape", "contiguous_t", 65536), ("reduction", "logsumexp", 0, False)]),
    ((0, 3), "float32", [("shape", "index_add", 58674)]),
    ((4, 2, 4), "bool", [("binary", "lt", (), "float32", 2), ("shape", "scatter_reduce", 24397)]),
    ((), "float64", [("reduction", "flip", 1, False)]),  # a 0-d tensor's dims are checked
    ((1, 0), "float64", [("reduction", "all", 0, False), ("reduction", "median_dim", 0, False)]),  # empty dim, then bool
    ((4,), "float64", [("unary", "exp2"), ("shape", "float", 0), ("unary", "asin_tanh")]),  # float32 rounding, grad
])
def test_fuzzer_regressions(program):
    check(*program)
