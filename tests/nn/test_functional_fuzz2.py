"""Differences a differential fuzz of nn.functional against PyTorch found (argument checks and their texts), each
pinned against torch, and a small seeded fuzz of those families: the same outcome (the same error type and
text, or the same values, gradients, dtype and shape)."""
import numpy as np
import pytest

from tests.fuzz_settings import fuzz_rng


torch = pytest.importorskip("torch")


from twins import fuzz_rand as rand, outcome  # noqa: E402,F401
from twins import same as _same  # noqa: E402


def same(fn, *arrays, grad=True):  # (values, gradients and errors: grad_fn names are not compared here)
    _same(fn, *arrays, grad=grad, grad_fn=False)


@pytest.mark.parametrize("shape, kernel, padding", [
    ((1, 1, 6, 6, 2), 3, 1),  # W 2 < 3: PyTorch refuses although the padded width is 4
    ((1, 1, 2, 4, 4), 3, 1),
    ((1, 2, 2, 4, 4), (2, 2, 5), 1),
    ((2, 3, 3, 3), 3, 1),  # fits: a value
])
def test_avg_pool3d_input_smaller_than_kernel(shape, kernel, padding):
    same(lambda F, x: F.avg_pool3d(x, kernel, padding=padding), rand(*shape))


@pytest.mark.parametrize("shape, groups", [
    ((1, 4), 4), ((1, 2), 2), ((1, 1), 1), ((1, 3), 2), ((1, 4, 1), 4), ((1, 4, 1, 1), 2),  # refused
    ((2, 4), 4), ((1, 4, 2), 4), ((0, 4, 2), 2),  # values
])
def test_group_norm_one_value_per_group(shape, groups):
    same(lambda F, x: F.group_norm(x, groups), rand(*shape))


@pytest.mark.parametrize("shape, groups", [((4,), 2), ((1, 4), 2), ((2, 4), 3), ((2, 4, 1), 0), ((2, 4, 1), -1),
                                           ((2, 4, 1), 3), ((2, 6, 2), 3), ((0, 4, 1), 2)])
def test_channel_shuffle_checks(shape, groups):
    same(lambda F, x: F.channel_shuffle(x, groups), rand(*shape))


@pytest.mark.parametrize("shape", [(0,), (2, 0), (3,)])
@pytest.mark.parametrize("num_classes", [-2, -1, 0, 1, 3])
def test_one_hot_empty_without_classes(shape, num_classes):
    same(lambda F, t: F.one_hot(t, num_classes), np.zeros(shape, dtype=np.int64))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_soft_margin_loss_target_requiring_grad(reduction):
    x, t = rand(3, 2), np.sign(rand(3, 2))
    same(lambda F, x, t: F.soft_margin_loss(x, t, reduction=reduction), x, t)  # refused: no target gradient
    same(lambda F, x, t: F.soft_margin_loss(x, t.detach(), reduction=reduction), x, t)  # fine


@pytest.mark.parametrize("name", ["adaptive_avg_pool1d", "adaptive_max_pool1d"])
@pytest.mark.parametrize("output_size", [None, (None,), [None], 2, (3,)])
def test_adaptive_pool1d_none_size(name, output_size):
    same(lambda F, x: getattr(F, name)(x, output_size), rand(2, 3, 5))


def test_seeded_fuzz_of_the_fixed_families():
    rng = fuzz_rng(2024)
    ri = lambda a, b: int(rng.integers(a, b + 1))  # noqa: E731
    for _ in range(120):
        fam = ri(0, 4)
        if fam == 0:
            shape = (ri(1, 2), ri(1, 2)) + tuple(ri(1, 5) for _ in range(3))
            k, p = tuple(ri(1, 4) for _ in range(3)), ri(0, 2)
            same(lambda F, x, k=k, p=p: F.avg_pool3d(x, k, None, p, bool(p % 2), bool(k[0] % 2)),
                 rng.standard_normal(shape))
        elif fam == 1:
            g = ri(1, 3)
            shape = (ri(1, 2), g * ri(1, 2) + (ri(0, 1) if rng.random() < 0.2 else 0)) + tuple(ri(1, 2) for _ in
                                                                                                  range(ri(0, 2)))
            same(lambda F, x, g=g: F.group_norm(x, g), rng.standard_normal(shape))
        elif fam == 2:
            g = ri(0, 3)
            shape = tuple(ri(1, 3) for _ in range(ri(1, 4)))
            same(lambda F, x, g=g: F.channel_shuffle(x, g), rng.standard_normal(shape))
        elif fam == 3:
            nc = ri(-2, 4)
            shape = tuple(ri(0, 2) for _ in range(ri(1, 2)))
            same(lambda F, t, nc=nc: F.one_hot(t, nc), rng.integers(0, 2, size=shape))
        else:
            size = [None, (None,), ri(1, 6), (ri(1, 6),)][ri(0, 3)]
            name = ["adaptive_avg_pool1d", "adaptive_max_pool1d"][ri(0, 1)]
            same(lambda F, x, n=name, s=size: getattr(F, n)(x, s), rng.standard_normal((ri(1, 2), ri(1, 3), ri(1, 6))))
