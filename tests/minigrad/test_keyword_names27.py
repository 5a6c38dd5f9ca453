"""More of PyTorch's argument forms on minigrad, each against torch: memory_format= on every cast,
gather(sparse_grad=True)'s sparse gradient, out= on the random and the remaining FFT and LU functions."""
import warnings

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

_A = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
_P = [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]


def _lu(lib):
    return lib.linalg.lu_factor(lib.tensor(_A))


def _spectrum(lib):
    return lib.tensor(np.arange(16.0).reshape(4, 4) * (1 - 0.5j), dtype=lib.complex64)


# (label, the call given the library, with out= an empty tensor of the dtype named by the library)
OUT_CASES = [
    ("multinomial", lambda lib, out: lib.multinomial(lib.tensor(_P), 2, out=out)),
    ("normal(Tensor, Tensor)", lambda lib, out: lib.normal(lib.zeros(3), lib.ones(3), out=out)),
    ("normal(float, float, size)", lambda lib, out: lib.normal(0.0, 1.0, (3,), out=out)),
    ("bernoulli", lambda lib, out: lib.bernoulli(lib.tensor(_P), out=out)),
    ("narrow_copy", lambda lib, out: lib.narrow_copy(lib.tensor(_A), 0, 1, 2, out=out)),
    ("fft.hfft2", lambda lib, out: lib.fft.hfft2(_spectrum(lib), out=out)),
    ("fft.hfftn", lambda lib, out: lib.fft.hfftn(_spectrum(lib), out=out)),
    ("fft.ihfft2", lambda lib, out: lib.fft.ihfft2(lib.tensor(_A), out=out)),
    ("fft.ihfftn", lambda lib, out: lib.fft.ihfftn(lib.tensor(_A), out=out)),
    ("fft.irfft2", lambda lib, out: lib.fft.irfft2(_spectrum(lib), out=out)),
    ("fft.fft2", lambda lib, out: lib.fft.fft2(lib.tensor(_A), out=out)),
    ("linalg.lu_solve", lambda lib, out: lib.linalg.lu_solve(*_lu(lib), lib.tensor(_A)[:, :2], out=out)),
    ("lu_solve", lambda lib, out: lib.lu_solve(lib.tensor(_A)[:, :2], *_lu(lib), out=out)),
]
_RANDOM = {"multinomial", "normal(Tensor, Tensor)", "normal(float, float, size)", "bernoulli"}


