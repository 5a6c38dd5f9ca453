"""minigrad.testing (assert_close, assert_allclose, make_tensor) and minigrad.random.fork_rng, against PyTorch's."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg

ROOT = Path(__file__).resolve().parents[2]


def _normalize(text):
    return text.replace("minigrad.tensor.Tensor", "torch.Tensor").replace("minigrad.", "torch.")


# each case: fn(framework) calling framework.testing.assert_close on inputs made in that framework
CASES = {
    "tensor": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.1, 3.0])),
    "tensor_2d_inf_rel": lambda L: L.testing.assert_close(L.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                                          L.tensor([[1.0, 2.5], [3.0, 0.0]])),
    "int": lambda L: L.testing.assert_close(L.tensor([1, 2, 3]), L.tensor([1, 2, 4])),
    "int_thirds": lambda L: L.testing.assert_close(L.tensor([1, 2]), L.tensor([1, 3])),  # 1/3 as a float32
    "uint8_ratio": lambda L: L.testing.assert_close(L.tensor([1, 7], dtype=L.uint8), L.tensor([1, 3], dtype=L.uint8)),
    "bool": lambda L: L.testing.assert_close(L.tensor([True, False]), L.tensor([True, True])),
    "float64": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0], dtype=L.float64),
                                                L.tensor([1.0, 2.0 + 1e-6], dtype=L.float64)),
    "scalar": lambda L: L.testing.assert_close(1.0, 1.1),
    "scalar_int": lambda L: L.testing.assert_close(1, 2),
    "bool_scalar": lambda L: L.testing.assert_close(True, False),
    "zero_dim": lambda L: L.testing.assert_close(L.tensor(1.0), L.tensor(1.5)),
    "dtype": lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64)),
    "shape": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0, 3.0])),
    "tensor_vs_number": lambda L: L.testing.assert_close(L.tensor(1.0), 1.0),
    "list_vs_tensor": lambda L: L.testing.assert_close([1.0, 2.0], L.tensor([1.0, 2.0])),
    "strings": lambda L: L.testing.assert_close("a", "a"),
    "int_vs_float": lambda L: L.testing.assert_close(1, 1.0),
    "sequence_length": lambda L: L.testing.assert_close([1.0, 2.0], [1.0, 2.0, 3.0]),
    "nested_item": lambda L: L.testing.assert_close([1.0, [2.0, 3.0]], [1.0, [2.0, 3.5]]),
    "tuple_of_tensors": lambda L: L.testing.assert_close((L.ones(2), L.zeros(2)), (L.ones(2), L.ones(2))),
    "dict_keys": lambda L: L.testing.assert_close({"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 2.0}),
    "dict_value": lambda L: L.testing.assert_close({"a": 1.0, "b": L.ones(2)}, {"a": 1.0, "b": L.zeros(2)}),
    "nan": lambda L: L.testing.assert_close(L.tensor([float("nan")]), L.tensor([float("nan")])),
    "opposite_infs": lambda L: L.testing.assert_close(L.tensor([float("inf"), 1.0]), L.tensor([-float("inf"), 1.0])),
    "zero_expected": lambda L: L.testing.assert_close(L.tensor([0.0, 1.0]), L.tensor([1e-3, 1.0])),
    "exact_float": lambda L: L.testing.assert_close(L.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                                    L.tensor([[1.0, 2.0], [3.0, 5.0]]), rtol=0, atol=0),
    "rtol_only": lambda L: L.testing.assert_close(1.0, 1.0, rtol=1e-3),
    "atol_only": lambda L: L.testing.assert_close(1.0, 1.0, atol=1e-3),
    "msg": lambda L: L.testing.assert_close(1.0, 2.0, msg="custom"),
    "msg_callable": lambda L: L.testing.assert_close(L.ones(2), L.zeros(2), msg=lambda m: "prefix: " + m),
    "loose_tolerance_fails": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.5, 2.0]),
                                                              rtol=0.1, atol=0.1),
}
PASSING = {
    "equal": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0])),
    "within_float32": lambda L: L.testing.assert_close(L.tensor([1.0, 100.0]), L.tensor([1.0 + 5e-6, 100.0 + 1e-4])),
    "within_float64": lambda L: L.testing.assert_close(L.tensor([1.0], dtype=L.float64),
                                                       L.tensor([1.0 + 1e-7], dtype=L.float64)),
    "within_float16": lambda L: L.testing.assert_close(L.tensor([1.0], dtype=L.float16),
                                                       L.tensor([1.0009765625], dtype=L.float16)),
    "nan_equal": lambda L: L.testing.assert_close(L.tensor([float("nan"), 1.0]), L.tensor([float("nan"), 1.0]),
                                                  equal_nan=True),
    "infs": lambda L: L.testing.assert_close(L.tensor([float("inf")]), L.tensor([float("inf")])),
    "no_dtype_check": lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64),
                                                       check_dtype=False),
    "list_vs_tuple": lambda L: L.testing.assert_close([1.0, 2.0], (1.0, 2.0)),
    "none": lambda L: L.testing.assert_close(None, None),
    "empty": lambda L: L.testing.assert_close(L.ones(0), L.ones(0)),
    "requires_grad": lambda L: L.testing.assert_close(L.ones(2, requires_grad=True), L.ones(2)),
    "nested": lambda L: L.testing.assert_close({"w": [L.ones(2, 2), (3, 4.5)]}, {"w": [L.ones(2, 2), (3, 4.5)]}),
    "given_tolerance": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.05, 2.0]), rtol=0.1,
                                                        atol=0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_assert_close_raises_as_pytorch(torch, name):
    with pytest.raises(Exception) as want:
        CASES[name](torch)
    with pytest.raises(want.type) as got:
        CASES[name](mg)
    assert _normalize(str(got.value)) == str(want.value)


@pytest.mark.parametrize("name", sorted(PASSING))
def test_assert_close_passes_as_pytorch(torch, name):
    PASSING[name](torch)
    PASSING[name](mg)


ALLCLOSE = {  # torch.testing.assert_allclose (deprecated): each case passes, or raises as PyTorch's
    "float32_loose": lambda L: L.testing.assert_allclose(L.tensor([1.0]), L.tensor([1.0001])),
    "float32_past": lambda L: L.testing.assert_allclose(L.tensor([1.0]), L.tensor([1.0003])),
    "float64": lambda L: L.testing.assert_allclose(L.tensor([1.0], dtype=L.float64),
                                                   L.tensor([1.00002], dtype=L.float64)),
    "mixed_dtypes": lambda L: L.testing.assert_allclose(L.tensor([1.0], dtype=L.float64), L.tensor([1.00002])),
    "int_vs_float": lambda L: L.testing.assert_allclose(L.ones(2), L.ones(2, dtype=L.int64)),
    "ints": lambda L: L.testing.assert_allclose(L.tensor([1, 2]), L.tensor([1, 3])),
    "nan": lambda L: L.testing.assert_allclose(L.tensor([float("nan")]), L.tensor([float("nan")])),
    "nan_unequal": lambda L: L.testing.assert_allclose(L.tensor([float("nan")]), L.tensor([float("nan")]),
                                                       equal_nan=False),
    "given": lambda L: L.testing.assert_allclose(L.tensor([1.0]), L.tensor([1.0001]), rtol=1e-5, atol=0),
    "rtol_only": lambda L: L.testing.assert_allclose(L.tensor([1.0]), L.tensor([1.0001]), rtol=1e-3),
    "numbers": lambda L: L.testing.assert_allclose(1.0, 1.01),
    "list": lambda L: L.testing.assert_allclose([1, 2], L.tensor([1, 2])),
    "no_broadcast": lambda L: L.testing.assert_allclose(L.ones(2), 1.0),
    "msg": lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.1]), msg="custom"),
    "transposed": lambda L: L.testing.assert_allclose(L.ones(2, 3).t(), L.ones(3, 2)),
}


@pytest.mark.parametrize("name", sorted(ALLCLOSE))
def test_assert_allclose_as_pytorch(torch, name):
    outcomes = []
    for lib in (torch, mg):
        with pytest.warns(FutureWarning, match="^`torch.testing.assert_allclose\\(\\)` is deprecated since 1.12"):
            try:
                ALLCLOSE[name](lib)
                outcomes.append(None)
            except Exception as e:  # noqa: BLE001 (the error is what is compared)
                outcomes.append((type(e), _normalize(str(e))))
    assert outcomes[0] == outcomes[1]


def test_assert_close_without_torch():
    mg.testing.assert_close(np.ones(3), np.ones(3))  # numpy arrays are tensor-likes too
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 3"):
        mg.testing.assert_close(mg.tensor([1, 2, 3]), mg.tensor([1, 2, 5]))
    with pytest.raises(AssertionError, match="The failure occurred for item \\[0\\]\\['x'\\]"):
        mg.testing.assert_close([{"x": 1.0}], [{"x": 2.0}])
    # the default tolerances: float32 rtol 1.3e-6, atol 1e-5; float64 1e-7 and 1e-7
    mg.testing.assert_close(mg.tensor([0.0]), mg.tensor([9e-6]))
    with pytest.raises(AssertionError, match="up to 1e-05 allowed"):
        mg.testing.assert_close(mg.tensor([0.0]), mg.tensor([2e-5]))
    with pytest.raises(AssertionError, match="up to 1e-07 allowed"):
        mg.testing.assert_close(mg.tensor([0.0], dtype=mg.float64), mg.tensor([2e-7], dtype=mg.float64))


def test_testing_loads_lazily():
    code = ("import sys, minigrad; assert 'minigrad.testing' not in sys.modules; "
            "minigrad.testing.assert_close(minigrad.ones(2), minigrad.ones(2)); print('minigrad.testing' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


# ---- make_tensor -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, low, high", [("float32", -9, 9), ("float64", -9, 9), ("int64", -9, 9),
                                              ("int32", -9, 9), ("uint8", 0, 9), ("bool", 0, 1)])
def test_make_tensor_defaults(dtype, low, high):
    t = mg.testing.make_tensor(4, 50, dtype=getattr(mg, dtype), device="cpu")
    assert tuple(t.shape) == (4, 50) and t.dtype == getattr(mg, dtype) and not t.requires_grad
    a = t.numpy().astype(np.float64)
    assert a.min() >= low and a.max() <= high and len(np.unique(a)) > 1


def test_make_tensor_options(torch):
    mg.manual_seed(0)
    a = mg.testing.make_tensor((3, 2), dtype=mg.float64, device="cpu", low=2, high=3, requires_grad=True)
    assert tuple(a.shape) == (3, 2) and a.requires_grad and a.is_leaf
    assert ((a.detach().numpy() >= 2) & (a.detach().numpy() < 3)).all()
    mg.manual_seed(0)
    b = mg.testing.make_tensor((3, 2), dtype=mg.float64, device="cpu", low=2, high=3)
    np.testing.assert_array_equal(a.detach().numpy(), b.numpy())  # drawn by the default generator
    z = mg.testing.make_tensor(200, dtype=mg.int64, device="cpu", low=-1, high=2, exclude_zero=True)
    assert set(np.unique(z.numpy())) <= {-1, 1}
    assert tuple(mg.testing.make_tensor(dtype=mg.float32, device="cpu").shape) == ()
    assert tuple(mg.testing.make_tensor(2, 3, dtype=mg.float32, device="cpu", noncontiguous=True).shape) == (2, 3)
    for fw in (torch, mg):
        with pytest.raises(ValueError):
            fw.testing.make_tensor(2, dtype=fw.float32, device="cpu", low=3, high=1)
        with pytest.raises(ValueError):
            fw.testing.make_tensor(2, dtype=fw.int64, device="cpu", requires_grad=True)


# ---- fork_rng --------------------------------------------------------------------------------------------------
def test_fork_rng_restores_the_state(torch):
    for fw in (torch, mg):
        fw.manual_seed(1)
        before = fw.rand(3)
        fw.manual_seed(1)
        with fw.random.fork_rng():
            fw.rand(100)
            fw.manual_seed(7)
            fw.randn(5)
        after = fw.rand(3)
        np.testing.assert_array_equal(before.numpy(), after.numpy())
    mg.manual_seed(2)
    with mg.random.fork_rng(enabled=False):  # enabled=False: draws inside advance the stream as usual
        mg.rand(3)
    y = mg.rand(2)
    mg.manual_seed(2)
    mg.rand(3)
    np.testing.assert_array_equal(y.numpy(), mg.rand(2).numpy())


def test_fork_rng_restores_on_an_exception_and_as_a_decorator():
    mg.manual_seed(3)
    state = mg.get_rng_state()
    with pytest.raises(ValueError):
        with mg.random.fork_rng(devices=[]):
            mg.rand(10)
            raise ValueError("inside")
    assert mg.get_rng_state() == state

    @mg.random.fork_rng()
    def draw():
        return mg.rand(4)

    first = draw()
    np.testing.assert_array_equal(first.numpy(), draw().numpy())
    assert mg.get_rng_state() == state
