"""Focused checks for what the scripts of test_dl_scripts26.py and their neighbours found minigrad doing unlike
PyTorch: dense @ sparse (torch.mm, @, matmul, torch.sparse.mm) computed as PyTorch computes it, with its node
names, checks and texts; Module.share_memory reaching the gradients a model already has."""
import warnings

import numpy as np
import pytest

import minigrad
import nn as mnn

torch = pytest.importorskip("torch")


def _sparse(lib):
    values = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    return lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [1, 0, 2]]), values, (2, 3)), values


PRODUCTS = {"mm": lambda lib, x, a: lib.mm(x, a), "matmul": lambda lib, x, a: lib.matmul(x, a),
            "at": lambda lib, x, a: x @ a, "sparse.mm": lambda lib, x, a: lib.sparse.mm(x, a),
            "Tensor.mm": lambda lib, x, a: x.mm(a)}


def _outcome(lib, how, x):
    a, values = _sparse(lib)
    x = lib.tensor(x, requires_grad=x.dtype == np.float64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's note on unchecked sparse invariants)
            y = PRODUCTS[how](lib, x, a)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    (y * lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))).sum().backward()
    return type(y.grad_fn).__name__, tuple(y.shape), y.stride(), [y.detach().numpy(), values.grad.numpy(),
                                                                  x.grad.numpy()]


@pytest.mark.parametrize("how", list(PRODUCTS))
@pytest.mark.parametrize("shape", [(2, 2), (4, 2), (2,)])
def test_dense_at_sparse_node_values_and_gradients(how, shape):
    x = np.random.default_rng(26).standard_normal(shape)
    ours, theirs = _outcome(minigrad, how, x), _outcome(torch, how, x)
    assert ours[:3] == theirs[:3]  # (an error's type and text, or the node, shape and strides)
    if len(theirs) == 4:
        for a, b in zip(ours[3], theirs[3]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("how", list(PRODUCTS))
@pytest.mark.parametrize("x", [np.ones((2, 3)), np.ones((3, 4)), np.ones(3), np.ones((2, 2), np.float32)],
                         ids=["2x3", "3x4", "vector", "float32"])
def test_dense_at_sparse_refusals_as_pytorch(how, x):
    theirs = _outcome(torch, how, x)
    assert theirs[0].endswith("Error")
    assert _outcome(minigrad, how, x) == theirs


def _shared_after(lib, nn):
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
    model[0](lib.ones(1, 2)).sum().backward()  # gradients for the first layer only
    model.share_memory()
    return [(name, p.is_shared(), None if p.grad is None else p.grad.is_shared())
            for name, p in model.named_parameters()] + [b.is_shared() for b in model.buffers()]


def test_module_share_memory_moves_existing_gradients_too():
    assert _shared_after(minigrad, mnn) == _shared_after(torch, torch.nn)
