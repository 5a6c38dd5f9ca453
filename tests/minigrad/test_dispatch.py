"""One way of choosing an implementation (minigrad/backends/__init__.py): MINIGRAD_KERNELS picks the
reference or the op, registrations are found by their `supports`, a declining one falls back."""
import types

import numpy as np
import pytest

import minigrad
import nn.functional as F
from minigrad import backends


@pytest.fixture
def registry(monkeypatch):
    """A copy of the registry the test may add to (the process's is left as it was)."""
    copy = {op: list(regs) for op, regs in backends._registry.items()}
    monkeypatch.setattr(backends, "_registry", copy)
    monkeypatch.setattr(backends, "_eligible", {})
    return copy


def recording(accept, log):
    """An implementation of gelu that says `accept` and records what ran (its forward doubles x)."""
    return types.SimpleNamespace(
        supports=lambda x, approximate: log.append("supports") or accept,
        forward=lambda x, approximate: log.append("forward") or 2 * x,
        backward=lambda x, y, g, approximate: log.append("backward") or 2 * g,
    )


def x32():
    return minigrad.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)


def test_register_puts_first_or_last(registry):
    a, b = object(), object()
    backends.register("gelu", a, "cpu")
    backends.register("gelu", b, "cpu", first=True)
    assert registry["gelu"][0][0] is b and registry["gelu"][-1][0] is a


@pytest.mark.parametrize("setting", ["reference", "numpy", "fast"])
def test_the_setting_picks_the_reference_or_the_op_and_the_same_values(setting):
    x = x32()
    with backends.kernels(setting):
        y = F.gelu(x)
        y.sum().backward()
        name = y.grad_fn.name()
    assert (name == "GeluBackward0") == (setting != "reference")  # the reference is a graph of primitive ops
    with backends.kernels("reference"):
        x2 = x32()
        F.gelu(x2).sum().backward()
    np.testing.assert_allclose(y.array, F.gelu(x32()).array, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x.grad.array, x2.grad.array, rtol=1e-5, atol=1e-6)


def test_registrations_are_eligible_under_the_settings_they_name(registry):
    log = []
    backends.register("gelu", recording(True, log), "cpu")  # after the CPU kernel: asked if that declines
    x = minigrad.tensor(np.ones(3), requires_grad=True)  # float64: the CPU kernel declines, ours takes it
    y = F.gelu(x)
    assert np.array_equal(y.array, [2.0, 2.0, 2.0]) and log == ["supports", "forward"]
    y.sum().backward()
    assert log[-1] == "backward" and np.array_equal(x.grad.array, [2.0, 2.0, 2.0])  # found at forward, ran backward
    for setting in ("numpy", "reference"):  # a 'fast' registration is not asked under these
        log.clear()
        with backends.kernels(setting):
            F.gelu(x)
        assert log == []
    backends.register("gelu", recording(True, log), "cpu", kernels=("numpy", "fast"), first=True)
    with backends.kernels("numpy"):
        assert np.array_equal(F.gelu(x).array, [2.0, 2.0, 2.0]) and log == ["supports", "forward"]


def test_a_registration_that_declines_falls_back_to_the_next_and_then_the_op(registry):
    log = []
    backends.register("gelu", recording(False, log), "cpu", first=True)
    x = minigrad.tensor(np.linspace(-2, 2, 5), requires_grad=True)
    y = F.gelu(x)
    assert log == ["supports"]  # asked, declined, never run
    with backends.kernels("numpy"):
        np.testing.assert_array_equal(y.array, F.gelu(x).array)  # the op's own array code ran


def test_registrations_are_per_device(registry):
    log = []
    backends.register("gelu", recording(True, log), "cuda", first=True)
    F.gelu(minigrad.tensor(np.ones(3)))  # numpy arrays: a CUDA registration is not asked
    assert log == []


def test_find_asks_supports_with_the_ops_arguments():
    pytest.importorskip("numba")
    from minigrad.backends.cpu import gelu, layer_norm

    assert backends.find("gelu", np.zeros(4, np.float32), "none") is gelu
    assert backends.find("gelu", np.zeros(4, np.float32), "tanh") is None
    x = np.zeros((2, 4), np.float32)
    assert backends.find("layer_norm", x, x[:, :1], x[:, :1], x, None, None, 1e-5) is layer_norm
    assert backends.find("layer_norm", x, x[:, :1], x[:, :1], x.astype(np.float16), None, None, 1e-5) is None
    assert backends.find("no such op", x) is None


def test_register_checks_its_arguments():
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        backends.register("gelu", object(), "tpu")
    with pytest.raises(ValueError, match="kernels must be among"):
        backends.register("gelu", object(), "cpu", kernels=("reference",))


def test_pick():
    def fused(x):
        return "fused"

    def ref(x):
        return "reference"

    assert backends.pick(fused, ref)(0) == "fused"
    with backends.kernels("reference"):
        assert backends.pick(fused, ref)(0) == "reference"
        assert backends.pick(fused, None)(0) == "fused"  # no reference for these arguments


def test_small_cpu_work_runs_the_ops_numpy_code_until_numba_has_started(monkeypatch):
    # below CPU_MIN_ELEMENTS elements in all the arrays find is given, no CPU kernel is asked while numba
    # has not started (a small model never starts it); from that size on, or once numba has started,
    # the kernels are found as before
    monkeypatch.setattr(backends, "CPU_MIN_ELEMENTS", 1000)
    monkeypatch.setattr(backends._team, "started", lambda: False)
    x = np.zeros((10, 50), np.float32)
    stats = x[:, :1]
    assert backends.find("gelu", np.zeros(999, np.float32), "none") is None
    assert backends.find("layer_norm", x, stats, stats, x[:9], None, None, 1e-5) is None  # 500 + 10 + 10 + 450
    if backends._team.available():
        from minigrad.backends.cpu import gelu, layer_norm

        assert backends.find("gelu", np.zeros(1000, np.float32), "none") is gelu
        assert backends.find("layer_norm", x, stats, stats, x, None, None, 1e-5) is layer_norm
        monkeypatch.setattr(backends._team, "started", lambda: True)
        assert backends.find("gelu", np.zeros(999, np.float32), "none") is gelu
