"""The node an op records, as PyTorch records it: grad_fn's name and its next_functions one level down (fft of a
real input and fft's resizing, scalar arguments' edges, distributions' log_prob graphs), with values and
gradients alongside."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

rng = np.random.default_rng(28)


def n(*s):
    return rng.standard_normal(s)


def cx(*s):
    return rng.standard_normal(s) + 1j * rng.standard_normal(s)


def pos(*s):
    return rng.random(s) + 0.5


def _name(f):
    return None if f is None else f.name().removeprefix("torch::autograd::")


def _node(t):
    g = t.grad_fn
    return _name(g), tuple(_name(f) for f, _ in g.next_functions)


CASES = {
    "fft real": (lambda L, a: L.fft.fft(a), [n(8)]),
    "fft real ortho": (lambda L, a: L.fft.fft(a, norm="ortho"), [n(8)]),
    "ifft real": (lambda L, a: L.fft.ifft(a), [n(8)]),
    "fft real padded": (lambda L, a: L.fft.fft(a, n=10), [n(8)]),
    "fft real cut": (lambda L, a: L.fft.fft(a, n=6, dim=0), [n(8, 3)]),
    "fft complex padded": (lambda L, a: L.fft.fft(a, n=10), [cx(8)]),
    "fft complex cut": (lambda L, a: L.fft.fft(a, n=6), [cx(8)]),
    "fftn real cut and padded": (lambda L, a: L.fft.fftn(a, s=(3, 7)), [n(4, 6)]),
    "rfft cut": (lambda L, a: L.fft.rfft(a, n=6), [n(8)]),
    "rfftn padded": (lambda L, a: L.fft.rfftn(a, s=(5, 4)), [n(4, 6)]),
    "irfft padded": (lambda L, a: L.fft.irfft(a, n=20), [cx(8)]),
    "irfft cut": (lambda L, a: L.fft.irfft(a, n=6), [cx(8)]),
    "hfft cut": (lambda L, a: L.fft.hfft(a, n=6), [cx(8)]),
    "ihfft padded": (lambda L, a: L.fft.ihfft(a, n=10), [n(8)]),
    "xlogy number self": (lambda L, a: L.xlogy(2.0, a), [pos(3)]),
    "xlogy number other": (lambda L, a: L.special.xlogy(a, 2.0), [pos(3)]),
    "xlog1py number self": (lambda L, a: L.special.xlog1py(2.0, a), [pos(3)]),
    "xlog1py number other": (lambda L, a: L.special.xlog1py(a, 2.0), [pos(3)]),
    "zeta number self": (lambda L, a: L.special.zeta(3.0, a), [pos(3)]),
    "Independent log_prob": (lambda L, m, s, x: L.distributions.Independent(L.distributions.Normal(m, s), 1).log_prob(x),
                             [n(2, 3), pos(2, 3), n(2, 3)]),
    "Independent entropy": (lambda L, m, s: L.distributions.Independent(L.distributions.Normal(m, s), 2).entropy(),
                            [n(2, 3), pos(2, 3)]),
}


def _run(L, fn, arrays):
    ts = [L.tensor(a, requires_grad=True) for a in arrays]
    return ts, fn(L, *ts)


@pytest.mark.parametrize("case", list(CASES))
def test_node_as_pytorch_records_it(case):
    fn, arrays = CASES[case]
    tin, tout = _run(torch, fn, arrays)
    min_, mout = _run(minigrad, fn, arrays)
    assert _node(mout) == _node(tout)
    np.testing.assert_allclose(mout.detach().resolve_conj().numpy(), tout.detach().resolve_conj().numpy(), rtol=1e-10, atol=1e-12)
    own = np.random.default_rng(list(CASES).index(case))  # (the shared rng's draws here hung on the tests before)
    w = own.standard_normal(tout.shape)
    if tout.is_complex():
        w = w + 1j * own.standard_normal(tout.shape)
    (tout * torch.tensor(w)).real.sum().backward()
    (mout * minigrad.tensor(w)).real.sum().backward()
    for m, t in zip(min_, tin):
        assert (m.grad is None) == (t.grad is None)
        if t.grad is not None:
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
