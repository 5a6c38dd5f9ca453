"""Gradient checkpointing and the saved-tensor hooks it is built on."""
import threading
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.graph import save_on_cpu, saved_tensors_hooks
from minigrad.memory import saved_tensors_report
from minigrad.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

D = 8  # batch and width (square matmuls)

# The calls here leave use_reentrant unsaid, as most scripts do; its warning has its own test.
pytestmark = pytest.mark.filterwarnings("ignore:.*use_reentrant parameter should be passed:UserWarning")


def dropout(x, p):
    """Dropout from minigrad ops and minigrad.random (no nn)."""
    mask = mg.rand(*x.shape, dtype=x.dtype) > p
    return x * mask / (1 - p)


def block(h, w, b, p=0.25):
    return dropout((h @ w + b).tanh(), p) * 1.5 + h


def params(dtype=mg.float32, n=3, seed=0):
    mg.manual_seed(seed)
    x = mg.randn(D, D, dtype=dtype, requires_grad=True)
    ws = [(mg.randn(D, D, dtype=dtype) * 0.4).requires_grad_() for _ in range(n)]
    bs = [mg.randn(D, dtype=dtype, requires_grad=True) for _ in range(n)]
    return [x, *ws, *bs]


def model(ps, ck, **ckw):
    n = (len(ps) - 1) // 2
    x, ws, bs = ps[0], ps[1:1 + n], ps[1 + n:]
    h = x
    for w, b in zip(ws, bs):
        h = checkpoint(block, h, w, b, p=0.25, **ckw) if ck else block(h, w, b, p=0.25)
    return (h ** 2).mean()


def grads(ps, ck, how="backward", **ckw):
    mg.manual_seed(123)  # the dropout masks
    loss = model(ps, ck, **ckw)
    if how == "grad":
        gs = mg.autograd.grad(loss, ps)
    else:
        for p in ps:
            p.grad = None
        loss.backward()
        gs = [p.grad for p in ps]
    return loss.item(), [g.numpy().copy() for g in gs]


def same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


# ---- checkpoint ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [mg.float32, mg.float64])
@pytest.mark.parametrize("how", ["backward", "grad"])
def test_gradients_bit_identical_with_dropout(dtype, how):
    ps = params(dtype)
    l0, g0 = grads(ps, False, how)
    l1, g1 = grads(ps, True, how)
    assert l0 == l1
    assert same(g0, g1)
    assert g0[0].dtype == dtype.np


def test_rng_state_matters_and_is_restored():
    ps = params()
    _, g0 = grads(ps, False)
    # without preserve_rng_state the recomputed masks differ: the test above is sensitive
    _, g_bad = grads(ps, True, preserve_rng_state=False)
    assert not same(g0, g_bad)
    # the recomputation rewinds the generator and puts it back: the stream after backward is the
    # same as without checkpointing
    grads(ps, False)
    after_plain = mg.rand(4).numpy()
    grads(ps, True)
    after_ck = mg.rand(4).numpy()
    assert np.array_equal(after_plain, after_ck)


def test_recomputes_lazily_once_and_keeps_nothing_inside():
    calls = []

    def f(x, w):
        calls.append(1)
        return ((x @ w).tanh() @ w).sigmoid()

    x = mg.randn(D, D, requires_grad=True)
    w = mg.randn(D, D, requires_grad=True)
    y = checkpoint(f, x, w)
    plain = f(x, w)
    assert len(calls) == 2
    # the checkpointed graph keeps only its inputs (the leaves x and w): nothing of f's inside
    assert saved_tensors_report(y).total_bytes == 0
    assert saved_tensors_report(plain).total_bytes > 0
    assert (y.grad_fn.name(), y.grad_fn._saved[0].nbytes()) == ("SigmoidBackward0", 0)
    y.sum().backward()
    assert len(calls) == 3  # one recomputation for the whole function
    gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    plain.sum().backward()
    assert np.array_equal(gx, x.grad.numpy()) and np.array_equal(gw, w.grad.numpy())


def test_kwargs_and_non_tensor_args_pass_through():
    def f(x, n, *, scale, shift=0.0):
        for _ in range(n):
            x = (x * scale).tanh()
        return x + shift

    x = mg.randn(D, D, requires_grad=True)
    s = mg.randn(D, requires_grad=True)
    out = checkpoint(f, x, 3, scale=s, shift=0.5).sum()
    gx, gs = mg.autograd.grad(out, [x, s])
    rx, rs = mg.autograd.grad(f(x, 3, scale=s, shift=0.5).sum(), [x, s])
    assert np.array_equal(gx.numpy(), rx.numpy()) and np.array_equal(gs.numpy(), rs.numpy())


