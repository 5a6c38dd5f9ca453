"""PyTorch's refusals of in-place writes whose inputs share memory with the tensor written
(assert_no_overlap / assert_no_partial_overlap), case by case against torch: refused and allowed alike."""
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _grid(lib):
    return lib.arange(24.).reshape(6, 4)


def _ids(lib):
    return lib.tensor([0, 1])


def _mask(lib, *first):
    return lib.tensor(list(first) + [False] * (6 - len(first)))


# each case: (name, write(lib)) where write builds its tensors from lib and runs the in-place write
CASES = [
    ("setitem value all of its rows", lambda L: (lambda x: x.__setitem__(_ids(L), x[0:2]))(_grid(L))),
    ("setitem value some rows", lambda L: (lambda x: x.__setitem__(_ids(L), x[1:3]))(_grid(L))),
    ("setitem value other rows", lambda L: (lambda x: x.__setitem__(_ids(L), x[4:6]))(_grid(L))),
    ("setitem value a row broadcast", lambda L: (lambda x: x.__setitem__(_ids(L), x[2]))(_grid(L))),
    ("setitem 0-d value", lambda L: (lambda x: x.__setitem__(_ids(L), x[5, 0]))(_grid(L))),
    ("setitem column value", lambda L: (lambda x: x.__setitem__((slice(None), L.tensor([0])), x[:, 1:2]))(_grid(L))),
    ("setitem strided value", lambda L: (lambda z: z.__setitem__(L.tensor([1, 3, 5, 7]), z[::2]))(L.arange(8.))),
    ("setitem expanded value", lambda L: (lambda x: x.__setitem__(_ids(L), x[5:6].expand(2, 4)))(_grid(L))),
    ("setitem transposed value", lambda L: (lambda y: y.__setitem__(L.tensor([0, 1, 2, 3]), y[:4, :4].t()))(_grid(L))),
    ("setitem ids of self", lambda L: (lambda x: x.__setitem__(x[0:2], L.tensor([7, 8])))(L.arange(6))),
    ("setitem ids of self, number", lambda L: (lambda x: x.__setitem__(x[0:1], 5))(L.arange(6))),
    ("setitem pair of ids", lambda L: (lambda x: x.__setitem__((_ids(L), _ids(L)), x[0, :2]))(_grid(L))),
    ("setitem into a slice, overlapping", lambda L: (lambda x: x[1:].__setitem__(_ids(L), x[0:2]))(_grid(L))),
    ("setitem slice then ids, disjoint", lambda L: (lambda x: x.__setitem__((slice(1, None), _ids(L)), x[0:1, :1]))(_grid(L))),
    ("setitem slice then ids, overlap", lambda L: (lambda x: x.__setitem__((slice(1, None), _ids(L)), x[1:2, :1]))(_grid(L))),
    ("setitem int then ids, disjoint", lambda L: (lambda x: x.__setitem__((1, _ids(L)), x[0, :1]))(_grid(L))),
    ("setitem int then ids, overlap", lambda L: (lambda x: x.__setitem__((1, _ids(L)), x[1, :1]))(_grid(L))),
    ("setitem None then ids", lambda L: (lambda x: x.__setitem__((None, _ids(L)), x[4:6]))(_grid(L))),
    ("setitem mask", lambda L: (lambda x: x.__setitem__(_mask(L, True, True), x[4:6]))(_grid(L))),
    ("setitem mask, 0-d value", lambda L: (lambda x: x.__setitem__(_mask(L, True, True), x[0, 0]))(_grid(L))),
    ("setitem mask, 1-element value", lambda L: (lambda x: x.__setitem__(_mask(L, True), x[0, 0:1]))(_grid(L))),
    ("setitem mask of self, number", lambda L: (lambda b: b.__setitem__(b, False))(L.tensor([True, False, True]))),
    ("setitem mask of self, values", lambda L: (lambda b: b.__setitem__(b, L.tensor([False, False])))(
        L.tensor([True, False, True]))),
    ("setitem ids and mask, 0-d value", lambda L: (lambda x: x.__setitem__(
        (_ids(L), L.tensor([True, False, False, False])), x[0, 0]))(_grid(L))),
    ("setitem slice, overlapping", lambda L: (lambda x: x.__setitem__(slice(1, 3), x[0:2]))(_grid(L))),
    ("setitem slice, itself", lambda L: (lambda x: x.__setitem__(slice(1, 3), x[1:3]))(_grid(L))),
    ("setitem all, transposed", lambda L: (lambda y: y.__setitem__(slice(None), y.t()))(L.arange(16.).reshape(4, 4))),
    ("setitem int, its own row", lambda L: (lambda x: x.__setitem__(0, x[0]))(_grid(L))),
    ("setitem int, another row", lambda L: (lambda x: x.__setitem__(1, x[0]))(_grid(L))),
    ("setitem int, part of its row", lambda L: (lambda x: x.__setitem__(0, x[0, 1:2]))(_grid(L))),
    ("index_put_ other rows", lambda L: (lambda x: x.index_put_((_ids(L),), x[4:6]))(_grid(L))),
    ("index_put_ own rows", lambda L: (lambda x: x.index_put_((_ids(L),), x[0:2]))(_grid(L))),
    ("index_put_ accumulate", lambda L: (lambda x: x.index_put_((_ids(L),), x[4:6], accumulate=True))(_grid(L))),
    ("index_put_ ids of self", lambda L: (lambda x: x.index_put_((x[0:2],), L.tensor([7, 8])))(L.arange(6))),
    ("index_put_ expanded value", lambda L: (lambda x: x.index_put_((_ids(L),), x[0:1].expand(2, 4)))(_grid(L))),
    ("index_put_ mask, 0-d value", lambda L: (lambda x: x.index_put_((_mask(L, True),), x[0, 0]))(_grid(L))),
    ("index_put_ mask, 0-d value, accumulate", lambda L: (lambda x: x.index_put_(
        (_mask(L, True),), x[0, 0], accumulate=True))(_grid(L))),
    ("index_put out of place", lambda L: (lambda x: x.index_put((_ids(L),), x[0:2]))(_grid(L))),
    ("index_copy_ source", lambda L: (lambda x: x.index_copy_(0, _ids(L), x[4:6]))(_grid(L))),
    ("index_copy_ index of self", lambda L: (lambda x: x.index_copy_(0, x[0:2], L.tensor([1, 2])))(L.arange(6))),
    ("index_add_ source", lambda L: (lambda x: x.index_add_(0, _ids(L), x[4:6]))(_grid(L))),
    ("index_fill_ 0-d value", lambda L: (lambda x: x.index_fill_(0, _ids(L), x[0, 0]))(_grid(L))),
    ("index_fill_ index of self", lambda L: (lambda x: x.index_fill_(0, x[0:2], 3))(L.arange(6))),
    ("scatter_ src", lambda L: (lambda x: x.scatter_(0, L.zeros(2, 4, dtype=L.long), x[4:6]))(_grid(L))),
    ("scatter_ src itself", lambda L: (lambda x: x.scatter_(0, L.zeros(6, 4, dtype=L.long), x))(_grid(L))),
    ("scatter_ value", lambda L: (lambda x: x.scatter_(0, L.zeros(2, 4, dtype=L.long), 1.0))(_grid(L))),
    ("scatter_ index of self", lambda L: (lambda x: x.scatter_(0, x[0:2], L.tensor([1, 2])))(L.arange(6))),
    ("scatter_add_ src", lambda L: (lambda x: x.scatter_add_(0, L.zeros(2, 4, dtype=L.long), x[4:6]))(_grid(L))),
    ("masked_scatter_ source", lambda L: (lambda x: x.masked_scatter_(_grid(L) < 4, x[4:6]))(_grid(L))),
    ("put_ source", lambda L: (lambda x: x.put_(_ids(L), x[5, :2]))(_grid(L))),
    ("put_ index of self", lambda L: (lambda x: x.put_(x[0:2], L.tensor([1, 2])))(L.arange(6))),
    ("copy_ overlapping", lambda L: (lambda x: x[1:3].copy_(x[0:2]))(_grid(L))),
    ("copy_ itself", lambda L: (lambda x: x[1:3].copy_(x[1:3]))(_grid(L))),
    ("copy_ disjoint", lambda L: (lambda x: x[1:3].copy_(x[3:5]))(_grid(L))),
    ("copy_ transposed", lambda L: (lambda y: y.copy_(y.t()))(L.arange(16.).reshape(4, 4))),
    ("out= overlapping", lambda L: (lambda x: L.add(x[0:2], 1, out=x[1:3]))(_grid(L))),
    ("out= strided", lambda L: (lambda x: L.add(x[::2], 1, out=x[1::2]))(_grid(L))),
    # the order of the checks: index_put_'s shape, id and mask checks come after the overlap refusal
    ("order: value shape", lambda L: (lambda x: x.__setitem__(L.tensor([0]), x[0:3]))(_grid(L))),
    ("order: value shape, index_put_", lambda L: (lambda x: x.index_put_((L.tensor([0]),), x[0:3]))(_grid(L))),
    ("order: id out of range", lambda L: (lambda x: x.__setitem__(L.tensor([9]), x[0:1]))(_grid(L))),
    ("order: id out of range, index_put_", lambda L: (lambda x: x.index_put_((L.tensor([9]),), x[0:1]))(_grid(L))),
    ("order: mask shape", lambda L: (lambda x: x.__setitem__(L.tensor([True, False]), x[0:1]))(_grid(L))),
    ("order: mask shape, 0-d value", lambda L: (lambda x: x.__setitem__(L.tensor([True, False]), x[0, 0]))(_grid(L))),
    ("order: too many indices", lambda L: (lambda x: x.__setitem__((L.tensor([0]),) * 3, x[0, 0]))(_grid(L))),
    ("order: dtype", lambda L: (lambda x: x.__setitem__(_ids(L), x.view(L.int32)[0:2]))(_grid(L))),
    ("order: empty value", lambda L: (lambda x: x.index_put_((L.tensor([0]),), x[:0]))(_grid(L))),
    ("order: ids of self, value shape", lambda L: (lambda x: x.index_put_((x[0:2],), L.tensor([7, 8, 9])))(L.arange(6))),
    ("order: leaf first", lambda L: (lambda x: x.__setitem__(slice(1, 3), x.detach()[0:2]))(_grid(L).requires_grad_())),
]


