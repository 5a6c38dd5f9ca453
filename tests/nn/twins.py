"""A torch module and its minigrad twin from the same weights: run both, compare outputs and gradients.

Used by test_multihead_attention.py and test_transformer.py (pytest puts this folder on sys.path)."""
import numpy as np

import minigrad

RNG = np.random.default_rng(0)


def tolerance(dtype):
    return dict(rtol=1e-10, atol=1e-10) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)


def twin(torch, theirs, ours, dtype):
    """(theirs, ours), `ours` holding `theirs`'s parameters and buffers, both in `dtype`; their state_dict
    keys must agree."""
    (theirs.double() if dtype == np.float64 else theirs.float())
    (ours.double() if dtype == np.float64 else ours.float())
    state = theirs.state_dict()
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in state.items()})
    return theirs, ours


def randn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def tensors(lib, arrays, grad):
    """Tensors of `lib` (torch or minigrad) from numpy arrays (other values pass through); float ones
    require grad when `grad`."""
    return [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") if isinstance(a, np.ndarray) else a
            for a in arrays]


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check(torch, call, theirs, ours, arrays, dtype, grad=True):
    """call(module, *inputs) with torch and with minigrad inputs made from `arrays`: the outputs (a tensor
    or a tuple, None kept) agree; with `grad`, so do the gradients of sum(out * g) (g random) of every
    float input and every parameter. Returns our outputs."""
    tol = tolerance(dtype)
    t_in, m_in = tensors(torch, arrays, grad), tensors(minigrad, arrays, grad)
    t_out, m_out = _outputs(call(theirs, *t_in)), _outputs(call(ours, *m_in))
    assert len(t_out) == len(m_out)
    for t, m in zip(t_out, m_out):
        assert (t is None) == (m is None)
        if t is not None:
            assert m.dtype == minigrad.float64 if dtype == np.float64 else m.dtype == minigrad.float32
            np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), **tol)
    if not grad:
        return m_out
    gs = [None if t is None else RNG.standard_normal(tuple(t.shape)).astype(dtype) for t in t_out]
    sum(((t * torch.tensor(g)).sum() for t, g in zip(t_out, gs) if g is not None)).backward()
    sum(((m * minigrad.tensor(g)).sum() for m, g in zip(m_out, gs) if g is not None)).backward()
    for t, m in zip(t_in, m_in):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            assert (t.grad is None) == (m.grad is None)
            if t.grad is not None:
                np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), **tol)
    ours_params = dict(ours.named_parameters())
    theirs_params = dict(theirs.named_parameters())
    assert list(ours_params) == list(theirs_params)
    for name, p in theirs_params.items():
        q = ours_params[name]
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), err_msg=name, **tol)
    return m_out
