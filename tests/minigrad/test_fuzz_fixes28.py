"""Differences the differential fuzzers' longer runs found (new random slices), each reduced to its smallest
program and pinned against PyTorch 2.13: the same outcome (the same error type and text, or the same values)."""
import warnings

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def outcome(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (uint8 indexing's deprecation warning, on both)
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
            return type(e).__name__, str(e)
    return "ok", np.asarray(out.detach().numpy() if hasattr(out, "detach") else out).tolist()


def _u8(L, m):
    return L.tensor(np.array(m, dtype=np.uint8))


def _write(index, value, shape=(3,), dtype="float64"):
    def fn(L):
        x = L.zeros(shape, dtype=getattr(L, dtype))
        x[index(L)] = value(L)
        return x
    return fn


# One uint8 mask (the other items ints, slices, None or ...) and one value: PyTorch writes it as masked_fill_,
# which refuses a uint8 mask; two index tensors, or several values, go to index_put_, which takes it.
BYTE_MASK_WRITES = {
    "number": _write(lambda L: _u8(L, [1, 0, 1]), lambda L: 2.5),
    "0d_value": _write(lambda L: _u8(L, [1, 0, 1]), lambda L: L.tensor(2.5, dtype=L.float64)),
    "0d_value_other_dtype": _write(lambda L: _u8(L, [1, 0, 1]), lambda L: L.tensor(2.5)),
    "one_element_value": _write(lambda L: _u8(L, [1, 0, 1]), lambda L: L.tensor([[2.5]], dtype=L.float64)),
    "bool_tensor": _write(lambda L: _u8(L, [0, 0, 0]), lambda L: L.tensor(True), dtype="bool"),
    "after_a_slice": _write(lambda L: (slice(None), _u8(L, [1, 0, 1])), lambda L: 2.5, shape=(2, 3)),
    "beside_an_int": _write(lambda L: (_u8(L, [1, 0]), 0), lambda L: 2.5, shape=(2, 3)),
    "after_none_and_ellipsis": _write(lambda L: (None, Ellipsis, _u8(L, [1, 0, 1])), lambda L: 2.5),
    "two_dims": _write(lambda L: _u8(L, [[1, 0, 1], [0, 0, 1]]), lambda L: 7.0, shape=(2, 3)),
    "wrong_shape_first": _write(lambda L: _u8(L, [1, 0]), lambda L: 2.5),
    # index_put_ itself
    "index_put_": lambda L: L.zeros(3, dtype=L.float64).index_put_((_u8(L, [1, 0, 1]),), L.tensor(2.5, dtype=L.float64)),
    "index_put": lambda L: L.zeros(3, dtype=L.float64).index_put((_u8(L, [1, 0, 1]),), L.tensor([2.5], dtype=L.float64)),
    # and where PyTorch writes with index_put_, which takes the uint8 mask
    "several_values": _write(lambda L: _u8(L, [1, 0, 1]), lambda L: L.tensor([2.5, 3.5], dtype=L.float64)),
    "two_index_tensors": _write(lambda L: (_u8(L, [1, 0]), L.tensor([0])), lambda L: 2.5, shape=(2, 3)),
    "accumulate": lambda L: L.zeros(3, dtype=L.float64).index_put_((_u8(L, [1, 0, 1]),), L.tensor(2.5, dtype=L.float64),
                                                                  accumulate=True),
    "bool_mask": _write(lambda L: L.tensor([True, False, True]), lambda L: L.tensor(2.5)),
}


@pytest.mark.parametrize("name", sorted(BYTE_MASK_WRITES))
def test_byte_mask_write_as_pytorch(name):
    assert outcome(minigrad, BYTE_MASK_WRITES[name]) == outcome(torch, BYTE_MASK_WRITES[name])


def test_byte_mask_write_into_a_non_leaf_refused():
    def fn(L):
        x = L.zeros(3, dtype=L.float64, requires_grad=True).clone()
        x[_u8(L, [1, 0, 1])] = L.tensor(2.5, dtype=L.float64, requires_grad=True)
        return x
    theirs = outcome(torch, fn)
    assert theirs[0] == "RuntimeError"
    assert outcome(minigrad, fn) == theirs
