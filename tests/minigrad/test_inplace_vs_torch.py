"""In-place ops (and the scatter / index family they write with) against PyTorch: values, dtypes,
gradients and refusals (type and text) at the corners: 0-d tensors, empty and out-of-range indices."""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def outcome(lib, f):
    """What f(lib) gives: its tensor's dtype and values (or another result's repr), or its error's type and first line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f(lib)
    except Exception as e:  # noqa: BLE001 (the refusal is the result compared)
        return type(e).__name__, str(e).split("\n")[0]
    if isinstance(r, (torch.Tensor, mg.Tensor)):
        return "ok", str(r.dtype).split(".")[-1], np.asarray(r.detach().numpy()).tolist()
    return "ok", repr(r)


def assert_same(f):
    expected = outcome(torch, f)
    assert outcome(mg, f) == expected


def T(lib, *args, **kwargs):
    return lib.tensor(*args, **kwargs)


# ---- scatter family: a 0-d tensor counts as one of shape [1]; PyTorch's checks, in its order -----------
SCATTER_CASES = {
    "scatter_add_ 0-d index": lambda l: l.zeros(3).scatter_add_(0, T(l, 1), T(l, 5.0)),
    "scatter_add_ 0-d index, 1-d src": lambda l: l.zeros(3).scatter_add_(0, T(l, 1), T(l, [5.0, 6.0])),
    "scatter_ 0-d index, value": lambda l: l.zeros(3).scatter_(0, T(l, 1), 5.0),
    "scatter_ 0-d src": lambda l: l.zeros(3).scatter_(0, T(l, [1]), T(l, 2.0)),
    "scatter_ 0-d self": lambda l: T(l, 0.0).scatter_(0, T(l, [0]), T(l, [5.0])),
    "scatter_ all 0-d": lambda l: T(l, 0.0).scatter_(0, T(l, 0), T(l, 5.0)),
    "scatter_add_ 0-d self": lambda l: T(l, 1.0).scatter_add_(0, T(l, [0, 0]), T(l, [5.0, 2.0])),
    "scatter_ reduce= 0-d index": lambda l: l.ones(3).scatter_(0, T(l, 1), 5.0, reduce="multiply"),
    "scatter_reduce_ 0-d index": lambda l: l.zeros(3).scatter_reduce_(0, T(l, 1), T(l, 5.0), "amax"),
    "scatter_reduce_ 0-d self mean": lambda l: T(l, 3.0).scatter_reduce_(0, T(l, [0, 0]), T(l, [2.0, 4.0]), "mean"),
    "scatter_ 2-d self, 0-d index": lambda l: l.zeros(2, 3).scatter_(0, T(l, 1), 5.0),
    "scatter_ src of more dims": lambda l: l.zeros(3).scatter_(0, T(l, 1), T(l, [[5.0, 6.0]])),
    "scatter_ src of fewer dims": lambda l: l.zeros(2, 3).scatter_(0, T(l, [[1]]), l.ones(1)),
    "scatter_ index larger than src": lambda l: l.zeros(3).scatter_(0, T(l, [1, 2, 0]), T(l, [1.0, 2.0])),
    "scatter_ index larger than self": lambda l: l.zeros(2, 3).scatter_(0, T(l, [[1, 1, 1, 1]]), 1.0),
    "scatter_add_ index larger than self": lambda l: l.zeros(2, 3).scatter_add_(0, T(l, [[1, 1, 1, 1]]), l.ones(2, 4)),
    "scatter_reduce_ index larger than src": lambda l: l.zeros(2, 3).scatter_reduce_(
        0, T(l, [[1, 1, 1]]), l.ones(1, 2), "sum"),
    "scatter_add_ float index": lambda l: l.zeros(3).scatter_add_(0, T(l, [1.0]), T(l, [1.0])),
    "scatter_reduce_ float index": lambda l: l.zeros(3).scatter_reduce_(0, T(l, [1.0]), T(l, [1.0]), "sum"),
    "scatter_ bad dim before bad index": lambda l: l.zeros(3).scatter_(2, T(l, [1.0]), 1.0),
    "scatter_ src dtype before shape": lambda l: l.zeros(3).scatter_(0, T(l, [[1]]), T(l, [1.0], dtype=l.float64)),
    "scatter_ 0-d src of another dtype": lambda l: l.zeros(3).scatter_(0, T(l, [1]), T(l, 2)),
    "scatter_ empty index of other dims": lambda l: l.zeros(3).scatter_(0, l.zeros(0, 2, dtype=l.int64), 1.0),
    "scatter_ empty index": lambda l: l.zeros(3).scatter_(0, l.zeros(0, dtype=l.int64), l.ones(0)),
    "scatter_ complex value into float": lambda l: l.zeros(3).scatter_(0, T(l, [1]), 1 + 2j),
    "scatter_ bad reduce": lambda l: l.ones(3).scatter_(0, T(l, [1, 1]), T(l, [2.0, 3.0]), reduce="foo"),
    "scatter_add_ number src": lambda l: l.zeros(3).scatter_add_(0, T(l, [1]), 2.0),
    "scatter_add number src": lambda l: l.scatter_add(l.zeros(3), 0, T(l, [1]), 2.0),
    "scatter_reduce_ number src": lambda l: l.ones(3).scatter_reduce_(0, T(l, [1, 1]), 2.0, "sum"),
    "gather 0-d index": lambda l: l.zeros(3).gather(0, T(l, 1)),
    "gather 2-d self, 0-d index": lambda l: l.zeros(2, 3).gather(0, T(l, 1)),
}


@pytest.mark.parametrize("case", SCATTER_CASES)
def test_scatter_family_corners_as_torch(case):
    assert_same(SCATTER_CASES[case])


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("self_0d", [False, True])
def test_scatter_reduce_0d_gradients_as_torch(reduce, include_self, self_0d):
    def run(lib):
        x = T(lib, 3.0, requires_grad=True) if self_0d else T(lib, [1.0, 2.0, 3.0], requires_grad=True)
        s = T(lib, 2.0, requires_grad=True)
        y = x.clone().scatter_reduce(0, T(lib, 0), s, reduce, include_self=include_self)
        y.sum().backward()
        return repr([y.grad_fn.name(), y.tolist(), x.grad.tolist(), s.grad.tolist()])

    assert_same(run)


@pytest.mark.parametrize("kind", ["scatter_", "scatter_add_", "value"])
@pytest.mark.parametrize("self_0d", [False, True])
def test_scatter_inplace_0d_gradients_as_torch(kind, self_0d):
    def run(lib):
        x = T(lib, 3.0, requires_grad=True) if self_0d else T(lib, [1.0, 2.0, 3.0], requires_grad=True)
        s = T(lib, 2.0, requires_grad=True)
        y = x * 1
        if kind == "value":
            y.scatter_(0, T(lib, 0), 5.0)
        else:
            getattr(y, kind)(0, T(lib, 0), s)
        (y * lib.arange(1, 1 + y.numel()).reshape(y.shape)).sum().backward()
        return repr([y.grad_fn.name(), y.tolist(), x.grad.tolist(), None if s.grad is None else s.grad.tolist()])

    assert_same(run)


# ---- put_, masked_scatter_, index_fill_ / index_copy_ / index_add_, and the mixed-dtype refusals -------------
OTHER_CASES = {
    "put_ 0-d self, accumulate": lambda l: T(l, 2.0).put_(T(l, 0), T(l, 5.0), accumulate=True),
    "put_ 0-d self": lambda l: T(l, 2.0).put_(T(l, 0), T(l, 5.0)),
    "put_ 0-d self, repeated index": lambda l: T(l, 2.0).put_(T(l, [0, 0]), T(l, [5.0, 1.0]), accumulate=True),
    "masked_scatter_ 0-d self": lambda l: T(l, 0.0).masked_scatter_(T(l, True), T(l, [7.0, 2.0])),
    "index_fill_ int32 index": lambda l: l.zeros(3).index_fill_(0, T(l, [1], dtype=l.int32), 5.0),
    "index_fill_ float index": lambda l: l.zeros(3).index_fill_(0, T(l, [1.0]), 5.0),
    "index_fill_ 1-d value": lambda l: l.zeros(3).index_fill_(0, T(l, [1]), T(l, [5.0])),
    "index_fill_ out of range": lambda l: l.zeros(3).index_fill_(0, T(l, [3]), 5.0),
    "index_fill_ below range": lambda l: l.zeros(3).index_fill_(0, T(l, [-4]), 5.0),
    "index_copy_ 0-d index and source": lambda l: l.zeros(3).index_copy_(0, T(l, 1), T(l, 5.0)),
    "index_copy_ int32 index": lambda l: l.zeros(3).index_copy_(0, T(l, [1], dtype=l.int32), T(l, [5.0])),
    "index_copy_ out of range": lambda l: l.zeros(3).index_copy_(0, T(l, [3]), T(l, [5.0])),
    "index_copy_ negative": lambda l: l.zeros(3).index_copy_(0, T(l, [-1]), T(l, [5.0])),
    "index_copy_ source dtype": lambda l: l.zeros(3).index_copy_(0, T(l, [1]), T(l, [5.0], dtype=l.float64)),
    "index_add_ out of range": lambda l: l.zeros(3).index_add_(0, T(l, [3]), T(l, [5.0])),
    "index_add_ negative": lambda l: l.zeros(3).index_add_(0, T(l, [-1]), T(l, [5.0])),
    "heaviside_ float32, float64": lambda l: l.zeros(3).heaviside_(l.ones(3, dtype=l.float64)),
    "heaviside float64, float32": lambda l: l.heaviside(l.zeros(3, dtype=l.float64), l.ones(3)),
    "heaviside_ int64, float32": lambda l: l.zeros(3, dtype=l.int64).heaviside_(l.ones(3)),
    "heaviside bool, complex64": lambda l: l.heaviside(l.ones(3, dtype=l.bool), l.ones(3, dtype=l.complex64)),
    "ldexp_ into int64": lambda l: l.ones(3, dtype=l.int64).ldexp_(l.ones(3, dtype=l.int64)),
    "ldexp_ into bool": lambda l: l.ones(3, dtype=l.bool).ldexp_(l.ones(3)),
    "ldexp float16, int64": lambda l: l.ldexp(l.ones(3, dtype=l.float16), T(l, [1, 2, 3])),
    "ldexp float32, bool": lambda l: l.ldexp(l.ones(3), l.ones(3, dtype=l.bool)),
    "lerp_ int64, float32 end": lambda l: l.zeros(3, dtype=l.int64).lerp_(l.ones(3), 0.5),
    "lerp_ uint8, int32 weight": lambda l: l.zeros(3, dtype=l.uint8).lerp_(
        l.ones(3, dtype=l.uint8), l.ones(3, dtype=l.int32)),
    "lerp_ complex64": lambda l: l.zeros(3, dtype=l.complex64).lerp_(T(l, [1 + 2j, 2, 3j]), 0.25),
    "lerp complex64 tensor weight": lambda l: l.lerp(l.zeros(2, dtype=l.complex64), T(l, [1 + 2j, 2]),
                                                     T(l, [0.5j, 1], dtype=l.complex64)),
}


@pytest.mark.parametrize("case", OTHER_CASES)
def test_inplace_corners_as_torch(case):
    assert_same(OTHER_CASES[case])


def test_put_0d_gradients_as_torch():
    def run(lib):
        x, s = T(lib, 2.0, requires_grad=True), T(lib, [5.0, 1.0], requires_grad=True)
        y = x * 3
        y.put_(T(lib, [0, 0]), s, accumulate=True)
        (y * 2).backward()
        return repr([y.grad_fn.name(), y.item(), x.grad.item(), s.grad.tolist()])

    assert_same(run)
