"""Embedding and EmbeddingBag take PyTorch's two index types (int64, int32) and refuse the others with its text,
the type named as PyTorch's toString names it (a legacy class or a CPU backend type)."""
import pytest

import minigrad
import minigrad.nn.functional as F

torch = pytest.importorskip("torch")

from tests.nn.test_mistakes_vs_torch import assert_answered_as_pytorch  # noqa: E402

DTYPES = ["int8", "uint8", "int16", "int32", "int64", "bool", "float16", "float32", "float64", "complex64"]


def _ids(L, name):
    return L.tensor([1, 0, 2]).to(getattr(L, name))


@pytest.mark.parametrize("name", DTYPES)
def test_embedding_index_types(name):
    assert_answered_as_pytorch(lambda L: L.nn.functional.embedding(_ids(L, name), L.ones(4, 3)))


@pytest.mark.parametrize("name", DTYPES)
def test_embedding_bag_index_types(name):
    assert_answered_as_pytorch(lambda L: L.nn.functional.embedding_bag(_ids(L, name), L.ones(4, 3),
                                                                       L.tensor([0, 1]).to(getattr(L, name))))


def test_conv_type_mismatch_names_both_types():
    def call(L):
        return L.nn.functional.conv1d(L.ones(1, 1, 4, dtype=L.float64), L.ones(1, 1, 2, dtype=L.float32))
    assert_answered_as_pytorch(call)


def test_uint16_ids_named_as_a_backend_type():
    with pytest.raises(RuntimeError, match=r"but got CPUUInt16Type instead"):
        F.embedding(minigrad.tensor([1, 2], dtype=minigrad.uint16), minigrad.ones(4, 3))
