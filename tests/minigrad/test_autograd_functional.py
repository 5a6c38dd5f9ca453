"""minigrad.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against torch.autograd.functional: values,
PyTorch's output structure (tuples for tuple inputs/outputs), create_graph, strict mode and the errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import functional as AF
from minigrad.autograd import gradcheck

RNG = np.random.default_rng(11)
A, B = RNG.standard_normal((3,)), RNG.standard_normal((2, 3))


def f_one(lib):  # one input, one output (a vector)
    return lambda x: (x * x).sin() * x.sum()


def f_two(lib):  # two inputs, two outputs
    return lambda x, w: (lib.tanh(w @ x), (x ** 3).sum() * w)


def f_scalar(lib):
    return lambda x, w: (lib.tanh(w @ x) ** 2).sum() + (x ** 4).sum()


def same(ours, theirs):
    """The same nesting of tuples, shapes and values."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            same(o, t)
        return
    assert isinstance(ours, mg.Tensor) and ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def inputs(lib, *arrays):
    return tuple(lib.tensor(a) for a in arrays)


@pytest.mark.parametrize("case", ["one", "two", "tuple_of_one"])
def test_jacobian_vs_torch(torch, case):
    if case == "one":
        ours = AF.jacobian(f_one(mg), mg.tensor(A))
        theirs = torch.autograd.functional.jacobian(f_one(torch), torch.tensor(A))
    elif case == "two":
        ours = AF.jacobian(f_two(mg), inputs(mg, A, B))
        theirs = torch.autograd.functional.jacobian(f_two(torch), inputs(torch, A, B))
    else:
        ours = AF.jacobian(f_one(mg), (mg.tensor(A),))
        theirs = torch.autograd.functional.jacobian(f_one(torch), (torch.tensor(A),))
    same(ours, theirs)


def test_hessian_vs_torch(torch):
    same(AF.hessian(f_scalar(mg), inputs(mg, A, B)), torch.autograd.functional.hessian(f_scalar(torch),
                                                                                       inputs(torch, A, B)))
    g = lambda lib: lambda x: (x ** 3).sum() * x[0]  # noqa: E731
    same(AF.hessian(g(mg), mg.tensor(A)), torch.autograd.functional.hessian(g(torch), torch.tensor(A)))


@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
def test_products_vs_torch(torch, name):
    ours_fn, theirs_fn = getattr(AF, name), getattr(torch.autograd.functional, name)
    if name == "vjp":
        v = (RNG.standard_normal(2), RNG.standard_normal((2, 3)))
        args = (f_two, (A, B), v)
    elif name == "jvp":
        args = (f_two, (A, B), (RNG.standard_normal(3), RNG.standard_normal((2, 3))))
    else:
        args = (f_scalar, (A, B), (RNG.standard_normal(3), RNG.standard_normal((2, 3))))
    f, xs, v = args
    same(ours_fn(f(mg), inputs(mg, *xs), inputs(mg, *v)), theirs_fn(f(torch), inputs(torch, *xs), inputs(torch, *v)))
    # a lone Tensor in, a lone Tensor out
    g = lambda x: (x ** 3).sum()  # noqa: E731
    vv = RNG.standard_normal(3)
    if name in ("vjp",):
        same(ours_fn(g, mg.tensor(A)), theirs_fn(g, torch.tensor(A)))
    else:
        same(ours_fn(g, mg.tensor(A), mg.tensor(vv)), theirs_fn(g, torch.tensor(A), torch.tensor(vv)))


def test_results_are_detached_unless_create_graph():
    x = mg.tensor(A, requires_grad=True)
    j = AF.jacobian(lambda x: x ** 3, x)
    assert not j.requires_grad
    # create_graph: the jacobian is a function of x again; d/dx sum(J) = d/dx sum(3 x^2) = 6 x
    j = AF.jacobian(lambda x: x ** 3, x, create_graph=True)
    j.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * A)


def test_create_graph_gradcheck():
    x = mg.tensor(A, requires_grad=True)
    assert gradcheck(lambda x: AF.jacobian(lambda y: y.sin() * y.sum(), x, create_graph=True), (x,))
    assert gradcheck(lambda x: AF.hvp(lambda y: (y ** 4).sum(), x, mg.ones(3, dtype=mg.float64),
                                      create_graph=True)[1], (x,))


def test_unused_input_zeros_and_strict(torch):
    f = lambda x, y: x * 2  # noqa: E731
    ours = AF.jacobian(f, inputs(mg, A, A))
    same(ours, torch.autograd.functional.jacobian(f, inputs(torch, A, A)))
    msgs = []
    for lib, fn in ((torch, torch.autograd.functional.jacobian), (mg, AF.jacobian)):
        with pytest.raises(RuntimeError) as e:
            fn(f, inputs(lib, A, A), strict=True)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("call", [
    lambda lib, F: F.vjp(lambda a: (a * 2, a.detach()), lib.ones(3), (lib.ones(3), lib.ones(3)), strict=True),
    lambda lib, F: F.jvp(lambda a: a.detach(), lib.ones(3), lib.ones(3), strict=True),
    lambda lib, F: F.jacobian(lambda a, b: (a * b, b.detach()), (lib.ones(3), lib.ones(3)), strict=True),
    lambda lib, F: F.hessian(lambda a: a.detach().sum(), lib.ones(3), strict=True),
    lambda lib, F: F.hessian(lambda a: a.sum(), lib.ones(3), strict=True),
    lambda lib, F: F.hvp(lambda a: a.sum(), lib.ones(3), lib.ones(3), strict=True),
    lambda lib, F: F.vhp(lambda a: a.sum(), lib.ones(3), lib.ones(3), strict=True),
])
def test_strict_mode_refuses_an_output_or_gradient_that_does_not_require_grad_as_torch(torch, call):
    # were: another text (the input's "is independent"), or vjp's no error at all
    msgs = []
    for lib in (torch, mg):
        with pytest.raises(RuntimeError) as e:
            call(lib, lib.autograd.functional)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("call", [
    lambda lib, F: F.jacobian(lambda x: x, 3),
    lambda lib, F: F.jacobian(lambda x: x, (lib.ones(2), 3)),
    lambda lib, F: F.vjp(lambda x: x * 2, lib.ones(2)),
    lambda lib, F: F.vjp(lambda x: x * 2, lib.ones(2), lib.ones(3)),
    lambda lib, F: F.hessian(lambda x: x * 2, lib.ones(2)),
    lambda lib, F: F.jvp(lambda x: x * 2, lib.ones(2)),
    lambda lib, F: F.jvp(lambda x: x * 2, lib.ones(2), lib.ones(3)),
    lambda lib, F: F.hvp(lambda x: (x * 2).sum(), (lib.ones(2), lib.ones(1)), (lib.ones(2), lib.ones(2))),
    lambda lib, F: F.vjp(lambda x: x * 2, lib.ones(2), (lib.ones(2), lib.ones(2))),
    lambda lib, F: F.jacobian(lambda x: x.exp(), lib.ones(2), strategy="forward-mode"),
    lambda lib, F: F.hessian(lambda x: (x ** 3).sum(), lib.ones(2), outer_jacobian_strategy="forward-mode"),
])
def test_errors_vs_torch(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.autograd.functional)
    with pytest.raises(type(theirs.value)) as ours:
        call(mg, AF)
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "minigrad.Size")


def test_no_nn_import():
    import ast
    from pathlib import Path

    src = Path(AF.__file__).read_text()
    names = {n.module for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom) and n.module}
    assert not any(n == "nn" or n.startswith("nn.") for n in names)
