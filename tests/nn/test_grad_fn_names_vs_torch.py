"""The node each op's output carries (grad_fn's name and, where cheap, the edges under it), against PyTorch's,
with the values, gradients and second derivatives the renamed nodes must keep."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as MF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _libs():
    return ((torch, TF, torch.nn), (minigrad, MF, nn))


def _chain(t, depth=2):
    """grad_fn's name and, below it, the names of its edges to `depth` levels."""
    def walk(node, d):
        if node is None:
            return None
        name = type(node).__name__
        if d == 0 or name == "AccumulateGrad":
            return name
        return (name, tuple(walk(n, d - 1) for n, _ in node.next_functions))
    return walk(t.grad_fn, depth)


def _np(t):
    return None if t is None else np.array(t.detach().resolve_conj().clone().tolist())


def _run(lib, make, arrays, depth):
    """make(lib, F, nn) -> fn of tensors: the output's node chain, value, gradient and a second derivative."""
    T, F, N = lib
    xs = [T.tensor(a, requires_grad=a.dtype.kind in "fc") for a in arrays]
    out = make(T, F, N)(*xs)
    wanted = [x for x in xs if x.requires_grad]
    w = T.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=out.dtype)
    sq = (out * out.conj()).real if out.dtype.is_complex else out * out
    loss = (out * w).sum() + sq.sum() / 3  # (a square: a second derivative even of linear ops' inputs)
    loss = loss.real if loss.dtype.is_complex else loss
    gs = T.autograd.grad(loss, wanted, create_graph=True, allow_unused=True)
    live = [(x, g) for x, g in zip(wanted, gs) if g is not None and g.requires_grad]
    gg = []
    if live:
        s = sum(((g * g.conj()).real if g.dtype.is_complex else g * g).sum() for _, g in live)
        gg = T.autograd.grad(s, [x for x, _ in live], allow_unused=True)
    return _chain(out, depth), _np(out), [_np(g) for g in gs], [_np(g) for g in gg]


def _check(make, arrays, depth=1, tol=1e-10, second=True):
    want, got = (_run(lib, make, arrays, depth) for lib in _libs())
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
    for a, b in zip(got[2] + (got[3] if second else []), want[2] + (want[3] if second else [])):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert len(got[3]) == len(want[3]) or not second


R = np.random.default_rng(0)


def rn(*shape):
    return R.standard_normal(shape)


def cn(*shape):
    return rn(*shape) + 1j * rn(*shape)


def test_circular_pad_is_copy_slices():
    for k, shape in ((1, (2, 3, 5)), (2, (1, 2, 4, 5)), (3, (1, 2, 3, 4, 5))):
        _check(lambda T, F, N, k=k: getattr(N, f"CircularPad{k}d")(1), [rn(*shape)], depth=0)
        _check(lambda T, F, N, k=k: (lambda x: F.pad(x, (1, 2) * k, mode="circular")), [rn(*shape)], depth=0)


@pytest.mark.parametrize("form", ["elu_inplace", "selu_inplace", "celu_inplace", "elu_", "selu_", "celu_"])
def test_in_place_elus_are_backward1(form):
    def make(T, F, N):
        op = {"elu_inplace": lambda t: F.elu(t, 0.8, inplace=True), "selu_inplace": lambda t: F.selu(t, inplace=True),
              "celu_inplace": lambda t: F.celu(t, 0.7, inplace=True), "elu_": F.elu_, "selu_": F.selu_,
              "celu_": lambda t: F.celu_(t, 1.3)}[form]
        return lambda x: op(x * 1)
    _check(make, [rn(3, 4)], depth=0, tol=1e-7)  # (minigrad's in-place ops record a copy under the node)


def test_in_place_elu_with_a_negative_slope_refuses_backward():
    errors = []
    for T, F, _ in _libs():
        y = F.elu(T.tensor(rn(4), requires_grad=True) * 1, -0.5, inplace=True)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        errors.append(str(e.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("mode", ["GRU", "RNN", "LSTM"])
def test_batch_first_output_transpose(mode):
    torch.manual_seed(0)
    tm = getattr(torch.nn, mode)(2, 3, num_layers=2, batch_first=True).double()
    om = getattr(nn, mode)(2, 3, num_layers=2, batch_first=True).double()
    om.load_state_dict({k: minigrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    _check(lambda T, F, N: (lambda x: (tm if T is torch else om)(x)[0]), [rn(2, 4, 2)], depth=0, tol=1e-8)


@pytest.mark.parametrize("n", [1, 3])
def test_prelu_is_prelu_kernel(n):
    _check(lambda T, F, N: (lambda x, w: F.prelu(x, w)), [rn(2, 3, 4), np.abs(rn(n)) * 0.3], depth=2)


@pytest.mark.parametrize("k", [2, 3])
def test_max_unpool_node(k):
    def make(T, F, N):
        pool = getattr(F, f"max_pool{k}d")
        unpool = getattr(F, f"max_unpool{k}d")

        def f(x):
            y, idx = pool(x, 2, return_indices=True)
            return unpool(y, idx, 2)
        return f
    # (PyTorch's gradient of the pooled input is linear and yet records a graph: zeros as its derivative)
    _check(make, [rn(*(1, 2) + (4,) * k)], depth=1, second=False)


def test_pairwise_distance_is_norm_backward1():
    for p in (1.0, 2.0, 3.0):  # (below: PyTorch's scalar add is AddBackward1)
        _check(lambda T, F, N, p=p: (lambda a, b: F.pairwise_distance(a, b, p)), [rn(3, 4), rn(3, 4)], depth=0)


@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm_ends_in_view_of_batch_norm(affine):
    def make(T, F, N):
        if affine:
            return lambda x, w, b: F.instance_norm(x, weight=w, bias=b)
        return lambda x: F.instance_norm(x)
    arrays = [rn(2, 3, 5)] + ([rn(3), rn(3)] if affine else [])
    # (torch's batch_norm node has edges for the absent weight and bias: None; minigrad's has none)
    _check(make, arrays, depth=2 if affine else 1, tol=1e-8)


def test_vdot_node():
    _check(lambda T, F, N: T.vdot, [cn(4), cn(4)], depth=1)
    _check(lambda T, F, N: T.vdot, [rn(4), rn(4)], depth=1)


@pytest.mark.parametrize("mode,padding", [("bilinear", "zeros"), ("bilinear", "border"), ("nearest", "reflection")])
def test_grid_sample_node(mode, padding):
    _check(lambda T, F, N: (lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False)),
           [rn(2, 2, 4, 5), rn(2, 3, 3, 2) * 0.9], depth=1, tol=1e-8, second=mode != "nearest")


def test_affine_grid_node():
    _check(lambda T, F, N: (lambda th: F.affine_grid(th, (2, 1, 3, 4), align_corners=False)), [rn(2, 2, 3)], depth=1)


def test_kron_ends_in_unsafe_view():
    _check(lambda T, F, N: T.kron, [cn(2, 2), cn(2, 3)], depth=1)
    _check(lambda T, F, N: T.kron, [rn(3), rn(2, 2)], depth=0)
