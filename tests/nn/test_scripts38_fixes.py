"""What the scientific scripts of test_dl_scripts38.py found: a sparse COO tensor made dense (a Laplacian built from
its stencil's entries) and coalesced records PyTorch's nodes, ToDenseBackward0 and CoalesceBackward0, with the same
values and gradients as PyTorch."""
import numpy as np
import pytest

import minigrad

INDICES = np.array([[0, 1, 1, 2], [1, 0, 0, 2]])  # (1, 0) twice: the repeat adds up
VALUES = np.array([1.5, -2.0, 3.0, 0.5])


def made_dense(lib, dense_dims, coalesce):
    values = lib.tensor(VALUES.reshape((4,) + (1,) * dense_dims) * np.ones((4,) + (2,) * dense_dims),
                        requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor(INDICES), values * 2, (3, 3) + (2,) * dense_dims)
    if coalesce:
        s = s.coalesce()
    return values, s, s.to_dense()


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("dense_dims", [0, 1])
def test_to_dense_node_values_and_gradients_as_pytorch(torch, dense_dims, coalesce):
    w = np.random.default_rng(0).standard_normal((3, 3) + (2,) * dense_dims)
    out = {}
    for lib in (torch, minigrad):
        values, s, dense = made_dense(lib, dense_dims, coalesce)
        (g,) = lib.autograd.grad((dense * lib.tensor(w)).pow(2).sum(), values)
        out[lib.__name__] = (type(dense.grad_fn).__name__, dense.detach().numpy(), g.numpy())
    ours, theirs = out["minigrad"], out["torch"]
    assert ours[0] == theirs[0] == "ToDenseBackward0"
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_coalesce_node_as_pytorch(torch):
    names = []
    for lib in (torch, minigrad):
        values, s, _ = made_dense(lib, 0, True)
        names.append(type(s.values().grad_fn).__name__ if lib is minigrad else type(s.grad_fn).__name__)
    assert names[1] == names[0] == "CoalesceBackward0"
