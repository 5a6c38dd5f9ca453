"""Third round of nn.functional against PyTorch on edge shapes (empty batches, channels and positions, sizes
that come out too small): the same outcome on both (the same error type and text, or the same values,
gradients, dtype, shape and grad_fn)."""
import pytest

import minigrad
import nn.functional as F

torch = pytest.importorskip("torch")

from twins import fuzz_rand as rand, same  # noqa: E402


# ---- convolutions ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("x, pad", [((2, 0, 3), 0), ((2, 0, 5), 1), ((0, 2, 3), 0), ((0, 2, 0), 1), ((2, 0, 0), 1),
                                    ((1, 2, 0), 1), ((0, 3), 0), ((2, 0), 1)])
def test_conv_empty(d, x, pad):
    x = x + x[-1:] * (d - 1)
    cin = x[-1 - d]
    same(lambda F, x, w, b: getattr(F, f"conv{d}d")(x, w, b, padding=pad), rand(*x), rand(4, cin, *(2,) * d), rand(4))
    same(lambda F, x, w: getattr(F, f"conv{d}d")(x, w, stride=2, padding=pad), rand(*x), rand(4, cin, *(2,) * d))


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("x, pad", [((0, 2, 3), 0), ((0, 2, 0), 0), ((1, 2, 0), 0), ((2, 0), 0), ((2, 1), 2),
                                    ((1, 2, 1), 1), ((1, 2, 2), 1), ((0, 2, 1), 2), ((0, 2, 2), 1)])
def test_conv_transpose_empty_and_too_small(d, x, pad):
    x = x[:-1] + (x[-1],) + (3,) * (d - 1)
    cin = x[-1 - d]
    same(lambda F, x, w, b: getattr(F, f"conv_transpose{d}d")(x, w, b, padding=pad), rand(*x), rand(cin, 4, *(1,) * d),
         rand(4))
    same(lambda F, x, w: getattr(F, f"conv_transpose{d}d")(x, w, stride=2, padding=pad), rand(*x),
         rand(cin, 2, *(2,) * d))


def test_conv_transpose_too_small_texts():
    same(lambda F, x, w: F.conv_transpose2d(x, w, padding=(1, 0)), rand(1, 2, 1, 3), rand(2, 4, 1, 2))
    same(lambda F, x, w: F.conv_transpose2d(x, w, padding=(1, 2)), rand(0, 2, 2, 2), rand(2, 4, 1, 1))
    same(lambda F, x, w: F.conv_transpose3d(x, w, padding=(2, 1, 2)), rand(0, 2, 2, 2, 2), rand(2, 4, 1, 1, 1))


# ---- pad: reflect / replicate / circular on empty and cropped dims -------------------------------------
_PAD_CASES = [((2, 0, 3), (1, 1)), ((0, 3), (1, 1)), ((2, 0), (1, 1)), ((1, 2, 0), (0, 0)), ((1, 2, 0), (1, 1)),
              ((1, 2, 0), (-1, 0)), ((0, 2, 3), (-3, 0)), ((1, 2, 3), (-2, -1)), ((1, 2, 3), (-4, 0)),
              ((1, 2, 3), (4, -8)), ((2, 0, 3), (-4, 1)), ((2, 0, 3), (4, 0)), ((1, 2, 3), (-4, 1)),
              ((2, 0, 3, 3), (1, 1, 1, 1)), ((2, 2, 0, 3), (1, 1, 1, 1)), ((1, 2, 3, 3), (0, 0, -2, -1)),
              ((1, 2, 3, 4), (-2, -2, -2, -1)), ((2, 3, 3), (-3, 0, -3, 0)), ((1, 2, 3, 3), (0, 0, -4, 1)),
              ((1, 2, 3, 3), (0, 0, 3, 0)), ((1, 2, 3, 3), (-3, 0, 3, 0)), ((1, 2, 3, 3), (-1, -2, 1, 0)),
              ((1, 2, 3, 3), (0, 0, -4, 0)), ((1, 2, 0, 3), (1, 0, 0, 0)), ((2, 0, 3, 3, 3), (1,) * 6),
              ((1, 3, 0, 3), (1,) * 6), ((1, 2, 3, 3, 3), (0, 0, 0, 0, -2, -1)), ((1, 2, 3, 3, 3), (0, 0, 0, 3, 0, 0)),
              ((1, 2, 3, 3, 3), (-3, 0, 0, -3, -2, -1)), ((1, 2, 3, 3, 4), (-5, 0, 0, -3, -2, -1)),
              ((1, 2, 3, 3, 3), (0, 0, 0, -3, -2, -1))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", _PAD_CASES)
def test_pad_empty_and_cropped(mode, shape, pad):
    # (PyTorch's circular node is its composite's CopySlices, named in its C++ namespace; its 3-d reflection's
    # gradient into an empty output is uninitialized memory, ours zeros)
    same(lambda F, x: F.pad(x, pad, mode=mode), rand(*shape), grad_fn=mode != "circular",
         grad=not (mode == "reflect" and len(pad) == 6))


def test_pad_circular_wrapping_nothing_refused():
    # PyTorch's output there is uninitialized memory (or an overlap error without grad): ours a clear refusal
    for pad in ((-3, 1), (2, -3), (-4, 2)):
        with pytest.raises(RuntimeError, match="wraps around nothing"):
            F.pad(minigrad.tensor(rand(1, 2, 3)), pad, mode="circular")


# ---- pixel_unshuffle, adaptive_max_pool1d on empty inputs -------------------------------------------------
@pytest.mark.parametrize("shape", [(0, 2, 4, 6), (2, 0, 4, 4), (0, 4, 4), (1, 2, 0, 4), (0, 2, 3, 4)])
def test_pixel_unshuffle_empty(shape):
    # (PyTorch's node is PixelUnshuffleBackward0, minigrad's pixel_unshuffle is composed; PyTorch's backward there
    # fails, running pixel_shuffle on the input-shaped gradient)
    same(lambda F, x: F.pixel_unshuffle(x, 2), rand(*shape), grad=False, grad_fn=False)


@pytest.mark.parametrize("shape", [(2, 0, 4), (2, 2, 0), (0, 4), (3, 0)])
@pytest.mark.parametrize("size", [2, 0])
def test_adaptive_max_pool1d_empty_text(shape, size):
    same(lambda F, x: F.adaptive_max_pool1d(x, size), rand(*shape), grad=False, grad_fn=False)
