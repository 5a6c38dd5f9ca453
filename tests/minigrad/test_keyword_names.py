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


_X = [[0.5, -1.0, 2.0], [1.5, -0.25, 0.75]]

# factories' layout= / pin_memory=, in-place functionals' input=, casts' memory_format=: each call's result
# (values, dtype, shape, layout) or error (type and text) must be torch's
PLACEMENT_CASES = [
    ("zeros pin_memory=True", lambda lib, t: lib.zeros(2, pin_memory=True)),
    ("zeros pin_memory=False", lambda lib, t: lib.zeros(2, 3, pin_memory=False, layout=lib.strided)),
    ("zeros pin_memory=1", lambda lib, t: lib.zeros(2, pin_memory=1)),
    ("zeros layout=1", lambda lib, t: lib.zeros(2, layout=1)),
    ("zeros sparse_coo", lambda lib, t: lib.zeros(2, 3, layout=lib.sparse_coo).to_dense()),
    ("empty sparse_coo", lambda lib, t: lib.empty(2, layout=lib.sparse_coo).to_dense()),
    ("ones sparse_coo", lambda lib, t: lib.ones(2, layout=lib.sparse_coo)),
    ("full sparse_coo", lambda lib, t: lib.full((2,), 1.0, layout=lib.sparse_coo)),
    ("rand sparse_coo", lambda lib, t: lib.rand(2, layout=lib.sparse_coo)),
    ("randn pin_memory", lambda lib, t: lib.randn(2, pin_memory=True)),
    ("eye sparse_coo", lambda lib, t: lib.eye(2, layout=lib.sparse_coo)),
    ("eye strided", lambda lib, t: lib.eye(2, layout=lib.strided, pin_memory=False)),
    ("linspace strided", lambda lib, t: lib.linspace(0, 1, 3, layout=lib.strided)),
    ("logspace pin_memory", lambda lib, t: lib.logspace(0, 1, 3, pin_memory=True)),
    ("arange sparse_coo", lambda lib, t: lib.arange(3, layout=lib.sparse_coo)),
    ("randperm sparse_coo", lambda lib, t: lib.randperm(3, layout=lib.sparse_coo)),
    ("randperm requires_grad int", lambda lib, t: lib.randperm(3, requires_grad=True)),
    ("randperm requires_grad float", lambda lib, t: lib.randperm(3, dtype=lib.float32, requires_grad=True).requires_grad),
    ("tril_indices sparse_coo", lambda lib, t: lib.tril_indices(3, 3, layout=lib.sparse_coo)),
    ("triu_indices strided", lambda lib, t: lib.triu_indices(3, 3, layout=lib.strided)),
    ("tensor pin_memory", lambda lib, t: lib.tensor([1.0], pin_memory=True)),
    ("tensor pin_memory=False", lambda lib, t: lib.tensor([1.0], pin_memory=False)),
    ("sparse_coo_tensor pin_memory", lambda lib, t: lib.sparse_coo_tensor([[0]], [1.0], (2,), pin_memory=True)),
    ("zeros_like sparse_coo", lambda lib, t: lib.zeros_like(t(_X), layout=lib.sparse_coo).to_dense()),
    ("ones_like sparse_coo", lambda lib, t: lib.ones_like(t(_X), layout=lib.sparse_coo)),
    ("full_like pin_memory", lambda lib, t: lib.full_like(t(_X), 2.0, pin_memory=True)),
    ("rand_like generator", lambda lib, t: lib.rand_like(t(_X), generator=lib.Generator().manual_seed(0)).shape),
    ("randn_like generator", lambda lib, t: str(
     lib.randn_like(t(_X), generator=lib.Generator().manual_seed(0)).dtype).split(".")[-1]),
    ("gather sparse_grad=False", lambda lib, t: lib.gather(t(_X), 1, lib.tensor([[0], [2]]), sparse_grad=False)),
    ("F.elu_ input", lambda lib, t: lib.nn.functional.elu_(input=t(_X))),
    ("F.leaky_relu_ input", lambda lib, t: lib.nn.functional.leaky_relu_(input=t(_X), negative_slope=0.2)),
    ("F.hardtanh_ input", lambda lib, t: lib.nn.functional.hardtanh_(input=t(_X))),
    ("F.threshold_ input", lambda lib, t: lib.nn.functional.threshold_(input=t(_X), threshold=0.6, value=0.0)),
    ("threshold_ input", lambda lib, t: lib.threshold_(input=t(_X), threshold=0.6, value=0.0)),
    ("celu_ input", lambda lib, t: lib.celu_(input=t(_X))),
    ("selu_ input", lambda lib, t: lib.selu_(input=t(_X))),
    ("float channels_last rank 2", lambda lib, t: t(_X).float(memory_format=lib.channels_last)),
    ("long channels_last_3d rank 2", lambda lib, t: t(_X).long(memory_format=lib.channels_last_3d)),
    ("cpu channels_last rank 2", lambda lib, t: t(_X).cpu(memory_format=lib.channels_last)),
    ("float memory_format=1", lambda lib, t: t(_X).float(memory_format=1)),
    ("double preserve_format", lambda lib, t: t(_X).double(memory_format=lib.preserve_format)),
    ("half contiguous_format", lambda lib, t: t(_X).half(memory_format=lib.contiguous_format)),
    ("cfloat preserve_format", lambda lib, t: t(_X).cfloat(memory_format=lib.preserve_format)),
    ("float channels_last strides", lambda lib, t: t(_X).reshape(1, 2, 1, 3).repeat(2, 1, 2, 1)
     .float(memory_format=lib.channels_last).stride()),
    ("bool channels_last rank 4", lambda lib, t: t(_X).reshape(1, 2, 3, 1).bool(memory_format=lib.channels_last)),
    ("is_contiguous channels_last", lambda lib, t: [t(_X).reshape(1, 1, 2, 3).is_contiguous(memory_format=lib.channels_last),
                                                    t(_X).reshape(1, 2, 1, 3).is_contiguous(memory_format=lib.channels_last),
                                                    t(_X).reshape(1, 2, 3, 1).is_contiguous(memory_format=lib.channels_last),
                                                    t(_X).is_contiguous(memory_format=lib.channels_last),
                                                    t(_X).is_contiguous(memory_format=lib.preserve_format)]),
]


def _outcome(call, lib, make):
    try:
        return "ok", call(lib, make)
    except Exception as e:  # (the error's type and text are what is compared)
        return "error", (type(e).__name__, str(e).split(" If you are a Facebook")[0].split(" This could be")[0])


@pytest.mark.parametrize("label, call", PLACEMENT_CASES, ids=[c[0] for c in PLACEMENT_CASES])
def test_placement_and_format_keywords_as_torch(label, call):
    kind, expected = _outcome(call, torch, lambda v: torch.tensor(v, dtype=torch.float64))
    got_kind, got = _outcome(call, minigrad, lambda v: minigrad.tensor(v, dtype=minigrad.float64))
    assert got_kind == kind, (got, expected)
    if kind == "error":
        assert got == expected
    elif isinstance(expected, torch.Tensor):
        assert tuple(got.shape) == tuple(expected.shape)
        assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
        assert str(got.layout).split(".")[-1] == str(expected.layout).split(".")[-1]
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    else:
        assert (list(got) if isinstance(got, (tuple, list)) or hasattr(got, "__len__") else got) == \
            (list(expected) if isinstance(expected, (tuple, list)) or hasattr(expected, "__len__") else expected)
