# ruff: noqa: B023 (each lambda is called at once, inside its loop turn)
"""torch's DLPack interchange, resize/resize_as, autocast and debug-mode switches, and small Tensor attributes,
each against PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    return None


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category, str(x.message).split(" (Triggered internally")[0]) for x in w]


# ---- DLPack ------------------------------------------------------------------------------------------------
def test_dlpack_into_numpy_and_torch_shares_memory():
    t = minigrad.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(t)
    a[0, 0] = 7.0
    tt = torch.from_dlpack(t)
    tt[0, 1] = 9.0
    assert t.tolist() == tt.tolist() == a.tolist() == [[7.0, 9.0, 2.0], [3.0, 4.0, 5.0]]
    assert t.__dlpack_device__() == torch.ones(1).__dlpack_device__()


@pytest.mark.parametrize("make", [lambda m: m.tensor([True, False]), lambda m: m.tensor([1 + 2j, 3j]),
                                  lambda m: m.ones(1).expand(3), lambda m: m.arange(4.0).flip(0),
                                  lambda m: m.arange(6.0).reshape(2, 3).t(), lambda m: m.tensor(3.0)])
def test_dlpack_values_and_dtypes(make):
    ours, ref = torch.from_dlpack(make(minigrad)), make(torch)
    assert ours.dtype == ref.dtype and torch.equal(ours, ref)
    assert np.array_equal(np.from_dlpack(make(minigrad)), np.from_dlpack(ref))


def test_dlpack_refuses_tensors_requiring_grad():
    for lib in (np, torch):
        assert _error(lambda: lib.from_dlpack(minigrad.ones(2, requires_grad=True))) == \
            _error(lambda: lib.from_dlpack(torch.ones(2, requires_grad=True)))
    assert _error(lambda: minigrad.ones(2).__dlpack__(stream=1)) == _error(lambda: torch.ones(2).__dlpack__(stream=1))


def test_from_dlpack_shares_memory_with_the_producer():
    n = np.zeros(3)
    x, ref = minigrad.from_dlpack(n), torch.from_dlpack(n)
    x[0] = 5.0
    assert n[0] == 5.0 and ref[0].item() == 5.0 and not x.requires_grad and x.dtype == minigrad.float64
    y = torch.zeros(3)
    minigrad.from_dlpack(y)[1] = 4.0
    assert y.tolist() == [0.0, 4.0, 0.0]
    assert minigrad.from_dlpack(np.arange(3.0), copy=True).tolist() == [0.0, 1.0, 2.0]


def test_dlpack_capsules():
    cap = minigrad.utils.dlpack.to_dlpack(minigrad.arange(3))
    assert minigrad.from_dlpack(cap).tolist() == [0, 1, 2]
    tcap = torch.utils.dlpack.to_dlpack(torch.arange(3))
    torch.from_dlpack(tcap)
    assert _error(lambda: minigrad.from_dlpack(cap)) == _error(lambda: torch.from_dlpack(tcap))
    assert minigrad.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(3))).tolist() == [0, 1, 2]
    assert torch.from_dlpack(minigrad.utils.dlpack.to_dlpack(minigrad.arange(3.0))).tolist() == [0.0, 1.0, 2.0]
    assert _error(lambda: minigrad.from_dlpack([1])) == _error(lambda: torch.from_dlpack([1]))
    assert _error(lambda: minigrad.utils.dlpack.to_dlpack([1])) == _error(lambda: torch.utils.dlpack.to_dlpack([1]))


def test_from_dlpack_of_bfloat16_says_so():
    ours = _error(lambda: minigrad.from_dlpack(torch.ones(2, dtype=torch.bfloat16)))
    assert ours == _error(lambda: np.from_dlpack(torch.ones(2, dtype=torch.bfloat16)))


# ---- resize, resize_as --------------------------------------------------------------------------------------
def test_resize_out_of_place():
    for lib in (minigrad, torch):
        (r, w) = _warned(lambda: lib.arange(6.0).resize(2, 3))
        assert r.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and w == [(UserWarning, "non-inplace resize is deprecated")]
    assert _warned(lambda: minigrad.ones(6).resize_as(minigrad.ones(3, 2)))[1] == \
        _warned(lambda: torch.ones(6).resize_as(torch.ones(3, 2)))[1]
    assert _warned(lambda: minigrad.arange(6.0).view(2, 3).t().resize(6))[0].tolist() == \
        _warned(lambda: torch.arange(6.0).view(2, 3).t().resize(6))[0].tolist()
    assert _error(lambda: _warned(lambda: minigrad.ones(6).resize(4))) == \
        _error(lambda: _warned(lambda: torch.ones(6).resize(4)))
    t = minigrad.arange(6.0)
    assert _warned(lambda: t.resize(2, 3))[0].data_ptr() == t.data_ptr()


def test_resize_out_of_place_backward():
    grads = []
    for lib in (minigrad, torch):
        x = lib.ones(6, requires_grad=True)
        y = _warned(lambda: x.resize(2, 3))[0]
        assert y.grad_fn.name() == "ResizeBackward"
        (y * lib.arange(6.0).view(2, 3)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_resize_as_in_place_refusals():
    assert _error(lambda: minigrad.ones(3).resize_as_([1, 2])) == _error(lambda: torch.ones(3).resize_as_([1, 2]))
    assert _error(lambda: minigrad.ones(3, requires_grad=True).resize_as_(minigrad.ones(2))) == \
        _error(lambda: torch.ones(3, requires_grad=True).resize_as_(torch.ones(2)))


# ---- autocast switches --------------------------------------------------------------------------------------
def test_autocast_per_device_getters_and_setters():
    for lib in (minigrad, torch):
        assert _warned(lib.is_autocast_cpu_enabled) == (False, [(DeprecationWarning, "torch.is_autocast_cpu_enabled() is "
                                                                 "deprecated. Please use torch.is_autocast_enabled('cpu') instead.")])
        assert _warned(lambda: lib.set_autocast_cpu_enabled(True))[1][0][0] is DeprecationWarning
        assert lib.is_autocast_enabled("cpu")
        _warned(lambda: lib.set_autocast_cpu_enabled(False))
        _warned(lambda: lib.set_autocast_cpu_dtype(lib.float16))
        assert lib.get_autocast_dtype("cpu") == lib.float16
        _warned(lambda: lib.set_autocast_cpu_dtype(lib.bfloat16))
        _warned(lambda: lib.set_autocast_gpu_dtype(lib.bfloat16))
        assert _warned(lib.get_autocast_gpu_dtype)[0] == lib.bfloat16
        _warned(lambda: lib.set_autocast_gpu_dtype(lib.float16))
    for name in ("set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "set_autocast_cpu_enabled"):
        assert _error(lambda: _warned(lambda: getattr(minigrad, name)("x"))) == \
            _error(lambda: _warned(lambda: getattr(torch, name)("x")))
    for name in ("get_autocast_gpu_dtype", "set_autocast_gpu_dtype", "set_autocast_cpu_dtype"):
        args = () if name.startswith("get") else (minigrad.float16,)
        targs = () if name.startswith("get") else (torch.float16,)
        assert _warned(lambda: getattr(minigrad, name)(*args))[1] == _warned(lambda: getattr(torch, name)(*targs))[1]
    _warned(lambda: minigrad.set_autocast_gpu_dtype(minigrad.float16))
    _warned(lambda: torch.set_autocast_gpu_dtype(torch.float16))
    _warned(lambda: minigrad.set_autocast_cpu_dtype(minigrad.bfloat16))
    _warned(lambda: torch.set_autocast_cpu_dtype(torch.bfloat16))


def test_autocast_region_cache_and_nesting():
    for lib in (minigrad, torch):
        with lib.autocast("cpu", cache_enabled=False):
            inside = (_warned(lib.is_autocast_cpu_enabled)[0], lib.is_autocast_cache_enabled(),
                      lib.autocast_increment_nesting(), lib.autocast_decrement_nesting())
        assert inside == (True, False, 2, 1)
        assert lib.is_autocast_cache_enabled() and not lib.is_autocast_enabled("cpu")
        assert (lib.autocast_increment_nesting(), lib.autocast_decrement_nesting()) == (1, 0)
        lib.set_autocast_cache_enabled(False)
        assert not lib.is_autocast_cache_enabled()
        lib.set_autocast_cache_enabled(True)
        assert lib.clear_autocast_cache() is None
    assert _error(lambda: minigrad.set_autocast_cache_enabled(1)) == _error(lambda: torch.set_autocast_cache_enabled(1))


# ---- anomaly and deterministic modes, small top-level functions ---------------------------------------------
def test_set_anomaly_enabled():
    try:
        for args in ((True,), (True, False), (False, False)):
            minigrad.set_anomaly_enabled(*args)
            torch.set_anomaly_enabled(*args)
            assert (minigrad.is_anomaly_enabled(), minigrad.is_anomaly_check_nan_enabled()) == \
                (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        assert _error(lambda: minigrad.set_anomaly_enabled("x")) == _error(lambda: torch.set_anomaly_enabled("x"))
    finally:
        minigrad.set_anomaly_enabled(False)
        torch.set_anomaly_enabled(False)


@pytest.mark.parametrize("mode", ["default", "warn", "error", 0, 1, 2, 3, "x", 1.0, None])
def test_deterministic_debug_mode(mode):
    try:
        assert _error(lambda: minigrad.set_deterministic_debug_mode(mode)) == \
            _error(lambda: torch.set_deterministic_debug_mode(mode))
        assert minigrad.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
        assert minigrad.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
        assert minigrad.is_deterministic_algorithms_warn_only_enabled() == \
            torch.is_deterministic_algorithms_warn_only_enabled()
    finally:
        minigrad.use_deterministic_algorithms(False)
        torch.use_deterministic_algorithms(False)
    minigrad.use_deterministic_algorithms(True, warn_only=True)
    assert minigrad.get_deterministic_debug_mode() == 1
    minigrad.use_deterministic_algorithms(False)


def test_small_top_level_functions():
    assert minigrad.init_num_threads() is torch.init_num_threads() is None
    assert minigrad.thread_safe_generator() is torch.thread_safe_generator() is None
    t, r = minigrad.ones(2), torch.ones(2)
    assert (minigrad.is_storage(t.untyped_storage()), minigrad.is_storage(t), minigrad.is_storage(3)) == \
        (torch.is_storage(r.untyped_storage()), torch.is_storage(r), torch.is_storage(3))
    assert minigrad.get_device_module("cpu") is minigrad.cpu
    assert minigrad.get_device_module(minigrad.device("cpu")) is minigrad.cpu
    for bad in ("foo", 3):
        assert _error(lambda: minigrad.get_device_module(bad)) == _error(lambda: torch.get_device_module(bad))


# ---- Tensor attributes ----------------------------------------------------------------------------------------
def test_tensor_attributes_on_cpu():
    t, r = minigrad.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    for name in ("is_xpu", "is_mps", "is_xla", "is_mtia", "is_maia", "is_vulkan", "is_ipu", "name"):
        assert getattr(t, name) == getattr(r, name)
    assert t.is_distributed() == r.is_distributed()
    assert t.const_data_ptr() == t.data_ptr() and t[1].const_data_ptr() == t[1].data_ptr()
    assert _warned(lambda: t.volatile) == _warned(lambda: r.volatile)

    def set_volatile(x):
        x.volatile = True

    assert _warned(lambda: set_volatile(t)) == _warned(lambda: set_volatile(r))
    assert str(t.grad_dtype).split(".")[1] == str(r.grad_dtype).split(".")[1]


def test_is_set_to():
    t, r = minigrad.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    ours = [t.is_set_to(x) for x in (t, t.view(6), t.view(2, 3), t.clone(), t[0])]
    assert ours == [r.is_set_to(x) for x in (r, r.view(6), r.view(2, 3), r.clone(), r[0])]
    assert minigrad.ones(0).is_set_to(minigrad.ones(0)) == torch.ones(0).is_set_to(torch.ones(0))
    assert _error(lambda: t.is_set_to(3)) == _error(lambda: r.is_set_to(3))


def test_to_dense_and_module_load():
    t, r = minigrad.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    assert t.to_dense() is t and r.to_dense() is r
    assert str(t.to_dense(minigrad.float64).dtype).split(".")[1] == str(r.to_dense(torch.float64).dtype).split(".")[1]
    for assign in (False, True):
        p, q = minigrad.zeros(3), torch.zeros(3)
        o, ro = p.module_load(minigrad.arange(3.0), assign=assign), q.module_load(torch.arange(3.0), assign=assign)
        assert o.tolist() == ro.tolist() and p.tolist() == q.tolist() and (o is p) == (ro is q)
