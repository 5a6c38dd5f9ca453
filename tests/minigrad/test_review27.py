"""Review of the merges since b4bc355: meshgrid's Cartesian indexing records PyTorch's nodes."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


# (shapes whose grids each broadcast: minigrad's expand to the same shape returns its input, no node)
@pytest.mark.parametrize("shapes", [[(2,), (3,)], [(2,), (3,), (4,)], [(2,), (3,), ()]])
def test_meshgrid_xy_records_expand_as_pytorch(shapes):
    rng = np.random.default_rng(27)
    arrays = [rng.standard_normal(s) for s in shapes]
    seen = []
    for lib in (minigrad, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        grids = lib.meshgrid(*ts, indexing="xy")
        weights = [lib.tensor(np.cos(np.arange(g.numel()) + k).reshape(tuple(g.shape))) for k, g in enumerate(grids)]
        sum((g * w).sum() for g, w in zip(grids, weights)).backward()
        seen.append(([type(g.grad_fn).__name__ if lib is torch else g.grad_fn.name() for g in grids],
                     [g.detach().numpy() for g in grids], [t.grad.numpy() for t in ts]))
    (names, values, grads), (want_names, want_values, want_grads) = seen
    assert names == want_names
    for got, want in zip(values + grads, want_values + want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert got.shape == want.shape
