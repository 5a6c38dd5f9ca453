"""Creation and conversion against PyTorch, second round: arrays laid out backwards, numpy scalars inside
tensor()'s lists, float ranges of integer dtypes, size arguments, the legacy constructors' ranges and the
complex-to-real warning. Each case runs on both libraries and is compared as in test_creation_vs_torch."""
import subprocess
import sys

import pytest

from tests.minigrad.test_creation_vs_torch import assert_as_torch

torch = pytest.importorskip("torch")

CASES = [
    # an array with a negative stride: refused by every entry point that reads a numpy array
    "L.tensor(np.arange(6)[::-1])",
    "L.tensor(np.arange(6.0)[::-2], dtype=L.float32)",
    "L.as_tensor(np.arange(4.0)[::-1])",
    "L.from_numpy(np.arange(6.0).reshape(2, 3)[:, ::-1])",
    "L.asarray(np.arange(4.0)[::-1])",
    "L.Tensor(np.arange(4.0)[::-1])",
    "L.LongTensor(np.arange(4)[::-1])",
    "L.tensor([1.0]).new_tensor(np.arange(4.0)[::-1])",
    "L.tensor(np.zeros((1, 3))[::-1])",
    "L.tensor(np.zeros((0, 3))[::-1])",
    "L.tensor(np.array([1, 2], dtype='>i4')[::-1])",
    # numpy scalars an integer or bool dtype reads by __index__
    "L.tensor([np.bool_(True), 2])",
    "L.tensor([np.uint8(1), np.bool_(True)])",
    "L.tensor([np.float32(1.5)], dtype=L.int64)",
    "L.tensor([np.float16(1.5)], dtype=L.bool)",
    "L.tensor([np.complex64(1j)], dtype=L.bool)",
    "L.tensor([np.complex128(1j)], dtype=L.int64)",
    "L.tensor(np.float32(1.0), dtype=L.int32)",
    "L.tensor([np.float64(1.5)], dtype=L.int64)",
    "L.tensor([np.complex128(1j)], dtype=L.bool)",
    "L.tensor([np.bool_(True), False])",
    "L.tensor([np.float32(1.5), 2])",
    # floats past an integer dtype's range, which numpy would truncate
    "L.tensor([-1.0], dtype=L.uint8)",
    "L.tensor([-0.5], dtype=L.uint8)",
    "L.tensor([-0.0], dtype=L.uint8)",
    "L.tensor([127.5], dtype=L.int8)",
    "L.tensor([-128.9], dtype=L.int8)",
    "L.tensor(-1.0, dtype=L.uint8)",
    "L.tensor([True, -1.0], dtype=L.uint8)",
    "L.tensor([9.3e18], dtype=L.int64)",
    "L.tensor([-1, 2], dtype=L.uint8)",
    # the legacy constructors read numbers as tensor() does
    "L.ByteTensor([-1])",
    "L.ByteTensor([-129])",
    "L.ByteTensor([-256])",
    "L.ByteTensor([-1.5])",
    "L.CharTensor([200])",
    "L.IntTensor([2**40])",
    "L.LongTensor([2**63])",
    "tuple(L.Tensor(np.array(3)).shape)",
    "L.Tensor(np.array(1.5))",
    # requires_grad= takes a bool only
    "L.tensor([1.0], requires_grad=np.bool_(True))",
    "L.tensor([1.0], requires_grad=1)",
    "L.zeros(2, requires_grad=np.bool_(True))",
    # sizes
    "L.zeros()",
    "L.ones()",
    "L.randn()",
    "L.zeros(True)",
    "L.zeros((True,))",
    "L.zeros(2, True)",
    "L.zeros(L.tensor([3]))",
    "L.zeros(L.tensor([3]), 2)",
    "L.zeros(L.tensor([3, 2]))",
    "L.zeros(np.array(3))",
    "L.zeros(np.array([3]))",
    "L.full(2, 1)",
    "L.full([2], 1)",
    # linspace, scalar_tensor, eye, *_like
    "L.linspace(0, 1, 5, dtype=L.bool)",
    "L.linspace(0, 1j, 3)",
    "L.linspace(1j, 2 + 1j, 3, dtype=L.complex128)",
    "L.linspace(0, 1, 3, dtype=L.complex64)",
    "L.scalar_tensor([1])",
    "L.scalar_tensor(np.array(1))",
    "L.scalar_tensor(1j)",
    "L.scalar_tensor(L.tensor(2))",
    "L.eye(2.0)",
    "L.eye('a')",
    "L.zeros_like([1, 2])",
    "L.ones_like(np.zeros(2))",
    "L.empty_like(3)",
    "L.full_like([1], 2)",
    "L.rand_like([1.0])",
    # complex to bool keeps the values' truth
    "L.tensor([1j, 0]).to(L.bool)",
    "L.tensor([1j, 0]).bool()",
    "L.tensor(np.array([1j, 0j]), dtype=L.bool)",
]


@pytest.mark.parametrize("src", CASES)
def test_as_torch(src):
    assert_as_torch(src)


_WARNINGS = """
import warnings
import numpy as np
import {lib} as L
warnings.simplefilter("always")
said = []
for make in (lambda: L.tensor(np.array([1j, 2]), dtype=L.float32), lambda: L.tensor([1j]).float(),
             lambda: L.tensor([1j]).to(L.float64), lambda: L.FloatTensor(np.array([1j]))):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    said.append([(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught])
print(said)
"""


def _warnings_of(lib):
    out = subprocess.run([sys.executable, "-c", _WARNINGS.format(lib=lib)], capture_output=True, text=True, check=True)
    return out.stdout


def test_complex_to_real_warning_once_a_process_as_torch():
    # PyTorch's own warning, not numpy's ComplexWarning, and said once a process whichever cast comes first
    assert _warnings_of("minigrad") == _warnings_of("torch")
