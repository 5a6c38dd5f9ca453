"""Bool and float dims refused with PyTorch's parser's texts; PyTorch's overload texts for add(list), narrow,
randint and randn; compared against PyTorch."""
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _answer(f, lib):
    try:
        r = f(lib)
    except Exception as e:  # (the answer compared is the exception's type and text)
        return type(e).__name__, str(e).replace("torch.", "").replace("minigrad.", "")
    if isinstance(r, tuple):
        r = r[0]
    return "ok", str(r.dtype).replace("torch.", "").replace("minigrad.", ""), tuple(r.shape), r.tolist()


def _same(f):
    expected, got = _answer(f, torch), _answer(f, minigrad)
    assert got == expected


_BOOL_DIM = {  # a dim given as True: refused by PyTorch's parser (or an overload list), where Python takes it as 1
    "sum": "t.sum(True)", "sum_function": "L.sum(t, True)", "mean": "t.mean(True)", "prod": "t.prod(True)",
    "prod_function": "L.prod(t, True)", "max": "t.max(True)", "max_function": "L.max(t, True)", "min": "t.min(True)",
    "all": "t.all(True)", "all_function": "L.all(t, True)", "any": "t.any(True)", "sort": "t.sort(True)",
    "sort_function": "L.sort(t, True)", "argsort": "t.argsort(True)", "argsort_function": "L.argsort(t, True)",
    "softmax": "t.softmax(True)", "softmax_function": "L.softmax(t, True)", "log_softmax": "t.log_softmax(True)",
    "cumsum": "t.cumsum(True)", "cumprod": "L.cumprod(t, True)", "argmax": "t.argmax(True)",
    "argmin": "L.argmin(t, True)", "amax": "t.amax(True)", "amin": "L.amin(t, True)", "logsumexp": "t.logsumexp(True)",
    "nansum": "t.nansum(True)", "nansum_function": "L.nansum(t, True)", "unsqueeze": "t.unsqueeze(True)",
    "squeeze": "t.squeeze(True)", "transpose": "t.transpose(True, 0)", "transpose_second": "t.transpose(0, True)",
    "flatten": "t.flatten(True)", "topk": "t.topk(1, True)", "topk_function": "L.topk(t, 1, True)",
    "kthvalue": "t.kthvalue(1, True)", "select": "t.select(True, 0)", "median": "t.median(True)",
    "mode": "L.mode(t, True)", "unbind": "t.unbind(True)", "chunk": "t.chunk(1, True)", "diff": "t.diff(1, True)",
    "flip": "t.flip(True)", "flip_tuple": "t.flip((True,))", "roll": "t.roll(1, True)", "roll_shift": "t.roll(True)",
    "diagonal": "t.diagonal(0, True)", "std_unbiased": "t.std(True)", "var_biased": "t.var(False)",
    "std_function": "L.std(t, False)", "std_dim_unbiased": "t.std(0, True)",
}
_FLOAT_DIM = {  # a dim (or a k, an offset) given as a float: PyTorch's parser's texts, not an error from deep inside
    "topk": "t.topk(1, 1.0)", "topk_function": "L.topk(t, 1, 1.0)", "kthvalue_k": "t.kthvalue(1.0)",
    "kthvalue_dim": "t.kthvalue(1, 1.0)", "sort": "t.sort(1.0)", "sort_function": "L.sort(t, 1.0)",
    "argsort": "t.argsort(1.0)", "argsort_function": "L.argsort(t, 1.0)", "roll_dims": "t.roll(1, 1.0)",
    "roll_shifts": "t.roll(1.0)", "diagonal_offset": "t.diagonal(1.0)", "diagonal_dim1": "t.diagonal(0, 1.0)",
    "softmax": "t.softmax(1.0)", "transpose": "t.transpose(1.0, 0)", "all": "t.all(1.0)", "prod": "t.prod(1.0)",
    "cumsum": "L.cumsum(t, 1.0)", "flip": "t.flip(1.0)",
}


@pytest.mark.parametrize("name", sorted(_BOOL_DIM))
def test_bool_dim_answered_as_pytorch(name):
    _same(lambda L: eval(_BOOL_DIM[name], dict(L=L, t=L.arange(6.).reshape(2, 3))))


@pytest.mark.parametrize("name", sorted(_FLOAT_DIM))
def test_float_dim_answered_as_pytorch(name):
    _same(lambda L: eval(_FLOAT_DIM[name], dict(L=L, t=L.arange(6.).reshape(2, 3))))


@pytest.mark.parametrize("expr", ["t.sum(1)", "t.sum(-1)", "t.softmax(-1)", "t.transpose(0, 1)", "t.transpose(-1, 0)",
                                  "t.std(0)", "t.std(0, False)", "t.roll(1, 1)", "t.diagonal(0, 0, 1)",
                                  "t.kthvalue(2, 1)", "t.topk(2, 0)", "t.sum(L.tensor(1))", "t.softmax(L.tensor(0))"])
def test_int_dims_still_taken(expr):
    _same(lambda L: eval(expr, dict(L=L, t=L.arange(6.).reshape(2, 3))))


@pytest.mark.parametrize("expr", ["L.rand(2, size=(2,))", "L.randn(2, 3, size=(2,))", "L.randint(0, 5, (2.0,))",
                                  "L.randint(0, 5, (2, 1.5))", "L.randint(5, (2.0,))", "L.ones(2, size=(2,))"])
def test_factory_overload_texts_as_pytorch(expr):
    _same(lambda L: eval(expr, dict(L=L)))
