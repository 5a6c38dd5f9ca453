"""Users' dtype arguments read as PyTorch's parser reads them: a dtype, or Python's float, int, bool or complex;
a numpy dtype or a name such as 'float32' refused with PyTorch's TypeError (its first line, word for word)."""
import numpy as np
import pytest

import minigrad
import minigrad.nn as nn

torch = pytest.importorskip("torch")

# (numpy's scalar type, numpy's dtype object, a name): the forms PyTorch refuses
REFUSED = [pytest.param(np.float64, id="np.float64"), pytest.param(np.dtype("float64"), id="np.dtype"),
           pytest.param("float64", id="str")]
PYTHON_TYPES = [float, int, bool, complex]


def _x(lib):
    return lib.ones(2)


# name -> a call of library `lib` with dtype argument `d`
CALLS = {
    "tensor": lambda lib, d: lib.tensor([1.0], dtype=d),
    "as_tensor": lambda lib, d: lib.as_tensor([1.0], dtype=d),
    "asarray": lambda lib, d: lib.asarray([1.0], dtype=d),
    "zeros": lambda lib, d: lib.zeros(2, dtype=d),
    "ones": lambda lib, d: lib.ones(2, dtype=d),
    "empty": lambda lib, d: lib.empty(2, dtype=d),
    "full": lambda lib, d: lib.full((2,), 1.0, dtype=d),
    "empty_strided": lambda lib, d: lib.empty_strided((2,), (1,), dtype=d),
    "scalar_tensor": lambda lib, d: lib.scalar_tensor(1, dtype=d),
    "zeros_like": lambda lib, d: lib.zeros_like(_x(lib), dtype=d),
    "ones_like": lambda lib, d: lib.ones_like(_x(lib), dtype=d),
    "empty_like": lambda lib, d: lib.empty_like(_x(lib), dtype=d),
    "full_like": lambda lib, d: lib.full_like(_x(lib), 1, dtype=d),
    "rand_like": lambda lib, d: lib.rand_like(_x(lib), dtype=d),
    "randn_like": lambda lib, d: lib.randn_like(_x(lib), dtype=d),
    "arange": lambda lib, d: lib.arange(3, dtype=d),
    "linspace": lambda lib, d: lib.linspace(0, 1, 3, dtype=d),
    "logspace": lambda lib, d: lib.logspace(0, 1, 3, dtype=d),
    "eye": lambda lib, d: lib.eye(2, dtype=d),
    "randn": lambda lib, d: lib.randn(2, dtype=d),
    "rand": lambda lib, d: lib.rand(2, dtype=d),
    "randint": lambda lib, d: lib.randint(0, 3, (2,), dtype=d),
    "randperm": lambda lib, d: lib.randperm(3, dtype=d),
    "normal": lambda lib, d: lib.normal(0.0, 1.0, (2,), dtype=d),
    "hann_window": lambda lib, d: lib.hann_window(4, dtype=d),
    "fftfreq": lambda lib, d: lib.fft.fftfreq(4, dtype=d),
    "new_zeros": lambda lib, d: _x(lib).new_zeros(2, dtype=d),
    "new_ones": lambda lib, d: _x(lib).new_ones(2, dtype=d),
    "new_empty": lambda lib, d: _x(lib).new_empty(2, dtype=d),
    "new_full": lambda lib, d: _x(lib).new_full((2,), 1, dtype=d),
    "new_tensor": lambda lib, d: _x(lib).new_tensor([1], dtype=d),
    "to": lambda lib, d: _x(lib).to(d),
    "to(dtype=)": lambda lib, d: _x(lib).to(dtype=d),
    "to(device, dtype)": lambda lib, d: _x(lib).to("cpu", d),
    "sum": lambda lib, d: _x(lib).sum(dtype=d),
    "sum(dim)": lambda lib, d: _x(lib).sum(0, dtype=d),
    "mean": lambda lib, d: _x(lib).mean(dtype=d),
    "prod": lambda lib, d: _x(lib).prod(dtype=d),
    "nansum": lambda lib, d: lib.nansum(_x(lib), dtype=d),
    "nanmean": lambda lib, d: lib.nanmean(_x(lib), dtype=d),
    "norm": lambda lib, d: lib.norm(_x(lib), dtype=d),
    "linalg.vector_norm": lambda lib, d: lib.linalg.vector_norm(_x(lib), dtype=d),
    "linalg.norm": lambda lib, d: lib.linalg.norm(_x(lib), dtype=d),
    "softmax": lambda lib, d: lib.softmax(_x(lib), 0, dtype=d),
    "log_softmax": lambda lib, d: _x(lib).log_softmax(0, dtype=d),
    "F.softmax": lambda lib, d: lib.nn.functional.softmax(_x(lib), 0, dtype=d),
    "special.softmax": lambda lib, d: lib.special.softmax(_x(lib), 0, dtype=d),
    "cumsum": lambda lib, d: lib.cumsum(_x(lib), 0, dtype=d),
    "cumprod": lambda lib, d: _x(lib).cumprod(0, dtype=d),
    "view": lambda lib, d: _x(lib).view(d),
    "finfo": lambda lib, d: lib.finfo(d),
    "promote_types": lambda lib, d: lib.promote_types(d, lib.int32),
    "can_cast": lambda lib, d: lib.can_cast(lib.int32, d),
    "Module.to": lambda lib, d: lib.nn.Linear(1, 1).to(d),
    "Module.to(dtype=)": lambda lib, d: lib.nn.Linear(1, 1).to(dtype=d),
    "Linear(dtype=)": lambda lib, d: lib.nn.Linear(1, 1, dtype=d),
}


