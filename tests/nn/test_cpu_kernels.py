"""The compiled CPU kernels' plumbing (nn/_functional/cpu_kernels.py): they run by default when numba
is installed, the numpy passes run without them, and a numba that cannot write its disk cache
still compiles. The ops' results in both modes are tested with the ops (the `kernels` and
`blocking` fixtures run them with the kernels on and off)."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from nn._functional import activation, attention, cpu_kernels, linear, normalization
from nn._functional import loss as loss_module
from nn.optim import adam


def test_compiled_kernels_are_what_runs_when_numba_is_installed():
    # a missing numba or a kernel that never compiles would otherwise pass every test on the numpy
    # passes and show only in the benchmarks
    pytest.importorskip("numba")
    assert cpu_kernels.use(np.zeros(2, np.float32)) and cpu_kernels.use(np.zeros(2))
    assert not cpu_kernels.use(np.zeros(2, np.float16)) and not cpu_kernels.use(np.zeros(2, np.int64))
    x = minigrad.tensor(np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32), requires_grad=True)
    h = F.layer_norm(F.gelu(x), (8,)).view(2, 4, 2, 4).transpose(1, 2)
    y = F.scaled_dot_product_attention(h, h, h, is_causal=True)  # one compiled call per (batch, head)
    y = y + F.scaled_dot_product_attention(h, h, h, is_causal=True, dropout_p=0.5)  # numpy products, compiled softmax
    loss = y.sum() + F.cross_entropy(y.reshape(-1, 4), minigrad.tensor(np.arange(16) % 4))
    loss = loss + F.embedding(minigrad.tensor([0, 2, 2]), y.reshape(-1, 4)).sum()
    loss.backward()
    p = nn.Parameter(minigrad.ones(4))
    p.grad = minigrad.ones(4)
    nn.optim.AdamW([p]).step()
    for k in (activation._gelu_fwd_compiled, activation._times_square, activation._gelu_bwd_tail,
              normalization._layer_norm_rows, adam._adam_compiled,
              normalization._layer_norm_rows_backward, attention._softmax_shift, attention._softmax_normalise,
              attention._softmax_grad_rows, attention._attention_items, attention._attention_items_backward,
              loss_module._shift_rows, loss_module._cross_entropy_finish, linear._scatter_add_rows_compiled):
        assert k._compiled is not None, k.__name__
    with cpu_kernels.enabled(False):
        assert not cpu_kernels.use(np.zeros(2, np.float32))


def test_without_numba_the_numpy_passes_run(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "_numba", False)  # as if `import numba` had failed
    assert not cpu_kernels.available() and not cpu_kernels.use(np.zeros(2, np.float32))

    def never(*args):
        raise AssertionError("a compiled kernel ran without numba")

    monkeypatch.setattr(activation, "_gelu_fwd_compiled", never)
    monkeypatch.setattr(normalization, "_layer_norm_rows", never)
    monkeypatch.setattr(adam, "_adam_compiled", never)
    x = minigrad.tensor(np.linspace(-3, 3, 16, dtype=np.float32).reshape(2, 8), requires_grad=True)
    y = F.layer_norm(F.gelu(x), (8,))
    y.sum().backward()
    assert np.isfinite(x.grad.data).all()
    p = nn.Parameter(minigrad.ones(4))
    p.grad = minigrad.ones(4)
    nn.optim.AdamW([p], lr=0.1).step()
    assert (p.data < 1).all()


def test_a_numba_that_cannot_write_its_cache_still_compiles(monkeypatch):
    numba = pytest.importorskip("numba")
    real = numba.njit

    def njit(**options):
        if options.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return real(**options)

    monkeypatch.setattr(numba, "njit", njit)

    @cpu_kernels.kernel
    def twice(out, x):
        for i in range(x.size):
            out[i] = 2.0 * x[i]

    x = np.arange(5.0)
    out = np.empty_like(x)
    twice(out, x)
    np.testing.assert_array_equal(out, 2 * x)