def test_inputs_that_do_not_require_grad():
    x = mg.randn(D, D)  # data: no grad
    w = mg.randn(D, D, requires_grad=True)
    idx = mg.tensor([0, 2, 4])  # an integer tensor input
    f = lambda x, w, idx: (x @ w).relu()[idx].sum()
    out = checkpoint(f, x, w, idx)
    (gw,) = mg.autograd.grad(out, [w])
    (rw,) = mg.autograd.grad(f(x, w, idx), [w])
    assert np.array_equal(gw.numpy(), rw.numpy())
    # nothing requires grad: no graph, no error
    y = checkpoint(lambda a: a * 2, x)
    assert y.grad_fn is None and not y.requires_grad


def test_nested_checkpoints():
    def inner(h, w):
        return (h @ w).tanh() * h

    def outer(h, w1, w2):
        h = checkpoint(inner, h, w1)
        h = (h + 1).sigmoid()
        return checkpoint(inner, h, w2) ** 2

    ps = params(n=2)
    x, w1, w2 = ps[0], ps[1], ps[2]
    loss_ck = checkpoint(outer, x, w1, w2).mean()
    # the same function without any checkpoint
    h = inner(x, w1)
    h = (h + 1).sigmoid()
    loss = (inner(h, w2) ** 2).mean()
    # the outer checkpoint keeps nothing of outer's inside, not even the inner checkpoints' inputs
    assert saved_tensors_report(loss_ck).total_bytes == 0
    g_ck = mg.autograd.grad(loss_ck, [x, w1, w2])
    g = mg.autograd.grad(loss, [x, w1, w2])
    assert same([a.numpy() for a in g_ck], [a.numpy() for a in g])


def test_retain_graph_and_double_backward():
    ps = params(mg.float64, n=2)
    mg.manual_seed(5)
    loss_ck = model(ps, True)
    mg.manual_seed(5)
    loss = model(ps, False)
    for _ in range(2):  # a second backward through the retained graph
        g_ck = mg.autograd.grad(loss_ck, ps, retain_graph=True)
        g = mg.autograd.grad(loss, ps, retain_graph=True)
        assert same([a.numpy() for a in g_ck], [a.numpy() for a in g])
    # create_graph: the gradient itself is differentiable through the recomputed tensors
    (gx_ck,) = mg.autograd.grad(loss_ck, [ps[0]], create_graph=True)
    (gx,) = mg.autograd.grad(loss, [ps[0]], create_graph=True)
    hvp_ck = mg.autograd.grad((gx_ck ** 2).sum(), ps)
    hvp = mg.autograd.grad((gx ** 2).sum(), ps)
    for a, b in zip(hvp_ck, hvp):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_backward_twice_is_the_usual_error():
    x = mg.randn(D, D, requires_grad=True)
    y = checkpoint(lambda a: (a * a).exp().sum(), x)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_input_modified_in_place_after_forward_is_caught():
    x = mg.randn(D, D, requires_grad=True)
    h = x * 1.0
    y = checkpoint(lambda a: (a * a).sum(), h)
    with mg.no_grad():
        h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_nondeterministic_shape_is_an_error():
    calls = []

    def f(x):
        calls.append(1)
        n = D if len(calls) == 1 else D // 2  # the recomputation takes a different path
        return (x[:n] * x[:n]).sum()

    x = mg.randn(D, D, requires_grad=True)
    y = checkpoint(f, x)
    with pytest.raises(CheckpointError, match=r"not deterministic.*index 0.*\(8, 8\).*\(4, 8\)"):
        y.backward()


def test_nondeterministic_count_is_an_error():
    calls = []

    def f(x):
        calls.append(1)
        y = x.exp()
        return (y * y).sum() if len(calls) == 1 else y.sum()

    x = mg.randn(D, requires_grad=True)
    with pytest.raises(CheckpointError, match="not deterministic.*saved 3 tensors.*recomputation saved 1"):
        checkpoint(f, x).backward()


def test_no_grad_and_reentrant():
    x = mg.randn(D, requires_grad=True)
    with mg.no_grad():
        y = checkpoint(lambda a: a.exp(), x)
    assert y.grad_fn is None
    checkpoint(lambda a: a.exp(), x, use_reentrant=True).sum().backward()  # the same gradient as without it
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()), rtol=1e-6)


