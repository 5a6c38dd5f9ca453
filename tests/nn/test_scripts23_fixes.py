"""Focused tests for what the scripts of test_dl_scripts23.py (domain plumbing around a model) found in minigrad."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


def _resized(lib, funcs, image, **kw):
    y = funcs.interpolate(lib.tensor(image), **kw)
    return str(y.dtype).split(".")[-1], tuple(y.shape), y.numpy()


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("shape, kw", [((1, 2, 5), dict(size=3)), ((2, 3, 4, 5), dict(size=(7, 3))),
                                       ((2, 3, 4, 5), dict(scale_factor=2)),
                                       ((1, 1, 3, 4, 2), dict(scale_factor=(0.7, 1.5, 2.0)))])
def test_uint8_images_resize_by_nearest(torch, mode, shape, kw):
    """A uint8 image batch resized by nearest or nearest-exact stays uint8 with PyTorch's pixels, where minigrad
    refused any non-float input."""
    image = np.random.default_rng(23).integers(0, 256, shape).astype(np.uint8)
    ours = _resized(minigrad, F, image, mode=mode, **kw)
    theirs = _resized(torch, torch.nn.functional, image, mode=mode, **kw)
    assert ours[:2] == theirs[:2] == ("uint8", theirs[1])
    np.testing.assert_array_equal(ours[2], theirs[2])


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.bool_])
def test_other_integer_images_still_refused_by_nearest(torch, dtype):
    """PyTorch has nearest kernels for uint8 alone: other integer and bool inputs stay an error in both."""
    image = np.zeros((1, 1, 2, 2), dtype=dtype)
    with pytest.raises(NotImplementedError):
        torch.nn.functional.interpolate(torch.tensor(image), size=3)
    with pytest.raises(NotImplementedError, match="not implemented for"):
        F.interpolate(minigrad.tensor(image), size=3)


def test_uint8_bilinear_resize(torch):  # (PyTorch's fixed-point weights: tests/nn/test_gaps28_nn.py has more)
    image = np.arange(16, dtype=np.uint8).reshape(1, 1, 4, 4)
    ours = _resized(minigrad, F, image, size=(3, 2), mode="bilinear")
    theirs = _resized(torch, torch.nn.functional, image, size=(3, 2), mode="bilinear")
    np.testing.assert_array_equal(ours[2], theirs[2])