def _outcome(call, lib, dtype):
    out = lib.empty(0, dtype=getattr(lib, dtype))
    try:
        r = call(lib, out)
    except Exception as e:  # noqa: BLE001 (the refusal is what is compared)
        return type(e).__name__, str(e)
    assert r is out
    return str(out.dtype).split(".")[-1], tuple(out.shape), out


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "complex64", "complex128"])
@pytest.mark.filterwarnings("ignore:torch.lu_solve is deprecated")
@pytest.mark.parametrize("label, call", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_out_as_pytorch(label, call, dtype):
    expected = _outcome(call, torch, dtype)
    got = _outcome(call, minigrad, dtype)
    assert got[:2] == expected[:2]
    if len(expected) == 3 and label not in _RANDOM:
        np.testing.assert_allclose(got[2].numpy(), expected[2].numpy(), rtol=1e-5, atol=1e-5)


def _grad(lib, v):
    return lib.tensor(v).requires_grad_()


# (label, the call with an input that requires grad, out's dtype)
GRAD_CASES = [
    ("normal", lambda lib, out: lib.normal(_grad(lib, [0.0, 1.0]), lib.ones(2), out=out), "float32"),
    ("bernoulli", lambda lib, out: lib.bernoulli(_grad(lib, _P), out=out), "float32"),
    ("narrow_copy", lambda lib, out: lib.narrow_copy(_grad(lib, _A), 0, 1, 2, out=out), "float32"),
    ("fft.hfft2", lambda lib, out: lib.fft.hfft2(_spectrum(lib).requires_grad_(), out=out), "float32"),
    ("fft.hfftn", lambda lib, out: lib.fft.hfftn(_spectrum(lib).requires_grad_(), out=out), "float32"),
    ("fft.ihfft2", lambda lib, out: lib.fft.ihfft2(_grad(lib, _A), out=out), "complex64"),
    ("fft.ihfftn", lambda lib, out: lib.fft.ihfftn(_grad(lib, _A), out=out), "complex64"),
    ("linalg.lu_solve", lambda lib, out: lib.linalg.lu_solve(*_lu(lib), _grad(lib, _A), out=out), "float32"),
    ("lu_solve", lambda lib, out: lib.lu_solve(_grad(lib, _A), *_lu(lib), out=out), "float32"),
    ("multinomial", lambda lib, out: lib.multinomial(_grad(lib, _P), 2, out=out), "int64"),  # (not differentiable)
]


@pytest.mark.parametrize("label, call, dtype", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
@pytest.mark.filterwarnings("ignore:torch.lu_solve is deprecated")
def test_out_with_an_input_that_requires_grad(label, call, dtype):
    expected = _outcome(call, torch, dtype)
    got = _outcome(call, minigrad, dtype)
    assert got[:2] == expected[:2]


@pytest.mark.parametrize("name", ["short", "char", "byte", "float", "int", "half", "cfloat"])
def test_casts_take_memory_format(name):
    x, tx = minigrad.rand(2, 3, 4, 5), torch.rand(2, 3, 4, 5)
    got, expected = getattr(x, name)(memory_format=minigrad.channels_last), getattr(tx, name)(
        memory_format=torch.channels_last)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert got.stride() == expected.stride()
    assert getattr(x, name)(memory_format=minigrad.contiguous_format).stride() == (60, 20, 5, 1)


@pytest.mark.parametrize("name", ["short", "char", "byte", "bfloat16", "chalf"])
def test_cast_memory_format_rank_refusal(name):
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.ones(2), name)(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError) as got:
        getattr(minigrad.ones(2), name)(memory_format=minigrad.channels_last)
    assert str(got.value) == str(expected.value)


GATHERS = [
    (np.arange(12.0).reshape(3, 4), [[0, 1], [2, 3], [1, 1]], 1),
    (np.arange(12.0).reshape(3, 4), [[0, 1, 2], [2, 0, 0]], 0),
    (np.arange(24.0).reshape(2, 3, 4), np.zeros((2, 2, 2), int), 2),
    (np.float64(2.0), [0, 0], 0),
]


@pytest.mark.parametrize("method", [False, True])
@pytest.mark.parametrize("x, index, dim", GATHERS)
def test_gather_sparse_grad_gives_a_sparse_gradient(x, index, dim, method):
    results = []
    for lib in (torch, minigrad):
        t = lib.tensor(x, requires_grad=True)
        i = lib.tensor(index, dtype=lib.int64)
        y = t.gather(dim, i, sparse_grad=True) if method else lib.gather(t, dim, i, sparse_grad=True)
        (y * 3).sum().backward()
        g = t.grad
        assert g.is_sparse
        results.append((y.grad_fn.name(), tuple(g.shape), g._indices().tolist(), g._values().tolist(),
                        y.detach().numpy().tolist()))
    assert results[1] == results[0]


def test_gather_sparse_grad_accumulates_as_pytorch():
    grads = []
    for lib in (torch, minigrad):
        t = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        i = lib.tensor([[0, 1], [2, 3], [1, 1]])
        t.gather(1, i, sparse_grad=True).sum().backward()
        sparse = t.grad.is_sparse
        t.sum().backward()  # + dense: dense
        t.gather(1, i, sparse_grad=True).sum().backward()  # dense + sparse: dense
        grads.append((sparse, t.grad.is_sparse, t.grad.numpy().tolist()))
    assert grads[1] == grads[0]


def _outcome_of(call, lib):
    try:
        r = call(lib)
    except Exception as e:  # noqa: BLE001 (the refusal is what is compared)
        return type(e).__name__, str(e)
    return str(r.dtype).split(".")[-1], r.detach().numpy().tolist()


_X = [[1.0, -2.0, 3.0], [0.5, 5.0, -1.0]]
# (label, the call given the library): where's out= form takes tensors only; clamp's overloads take two tensor
# bounds or two numbers (a 0-dim tensor that needs no grad counts as a number)
ARGUMENT_CASES = [
    ("where(c, x, y, out)", lambda lib: lib.where(lib.tensor(_X) > 0, lib.tensor(_X), lib.zeros(2, 3),
                                                  out=lib.empty(2, 3))),
    ("where(c, x, number, out)", lambda lib: lib.where(lib.tensor(_X) > 0, lib.tensor(_X), 0.0, out=lib.empty(2, 3))),
    ("where(c, number, y, out)", lambda lib: lib.where(lib.tensor(_X) > 0, 1, lib.tensor(_X), out=lib.empty(2, 3))),
    ("where(bool, x, y, out)", lambda lib: lib.where(True, lib.tensor(_X), lib.tensor(_X), out=lib.empty(2, 3))),
    ("where(c, x, number)", lambda lib: lib.where(lib.tensor(_X) > 0, lib.tensor(_X), 0.0)),
    ("clamp_(number, tensor)", lambda lib: lib.tensor(_X).clamp_(0.0, lib.tensor([1.0, 2.0, 3.0]))),
    ("clamp_(tensor, number)", lambda lib: lib.tensor(_X).clamp_(lib.tensor([1.0, 2.0, 3.0]), 2.0)),
    ("clamp_(0-dim tensor, number)", lambda lib: lib.tensor(_X).clamp_(lib.tensor(0.5), 2.0)),
    ("clamp_(tensor, tensor)", lambda lib: lib.tensor(_X).clamp_(lib.zeros(3), lib.tensor([1.0, 2.0, 3.0]))),
    ("clamp(number, tensor)", lambda lib: lib.clamp(lib.tensor(_X), 0.0, lib.tensor([1.0, 2.0, 3.0]))),
    ("clamp(0-dim tensor, number)", lambda lib: lib.clamp(lib.tensor(_X), lib.tensor(0.5), 2.0)),
    ("clamp(tensor, number, out)", lambda lib: lib.clamp(lib.tensor(_X), lib.zeros(3), 1.0, out=lib.empty(2, 3))),
    ("clamp(tensor, None, out)", lambda lib: lib.clamp(lib.tensor(_X), lib.zeros(3), None, out=lib.empty(2, 3))),
    ("clamp(min=str)", lambda lib: lib.clamp(lib.tensor(_X), min="a")),
]


@pytest.mark.parametrize("label, call", ARGUMENT_CASES, ids=[c[0] for c in ARGUMENT_CASES])
def test_arguments_as_pytorch(label, call):
    expected, got = _outcome_of(call, torch), _outcome_of(call, minigrad)
    if expected[0] == "TypeError" and "received an invalid combination" in expected[1]:
        assert got[0] == "TypeError"
        assert got[1].split(", but")[0] == expected[1].split(", but")[0]  # (the call's types as PyTorch reads them)
    else:
        assert got == expected


def _base(lib):
    return lib.arange(6.0).reshape(2, 3)


_MASK = [[True, False, True], [False, True, True]]
# masked_scatter_ whose source shares self's memory: PyTorch's kernel fills the masked places in order, reading a
# contiguous source as it goes (an element already overwritten is read back); a strided source is copied first
MASKED_SCATTER_CASES = [
    ("source is self", lambda lib, x, m: x.masked_scatter_(m, x)),
    ("source a flat view, one on", lambda lib, x, m: x.masked_scatter_(m, x.view(-1)[1:])),
    ("source the transpose", lambda lib, x, m: x.masked_scatter_(m, x.t())),
    ("keywords", lambda lib, x, m: x.masked_scatter_(mask=m, source=x)),
    ("self requires grad", lambda lib, x, m: (lambda y: y.masked_scatter_(m, y))(x.requires_grad_() * 1)),
    ("source too short", lambda lib, x, m: x.masked_scatter_(m, x[1:])),
    ("out of place", lambda lib, x, m: x.masked_scatter(m, x)),
]


@pytest.mark.parametrize("label, call", MASKED_SCATTER_CASES, ids=[c[0] for c in MASKED_SCATTER_CASES])
def test_masked_scatter_from_self_as_pytorch(label, call):
    def run(lib):
        return call(lib, _base(lib), lib.tensor(_MASK))

    assert _outcome_of(run, minigrad) == _outcome_of(run, torch)


def test_masked_scatter_from_self_gradient_as_pytorch():
    grads = []
    for lib in (torch, minigrad):
        x = _base(lib).requires_grad_()
        y = x * 1
        y.masked_scatter_(lib.tensor(_MASK), y.view(-1)[1:])
        (y * lib.arange(6.0).reshape(2, 3)).sum().backward()
        grads.append(x.grad.numpy().tolist())
    assert grads[1] == grads[0]


def _no_grad_view(lib):
    x = lib.ones(3, 4, requires_grad=True) * 1
    with lib.no_grad():
        v = x[:2]
    return x, v


def _setitem(v, index):
    v[index] = 5.0


# a view taken in no_grad mode of a tensor that requires grad, written in place with grad mode on; a view taken of
# it with grad mode on (PyTorch names that view's op), its base written since
NO_GRAD_VIEW_CASES = [
    ("mul_", lambda x, v: v.mul_(2)),
    ("t_", lambda x, v: v.t_()),
    ("setitem int", lambda x, v: _setitem(v, 0)),
    ("setitem slice", lambda x, v: _setitem(v, slice(0, 1))),
    ("setitem slice, int", lambda x, v: _setitem(v, (slice(1, None), 0))),
    ("setitem None", lambda x, v: _setitem(v, None)),
    ("setitem ...", lambda x, v: _setitem(v, Ellipsis)),
    ("view's t() mul_", lambda x, v: v.t().mul_(2)),
    ("view's view(-1) add_", lambda x, v: v.view(-1).add_(1)),
    ("view's narrow mul_", lambda x, v: v.narrow(1, 0, 2).mul_(2)),
    ("view's diagonal zero_", lambda x, v: v.diagonal().zero_()),
    ("view's select copy_", lambda x, v: v.select(0, 1).copy_(v.new_zeros(4))),
    ("view's split piece mul_", lambda x, v: v.split(1)[0].mul_(2)),
    ("base written, view used", lambda x, v: (x.mul_(2), v * 2)),
    ("view written in no_grad, used", lambda x, v: (v.detach().mul_(2), v * 2)),
]


@pytest.mark.parametrize("label, write", NO_GRAD_VIEW_CASES, ids=[c[0] for c in NO_GRAD_VIEW_CASES])
def test_no_grad_view_written_with_grad_mode_on(label, write):
    texts = []
    for lib in (torch, minigrad):
        with pytest.raises(RuntimeError) as e:
            write(*_no_grad_view(lib))
        texts.append(str(e.value))
    assert texts[1] == texts[0]


def test_no_grad_view_written_in_no_grad_mode():
    results = []
    for lib in (torch, minigrad):
        x, v = _no_grad_view(lib)
        with lib.no_grad():
            v.mul_(2)
            w = v * 2
        results.append((x.detach().numpy().tolist(), w.numpy().tolist()))
    assert results[1] == results[0]


_M = [[2.0, 1.0], [1.0, 3.0]]


def _three(lib, dtype="float32"):
    return tuple(lib.empty(0, dtype=getattr(lib, dtype)) for _ in range(3))


# the sweep's last gaps: view(dtype=), svd's driver= and out=, block_diag(), out='s refusal naming the function
SWEEP_CASES = [
    ("view(dtype=)", lambda lib: lib.tensor(_M).view(dtype=lib.int32)),
    ("linalg.svd(driver=None)", lambda lib: lib.linalg.svd(lib.tensor(_M), driver=None)[1]),
    ("linalg.svd(driver='gesvd')", lambda lib: lib.linalg.svd(lib.tensor(_M), driver="gesvd")[1]),
    ("linalg.svdvals(driver=None)", lambda lib: lib.linalg.svdvals(lib.tensor(_M), driver=None)),
    ("linalg.svdvals(driver='gesvdj')", lambda lib: lib.linalg.svdvals(lib.tensor(_M), driver="gesvdj")),
    ("linalg.svdvals(driver=3)", lambda lib: lib.linalg.svdvals(lib.tensor(_M), driver=3)),
    ("linalg.svd(out=)", lambda lib: (lambda out: lib.linalg.svd(lib.tensor(_M), out=out) and out[1])(_three(lib))),
    ("linalg.svd(out=) float64", lambda lib: lib.linalg.svd(lib.tensor(_M), out=_three(lib, "float64"))[1]),
    ("linalg.svd(out=) requires grad",
     lambda lib: lib.linalg.svd(lib.tensor(_M, requires_grad=True), out=_three(lib))[1]),
    ("linalg.svd(out=Tensor)", lambda lib: lib.linalg.svd(lib.tensor(_M), out=lib.empty(0))[1]),
    ("linalg.inv(out=list)", lambda lib: lib.linalg.inv(lib.tensor(_M), out=[1])),
    ("special.erf(out=int)", lambda lib: lib.special.erf(lib.tensor(_M), out=3)),
    ("block_diag()", lambda lib: lib.block_diag()),
]


@pytest.mark.parametrize("label, call", SWEEP_CASES, ids=[c[0] for c in SWEEP_CASES])
def test_sweep_gaps_as_pytorch(label, call):
    expected, got = _outcome_of(call, torch), _outcome_of(call, minigrad)
    assert got[0] == expected[0]
    if isinstance(expected[1], str):
        assert got[1] == expected[1]
    else:
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-5)


def test_svd_out_returns_outs_in_pytorch_named_tuple():
    for lib in (torch, minigrad):
        out = _three(lib)
        r = lib.linalg.svd(lib.tensor(_M), out=out)
        assert type(r).__name__ == "linalg_svd_out"
        assert all(a is b for a, b in zip(r, out))


@pytest.mark.parametrize("kwargs", [{"min_value": -2.0, "max_value": 3.0}, {"min_val": 1.0, "max_val": -1.0},
                                    {"max_val": 0.5}, {"min_value": -0.5}])
def test_hardtanh_deprecated_names_and_bounds_as_pytorch(kwargs):
    results = []
    for lib in (torch, minigrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                m = lib.nn.Hardtanh(**kwargs)
                r = (repr(m), m(lib.tensor([-5.0, 0.25, 5.0])).tolist())
            except AssertionError as e:
                r = ("AssertionError", str(e))
        results.append((r, [(w.category.__name__, str(w.message)) for w in caught]))
    assert results[1] == results[0]
