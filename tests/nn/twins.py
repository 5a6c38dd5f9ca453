"""A torch module and its minigrad twin from the same weights: run both, compare outputs and gradients.

Used by test_multihead_attention.py and test_transformer.py (pytest puts this folder on sys.path); `both` runs a
script written once against a `torch`-like module on PyTorch, then on minigrad from PyTorch's initial state
(test_dl_scripts2.py, test_nlp_scripts.py)."""
import numpy as np

import minigrad
from tests.fuzz_settings import fuzz_rng

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


SCRIPT_TOL = dict(rtol=1e-9, atol=1e-10)


def numpy_state(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def grads(model):
    """The gradients a script's model has, as clones (a script's result to compare)."""
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def start(model, init):
    """`model` in float64; with `init` (PyTorch's initial state), loaded from it, else recorded."""
    model.double()
    if init is None:
        return numpy_state(model)
    model.load_state_dict({k: minigrad.tensor(v) for k, v in init.items()})
    return init


def both(torch, script, tol=SCRIPT_TOL, **kw):
    """Runs script(torch) and script(minigrad) from the same initial state; every value they return agrees.
    PyTorch runs on one thread: its reductions' order, so its last bits, follow its thread count, which the
    tests a worker ran before may have set (a bias before a BatchNorm, whose gradient is rounding noise that
    Adam scales up to steps of size lr, moved by 6e-9 between one thread and two)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        theirs = script(torch, None, **kw)
    finally:
        torch.set_num_threads(threads)
    ours = script(minigrad, theirs["init"], **kw)
    assert list(ours) == list(theirs)
    for k, t in theirs.items():
        if k != "init":
            agree(ours[k], t, k, tol)
    return theirs, ours


def agree(m, t, where, tol=SCRIPT_TOL):
    """Ours `m` equals theirs `t`: tensors (dtype and shape too) and floats closely, containers item by
    item, anything else exactly."""
    if hasattr(t, "detach"):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], where
        assert tuple(m.shape) == tuple(t.shape), where
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), err_msg=where, **tol)
    elif isinstance(t, (list, tuple)):
        assert isinstance(m, (list, tuple)) and len(m) == len(t), where
        for i, (a, b) in enumerate(zip(m, t)):
            agree(a, b, f"{where}[{i}]", tol)
    elif isinstance(t, dict):
        assert list(m) == list(t), where
        for k in t:
            agree(m[k], t[k], f"{where}[{k}]", tol)
    elif isinstance(t, (float, np.ndarray)):
        np.testing.assert_allclose(m, t, err_msg=where, **tol)
    else:
        assert m == t, where


# ---- one nn.functional call on both (test_functional_fuzz2.py, test_functional_fuzz3.py) ----------------------
def outcome(lib, fn, arrays, grad=True):
    """('error', type name, first line) or ('ok', dtype, shape, grad_fn name, values, input gradients)."""
    import nn.functional as F
    import torch  # (the callers skip without it)

    mod = torch if lib == "torch" else minigrad
    funcs = torch.nn.functional if lib == "torch" else F
    ts = [mod.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    try:
        y = fn(funcs, *ts)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return "error", type(e).__name__, str(e).split("\n")[0].replace("torch.Size", "minigrad.Size")
    grads = []
    if y.requires_grad:
        w = np.random.default_rng(0).standard_normal(tuple(y.shape))
        (y * mod.tensor(w)).sum().backward()
        grads = [None if t.grad is None else t.grad.numpy() for t in ts if t.requires_grad]
    name = None if y.grad_fn is None else type(y.grad_fn).__name__
    return "ok", str(y.dtype).split(".")[-1], tuple(y.shape), name, y.detach().numpy(), grads


def same(fn, *arrays, grad=True, grad_fn=True):
    """fn(F, *tensors) on minigrad as on PyTorch: the same error, or the same dtype, shape, (grad_fn name,) values
    and input gradients."""
    ours, theirs = outcome("minigrad", fn, arrays, grad), outcome("torch", fn, arrays, grad)
    k = 4 if grad_fn else 3
    assert ours[:k] == theirs[:k], (ours[:k], theirs[:k])
    if ours[0] == "ok":
        np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-10, atol=1e-12)
        assert len(ours[5]) == len(theirs[5])
        for a, b in zip(ours[5], theirs[5]):
            assert (a is None) == (b is None)
            if a is not None:
                assert a.shape == b.shape
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def rand(*shape):
    return np.random.default_rng(sum(shape) + len(shape)).standard_normal(shape)


def fuzz_rand(*shape):
    """rand, with MINIGRAD_FUZZ_SEED mixed in when it is set: the fuzzers' inputs."""
    return fuzz_rng(sum(shape) + len(shape)).standard_normal(shape)
