"""PyTorch 2.13's answers where minigrad differed: a float size to F.interpolate (each kernel's parser text),
float lengths to random_split (randperm's overloads, the default generator named)."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    try:
        return "ok", repr(fn(lib)).replace("minigrad", "torch")
    except Exception as e:  # noqa: BLE001 (any error is the answer compared)
        return type(e).__name__, str(e)


def _same(fn):
    assert _outcome(minigrad, fn) == _outcome(torch, fn)


def _interpolate(shape, size, **kw):
    return lambda L: L.nn.functional.interpolate(L.ones(*shape), size=size, **kw).shape


INTERPOLATE = {
    "nearest1d": _interpolate((1, 1, 3), 2.5), "nearest2d": _interpolate((1, 1, 3, 3), 2.0),
    "nearest3d": _interpolate((1, 1, 3, 3, 3), 2.0), "nearest_exact": _interpolate((1, 1, 3), 2.0, mode="nearest-exact"),
    "linear": _interpolate((1, 1, 3), 2.0, mode="linear"), "bilinear": _interpolate((1, 1, 3, 3), 2.0, mode="bilinear"),
    "bicubic": _interpolate((1, 1, 3, 3), 2.5, mode="bicubic"), "trilinear": _interpolate((1, 1, 3, 3, 3), 2.0, mode="trilinear"),
    "bilinear_aa": _interpolate((1, 1, 3, 3), 2.0, mode="bilinear", antialias=True),
    "area1d": _interpolate((1, 1, 3), 2.0, mode="area"), "area2d": _interpolate((1, 1, 3, 3), 2.0, mode="area"),
    "numpy_float": _interpolate((1, 1, 3, 3), np.float64(2.0)), "negative": _interpolate((1, 1, 3), -1.0),
    "wrong_rank_first": _interpolate((1, 1, 3), 2.0, mode="bilinear"), "unknown_mode": _interpolate((1, 1, 3), 2.0, mode="x"),
    "int_still_runs": _interpolate((1, 1, 3, 3), 2, mode="bilinear"),
}


@pytest.mark.parametrize("name", sorted(INTERPOLATE))
def test_interpolate_float_size(name):
    _same(INTERPOLATE[name])


class _Sized:
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return i


RANDOM_SPLIT = {
    "float_lengths": lambda L: L.utils.data.random_split(_Sized(), [5.0, 5.0]),
    "mixed": lambda L: L.utils.data.random_split(range(10), [4, 6.0]),
    "with_generator": lambda L: L.utils.data.random_split(range(10), [5.0, 5.0], generator=L.Generator()),
    "fractions_run": lambda L: [len(s) for s in L.utils.data.random_split(range(10), [0.5, 0.5])],
    "randperm_float_generator": lambda L: L.randperm(5.0, generator=L.Generator()),
    "randperm_float_dtype": lambda L: L.randperm(5.0, dtype=L.float32),
    "randperm_float_alone": lambda L: L.randperm(5.0),
}


@pytest.mark.parametrize("name", sorted(RANDOM_SPLIT))
def test_random_split_float_lengths(name):
    _same(RANDOM_SPLIT[name])


def test_random_split_draws_from_the_default_generator_as_randperm_does():
    minigrad.manual_seed(0)
    parts = [list(s) for s in minigrad.utils.data.random_split(range(10), [3, 7])]
    minigrad.manual_seed(0)
    order = minigrad.randperm(10).tolist()
    assert parts == [order[:3], order[3:]]
