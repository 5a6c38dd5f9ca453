"""minigrad.library.custom_op against torch.library.custom_op: values, gradients, node names, error texts."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _define(lib, ns, name):
    T = lib is torch and torch.Tensor or minigrad.Tensor

    def mysin(x: T) -> T:
        return x.sin()

    mysin.__annotations__ = {"x": T, "return": T}
    return lib.library.custom_op(f"{ns}::{name}", mutates_args=())(mysin)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _backward(ctx, g):
    (x,) = ctx.saved_tensors
    return g * x.cos()


def test_custom_op_values_grads_and_node_name_match_torch():
    a = np.random.default_rng(0).standard_normal(5)
    m_op, t_op = _define(minigrad, "mglib", "sin1"), _define(torch, "mglib", "sin1")
    assert repr(m_op) == repr(t_op) == "<CustomOpDef(mglib::sin1)>"
    mx, tx = minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    my, ty = m_op(mx), t_op(tx)
    np.testing.assert_allclose(my.detach().numpy(), ty.detach().numpy())
    assert my.grad_fn.name() == ty.grad_fn.name() == "GeneratedBackwardFor_mglib_sin1_defaultBackward"
    assert repr(my.grad_fn).split(" object")[0].replace("minigrad", "torch") == repr(ty.grad_fn).split(" object")[0]
    with pytest.raises(RuntimeError) as te:
        ty.sum().backward()
    with pytest.raises(RuntimeError) as me:
        my.sum().backward()
    assert str(me.value) == str(te.value)
    m_op.register_autograd(_backward, setup_context=_setup)
    t_op.register_autograd(_backward, setup_context=_setup)
    m_op(mx).sum().backward()
    t_op(tx).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy())


def _two(lib):
    T = lib is torch and torch.Tensor or minigrad.Tensor

    def two(x: T, y: T, a: float) -> tuple[T, T]:
        return x * y * a, x + y

    return two


def test_string_register_autograd_and_several_outputs_match_torch():
    def setup(ctx, inputs, output):
        ctx.x, ctx.y, ctx.a = inputs

    def backward(ctx, g1, g2):
        return g1 * ctx.y * ctx.a + g2, g1 * ctx.x * ctx.a + g2, None

    grads = []
    for lib in (minigrad, torch):
        op = lib.library.custom_op("mglib::two", mutates_args=())(_two(lib))
        lib.library.register_autograd("mglib::two", backward, setup_context=setup)
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = lib.tensor([3.0, 0.25, -1.0], requires_grad=True)
        o1, o2 = op(x, y, 2.0)
        (o1 * o1).sum().backward(retain_graph=True)
        o2.sum().backward()
        grads.append((o1.detach().numpy(), o2.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for m, t in zip(*grads):
        np.testing.assert_allclose(m, t)


def test_custom_op_argument_errors_match_torch():
    def f(x):
        return x

    for call in (lambda lib: lib.library.custom_op("mglib::bad", f),
                 lambda lib: lib.library.custom_op("mglib::bad")(f),
                 lambda lib: lib.library.custom_op("nonamespace", mutates_args=())(f),
                 lambda lib: lib.library.custom_op("mglib::bad2", mutates_args=())(f)):
        with pytest.raises(Exception) as te:
            call(torch)
        with pytest.raises(te.type) as me:
            call(minigrad)
        assert str(me.value) == str(te.value)


def test_register_kernel_and_fake_are_kept():
    op = _define(minigrad, "mglib", "sin4")
    op.register_fake(lambda x: minigrad.empty_like(x))
    op.register_kernel("cpu")(lambda x: x.sin() * 2)
    x = minigrad.tensor([0.5, 1.0])
    np.testing.assert_allclose(op(x).numpy(), 2 * np.sin([0.5, 1.0]))
    with pytest.raises(ValueError, match="no custom op named 'mglib::missing'"):
        minigrad.library.register_autograd("mglib::missing", lambda ctx, g: g)
