"""Differences the elementwise-math fuzzer (test_special_fuzz.py) found on runs of 400 examples, each compared
against PyTorch with the fuzzer's own check: values, dtypes, errors and gradients."""
import math

import numpy as np
import pytest
from test_special_fuzz import check

torch = pytest.importorskip("torch")
nan = math.nan
f32 = np.float32


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
@pytest.mark.parametrize("args", [
    # the gradient's formula on the operands as they came: log of the float64 x, not of x rounded to float32's 0
    [np.array([0.0, 0.0], dtype=f32), np.array(1.9e-169)],
    # lgamma of the float32 a in float32 (the result float64)
    [np.array([2.5, 0.0], dtype=f32), np.array([0.3, 1e-169])],
    # a bool a: the formula's a - 1 refuses, as PyTorch's
    [np.array([True, False]), np.array([0.3, 2.2])],
    [np.array(False), np.array(0.0)],
])
def test_incomplete_gamma_mixed_dtypes(name, args):
    check(name, args, {})


@pytest.mark.parametrize("name,args,kw", [
    # logit's backward kernel: g * inf at 0 and 1, so +inf at -0.0 for a positive g
    ("special.logit", [np.array([-0.0, 0.0, 1.0, 0.5])], {"eps": None}),
    ("logit", [np.array([-0.0, 1.0])], {"eps": 0.0}),
    # xlogy with a number `other`: 0 where x == 0 unless other > 0 (a nan other too)
    ("xlogy_scalar", [np.array([0.0, -0.0, 1.0])], {"s": nan}),
    ("xlogy_scalar", [np.array([0.0, 2.0])], {"s": -1.0}),
])
def test_found_inputs(name, args, kw):
    check(name, args, kw)


@pytest.mark.parametrize("args", [
    # PyTorch checks `end`'s dtype before it broadcasts
    [np.array([1.0, 2.0, 3.0]), np.zeros((0,), dtype=f32), np.array(0.5)],
    [np.array([1.0, 2.0, 3.0]), np.ones((2,), dtype=f32), np.array([0.5, 0.25, 0.1], dtype=f32)],
    # float32: (w - 1) (end - input) + end as one fused multiply-add, the 0-d float64 weight taken in float32
    [np.array([1.0, 0.3], dtype=f32), np.array([2.01, -1.7], dtype=f32), np.array(709.0)],
    [np.array([0.1, 0.7, -2.3], dtype=f32), np.array([2.01, -1.7, 5.1], dtype=f32), np.array([0.3, 0.7, 0.1], dtype=f32)],
])
def test_lerp_tensor(args):
    check("lerp_tensor", args, {})


@pytest.mark.parametrize("w", [0.1, 0.3, 0.7, 0.9])
def test_lerp_float32_fused(w):
    x = np.array([0.1, 0.7, -2.3, 3.3, 1e-3], dtype=f32)
    check("lerp", [x, np.array([2.01, -1.7, 5.1, 0.2, 7.9], dtype=f32)], {"w": w})
    check("lerp", [np.array([], dtype=np.float64), np.zeros(3, dtype=f32)], {"w": w})  # `end`'s dtype first
