"""The activations beyond the GPT's (silu ... softmin) and their modules, against PyTorch: values, gradients,
second derivatives, dtypes, grad_fn names and the errors for integer input."""
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(16)

# (name, kwargs): each F.<name>(x, **kwargs) against torch.nn.functional.<name>
CASES = [
    ("silu", {}), ("mish", {}), ("elu", {}), ("elu", {"alpha": 0.3}), ("selu", {}), ("celu", {}),
    ("celu", {"alpha": 2.5}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("leaky_relu", {"negative_slope": -0.5}), ("relu6", {}), ("hardtanh", {"min_val": -2.0, "max_val": 0.5}),
    ("hardswish", {}), ("hardsigmoid", {}), ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 3.0}),
    ("softplus", {"beta": 0.5}), ("softsign", {}), ("logsigmoid", {}), ("softmin", {"dim": 1}),
    ("softmin", {"dim": 0}),
]
SMOOTH = {"silu", "mish", "elu", "selu", "celu", "softplus", "softsign", "logsigmoid", "softmin"}


def data(shape, dtype, scale=4.0):
    x = RNG.standard_normal(shape) * scale
    x[np.abs(np.abs(x) - 3.0) < 1e-3] += 0.01  # away from the kinks at +-3 (hardswish, hardsigmoid)
    x[np.abs(x) < 1e-3] += 0.01
    return x.astype(dtype)


def ids(cases):
    return [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in cases]


@pytest.mark.parametrize("name,kw", CASES, ids=ids(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_gradients_dtype_and_node_vs_torch(torch, name, kw, dtype):
    x = data((4, 7), dtype)
    x[0, :3] = [40.0, -40.0, 0.0]  # the overflow-prone ends, and 0
    ours = minigrad.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    y, ty = getattr(F, name)(ours, **kw), getattr(torch.nn.functional, name)(theirs, **kw)
    assert y.dtype == ours.dtype and y.shape == tuple(ty.shape)
    assert y.grad_fn.name() == ty.grad_fn.name()
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(y.array, ty.detach().numpy(), **tol)
    g = RNG.standard_normal(y.shape).astype(dtype)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    assert ours.grad.dtype == ours.dtype
    if name == "hardsigmoid" and dtype == np.float64:  # PyTorch's float64 backward multiplies by a float32 1/6
        tol = dict(rtol=1e-7, atol=1e-13)
    np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), **tol)


# (softmin, softmax, log_softmax of 0-d: one node as PyTorch's; dim 1 is out of range there)
ZERO_D = [(n, kw) for n, kw in CASES if kw.get("dim") != 1] + [("softmax", {"dim": 0}), ("log_softmax", {"dim": -1})]