def _outcome(lib, write):
    try:
        write(lib)
    except Exception as e:  # noqa: BLE001 (the refusal itself is what is compared)
        return type(e).__name__, str(e).split("\n")[0].replace("minigrad.", "torch.")
    return "ok"


@pytest.mark.parametrize("name,write", CASES, ids=[c[0] for c in CASES])
def test_refused_or_allowed_as_torch(name, write):
    assert _outcome(minigrad, write) == _outcome(torch, write)


@pytest.mark.parametrize("index", [lambda L: L.tensor([4, 0]), lambda L: L.tensor([False, False, True, False, True, False])])
def test_written_values_as_torch(index):
    """Where a write is allowed beside memory sharing (a strided or expanded value), the values are torch's."""
    out = []
    for L in (minigrad, torch):
        x = _grid(L)
        x[index(L)] = x[1:2].expand(2, 4)
        z = L.arange(8.)
        z[L.tensor([1, 3, 5, 7])] = z[::2]
        out.append((x.tolist(), z.tolist()))
    assert out[0] == out[1]


def test_refused_write_leaves_the_tensor_as_it_was():
    x = _grid(minigrad)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x[minigrad.tensor([0, 1])] = x[4:6]
    assert x.tolist() == _grid(torch).tolist()


BROADCAST = [
    ("rows from a row", lambda L: (lambda x: x.__setitem__(slice(0, 2), x[0]))(_grid(L))),
    ("row from its own row with a 1 dim", lambda L: (lambda x: x.__setitem__(0, x[0:1]))(_grid(L))),
    ("row from the next row with a 1 dim", lambda L: (lambda x: x.__setitem__(0, x[1:2]))(_grid(L))),
    ("rows from a 0-d", lambda L: (lambda x: x.__setitem__(slice(0, 2), x[0, 0]))(_grid(L))),
    ("shape error first", lambda L: (lambda x: x.__setitem__(0, x[0:2, 0:2]))(_grid(L))),
]


@pytest.mark.parametrize("name,write", BROADCAST, ids=[c[0] for c in BROADCAST])
def test_basic_setitem_broadcast_as_torch(name, write):
    assert _outcome(minigrad, write) == _outcome(torch, write)