@pytest.mark.parametrize("which", ["checkpoint", "checkpoint_sequential"])
def test_unsaid_use_reentrant_warns_as_pytorch_and_runs(which):
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint as tck

    def run(lib, ck_fn, x):
        fns = [lambda a: a.exp(), lambda a: a * 2]
        with pytest.warns(UserWarning) as record:
            if which == "checkpoint":
                y = ck_fn(lambda a: fns[1](fns[0](a)), x)
            else:
                y = ck_fn(fns, 2, x)
        y.sum().backward()
        texts = [str(w.message) for w in record if "use_reentrant" in str(w.message)]
        assert len(texts) == 1
        return texts[0], x.grad.numpy(), record[0].filename

    data = np.linspace(-1, 1, D, dtype=np.float32)
    ours = run(mg, getattr(mg.utils.checkpoint, which), mg.tensor(data, requires_grad=True))
    theirs = run(torch, getattr(tck, which), torch.tensor(data, requires_grad=True))
    assert ours[0] == theirs[0]
    assert ours[2] == __file__  # the warning points at the caller's line
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(lambda a: a.exp(), mg.tensor(data, requires_grad=True), use_reentrant=False).sum().backward()


def test_checkpoint_sequential():
    ps = params(n=4)
    x, ws, bs = ps[0], ps[1:5], ps[5:]
    fns = [(lambda h, w=w, b=b: block(h, w, b)) for w, b in zip(ws, bs)]

    def run(ck, segments=2):
        mg.manual_seed(9)
        out = checkpoint_sequential(fns, segments, x) if ck else _seq(fns, x)
        return [g.numpy() for g in mg.autograd.grad((out ** 2).mean(), ps)]

    ref = run(False)
    for segments in (1, 2, 3, 4):
        assert same(run(True, segments), ref)
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential(fns, 5, x)


def _seq(fns, x):
    for f in fns:
        x = f(x)
    return x


# ---- saved-tensor hooks ------------------------------------------------------------------------
def test_hooks_pack_once_unpack_many():
    packed, unpacked = [], []

    def pack(t):
        packed.append(t)
        return t.detach()

    def unpack(t):
        unpacked.append(t)
        return t

    x = mg.randn(3, requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = x.pow(3)  # saves x once
    assert len(packed) == 1 and not unpacked
    first, second = y.grad_fn._saved_self, y.grad_fn._saved_self
    assert len(unpacked) == 2 and np.array_equal(first.detach().numpy(), second.detach().numpy())
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert len(packed) == 1 and len(unpacked) == 4
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * x.detach().numpy() ** 2, rtol=1e-6)


def test_hooks_nest_innermost_wins():
    log = []
    outer = saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t)
    inner = saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t)
    x = mg.randn(3, requires_grad=True)
    with outer:
        x.exp()
        with inner:
            x.exp()
        x.exp()
    x.exp()
    assert log == ["outer", "inner", "outer"]


def test_hooks_are_thread_local():
    log = []
    x = mg.randn(3, requires_grad=True)
    started, go = threading.Event(), threading.Event()

    def other():
        started.set()
        go.wait(5)
        x.exp()  # while the main thread has hooks on

    t = threading.Thread(target=other)
    t.start()
    started.wait(5)
    with saved_tensors_hooks(lambda s: log.append(threading.get_ident()) or s, lambda s: s):
        go.set()
        t.join(5)
        x.exp()
    assert log == [threading.get_ident()]


@pytest.mark.parametrize("dtype", [mg.float32, mg.float64])
def test_save_on_cpu_round_trip_identical(dtype):
    ps = params(dtype)
    _, ref = grads(ps, False)
    with save_on_cpu():
        _, got = grads(ps, False)
    assert same(ref, got)


def test_hooks_keep_double_backward_working():
    # the unpacked tensor is put back in the original's place in the graph, as PyTorch does, so
    # a hook may store a detached copy (or a plain array) and create_graph still works
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = mg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    for hooks in (saved_tensors_hooks(lambda t: t.detach(), lambda t: t), save_on_cpu()):
        with hooks:
            y = ((x ** 3) * w).exp().sum()
        gx, gw = mg.autograd.grad(y, [x, w], create_graph=True)
        hx, hw = mg.autograd.grad((gx + gw).sum(), [x, w])
        y = ((x ** 3) * w).exp().sum()
        gx2, gw2 = mg.autograd.grad(y, [x, w], create_graph=True)
        rx, rw = mg.autograd.grad((gx2 + gw2).sum(), [x, w])
        assert np.array_equal(hx.numpy(), rx.numpy()) and np.array_equal(hw.numpy(), rw.numpy())


def test_unpack_must_return_a_tensor():
    x = mg.randn(3, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.array, lambda a: a):
        y = x.exp().sum()
    with pytest.raises(TypeError, match="unpack hook must return a Tensor"):
        y.backward()


def test_rng_snapshot_kept_only_when_the_function_draws():
    def frame_of(t):
        return next(s.packed.frame for s in t.grad_fn._saved if s is not None)

    x = mg.randn(D, requires_grad=True)
    y = checkpoint(lambda a: a.exp(), x)  # no random numbers: nothing to replay
    assert frame_of(y).rng is None
    z = checkpoint(lambda a: dropout(a, 0.5).exp(), x)
    assert frame_of(z).rng is not None
