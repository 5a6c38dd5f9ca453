"""Tensor creation, conversion and Python-protocol behaviour against PyTorch: each case is run on both
libraries (as `L`) and compared by value, dtype, shape, memory sharing, warnings and error type and text."""
import math
import operator
import random
import warnings

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _outcome(x):
    if isinstance(x, (torch.Tensor, minigrad.Tensor)):
        return "Tensor", str(x.dtype).split(".")[-1], tuple(x.shape), repr(x.detach().numpy().tolist()), x.requires_grad
    if isinstance(x, np.ndarray):
        return "ndarray", str(x.dtype), x.shape, repr(x.tolist())
    return type(x).__name__, repr(x)


def run(case, L):
    """What `case(L)` gives: its result (or its error's type and text) and the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = _outcome(case(L))
        except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
            result = type(e).__name__, str(e).replace("minigrad", "torch")
    said = [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught
            if w.category not in (RuntimeWarning, DeprecationWarning)]  # (numpy's cast warnings, filtered in a
    return result, said                                                  # normal run; its words on torch's __array__)


def assert_as_torch(src):
    case = eval(f"lambda L: {src}", {"np": np, "math": math, "operator": operator})  # noqa: S307
    assert run(case, minigrad) == run(case, torch)


CASES = [
    # a numpy complex128 scalar (a Python complex) makes a complex result; numpy's bool_, no Python bool,
    # counts as a float scalar
    "L.tensor([1.0, 2]) * np.complex128(1j)",
    "np.complex128(2j) + L.tensor([1.0])",
    "L.tensor([1, 2]) * np.bool_(True)",
    "L.tensor([True]) + np.bool_(True)",
    "L.tensor([1, 2], dtype=L.int16) + np.bool_(True)",
    # full's dtype from a numpy integer or a 0-d tensor fill
    "L.full((2,), np.int32(1))",
    "L.full((2,), np.uint8(3))",
    "L.full((2,), L.tensor(1))",
    "L.full((2,), L.tensor(True))",
    "L.full((2,), L.tensor(1.5, dtype=L.float64))",
    # arange's float values: start + i * step in double, rounded once
    "L.arange(0, 1, 0.1)",
    "L.arange(1, 2.1, 0.1)",
    "L.arange(-1, 1, 1 / 3)",
    "L.arange(0, 1, 0.1, dtype=L.float16)",
    "L.arange(10.0, 0, -3)",
    "L.arange(1, 0.5)",
    "L.arange(0, 10, -1)",
    "L.arange(float('inf'))",
    "L.arange(0.5, float('nan'))",
    # Python's protocols
    "complex(L.tensor(1j))",
    "complex(L.tensor([2.5]))",
    "complex(L.tensor([1j, 2]))",
    "int(L.tensor(1j))",
    "float(L.tensor(1j))",
    "bool(L.tensor([]))",
    "bool(L.tensor([1, 2]))",
    "+L.tensor([1, 2])",
    "L.tensor([1, 2]) == 'a'",
    "L.tensor([1, 2]) == [1, 2]",
    "L.tensor([1, 2]) != (1, 2)",
    "L.tensor([1, 2]) == None",
    "L.tensor([1, 2]) == 2",
    # numpy's conversion: numpy()'s refusal and memory, copied only where numpy asks
    "np.asarray(L.tensor([1.0], requires_grad=True))",
    "(lambda t: (np.array(t), t.__setitem__(0, 9))[0])(L.tensor([1.0, 2]))",
    "(lambda t: (np.asarray(t), t.__setitem__(0, 9))[0])(L.tensor([1.0, 2]))",
    "(lambda t: (np.asarray(t, dtype=np.float32), t.__setitem__(0, 9))[0])(L.tensor([1.0, 2]))",
    # numpy arrays a tensor cannot hold
    "L.tensor(np.array([1, 2], dtype='>i4'))",
    "L.as_tensor(np.array([1, 2], dtype='>f8'))",
    "L.from_numpy(np.array([1, 2], dtype='>f4'))",
    "L.tensor(np.array([1, 2], dtype='>f8'), dtype=L.float32)",
    "L.from_numpy(np.array([1, 2], dtype=np.longdouble))",
    "L.tensor(np.array([1, 2], dtype=np.clongdouble))",
    # asarray's copy= rules, new_tensor's warning
    "L.asarray(np.array([1, 2]), copy=False, dtype=L.float32)",
    "L.asarray(L.tensor([1, 2]), copy=False, dtype=L.float32)",
    "(lambda t: (L.asarray(t, copy=True), t.__setitem__(0, 9))[0])(L.tensor([1.0, 2]))",
    "L.tensor([1.0, 2]).new_tensor(L.tensor([1, 2]))",
    # tensor()'s texts for data it cannot take
    "L.tensor(2**63)",
    "L.tensor([1, 2**70])",
    "L.tensor([2**64], dtype=L.uint8)",
    "L.tensor(float('inf'), dtype=L.int64)",
    "L.tensor(1 + 2j, dtype=L.float32)",
    "L.tensor([1, 2j], dtype=L.float64)",
    "L.tensor([1j], dtype=L.int32)",
    "L.tensor(['a'])",
    "L.tensor([['a', 'b']])",
    "L.tensor([1, 'a'])",
]


@pytest.mark.parametrize("src", CASES)
def test_as_torch(src):
    assert_as_torch(src)


def _random_case(rng):
    """A seeded random creation or conversion: nested Python data, a numpy array, or a tensor with a scalar."""
    leaves = [True, False, 0, 3, -7, 2**40, 0.5, 2.25, 1e-3]
    dtypes = [None, None, None, "float32", "float64", "int64", "int32", "int8", "uint8", "bool", "complex64"]
    kind = rng.random()
    if kind < 0.5:
        def nested(shape):
            return rng.choice(leaves) if not shape else [nested(shape[1:]) for _ in range(shape[0])]
        data, dt = nested([rng.randint(0, 3) for _ in range(rng.randint(0, 3))]), rng.choice(dtypes)
        return lambda L: L.tensor(data, **({"dtype": getattr(L, dt)} if dt else {}))
    if kind < 0.75:
        npdt = rng.choice(["float64", "float32", "float16", "int64", "int32", "int16", "uint8", "bool"])
        shape = tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 3)))
        fn, dt, transpose = rng.choice(["tensor", "as_tensor", "from_numpy", "asarray"]), rng.choice(dtypes), \
            rng.random() < 0.5
        dt = None if fn == "from_numpy" else dt

        def case(L):
            a = np.resize(np.array([1.5, -2, 0, 7]), int(np.prod(shape))).astype(npdt).reshape(shape)
            a = a.T if transpose else a
            t = getattr(L, fn)(a, **({"dtype": getattr(L, dt)} if dt else {}))
            a[...] = 1  # (does the tensor share the array's memory?)
            return t
        return case
    dt = rng.choice([d for d in dtypes if d])
    scalar = rng.choice([2, 2.5, True, 1j, -1, np.float64(2), np.float32(2), np.int64(3), np.bool_(True),
                         np.complex128(1j)])
    op, left = rng.choice(["+", "*", "-", "/", "==", "<"]), rng.random() < 0.5
    expr = "t {} s".format(op) if left else "s {} t".format(op)
    return lambda L: eval(expr, {"t": L.tensor([1, 2], dtype=getattr(L, dt)), "s": scalar})  # noqa: S307


def test_seeded_fuzz_as_torch():
    rng, differ = random.Random(20240611), []
    for i in range(300):
        case = _random_case(rng)
        ours, theirs = run(case, minigrad), run(case, torch)
        if ours != theirs and "uint32" not in str(theirs):
            differ.append((i, ours, theirs))
    assert not differ, differ[:3]