def _outcome(call, lib, d):
    try:
        out = call(lib, d)
    except Exception as e:  # noqa: BLE001 (the kind and first line are what is compared)
        return type(e).__name__, str(e).splitlines()[0]
    return "ok", str(getattr(out, "dtype", None)).split(".")[-1]


@pytest.mark.parametrize("d", REFUSED)
@pytest.mark.parametrize("name", list(CALLS))
def test_numpy_dtypes_and_names_refused_as_torch(name, d):
    want, got = _outcome(CALLS[name], torch, d), _outcome(CALLS[name], minigrad, d)
    assert want[0] in ("TypeError", "RuntimeError")
    assert got == want


@pytest.mark.parametrize("d", PYTHON_TYPES, ids=lambda t: t.__name__)
@pytest.mark.parametrize("name", ["tensor", "zeros", "empty", "full", "zeros_like", "new_zeros", "to", "to(dtype=)",
                                  "sum", "view", "promote_types", "can_cast"])
def test_python_types_taken_as_torch_takes_them(name, d):
    want, got = _outcome(CALLS[name], torch, d), _outcome(CALLS[name], minigrad, d)
    assert got == want


@pytest.mark.parametrize("d", [float, int], ids=lambda t: t.__name__)
@pytest.mark.parametrize("name", ["arange", "randperm", "softmax", "cumsum", "mean", "Linear(dtype=)"])
def test_python_float_and_int_taken_by_the_ops_with_dtype_keywords(name, d):
    want, got = _outcome(CALLS[name], torch, d), _outcome(CALLS[name], minigrad, d)
    assert got == want


@pytest.mark.parametrize("d", [np.float64, np.dtype("float64"), "float64", float, "torch.DoubleTensor",
                               "DoubleTensor", 3], ids=repr)
def test_type_takes_dtypes_and_legacy_names_only(d):
    assert _outcome(lambda lib, d: _x(lib).type(d), minigrad, d) == _outcome(lambda lib, d: _x(lib).type(d), torch, d)


@pytest.mark.parametrize("call", [lambda lib, _: lib.iinfo(np.int32), lambda lib, _: lib.iinfo(None),
                                  lambda lib, _: lib.iinfo("int32"), lambda lib, _: lib.promote_types(lib.float32, None),
                                  lambda lib, _: lib.can_cast(None, lib.int32)],
                         ids=["iinfo-np", "iinfo-None", "iinfo-str", "promote_types-None", "can_cast-None"])
def test_iinfo_and_required_dtypes_refuse_none_and_numpy(call):
    assert _outcome(call, minigrad, None) == _outcome(call, torch, None)


@pytest.mark.parametrize("d", [np.float64, "float64", float], ids=repr)
def test_make_tensor_takes_dtypes_only(d):
    want = _outcome(lambda lib, d: lib.testing.make_tensor(2, dtype=d, device="cpu"), torch, d)
    assert _outcome(lambda lib, d: lib.testing.make_tensor(2, dtype=d, device="cpu"), minigrad, d) == want


@pytest.mark.parametrize("d", [minigrad.int32, minigrad.int16, minigrad.float32, int], ids=repr)
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_tril_and_triu_indices_take_their_dtype(name, d):
    td = getattr(torch, d.name) if isinstance(d, minigrad.dtype) else d

    def call(lib, d):
        return getattr(lib, name)(4, 3, 1, dtype=d)

    want = _outcome(call, torch, td)
    assert _outcome(call, minigrad, d) == want
    if want[0] == "ok":
        np.testing.assert_array_equal(call(minigrad, d).numpy(), call(torch, td).numpy())


NUMPY_OPERANDS = {
    "where(c, array, x)": lambda lib, a: lib.where(_x(lib) > 0, a, _x(lib)),
    "where(c, x, array)": lambda lib, a: lib.where(_x(lib) > 0, _x(lib), a),
    "where(array, x, x)": lambda lib, a: lib.where(np.asarray(a > 0), _x(lib), _x(lib)),
    "clamp(min=array)": lambda lib, a: lib.clamp(_x(lib), min=a),
    "clamp(max=array)": lambda lib, a: lib.clamp(_x(lib), max=a),
}


@pytest.mark.parametrize("a", [np.ones(2), np.array(1.0)], ids=["1-d", "0-d"])
@pytest.mark.parametrize("name", list(NUMPY_OPERANDS))
def test_where_and_clamp_refuse_numpy_arrays_as_torch(name, a):
    want = _outcome(NUMPY_OPERANDS[name], torch, a)
    assert want[0] == "TypeError"
    assert _outcome(NUMPY_OPERANDS[name], minigrad, a) == want


def test_numbers_and_numpy_scalars_still_operands_and_eq_takes_an_array():
    x, tx = minigrad.tensor([-1.0, 2.0]), torch.tensor([-1.0, 2.0])
    np.testing.assert_array_equal(minigrad.where(x > 0, np.float64(1.0), x).numpy(),
                                  torch.where(tx > 0, np.float64(1.0), tx).numpy())
    np.testing.assert_array_equal(minigrad.clamp(x, min=np.float64(0.0)).numpy(),
                                  torch.clamp(tx, min=np.float64(0.0)).numpy())
    assert (x == np.ones(2)).dtype is minigrad.bool


def test_module_to_refuses_a_numpy_dtype_but_takes_float_and_complex():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"^to\(\) received an invalid combination of arguments - got \(type\)"):
        m.to(np.float64)
    assert m.to(float).weight.dtype is minigrad.float64
    with pytest.warns(UserWarning, match="^Complex modules are a new feature"):
        assert m.to(complex).weight.dtype is minigrad.complex128
    with pytest.raises(TypeError, match="^nn.Module.to only accepts floating point or complex dtypes, but got desired"):
        m.to(int)
