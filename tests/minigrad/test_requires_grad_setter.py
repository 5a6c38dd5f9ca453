"""`t.requires_grad = value` against PyTorch's setter: which values it takes, on which tensors, and its error
texts in PyTorch's order; also nn.Parameter over an integer tensor, pickling, and minigrad.compile's capture."""
import copy
import pickle

import numpy as np
import pytest

import minigrad
from nn import Parameter

torch = pytest.importorskip("torch")


def outcome(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    return "ok"


def set_flag(t, value):
    def run():
        t.requires_grad = value
    return run


def both(make):
    """make(lib) -> a tensor of that library, for the same case in each."""
    return make(minigrad), make(torch)


@pytest.mark.parametrize("value", [1, 0, None, "yes", 1.0, np.bool_(True), np.bool_(False)], ids=repr)
@pytest.mark.parametrize("leaf", [True, False])
def test_non_bool_refused_first(value, leaf):
    # (before the leaf check: a non-leaf refuses a non-bool with the same text)
    def make(lib):
        a = lib.ones(2, requires_grad=True)
        return a if leaf else a * 2
    m, t = both(make)
    assert outcome(set_flag(m, value)) == outcome(set_flag(t, value)) != "ok"
    assert m.requires_grad is t.requires_grad


def test_delete_refused():
    m, t = both(lambda lib: lib.ones(2, requires_grad=True))

    def delete(x):
        def run():
            del x.requires_grad
        return run
    assert outcome(delete(m)) == outcome(delete(t)) != "ok"
    assert m.requires_grad is True


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("kind", ["mul", "view"])
def test_non_leaf_refused(flag, kind):
    def make(lib):
        a = lib.ones(2, requires_grad=True)
        return a * 2 if kind == "mul" else a.view(2)
    m, t = both(make)
    assert outcome(set_flag(m, flag)) == outcome(set_flag(t, flag)) != "ok"
    assert m.requires_grad and m.grad_fn is not None


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("flag", [True, False])
def test_integer_tensor(dtype, flag):
    m, t = both(lambda lib: lib.zeros(2, dtype=getattr(lib, dtype)))
    assert outcome(set_flag(m, flag)) == outcome(set_flag(t, flag))
    assert m.requires_grad is t.requires_grad is False


def test_integer_non_bool_refused_before_dtype():
    m, t = both(lambda lib: lib.zeros(2, dtype=lib.int64))
    assert outcome(set_flag(m, 1)) == outcome(set_flag(t, 1)) != "ok"


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_leaf_set_and_cleared(dtype):
    m, t = both(lambda lib: lib.zeros(2, dtype=getattr(lib, dtype)))
    for flag in (True, False, True):
        assert outcome(set_flag(m, flag)) == outcome(set_flag(t, flag)) == "ok"
        assert m.requires_grad is t.requires_grad is flag
        assert m.is_leaf and m.grad_fn is None
    if dtype.startswith("float"):  # (a leaf whose flag was set gets its gradient)
        (m * m).sum().backward()
        (t * t).sum().backward()
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy())


def test_setter_then_backward_as_torch():
    m, t = both(lambda lib: lib.tensor([1.0, 2.0, 3.0]))
    m.requires_grad, t.requires_grad = True, True
    (m * m).sum().backward()
    (t * t).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy())
    assert type((m * 2).grad_fn).__name__ == type((t * 2).grad_fn).__name__


def test_no_grad_result_is_a_leaf():
    # made under no_grad: a leaf, so its flag may be set
    def make(lib):
        a = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            return a * 2
    m, t = both(make)
    assert outcome(set_flag(m, True)) == outcome(set_flag(t, True)) == "ok"
    assert m.requires_grad is t.requires_grad is True


def test_inference_tensor():
    m, t = both(lambda lib: _inference_ones(lib))
    assert outcome(set_flag(m, True)) == outcome(set_flag(t, True)) != "ok"
    assert outcome(set_flag(m, False)) == outcome(set_flag(t, False)) == "ok"
    with minigrad.inference_mode():
        m.requires_grad = True
    with torch.inference_mode():
        t.requires_grad = True
    assert m.requires_grad is t.requires_grad is True


def _inference_ones(lib):
    with lib.inference_mode():
        return lib.ones(2)


def test_requires_grad_method_texts_unchanged():
    # requires_grad_ words the integer refusal apart from the setter, and lets a non-leaf keep True
    m, t = both(lambda lib: lib.zeros(2, dtype=lib.int64))
    assert outcome(lambda: m.requires_grad_()) == outcome(lambda: t.requires_grad_()) != "ok"
    m, t = both(lambda lib: lib.ones(2, requires_grad=True) * 2)
    assert outcome(lambda: m.requires_grad_(True)) == outcome(lambda: t.requires_grad_(True)) == "ok"
    assert outcome(lambda: m.requires_grad_(False)) == outcome(lambda: t.requires_grad_(False)) != "ok"
    assert outcome(lambda: m.requires_grad_(1)) == outcome(lambda: t.requires_grad_(1)) != "ok"


def test_parameter_over_integer_tensor():
    m = outcome(lambda: Parameter(minigrad.zeros(2, dtype=minigrad.int64)))
    t = outcome(lambda: torch.nn.Parameter(torch.zeros(2, dtype=torch.int64)))
    assert m == t != "ok"
    mp = Parameter(minigrad.zeros(2, dtype=minigrad.int64), requires_grad=False)
    tp = torch.nn.Parameter(torch.zeros(2, dtype=torch.int64), requires_grad=False)
    assert mp.requires_grad is tp.requires_grad is False
    assert str(mp.dtype).split(".")[-1] == str(tp.dtype).split(".")[-1]
    assert outcome(set_flag(mp, True)) == outcome(set_flag(tp, True)) != "ok"


def test_parameter_flag_settable():
    m, t = Parameter(minigrad.ones(2)), torch.nn.Parameter(torch.ones(2))
    assert outcome(set_flag(m, 1)) == outcome(set_flag(t, 1)) != "ok"
    m.requires_grad, t.requires_grad = False, False
    assert m.requires_grad is t.requires_grad is False
    assert type(m) is Parameter and m.is_leaf


def test_subclass_via_as_subclass():
    class M(minigrad.Tensor):
        pass

    class T(torch.Tensor):
        pass
    m, t = minigrad.ones(2).as_subclass(M), torch.ones(2).as_subclass(T)
    assert outcome(set_flag(m, "x")) == outcome(set_flag(t, "x")) != "ok"
    m.requires_grad, t.requires_grad = True, True
    assert m.requires_grad is t.requires_grad is True


def test_pickle_and_deepcopy_keep_flag():
    for flag in (True, False):
        m = minigrad.ones(2, requires_grad=flag)
        for copied in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
            assert copied.requires_grad is flag and copied.is_leaf
        p = Parameter(minigrad.ones(2), requires_grad=flag)
        assert copy.deepcopy(p).requires_grad is flag


def test_compile_records_set_through_property():
    # a flag set in the compiled call on a value the call made is set again at each replay, as requires_grad_()
    def through_property(x):
        leaf = (x * 0).detach()
        leaf.requires_grad = True
        (leaf * x).sum().backward()
        return leaf.grad

    def through_method(x):
        leaf = (x * 0).detach().requires_grad_()
        (leaf * x).sum().backward()
        return leaf.grad

    for fn in (through_property, through_method):
        compiled = minigrad.compile(fn)
        for step in range(4):
            x = minigrad.tensor([1.0, 2.0]) + step
            np.testing.assert_array_equal(compiled(x).numpy(), x.numpy())
        assert compiled.stats.replays == 3
