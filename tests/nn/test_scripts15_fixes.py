"""Focused checks for what the scripts of test_dl_scripts15.py and their neighbours found minigrad doing unlike
PyTorch: the graph a complex tensor's real / imag parts record, the continuous samplers' refusal of integer and bool
tensors (reached through F.gumbel_softmax), nn.Bilinear's batch-dimension text, matrix_power on integer matrices and
its argument checks."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


def chain(grad_fn):
    names = []
    while grad_fn is not None:
        names.append(type(grad_fn).__name__)
        grad_fn = grad_fn.next_functions[0][0] if grad_fn.next_functions else None
    return names


def error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value).replace("torch", "minigrad")


@pytest.mark.parametrize("part", ["real", "imag"])
def test_complex_parts_record_a_select_of_view_as_real(torch, part):
    def run(lib):
        a = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        z = lib.complex(a, a * 3)
        y = getattr(z, part)
        names = chain(y.grad_fn)
        (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        with lib.no_grad():
            y.mul_(2)  # a view: the write reaches z
        return names, a.grad.numpy(), z.detach().numpy()

    ours, theirs = run(minigrad), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2])


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("sampler", ["exponential_", "cauchy_", "log_normal_"])
def test_continuous_samplers_refuse_non_float_tensors(torch, sampler, dtype):
    ours = error(lambda: getattr(minigrad.ones(2, dtype=getattr(minigrad, dtype)), sampler)())
    theirs = error(lambda: getattr(torch.ones(2, dtype=getattr(torch, dtype)), sampler)())
    assert ours == theirs


def test_gumbel_softmax_refuses_integer_logits(torch):
    ours = error(lambda: F.gumbel_softmax(minigrad.ones(2, 3, dtype=minigrad.int64), hard=True))
    theirs = error(lambda: torch.nn.functional.gumbel_softmax(torch.ones(2, 3, dtype=torch.int64), hard=True))
    assert ours == theirs


@pytest.mark.parametrize("shapes", [((5, 2), (4, 3)), ((2, 5, 2), (2, 4, 3)), ((5, 2), (3,))])
def test_bilinear_batch_dimension_text(torch, shapes):
    (s1, s2) = shapes

    def run(lib, F):
        return error(lambda: F.bilinear(lib.ones(*s1), lib.ones(*s2), lib.ones(4, 2, 3)))

    assert run(minigrad, F) == run(torch, torch.nn.functional)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_matrix_power_of_an_integer_matrix(torch, n, dtype):
    a = np.array([[2, 1, 0], [1, 3, -1], [0, 2, 1]])
    ours = minigrad.linalg.matrix_power(minigrad.tensor(a, dtype=getattr(minigrad, dtype)), n)
    theirs = torch.linalg.matrix_power(torch.tensor(a, dtype=getattr(torch, dtype)), n)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.matrix_power(lib.tensor([[2, 1], [1, 3]]), -1),
    lambda lib: lib.linalg.matrix_power(lib.ones(2, 2), 2.0),
    lambda lib: lib.linalg.matrix_power(lib.ones(2, 2), True),
    lambda lib: lib.linalg.matrix_power(lib.ones(2, 2), "2"),
    lambda lib: lib.matrix_power(lib.ones(2, 2), 2.5),
    lambda lib: lib.ones(2, 2).matrix_power(2.5),
])
def test_matrix_power_argument_errors(torch, call):
    assert error(lambda: call(minigrad)) == error(lambda: call(torch))