@pytest.mark.parametrize("name,kw", ZERO_D, ids=ids(ZERO_D))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zero_dim_input_values_and_gradients_vs_torch(torch, name, kw, dtype):
    # a 0-d input (a scalar parameter through softplus, as GP hyperparameters are) gives numpy scalars from
    # ufuncs, which the in-place steps of these activations cannot write into
    for v in [-40.0, -3.5, -0.7, 0.0, 0.7, 3.5, 40.0]:
        ours = minigrad.tensor(v, dtype=getattr(minigrad, np.dtype(dtype).name), requires_grad=True)
        theirs = torch.tensor(v, dtype=getattr(torch, np.dtype(dtype).name), requires_grad=True)
        y, ty = getattr(F, name)(ours, **kw), getattr(torch.nn.functional, name)(theirs, **kw)
        assert y.shape == () and y.dtype == ours.dtype and y.grad_fn.name() == ty.grad_fn.name()
        (g,) = minigrad.autograd.grad(y, ours, create_graph=True)
        (tg,) = torch.autograd.grad(ty, theirs, create_graph=True)
        y.backward()
        ty.backward()
        assert g.shape == () and ours.grad.shape == ()
        if name in ("softmin", "softmax", "log_softmax"):
            assert type(g.grad_fn).__name__ == type(tg.grad_fn).__name__
        np.testing.assert_allclose(y.item(), ty.item(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(ours.grad.item(), theirs.grad.item(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(g.item(), tg.item(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,kw", CASES, ids=ids(CASES))
def test_gradcheck_and_gradgradcheck(name, kw):
    x = minigrad.tensor(data((3, 4), np.float64, scale=2.0), requires_grad=True)
    f = lambda x: getattr(F, name)(x, **kw)  # noqa: E731
    assert gradcheck(f, (x,))
    if name == "hardsigmoid":  # PyTorch has no derivative of hardsigmoid's backward, and says so: as minigrad
        with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is not implemented"):
            gradgradcheck(f, (x,))
    elif name != "softmin":  # softmin is softmax(-x), and F.softmax's fused backward is once-differentiable
        assert gradgradcheck(f, (x,))


@pytest.mark.parametrize("name", ["silu", "mish", "softplus", "logsigmoid", "elu"])
def test_second_derivative_vs_torch(torch, name):
    x = data((6,), np.float64, scale=2.0)
    ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (g,) = minigrad.autograd.grad(getattr(F, name)(ours).sum(), ours, create_graph=True)
    g.sum().backward()
    (tg,) = torch.autograd.grad(getattr(torch.nn.functional, name)(theirs).sum(), theirs, create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(ours.grad.array, theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardswish", "hardsigmoid",
                                  "softplus", "logsigmoid"])
def test_integer_input_raises_like_torch(torch, name):
    with pytest.raises(NotImplementedError) as theirs:
        getattr(torch.nn.functional, name)(torch.tensor([1, 2]))
    with pytest.raises(NotImplementedError) as ours:
        getattr(F, name)(minigrad.tensor([1, 2]))
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_relu6_of_integers_stays_integer(torch):
    x = [-3, 2, 9]
    assert F.relu6(minigrad.tensor(x)).tolist() == torch.nn.functional.relu6(torch.tensor(x)).tolist()
    assert F.relu6(minigrad.tensor(x)).dtype == minigrad.int64


def test_celu_alpha_zero_and_hardtanh_bounds(torch):
    with pytest.raises(RuntimeError, match="alpha cannot be 0"):
        F.celu(minigrad.randn(3), alpha=0.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(minigrad.randn(3), 1.0, -1.0)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.silu([1.0, 2.0])


MODULES = [
    ("SiLU", (), {}), ("Mish", (), {}), ("ELU", (0.5,), {}), ("SELU", (), {}), ("CELU", (), {"alpha": 1.5}),
    ("LeakyReLU", (0.1,), {}), ("ReLU6", (), {}), ("Hardtanh", (-2.0, 0.5), {}), ("Hardswish", (), {}), ("Hardsigmoid", (), {}),
    ("Softplus", (2.0, 5.0), {}), ("Softsign", (), {}), ("LogSigmoid", (), {}), ("Softmin", (), {"dim": -1}),
]


@pytest.mark.parametrize("name,args,kw", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch(torch, name, args, kw):
    x = data((3, 5), np.float32)
    m, tm = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    np.testing.assert_allclose(m(minigrad.tensor(x)).array, tm(torch.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)
    assert repr(m) == repr(tm)
    assert list(m.state_dict()) == []


def test_module_bad_arguments():
    with pytest.raises(TypeError, match="positional arguments"):
        nn.ELU(1.0, False, 3)
    with pytest.raises(TypeError, match=r"^ELU.__init__\(\) got an unexpected keyword argument 'beta'$"):
        nn.ELU(beta=1.0)


def special_values(dtype, n=1000):
    x = RNG.standard_normal(n).astype(dtype) * 4
    tiny = np.finfo(dtype).smallest_subnormal
    x[:10] = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, tiny, -tiny, 30.0, -120.0]
    g = RNG.standard_normal(n).astype(dtype)
    g[::7], g[1::7] = np.nan, np.inf
    return x, g


@pytest.mark.parametrize("slope", [0.01, 0.2, 1.0, 1e-50, 0.0, -0.5, 1.5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_leaky_relu_bits_at_every_slope_match_torch(torch, slope, dtype):
    # 0 < slope <= 1 (1e-50: 0 in float32) takes a max, not a where: PyTorch's bits, NaN, infinities and -0.0
    # included, and its gradient (g, or g slope, also for NaN and infinite g)
    x, g = special_values(dtype)
    a, t = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = F.leaky_relu(a, slope), torch.nn.functional.leaky_relu(t, slope)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    assert y.grad_fn.name() == ty.grad_fn.name() and y.dtype == a.dtype and a.grad.dtype == a.dtype
    assert np.array_equal(y.array.view(np.uint8), ty.detach().numpy().view(np.uint8))
    assert np.array_equal(a.grad.array, t.grad.numpy(), equal_nan=True)
    assert np.array_equal(y.array, np.where(x > 0, x, x * dtype(slope)), equal_nan=True)


def _assert_like_torch_at_special_values(y, ty, a, dtype):
    """y (of input a) against PyTorch's ty: node, dtypes, the same NaNs, signs and infinities, finite values
    within 4 ulp."""
    ours, theirs = y.array, ty.detach().numpy()
    assert y.grad_fn.name() == ty.grad_fn.name() and y.dtype == a.dtype and a.grad.dtype == a.dtype
    nan = np.isnan(theirs)
    assert np.array_equal(np.isnan(ours), nan) and np.array_equal(np.signbit(ours[~nan]), np.signbit(theirs[~nan]))
    finite = np.isfinite(theirs)
    assert np.array_equal(ours[~finite], theirs[~finite], equal_nan=True)
    assert np.all(np.abs(ours[finite] - theirs[finite]) <= 4 * np.spacing(np.abs(theirs[finite]).astype(dtype)))


@pytest.mark.parametrize("name,kw", [("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 3.0}),
                                     ("softplus", {"beta": 0.5, "threshold": 100.0}), ("logsigmoid", {}), ("mish", {})])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softplus_forms_at_special_values_match_torch(torch, name, kw, dtype):
    # PyTorch's forms, log(1 + e^z) on numpy's vectorized exp and log1p: a few ulp from PyTorch's values (no
    # branch of its own: where e^z overflows, past a threshold of 100, PyTorch's inf too), the same infinities,
    # NaNs and signs; gradients and nodes as PyTorch's
    x, g = special_values(dtype, 4000)
    x[10:20] = [20.0, 20.5, 3.0, 1.5, 6.0, 89.0, 178.0, 200.0, -89.0, -746.0]
    a, t = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = getattr(F, name)(a, **kw), getattr(torch.nn.functional, name)(t, **kw)
    g[np.isnan(x) | np.isinf(x)] = 1.0  # (PyTorch's backward at infinite x is not a gradient to compare)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    _assert_like_torch_at_special_values(y, ty, a, dtype)
    fin = np.isfinite(x) & ~np.isnan(t.grad.numpy())  # (past 88 in float32 PyTorch's backward is inf / inf)
    np.testing.assert_allclose(a.grad.array[fin], t.grad.numpy()[fin], rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", ["softplus", "mish"])
def test_softplus_forms_of_large_inputs_warn_nothing(torch, name):
    # e^x overflows float32 past 88: softplus' threshold picks x there and mish's tanh is 1, as in PyTorch,
    # which prints no warning; neither may numpy from inside the op
    x = np.array([100.0, 200.0, 1.0, -100.0], dtype=np.float32)
    a, t = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = getattr(F, name)(a)
        y.sum().backward()
    ty = getattr(torch.nn.functional, name)(t)
    ty.sum().backward()
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(a.grad.array, t.grad.numpy(), rtol=1e-6, atol=1e-30)  # (-100: denormals)


@pytest.mark.parametrize("name,kw", [("elu", {}), ("elu", {"alpha": 0.3}), ("selu", {}), ("celu", {"alpha": 2.5})])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elu_forms_at_special_values_match_torch(torch, name, kw, dtype):
    # the sum of two terms, each 0 where the other counts (no where): PyTorch's signs (elu(-0.0) is -0.0),
    # infinities and NaNs, values within a few ulp (the expm1's), gradients as PyTorch's
    x, g = special_values(dtype, 4000)
    a, t = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = getattr(F, name)(a, **kw), getattr(torch.nn.functional, name)(t, **kw)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    _assert_like_torch_at_special_values(y, ty, a, dtype)
    fin = np.isfinite(x) & np.isfinite(g)
    np.testing.assert_allclose(a.grad.array[fin], t.grad.numpy()[fin], rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-30)


PIECEWISE = [("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 0.5}), ("relu6", {}), ("hardswish", {}),
             ("hardsigmoid", {}), ("elu", {}), ("selu", {}), ("celu", {"alpha": 2.5}), ("softplus", {}),
             ("softplus", {"beta": 2.0, "threshold": 3.0}), ("logsigmoid", {}), ("mish", {})]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name,kw", PIECEWISE, ids=ids(PIECEWISE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_with_inf_and_nan_gradients_matches_torch(torch, name, kw, dtype, create_graph):
    # each piece picked, not multiplied by a 0/1 mask: an inf or NaN gradient where the slope is 0 gives 0; on the
    # arrays, and recorded (create_graph) alike. (No NaN x: PyTorch's piece for it differs between its vectorized
    # loop and the scalar loop of an array's tail.)
    x = np.array([-5.0, -3.0, -2.0, -1.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 5.0, 6.0, 30.0, -30.0, np.inf, -np.inf],
                 dtype)
    x, g = np.repeat(x, 4), np.tile(np.array([np.inf, -np.inf, np.nan, -0.0], dtype), len(x))
    a, t = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ours,) = minigrad.autograd.grad(getattr(F, name)(a, **kw), a, minigrad.tensor(g), create_graph=create_graph)
    (theirs,) = torch.autograd.grad(getattr(torch.nn.functional, name)(t, **kw), t, torch.tensor(g))
    ours, theirs = ours.array, theirs.numpy()
    assert ours.dtype == theirs.dtype
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    num = ~np.isnan(theirs)
    assert np.array_equal(ours[num], theirs[num]) and np.array_equal(np.signbit(ours[num]), np.signbit(theirs[num]))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name,kw", PIECEWISE, ids=ids(PIECEWISE))
def test_backward_on_arrays_and_recorded_agree_with_torch(torch, name, kw, create_graph):
    x, g = special_values(np.float32, 4000)
    fin = np.isfinite(x) & np.isfinite(g)
    a, t = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ours,) = minigrad.autograd.grad(getattr(F, name)(a, **kw), a, minigrad.tensor(g), create_graph=create_graph)
    (theirs,) = torch.autograd.grad(getattr(torch.nn.functional, name)(t, **kw), t, torch.tensor(g))
    np.testing.assert_allclose(ours.array[fin], theirs.numpy()[fin], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_hardswish_forward_is_pytorchs_bit_for_bit_half_rounded_once(torch, dtype):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(5000) * 4).astype(dtype)
    a[:8] = [np.inf, -np.inf, -0.0, 3.0, -3.0, 0.0, 6.0, -2.9]
    x, tx = minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = F.hardswish(x), torch.nn.functional.hardswish(tx)
    assert y.dtype == getattr(minigrad, dtype) and y.grad_fn.name() == ty.grad_fn.name()
    ints = f"u{np.dtype(dtype).itemsize}"
    assert np.array_equal(y.array.view(ints), ty.detach().numpy().view(ints))
    if dtype != "float16":  # (half's backward still rounds at each step: not yet PyTorch's bits)
        g = rng.standard_normal(5000).astype(dtype)
        y.backward(minigrad.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(x.grad.array, tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape", [(1, 65), (8, 256), (300, 1000)])
def test_silu_one_pass_same_bits_as_x_times_sigmoid(shape):
    # the CPU backend's silu (sigmoid and product in one call, on the thread team for the largest) gives the
    # bits of x * sigmoid(x) as two ops, extremes included (below -87: sigmoid's second pass; NaN, infs, -0.0)
    torch = pytest.importorskip("torch")
    a = (RNG.standard_normal(shape) * 30).astype(np.float32)
    a.reshape(-1)[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, -88.5, -103.0, 87.5]
    x = minigrad.tensor(a, requires_grad=True)
    got = F.silu(x)
    with minigrad.no_grad():
        np.testing.assert_array_equal(F.silu(x).numpy(), got.detach().numpy())
    np.testing.assert_array_equal(got.detach().numpy(), (x * minigrad.sigmoid(x)).detach().numpy())
    np.testing.assert_allclose(got.detach().numpy(), torch.nn.functional.silu(torch.tensor(a)).numpy(),
                               rtol=2e-6, atol=1e-30)
    assert got.dtype == minigrad.float32 and got.grad_fn.name() == "SiluBackward0"
