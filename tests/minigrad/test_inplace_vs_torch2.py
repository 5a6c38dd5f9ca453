"""In-place ops (and their function, method and out= forms) against PyTorch, from a differential fuzz: values,
dtypes, version counts, gradients and refusals (type and text), and a small seeded fuzz of the same."""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def outcome(lib, f):
    """What f(lib) gives: its tensor's dtype, shape and values (or another result's repr), or its error's type and
    first line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f(lib)
    except Exception as e:  # noqa: BLE001 (the refusal is the result compared)
        return type(e).__name__, str(e).split("\n")[0].replace("torch.", "minigrad.")
    if isinstance(r, (torch.Tensor, mg.Tensor)):
        return "ok", str(r.dtype).split(".")[-1], tuple(r.shape), np.asarray(r.detach().numpy()).tolist()
    return "ok", repr(r)


def assert_same(f):
    expected = outcome(torch, f)
    assert outcome(mg, f) == expected


# ---- a number where PyTorch's signature takes a Tensor: its parser's TypeError, in every form ------------
TENSOR_ONLY = ["atan2", "arctan2", "gcd", "lcm", "heaviside", "ldexp", "igamma", "igammac", "nextafter", "hypot",
               "logical_and", "logical_or", "logical_xor", "fmax", "fmin", "maximum", "minimum", "logaddexp",
               "logaddexp2", "dist"]


@pytest.mark.parametrize("number", [2, 1.5, True, 1j])
@pytest.mark.parametrize("form", ["function", "function, number first", "method", "in-place"])
@pytest.mark.parametrize("name", TENSOR_ONLY)
def test_number_for_a_tensor_argument_as_torch(name, form, number):
    def f(lib):
        t = lib.ones(3, dtype=lib.int64 if name in ("gcd", "lcm") else lib.float32)
        if form == "function":
            return getattr(lib, name)(t, number)
        if form == "function, number first":
            return getattr(lib, name)(number, t)
        if form == "method":
            return getattr(t, name)(number)
        return getattr(t, name + "_")(number) if hasattr(torch.Tensor, name + "_") else t

    assert_same(f)


@pytest.mark.parametrize("name", ["polar", "complex"])
@pytest.mark.parametrize("first", [True, False])
def test_number_for_polar_and_complex_as_torch(name, first):
    assert_same(lambda lib: getattr(lib, name)(*((2.0, lib.ones(2)) if first else (lib.ones(2), 2.0))))


@pytest.mark.parametrize("grad", ["leaf", "view of leaf"])
@pytest.mark.parametrize("name", ["atan2_", "logical_and_", "gcd_", "igamma_"])
def test_number_refused_before_the_leaf_check_as_torch(name, grad):
    def f(lib):
        t = lib.ones(3, requires_grad=True)
        return getattr(t if grad == "leaf" else t[...], name)(2)

    assert_same(f)


# ---- in-place view ops: a new version, PyTorch's node names and texts ---------------------------------------
VIEW_INPLACE = {
    "squeeze_": ((1, 3), lambda t: t.squeeze_()),
    "squeeze_ dim": ((1, 3), lambda t: t.squeeze_(0)),
    "squeeze_ dims": ((1, 3), lambda t: t.squeeze_((0,))),
    "unsqueeze_": ((2, 3), lambda t: t.unsqueeze_(1)),
    "t_": ((2, 3), lambda t: t.t_()),
    "t_ 3-d": ((1, 2, 3), lambda t: t.t_()),
    "transpose_": ((2, 3), lambda t: t.transpose_(0, 1)),
    "swapaxes_": ((2, 3), lambda t: t.swapaxes_(0, 1)),
    "swapdims_": ((2, 3), lambda t: t.swapdims_(1, 0)),
    "as_strided_": ((2, 3), lambda t: t.as_strided_((3,), (2,))),
    "unsqueeze_ bad dim": ((2, 3), lambda t: t.unsqueeze_(5)),
}


@pytest.mark.parametrize("case", VIEW_INPLACE)
def test_view_inplace_version_and_shape_as_torch(case):
    shape, op = VIEW_INPLACE[case]

    def f(lib):
        t = lib.arange(float(np.prod(shape))).reshape(shape)
        v = t._version
        r = op(t)
        assert r is t
        return f"{t._version - v} {tuple(t.shape)} {t.tolist()}"

    assert_same(f)


@pytest.mark.parametrize("case", [c for c in VIEW_INPLACE if "bad" not in c and "3-d" not in c])
def test_view_inplace_grad_fn_gradient_and_saved_check_as_torch(case):
    shape, op = VIEW_INPLACE[case]

    def node_and_grad(lib):
        a = lib.arange(1.0, 1 + np.prod(shape)).reshape(shape).requires_grad_()
        x = a * 2
        op(x)
        (x * lib.arange(float(x.numel())).reshape(x.shape)).sum().backward()
        return f"{x.grad_fn.name()} {a.grad.tolist()}"

    def saved_input_modified(lib):  # sin saved x: the in-place view op is a change its backward must refuse
        a = lib.ones(shape, requires_grad=True)
        x = a * 2
        y = x.sin()
        op(x)
        y.sum().backward()

    assert_same(node_and_grad)
    assert_same(saved_input_modified)


def test_saved_output_of_a_backward1_node_names_it_as_torch():
    def f(lib):
        y = lib.ones(2, 3, requires_grad=True).max()
        y.mul_(2)
        y.backward()

    assert_same(f)


# ---- lerp's arguments, complex values into a real tensor, index_copy_'s checks in PyTorch's order ----------
def T(lib, *args, **kwargs):
    return lib.tensor(*args, **kwargs)


VALUE_CASES = {
    "lerp_ number end": lambda l: l.ones(2).lerp_(2, 0.5),
    "lerp number end": lambda l: l.ones(2).lerp(2, 0.5),
    "lerp_ complex end": lambda l: l.ones(2).lerp_(1j, 0.5),
    "lerp_ one argument": lambda l: l.ones(2).lerp_(l.ones(2)),
    "lerp_ three arguments": lambda l: l.ones(2).lerp_(l.ones(2), 0.5, 1),
    "lerp_ keywords": lambda l: l.ones(2).lerp_(end=l.zeros(2), weight=0.25),
    "torch.lerp number end": lambda l: l.lerp(l.ones(2), 2, 0.5),
    "lerp complex weight": lambda l: l.ones(2).lerp(l.zeros(2), 1j),
    "lerp_ complex weight": lambda l: l.ones(2).lerp_(l.zeros(2), 1j),
    "lerp_ real complex weight": lambda l: l.ones(2).lerp_(l.zeros(2), 0.5 + 0j),
    "masked_fill_ complex": lambda l: l.ones(2).masked_fill_(T(l, True), 1j),
    "masked_fill_ complex tensor": lambda l: l.ones(2).masked_fill_(T(l, True), T(l, 1j)),
    "masked_fill_ complex, int": lambda l: l.ones(2, dtype=l.int64).masked_fill_(T(l, True), 2j),
    "masked_fill complex": lambda l: l.ones(2).masked_fill(T(l, True), 1j),
    "masked_fill_ complex into complex": lambda l: l.ones(2, dtype=l.complex64).masked_fill_(T(l, [True, False]), 1j),
    "fill_ complex": lambda l: l.ones(2).fill_(1j),
    "fill_ complex, double": lambda l: l.ones(2, dtype=l.float64).fill_(T(l, 1j)),
    "index_copy_ slice shapes": lambda l: l.zeros(3, 2).index_copy_(0, T(l, [0, 1]), l.ones(2, 1)),
    "index_copy_ slice shapes 3-d": lambda l: l.zeros(3, 2, 4).index_copy_(1, T(l, [0]), l.ones(3, 1, 5)),
    "index_copy slice shapes": lambda l: l.index_copy(l.zeros(3, 2), 0, T(l, [0, 1]), l.ones(2, 1)),
    "index_copy_ scalar source, two indices": lambda l: l.zeros(3).index_copy_(0, T(l, [0, 1]), T(l, 1.0)),
    "index_copy_ 2-d index": lambda l: l.zeros(3).index_copy_(0, T(l, [[1]]), T(l, [1.0])),
    "index_copy_ dims before index dtype": lambda l: l.zeros(3, 2).index_copy_(0, T(l, [1], dtype=l.int32), l.ones(2)),
    "index_copy_ dims before dtype": lambda l: l.zeros(3, 2).index_copy_(0, T(l, [1]), l.ones(2, dtype=l.float64)),
    "index_copy_ count": lambda l: l.zeros(3, 2).index_copy_(0, T(l, [0, 1]), l.ones(3, 2)),
    "index_copy_ slices before range": lambda l: l.zeros(3, 2).index_copy_(0, T(l, [5]), l.ones(1, 3)),
    "index_copy_ 0-d self": lambda l: l.zeros(()).index_copy_(0, T(l, [0]), l.ones(1)),
    "index_copy_ 0-d self, 2-d source": lambda l: l.zeros(()).index_copy_(0, T(l, [0]), l.ones(1, 1)),
    "index_copy_ 0-d source": lambda l: l.zeros(2).index_copy_(0, T(l, [0]), T(l, 3.0)),
}


@pytest.mark.parametrize("case", VALUE_CASES)
def test_argument_and_value_corners_as_torch(case):
    assert_same(VALUE_CASES[case])


def test_index_copy_of_a_0d_self_gradients_as_torch():
    def f(lib):
        x = lib.tensor(2.0, requires_grad=True)
        src = lib.tensor([3.0], requires_grad=True)
        y = (x * 1).index_copy_(0, lib.tensor([0]), src)
        (y * 5).backward()
        return f"{y.item()} {x.grad.item()} {src.grad.tolist()}"

    assert_same(f)


@pytest.mark.parametrize("form", ["function", "in-place"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"])
def test_bitwise_kernel_names_in_refusals_as_torch(name, dtype, form):
    def f(lib):
        x = lib.ones(2, dtype=getattr(lib, dtype))
        return getattr(lib, name)(x, x) if form == "function" else getattr(x, name + "_")(x)

    assert_same(f)


# ---- a small seeded fuzz: random in-place ops, operands, dtypes, views and grad modes -----------------------
# (the shape-changing ops, and the ops whose signature takes a Tensor, given a number: the groups fixed so far)
FUZZ_OPS = ["squeeze_", "unsqueeze_", "t_", "heaviside_", "ldexp_", "igamma_", "logical_or_", "lcm_", "gcd_",
            "atan2_", "nextafter_", "hypot_"]
FUZZ_DTYPES = ["bool", "uint8", "int64", "float32", "float64", "complex64"]


def _fuzz_case(rng):
    op = str(rng.choice(FUZZ_OPS))
    sdt = rng.choice(FUZZ_DTYPES)
    shapes = [(), (0,), (1,), (3,), (1, 3), (2, 3), (3, 1), (2, 1, 3)]
    a = rng.standard_normal(shapes[rng.integers(len(shapes))]) * 3
    operand = rng.choice(["int", "float", "complex", "bool"])
    grad = rng.choice(["none", "leaf", "nonleaf"])

    def make(lib, arr, dt):
        arr = arr > 0 if dt == "bool" else (np.abs(arr) if dt == "uint8" else arr).astype(dt)
        return lib.tensor(arr.tolist(), dtype=getattr(lib, str(dt)))

    def f(lib):
        x = make(lib, a, sdt)
        if grad != "none" and x.dtype.is_floating_point:
            x.requires_grad_(True)
            if grad == "nonleaf":
                x = x * 1
        o = {"int": 2, "float": 1.5, "complex": 1j, "bool": True}[operand]
        v = x._version
        m = getattr(x, op)
        if op in ("squeeze_", "t_"):
            r = m()
        elif op == "unsqueeze_":
            r = m(0)
        else:
            r = m(o)
        assert r is x
        values = np.round(x.detach().numpy().astype(complex), 3).tolist()
        return f"{str(x.dtype).split('.')[-1]} {tuple(x.shape)} {x._version - v} {values}"

    return op, f


def test_small_seeded_inplace_fuzz_as_torch():
    rng = np.random.default_rng(1)
    diffs = []
    for _ in range(300):
        op, f = _fuzz_case(rng)
        got, expected = outcome(mg, f), outcome(torch, f)
        if got != expected:
            diffs.append((op, got, expected))
    assert diffs == []
