"""Differences from PyTorch found by the scripts of test_dl_scripts6.py, each checked on its own against PyTorch."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).split("\n")[0].replace("torch.", "minigrad.")
    return None


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])  # (no bfloat16 arrays here)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 1])
@pytest.mark.parametrize("ids", [[1, 9, -1, 7], [[-3, 1]]])
def test_embedding_bag_out_of_range_id_text(torch, dtype, mode, padding_idx, ids):
    # PyTorch's CPU kernel for 'sum'/'mean' of 32- and 16-bit floats without padding_idx words it its own way
    weight = np.random.default_rng(0).standard_normal((6, 3))

    def call(lib, funcs):
        offsets = lib.tensor([0, 2]) if len(ids) > 1 else None
        w = lib.tensor(weight).to(getattr(lib, dtype))
        return lambda: funcs.embedding_bag(lib.tensor(ids), w, offsets, mode=mode, padding_idx=padding_idx)

    # (on several threads PyTorch's parallel loop stops at an internal assert first: its text is the
    # one-thread kernel's, which this compares)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        theirs = error_of(call(torch, torch.nn.functional))
    finally:
        torch.set_num_threads(threads)
    assert theirs is not None
    assert error_of(call(minigrad, F)) == theirs


@pytest.mark.parametrize("fn", ["pixel_shuffle", "pixel_unshuffle"])
@pytest.mark.parametrize("factor", [0, -2, 2.0])
def test_pixel_shuffle_bad_factor_text(torch, fn, factor):
    x = np.random.default_rng(1).standard_normal((1, 4, 4, 4))
    theirs = error_of(lambda: getattr(torch.nn.functional, fn)(torch.tensor(x), factor))
    assert theirs is not None
    assert error_of(lambda: getattr(F, fn)(minigrad.tensor(x), factor)) == theirs


def batched_grads(lib, create_graph):
    rng = np.random.default_rng(2)
    a = lib.tensor(rng.standard_normal(3), requires_grad=True)
    b = lib.tensor(rng.standard_normal(3), requires_grad=True)
    unused = lib.tensor(rng.standard_normal(2), requires_grad=True)
    y = a * b.sin()
    got = lib.autograd.grad((y, (a * a).sum()), (a, b, unused), (lib.eye(3, dtype=lib.float64), lib.ones(3).double()),
                            is_grads_batched=True, create_graph=create_graph, allow_unused=True)
    second = None
    if create_graph:  # the rows are differentiable: a Hessian's rows by is_grads_batched, then its trace's gradient
        hess, = lib.autograd.grad((a * a * b).sum(), a, create_graph=True)
        rows, = lib.autograd.grad(hess, a, lib.eye(3, dtype=lib.float64), is_grads_batched=True, create_graph=True)
        second = lib.autograd.grad(rows.diagonal().sum() + got[0].sum(), b)
    errors = [error_of(lambda g=g: lib.autograd.grad(y, a, g, is_grads_batched=True, retain_graph=True))
              for g in (lib.ones(2, 4), lib.ones(2, 3, 1), lib.ones(3), lib.ones(0, 3), None)]
    errors.append(error_of(lambda: lib.autograd.grad((y, y), a, (lib.ones(2, 3), lib.ones(4, 3)),
                                                     is_grads_batched=True, retain_graph=True)))
    return got, second, errors


@pytest.mark.parametrize("create_graph", [False, True])
def test_autograd_grad_is_grads_batched(torch, create_graph):
    theirs, ours = batched_grads(torch, create_graph), batched_grads(minigrad, create_graph)
    assert ours[2] == theirs[2]
    for t, m in zip(theirs[0], ours[0]):
        assert (t is None) == (m is None)
        if t is not None:
            assert m.requires_grad == t.requires_grad == create_graph
            np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-14)
    if create_graph:
        np.testing.assert_allclose(ours[1][0].numpy(), theirs[1][0].numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape", [(1, 1, 4), (1, 1, 4, 4), (1, 1, 2, 2, 2)])
@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(), dict(size=3, scale_factor=2),
                                dict(scale_factor=2, antialias=True)])
def test_interpolate_unknown_mode_text(torch, shape, kw):
    x = np.random.default_rng(3).standard_normal(shape)
    theirs = error_of(lambda: torch.nn.functional.interpolate(torch.tensor(x), mode="bogus", **kw))
    assert theirs is not None
    assert error_of(lambda: F.interpolate(minigrad.tensor(x), mode="bogus", **kw)) == theirs
