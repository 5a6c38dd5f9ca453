"""Differences from PyTorch found by the scripts of test_dl_scripts7.py, each checked on its own against PyTorch."""
import numpy as np
import pytest

import minigrad


def outcome(lib, equation, shapes):
    """einsum's error (type, text) or its values and the operands' gradients of sum(out * w)."""
    operands = [lib.tensor(np.arange(float(np.prod(s))).reshape(s) / 7, requires_grad=True) for s in shapes]
    try:
        out = lib.einsum(equation, *operands)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    w = np.random.default_rng(0).standard_normal(tuple(out.shape))
    (out * lib.tensor(w)).sum().backward()
    return out.detach().numpy(), [o.grad.numpy() for o in operands]


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(3, 1), (4, 2)]),            # a size-1 subscript broadcasts against the other operand's
    ("ij,jk->ik", [(3, 4), (1, 2)]),
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),   # a broadcast batch
    ("...i,...i->...", [(2, 3), (4, 1, 3)]),    # ellipses of different lengths, size 1 broadcast
    ("ii,i->i", [(1, 1), (3,)]),
])
def test_einsum_broadcasts_size_one_dimensions(torch, equation, shapes):
    ours, theirs = outcome(minigrad, equation, shapes), outcome(torch, equation, shapes)
    assert isinstance(theirs[0], np.ndarray)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    for a, b in zip(ours[1], theirs[1]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(3, 4), (3, 4)]),
    ("...i,...i->...", [(2, 3), (4, 3)]),
    ("ii->i", [(3, 4)]),
    ("ii->i", [(3, 1)]),
    ("ij->ii", [(3, 4)]),
    ("ij->k", [(3, 4)]),
    ("i1,j->ij", [(3, 4), (2,)]),
    ("ij->i1", [(3, 4)]),
    ("...i...->i", [(3, 4)]),
    ("i.j->i", [(3, 4)]),
    ("i->i->i", [(3,)]),
    ("i->..", [(3,)]),
    ("i->......", [(3,)]),
    ("i,j,k->i", [(3,), (3,)]),
    ("i->i", [(3,), (3,)]),
    ("ijk->i", [(3, 4)]),
])
def test_einsum_error_texts(torch, equation, shapes):
    theirs = outcome(torch, equation, shapes)
    assert theirs[0] == "RuntimeError"
    assert outcome(minigrad, equation, shapes) == theirs
