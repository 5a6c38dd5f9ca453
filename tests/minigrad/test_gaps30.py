"""PyTorch 2.13's answers where minigrad differed: writes through expanded tensors (fill_, zero_, a view of
distinct elements, the puts PyTorch warns of), ..."""
import warnings

import pytest

import minigrad

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    """(error type and text, or the values written, base's and the tensor's; the warnings' texts)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = fn(lib)
        except Exception as e:  # noqa: BLE001 (any error is the answer compared)
            got = (type(e).__name__, str(e))
    return got, [str(w.message).split(" (Triggered internally")[0] for w in caught]


def _same(fn):
    assert _outcome(minigrad, fn) == _outcome(torch, fn)


# ---- writes through an expanded tensor ------------------------------------------------------------------
def _expanded(action, shape=(1, 3), to=(2, 3)):
    def run(L):
        base = L.arange(float(shape[-1])).reshape(shape)
        t = base.expand(*to)
        action(L, t)
        return base.flatten().tolist(), t.flatten().tolist()
    return run


EXPANDED = {  # each: allowed or refused as PyTorch's has_internal_overlap of what it writes decides
    "fill_": lambda L, t: t.fill_(1.5),
    "zero_": lambda L, t: t.zero_(),
    "fill_0d_tensor": lambda L, t: t.fill_(L.tensor(2.0)),
    "setitem_row": lambda L, t: t.__setitem__(0, 7.0),
    "setitem_row_tensor": lambda L, t: t.__setitem__(1, L.tensor([4.0, 5.0, 6.0])),
    "setitem_all": lambda L, t: t.__setitem__(slice(None), 1.0),
    "setitem_column": lambda L, t: t.__setitem__((slice(None), 0), 1.0),
    "setitem_ellipsis": lambda L, t: t.__setitem__(Ellipsis, 1.0),
    "setitem_mask": lambda L, t: t.__setitem__(L.tensor([[True, False, True], [False, False, False]]), 9.0),
    "setitem_ids": lambda L, t: t.__setitem__(L.tensor([0]), 3.0),
    "row_mul_": lambda L, t: t[0].mul_(2),
    "row_add_": lambda L, t: t[1].add_(1),
    "row_copy_": lambda L, t: t[0].copy_(L.tensor([3.0, 2.0, 1.0])),
    "column_fill_": lambda L, t: t[:, 1].fill_(5),
    "column_add_": lambda L, t: t[:, 1].add_(5),
    "copy_": lambda L, t: t.copy_(L.ones(2, 3)),
    "mul_": lambda L, t: t.mul_(2),
    "add_": lambda L, t: t.add_(1),
    "iadd": lambda L, t: t.__iadd__(1),
    "exp_": lambda L, t: t.exp_(),
    "clamp_": lambda L, t: t.clamp_(0, 1),
    "uniform_": lambda L, t: t.uniform_(),
    "masked_fill_": lambda L, t: t.masked_fill_(L.tensor([True, False, True]), 1.0),
    "index_fill_": lambda L, t: t.index_fill_(1, L.tensor([0]), 1.0),
    "index_put_": lambda L, t: t.index_put_((L.tensor([0]),), L.tensor(1.0)),
    "index_add_": lambda L, t: t.index_add_(0, L.tensor([0]), L.ones(1, 3)),
    "scatter_": lambda L, t: t.scatter_(1, L.tensor([[0], [0]]), 1.0),
    "detach_fill_": lambda L, t: t.detach().fill_(3),
}


@pytest.mark.parametrize("name", sorted(EXPANDED))
def test_write_through_an_expanded_tensor(name):
    _same(_expanded(EXPANDED[name]))


@pytest.mark.parametrize("shape,to", [((1,), (1,)), ((1,), (0,)), ((1,), (1, 1)), ((3,), (1, 3)), ((3,), (2, 3))])
def test_expanded_without_repeated_elements_takes_any_write(shape, to):
    _same(_expanded(lambda L, t: t[-1:].mul_(2).add_(1), shape, to))


def test_a_read_only_array_stays_refused():  # (a cached mask's: no writable memory under it)
    m = minigrad.ones(2, 3).tril().bool()
    mask = minigrad.Tensor._wrap(minigrad.ops.shape._triangle(2, 3, 0, False))
    assert not mask.array.flags.writeable
    with pytest.raises(RuntimeError, match="more than one element"):
        mask.fill_(False)
    assert mask.tolist() == m.tolist()


# ---- several Ellipsis in one index ----------------------------------------------------------------------
SEVERAL = [(..., ...), (..., ..., 0), (0, ..., ...), (..., 0, ...), (..., ..., 0, 0), (..., None, ...),
           (..., ..., slice(0, 1)), (..., ..., ...), (None, ..., ...), (..., ..., None), (..., slice(1, 2), ...),
           (..., ..., slice(None), slice(None), slice(None))]


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("index", SEVERAL, ids=str)
def test_several_ellipses_read(index, grad):
    def read(L):
        y = L.arange(6.0).reshape(2, 3).requires_grad_(grad)[index]
        return tuple(y.shape), y.flatten().tolist(), y.grad_fn.name() if grad else None
    _same(read)


@pytest.mark.parametrize("index", [(..., ...), (..., 0, ...), (..., ..., slice(0, 1)), (0, ..., ...), (..., ..., 1)],
                         ids=str)
def test_several_ellipses_write(index):
    def write(L):
        y = L.zeros(2, 3, requires_grad=True) * 1
        y[index] = 2.0
        return y.tolist(), y.grad_fn.name().split("::")[-1]
    _same(write)
