"""Every differentiable op against finite differences (float64), and second derivatives."""
import numpy as np
import pytest
from mg_op_table import CASE_BY_NAME, CASES, make_inputs

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.autograd.gradcheck import GradcheckError


def leaves(case, seed=0):
    return [mg.tensor(a, dtype=mg.float64, requires_grad=True) for a in make_inputs(case, seed)]


def bound(case):
    return lambda *xs: case.fn(mg, *xs)


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_gradcheck(name):
    case = CASE_BY_NAME[name]
    for seed in (0, 1):
        assert gradcheck(bound(case), leaves(case, seed))


@pytest.mark.parametrize("name", [c.name for c in CASES if c.gradgrad])
def test_gradgradcheck(name):
    case = CASE_BY_NAME[name]
    mg.manual_seed(0)
    assert gradgradcheck(bound(case), leaves(case))


def test_gradcheck_with_non_differentiable_input():
    a = mg.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=mg.float64, requires_grad=True)
    b = mg.tensor(np.ones((2, 3)), dtype=mg.float64)
    assert gradcheck(lambda x, y: x * y.exp(), (a, b))


def test_gradcheck_single_tensor_input():
    a = mg.tensor([0.5, 1.5], dtype=mg.float64, requires_grad=True)
    assert gradcheck(lambda x: x.exp(), a)


class WrongGrad(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, g):
        return g * 3  # wrong on purpose


def test_gradcheck_catches_a_wrong_gradient():
    x = mg.tensor([0.5, 1.5], dtype=mg.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(WrongGrad.apply, (x,))
    assert gradcheck(WrongGrad.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class WrongSecond(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() * x.detach()  # right value, but not differentiable in x

    x = mg.tensor([0.5, 1.5], dtype=mg.float64, requires_grad=True)
    assert gradcheck(WrongSecond.apply, (x,))
    with pytest.raises(GradcheckError):
        gradgradcheck(WrongSecond.apply, (x,))


def test_gradcheck_defaults_match_torch(torch):
    import inspect

    mine = inspect.signature(gradcheck).parameters
    theirs = inspect.signature(torch.autograd.gradcheck).parameters
    for name in ("eps", "atol", "rtol"):
        assert mine[name].default == theirs[name].default


def test_gradcheck_warns_for_float32():
    x = mg.tensor([0.5, 1.5], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision floating point"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_gradcheck_leaves_inputs_unchanged():
    case = CASE_BY_NAME["exp2"]
    xs = leaves(case)
    before = [x.detach().numpy().copy() for x in xs]
    gradcheck(bound(case), xs)
    for x, b in zip(xs, before):
        np.testing.assert_array_equal(x.detach().numpy(), b)
        assert x.grad is None


def test_gradcheck_non_contiguous_input():
    x = mg.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=mg.float64).T.detach().requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda t: (t * t).sum(0), (x,))


def test_gradcheck_takes_torchs_keywords_and_prints_its_mismatch(torch):
    # fast_mode= and the other check_* keywords were a TypeError; the mismatch printed numpy arrays
    x = mg.tensor([0.5, 1.5], dtype=mg.float64, requires_grad=True)
    assert gradcheck(mg.sin, (x,), fast_mode=True, check_undefined_grad=False, check_batched_grad=False)
    assert gradgradcheck(mg.sin, (x,), fast_mode=True, check_batched_grad=False)
    with pytest.raises(GradcheckError) as ours:
        gradcheck(WrongGrad.apply, (x,), fast_mode=True)

    class TorchWrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 3
    with pytest.raises(RuntimeError) as theirs:  # (its GradcheckError)
        torch.autograd.gradcheck(TorchWrong.apply, (torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True),))
    assert str(ours.value).replace("minigrad", "torch") == str(theirs.value)
    with pytest.raises(NotImplementedError, match="check_forward_ad"):
        gradcheck(mg.sin, (x,), check_forward_ad=True)
    with pytest.raises(TypeError):
        gradcheck(mg.sin, (x,), 1e-6)  # keywords only, as PyTorch's
