"""Differences the elementwise-math fuzzer (test_special_fuzz.py) found on a run of 400 examples (seed 11), each
compared against PyTorch with the fuzzer's own check: values, dtypes, errors and gradients."""
import numpy as np
import pytest
from test_special_fuzz import check, known

torch = pytest.importorskip("torch")
f32 = np.float32


@pytest.mark.parametrize("args", [
    # the exponent's gradient is g * result * ln 2: inf where the result overflowed, though a 2^e ln 2 g is finite
    [np.array(8.98846567431158e307), np.array(1.0)],
    [np.array([1.0, 2.0 ** 1000]), np.array([1.0, 24.0])],
    [np.array([[1.0], [2.0 ** 1000]]), np.array([0.9, 24.0])],
])
def test_ldexp_exponent_gradient_from_the_result(args):
    check("ldexp", args, {})


@pytest.mark.parametrize("args", [
    # the divisor's gradient is -g * div(a, b, rounding_mode="floor"): -1 where a/b rounds to -0.0 ...
    [np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -5e-324]]), np.array(30.0)],
    [np.array([-5e-324, 5e-324, -1e-320]), np.array([30.0, -30.0, 1e10])],
    # ... and nan, not -inf, at an infinite dividend
    [np.array([[[0.0, np.inf]]], dtype=f32), np.array(1.0)],
    [np.array([np.inf, -np.inf, 1.0]), np.array([1.0, 2.0, np.inf])],
    # integral quotients and signed zeros: the floor division's own values
    [np.array([6.0, -0.0, 1e-320, -7.5, -1.0]), np.array([2.0, 3.0, -1e10, 2.5, np.inf])],
    [np.array([[6.0], [0.1], [0.3]]), np.array([3.0, -0.1, 0.1])],
])
def test_remainder_divisor_gradient_takes_the_floor_division(args):
    check("remainder", args, {})


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
@pytest.mark.parametrize("args", [[np.array([]), np.zeros(3)], [np.zeros((2, 1)), np.zeros((0, 3))]])
def test_incomplete_gamma_classes_take_shapes_that_do_not_broadcast(name, args):
    # the KNOWN classes of the incomplete gamma functions answer False (both raise alike), not numpy's ValueError
    assert not known(name, args)
    check(name, args, {})


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
@pytest.mark.parametrize("args", [
    # the gradient's formula keeps an integer a integer (a - 1, not a - 1.0): float64 beside a float64 0-d x,
    # not float32
    [np.array([[0], [1]]), np.array(1.0)],
    [np.array([1, 2, 5]), np.array(0.75)],
    [np.array([True, False, True]), np.array(0.5)],
])
def test_incomplete_gamma_gradient_with_an_integer_a(name, args):
    check(name, args, {})


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_float32_incomplete_gamma_is_the_known_class(name):
    # a float32 result with an element inside (0 < a, x < inf): PyTorch's single-precision kernel, left out
    a, x = np.array([3.0, 0.0], dtype=f32), np.array(0.0625, dtype=f32)
    assert known(name, [a, x]) and known(name, [a.astype(np.int64), x]) and known(name, [a, np.array(0.0625)])
    assert not known(name, [a.astype(np.float64), x])  # a float64 result
    assert not known(name, [np.array([0.0, -1.0, np.inf], dtype=f32), np.array(np.nan, dtype=f32)])  # the edges
    check(name, [np.array([0.0, -1.0, np.inf, 2.0], dtype=f32), np.array([1.0, 2.0, 3.0, 0.0], dtype=f32)], {})


def test_ldexp_saves_other_and_result():
    # PyTorch's node keeps other and the result (not self): modifying the result in place breaks its backward
    import minigrad as mg

    names, errors = [], []
    for L in (torch, mg):
        x, e = L.tensor(np.array([1.0, 2.0]), requires_grad=True), L.tensor(np.array([1.0, 3.0]), requires_grad=True)
        out = L.ldexp(x, e)
        names.append(sorted(n for n in ("_saved_self", "_saved_other", "_saved_result") if hasattr(out.grad_fn, n)))
        out.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as err:
            out.sum().backward()
        errors.append(str(err.value).split("[")[0])
    assert names[0] == names[1] == ["_saved_other", "_saved_result"]
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
@pytest.mark.parametrize("args", [
    # PyTorch's edges in its order: a nan a meets x = 0 (P = 0) and x = inf (P = 1), a = inf meets a nan x (P = 0)
    [np.array([[0.0, 0.0, 0.0], [0.0, 0.0, np.nan]]), np.array(0.0)],
    [np.array([np.nan, np.nan, np.inf, np.nan, 0.0, np.inf]), np.array([0.0, np.inf, np.nan, -0.0, np.nan, np.inf])],
    [np.array([np.nan, np.inf], dtype=f32), np.array([np.inf, np.nan], dtype=f32)],
])
def test_incomplete_gamma_nan_edges(name, args):
    check(name, args, {})


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_prefactor_underflow_is_the_known_class(name):
    # only where log(x^a e^-x / Gamma(a)) < -709.78, in float64
    assert known(name, [np.array(2.2250738585072014e-308), np.array(2.0)])
    assert known(name, [np.array([1.0, 3.0]), np.array([1e-310, 1.0])])
    assert not known(name, [np.array([1e-300, 1.0]), np.array([2.0, 1e-300])])  # (log f ~ -693)
    check(name, [np.array([1e-300, 1.0, 0.5]), np.array([2.0, 1e-300, 700.0])], {})
