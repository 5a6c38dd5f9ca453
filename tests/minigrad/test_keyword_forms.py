"""Spellings PyTorch scripts use that are not the common positional ones: sizes and dims by keyword,
view(dtype), the new_* constructors' keywords, memory_format, and the attributes code copied from
PyTorch's own source asks (is_sparse, layout, typename); each against PyTorch."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def both(fn):
    """fn(framework, x) for a (2, 3) arange tensor in each framework -> (minigrad's, torch's) as numpy."""
    ours = fn(minigrad, minigrad.arange(6.0).view(2, 3))
    theirs = fn(torch, torch.arange(6.0).view(2, 3))
    return np.asarray(ours.detach().numpy()), theirs.detach().numpy()


@pytest.mark.parametrize("call", [
    lambda t, x: t.flip(x, dims=[1]), lambda t, x: x.flip(dims=(0, 1)), lambda t, x: t.permute(x, dims=(1, 0)),
    lambda t, x: x.permute(dims=[1, 0]), lambda t, x: x.repeat(repeats=(2, 1)), lambda t, x: x.view(size=(3, 2)),
    lambda t, x: x.reshape(shape=(3, 2)), lambda t, x: t.reshape(x, shape=(6,)), lambda t, x: x.expand(size=(4, 2, 3)),
    lambda t, x: x.view(size=[-1]), lambda t, x: x.new_zeros(size=(2,)), lambda t, x: x.new_ones(3, 1, device=x.device),
    lambda t, x: x.new_full((2,), 7.0), lambda t, x: x.new_tensor([1.0, 2.0]), lambda t, x: x.new_empty((2, 2)).fill_(1.0),
    lambda t, x: t.zeros_like(x, memory_format=t.preserve_format), lambda t, x: t.ones_like(x, layout=t.strided),
    lambda t, x: x.clone(memory_format=t.contiguous_format), lambda t, x: x.contiguous(memory_format=t.contiguous_format),
])
def test_keyword_spellings_give_pytorchs_values(call):
    ours, theirs = both(call)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def test_keyword_forms_keep_the_graph():
    x = minigrad.arange(6.0, requires_grad=True)
    y = x.view(size=(2, 3)).permute(dims=(1, 0)).flip(dims=[0]).reshape(shape=(6,)) * minigrad.arange(6.0)
    y.sum().backward()
    tx = torch.arange(6.0, requires_grad=True)
    (tx.view(size=(2, 3)).permute(dims=(1, 0)).flip(dims=[0]).reshape(shape=(6,)) * torch.arange(6.0)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("call", [
    lambda t, x: x.split(split_size=[1, 2], dim=-1), lambda t, x: x.split(split_size=2, dim=1),
    lambda t, x: t.split(x, split_size_or_sections=[1, 1], dim=0), lambda t, x: x.split(1, dim=0),
])
def test_split_takes_its_size_by_keyword_as_pytorch(call):
    ours = call(minigrad, minigrad.arange(6.0).view(2, 3))
    theirs = call(torch, torch.arange(6.0).view(2, 3))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_new_constructors_take_requires_grad_dtype_and_device():
    x = minigrad.ones(2, 3)
    z = x.new_zeros(2, requires_grad=True, dtype=minigrad.float64)
    assert z.requires_grad and z.dtype == minigrad.float64 and z.is_leaf
    assert x.new_full((2,), 1.0, requires_grad=True).requires_grad
    assert x.new_tensor([1, 2], requires_grad=True).requires_grad


@pytest.mark.parametrize("call", [lambda x: x.flip(1, dims=(0,)), lambda x: x.flip(dim=0), lambda x: x.flip(),
                                  lambda x: x.view(size=(3, 2), shape=(3, 2)), lambda x: x.new_zeros(size=(2,), foo=1),
                                  lambda x: x.split(split_size_or_sections=1)])
def test_wrong_spellings_raise_typeerror_as_pytorch(call):
    with pytest.raises(TypeError):
        call(torch.ones(2, 3))
    with pytest.raises(TypeError):
        call(minigrad.ones(2, 3))


@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("float32", "float16"), ("float64", "int32"),
                                     ("float16", "float32"), ("int64", "float64")])
def test_view_as_another_dtype_reads_the_same_bytes(src, dst):
    a = np.arange(-4, 4, dtype=src).reshape(2, 4) * 3
    ours = minigrad.tensor(a).view(getattr(minigrad, dst))
    theirs = torch.from_numpy(a.copy()).view(getattr(torch, dst))
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert not ours.requires_grad


def test_view_as_another_dtype_shares_memory_and_refuses_a_ragged_last_dim():
    x = minigrad.zeros(2, 4)
    bits = x.view(minigrad.int32)
    bits[0, 0] = 1065353216  # the bits of 1.0f
    assert x[0, 0].item() == 1.0
    with pytest.raises(RuntimeError) as ours:
        minigrad.ones(2, 3).view(minigrad.float64)
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, 3).view(torch.float64)
    assert str(ours.value) == str(theirs.value)


def test_attributes_code_from_pytorch_asks():
    x = minigrad.ones(2)
    assert x.is_sparse is False and x.is_meta is False and x.is_quantized is False
    assert x.layout is minigrad.strided and repr(minigrad.strided) == "minigrad.strided"
    assert minigrad.typename(x) == "minigrad.FloatTensor" and minigrad.typename(1.5) == torch.typename(1.5)


def test_value_index_pairs_print_as_pytorchs_return_types():
    a = np.array([[1.0, 4.0], [3.0, 2.0]], dtype=np.float32)
    for call in (lambda t, x: t.max(x, 1), lambda t, x: t.min(x, dim=0), lambda t, x: x.sort(1),
                 lambda t, x: t.topk(x, 1), lambda t, x: t.kthvalue(x, 1, 1), lambda t, x: t.cummax(x, 1)):
        ours, theirs = call(minigrad, minigrad.tensor(a)), call(torch, torch.tensor(a))
        assert repr(ours).replace("minigrad.", "torch.") == repr(theirs)
        values, indices = ours  # still a pair
        assert values is ours.values and indices is ours[1]


@pytest.mark.parametrize("call", [
    "t.histogram(t.tensor([1., 2, 2, 3]), bins=3)", "t.slogdet(A)", "t.linalg.slogdet(A)", "t.linalg.qr(A)",
    "t.qr(A)", "t.linalg.eigh(A)", "t.linalg.svd(A)", "t.svd(A)", "t.triangular_solve(A.triu(), A.triu())",
    "t.linalg.lu_factor(A)", "t.linalg.lu_factor_ex(A)", "t.linalg.lu(A)", "t.lu_unpack(*t.linalg.lu_factor(A))",
    "t.linalg.lstsq(2 * t.eye(2), t.ones(2, 1))",
])
def test_linalg_and_histogram_results_are_pytorchs_return_types(call):
    import warnings

    A = [[2.0, 1.0], [1.0, 4.0]]
    out = []
    for lib in (minigrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch.qr, torch.triangular_solve: deprecated)
            r = eval(call, {"t": lib, "A": lib.tensor(A)})
        out.append((type(r).__name__, len(r), repr(r).replace("minigrad.", "torch.")))
    assert out[0] == out[1]
