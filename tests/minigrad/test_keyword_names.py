"""PyTorch's keyword names for each function's arguments, on minigrad: the call a script makes with them
(`torch.dot(input=x, tensor=y)`, `torch.linalg.det(A=a)`) gives PyTorch's result here too."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

_A = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
_V = [0.1, 0.2, 0.3]

# (label, the call, given the library and a function making its float64 tensors)
CASES = [
    ("dot(input, tensor)", lambda lib, t: lib.dot(input=t(_V), tensor=t(_V))),
    ("Tensor.dot(tensor)", lambda lib, t: t(_V).dot(tensor=t(_V))),
    ("split(tensor, split_size_or_sections)", lambda lib, t: lib.split(tensor=t(_A), split_size_or_sections=2)),
    ("tensor_split(input, sections)", lambda lib, t: lib.tensor_split(input=t(_A), sections=3, dim=1)),
    ("tensor_split(input, indices)", lambda lib, t: lib.tensor_split(t(_A), indices=[1])),
    ("swapaxes(input, axis0, axis1)", lambda lib, t: lib.swapaxes(input=t(_A), axis0=0, axis1=1)),
    ("Tensor.swapaxes(axis0, axis1)", lambda lib, t: t(_A).swapaxes(axis0=1, axis1=0)),
    ("linalg.det(A)", lambda lib, t: lib.linalg.det(A=t(_A))),
    ("linalg.inv(A)", lambda lib, t: lib.linalg.inv(A=t(_A))),
    ("linalg.matrix_power(input, n)", lambda lib, t: lib.linalg.matrix_power(input=t(_A), n=2)),
    ("linalg.norm(input)", lambda lib, t: lib.linalg.norm(input=t(_A), ord="fro", dim=(0, 1), keepdim=True)),
    ("linalg.matrix_norm(input)", lambda lib, t: lib.linalg.matrix_norm(input=t(_A), ord="nuc")),
    ("numel(input)", lambda lib, t: lib.numel(input=t(_A))),
    ("arange(end)", lambda lib, t: lib.arange(end=4)),
    ("arange(start, end, step)", lambda lib, t: lib.arange(start=1, end=7, step=2)),
    ("arccos(input, out)", lambda lib, t: lib.arccos(input=t(_V), out=lib.empty(3, dtype=lib.float64))),
    ("arcsinh(input, out)", lambda lib, t: lib.arcsinh(input=t(_V), out=lib.empty(3, dtype=lib.float64))),
    ("arctan(input, out)", lambda lib, t: lib.arctan(t(_V), out=lib.empty(3, dtype=lib.float64))),
    ("arctanh(input, out)", lambda lib, t: lib.arctanh(t(_V), out=lib.empty(3, dtype=lib.float64))),
    ("arccosh(input, out)", lambda lib, t: lib.arccosh(t(_A), out=lib.empty(3, 3, dtype=lib.float64))),
    ("arcsin(input, out)", lambda lib, t: lib.arcsin(t(_V), out=lib.empty(3, dtype=lib.float64))),
    ("arctan2(input, other, out)",
     lambda lib, t: lib.arctan2(input=t(_V), other=t(_A), out=lib.empty(3, 3, dtype=lib.float64))),
]


def _results(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


@pytest.mark.parametrize("label, call", CASES, ids=[c[0] for c in CASES])
def test_torch_keyword_names(label, call):
    expected = _results(call(torch, lambda v: torch.tensor(v, dtype=torch.float64)))
    got = _results(call(minigrad, lambda v: minigrad.tensor(v, dtype=minigrad.float64)))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if not isinstance(e, torch.Tensor):
            assert g == e
            continue
        assert tuple(g.shape) == tuple(e.shape)
        assert str(g.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)


def test_out_alias_refuses_grad_in_pytorch_words():
    x = minigrad.tensor(_V, requires_grad=True)
    with pytest.raises(RuntimeError) as ours:
        minigrad.arctan(x, out=minigrad.empty(3))
    with pytest.raises(RuntimeError) as theirs:
        torch.arctan(torch.tensor(_V, requires_grad=True), out=torch.empty(3))
    assert str(ours.value) == str(theirs.value)


def test_renamed_keyword_given_twice_is_refused():
    x = minigrad.tensor(_V)
    with pytest.raises(TypeError, match="multiple values for argument 'other'"):
        minigrad.dot(x, other=x, tensor=x)


def test_set_default_device_by_keyword():
    try:
        torch.set_default_device(device="cpu")
        minigrad.set_default_device(device="cpu")
        assert str(minigrad.get_default_device()) == str(torch.get_default_device())
    finally:  # (torch's default-device mode would stay on for the worker's later tests: their warnings' origins)
        torch.set_default_device(None)
        minigrad.set_default_device(None)


@pytest.mark.parametrize("kwargs", [{}, {"step": 2}, {"dtype": "float32"}])
def test_arange_without_a_bound_is_refused_as_torch(kwargs):
    """`end=` alone starts at 0; no bound at all is PyTorch's parser's TypeError, in its words."""
    def run(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        try:
            lib.arange(**kw)
        except TypeError as e:
            return str(e)
        return "no error"

    assert run(minigrad) == run(torch)
