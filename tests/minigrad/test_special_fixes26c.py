"""Differences the elementwise-math fuzzer (test_special_fuzz.py) found in the everyday ops (sign, abs, maximum,
minimum, lerp), each compared against PyTorch with the fuzzer's own check: values, dtypes, errors and gradients."""
import math

import numpy as np
import pytest
from test_special_fuzz import check

import minigrad as mg

torch = pytest.importorskip("torch")
nan = math.nan


@pytest.mark.parametrize("name,args", [
    # sign is (0 < x) - (x < 0) in PyTorch: 0 at NaN, 0-d and float32 too
    ("sign", [np.array(nan)]),
    ("sign", [np.array([nan, -0.0, 2.0], dtype=np.float32)]),
    ("sgn", [np.array([nan, -3.0, 0.0])]),
    # abs's gradient g sgn(x): 0 at NaN, not NaN
    ("abs", [np.array([nan, 0.0, -2.0])]),
    # at a NaN neither side wins: both get the gradient
    ("maximum", [np.array([0.0, nan, 1.0]), np.array([nan, nan, 1.0])]),
    ("minimum", [np.array([0.0, nan, 2.0]), np.array(nan)]),
    # a 0-d float64 weight promotes 0-d float32 ends: the weight's gradient takes end - input in float32
    ("lerp_tensor", [np.array(30.0, dtype=np.float32), np.array(1.5085257, dtype=np.float32), np.array(0.0)]),
])
def test_found_inputs(name, args):
    check(name, args, {})


def test_sgn_node_name():
    x = np.array([1.0, -2.0])
    got = type(mg.sgn(mg.tensor(x, requires_grad=True)).grad_fn).__name__
    assert got == type(torch.sgn(torch.tensor(x, requires_grad=True)).grad_fn).__name__
