"""Differences the elementwise-math fuzzer (test_special_fuzz.py) found on longer runs, each compared against
PyTorch with the fuzzer's own check: values, dtypes, errors and gradients."""
import numpy as np
import pytest
from test_special_fuzz import check

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name,args", [
    ("pow", [np.array([0.0, 2.0]), np.array([False, True])]),  # backward's b - 1 refuses a bool exponent
    ("fmod", [np.array([], dtype=np.int64), np.array(0)]),  # an empty result divides nothing
    ("remainder", [np.array([], dtype=np.int64), np.array(0)]),
    ("hypot", [np.array([0.0, 0.0]), np.array([5e-324, 1e-300])]),  # g a / r, not (g / r) a: inf * 0
    ("copysign", [np.array([5e-324, -3.0]), np.array(0)]),  # the ratio first: g * result underflows
    ("clamp_tensor", [np.array(False), np.array(False), np.array(True)]),  # no bool kernel
    ("clamp_tensor", [np.array([], dtype=np.int64), np.array(0), np.zeros((0, 3), dtype=np.int64)]),  # broadcast
    ("erfinv", [np.array([1 - 1e-12, -(1 - 1e-12), 1 - 1e-15, 1 - 2 ** -53, 0.9999999])]),  # erf(x) - v cancels
])
def test_found_inputs(name, args):
    check(name, args, {})


@pytest.mark.parametrize("call", [
    lambda L, t: L.clamp(t, False, True),
    lambda L, t: L.clamp(t, min=False),
    lambda L, t: L.clamp(t, max=True),
    lambda L, t: L.clamp(t, True, L.tensor(False)),
    lambda L, t: L.clamp(t, min=L.tensor([True])),
])
def test_clamp_bool(call):
    def run(L):
        try:
            return call(L, L.tensor([False, True])).tolist()
        except NotImplementedError as e:
            return str(e)
    assert run(__import__("minigrad")) == run(torch)
