"""Small pieces of PyTorch 2.13's API that scripts call, each run on minigrad and on torch and compared."""
import importlib

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    return None


# --- torch.autograd ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["autograd.anomaly_mode", "autograd.variable"])
def test_autograd_module_paths(path):
    ours, theirs = importlib.import_module("minigrad." + path), importlib.import_module("torch." + path)
    names = [n for n in ("detect_anomaly", "set_detect_anomaly", "Variable") if hasattr(theirs, n)]
    assert names and all(hasattr(ours, n) for n in names)
    if path.endswith("anomaly_mode"):
        assert ours.__all__ == theirs.__all__
        with ours.set_detect_anomaly(True):
            assert minigrad.is_anomaly_enabled()
        assert not minigrad.is_anomaly_enabled()


def test_multithreading_and_view_replay_flags():
    for lib in (torch, minigrad):
        ag = lib.autograd
        assert ag.is_multithreading_enabled() is True and ag.is_view_replay_enabled() is False
        ag.set_multithreading_enabled(False)  # a call sets it at once
        assert ag.is_multithreading_enabled() is False
        with ag.set_multithreading_enabled(True):
            assert ag.is_multithreading_enabled() is True
        assert ag.is_multithreading_enabled() is False  # the with restores what was set before it
        ag.set_multithreading_enabled(True)


def test_is_tensor_like():
    for v in (1, [1.0], np.ones(2)):
        assert minigrad.autograd.is_tensor_like(v) == torch.autograd.is_tensor_like(v)
    assert minigrad.autograd.is_tensor_like(minigrad.ones(2)) and torch.autograd.is_tensor_like(torch.ones(2))


def _saved_hooks_run(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = a * a
    r = z.grad_fn._raw_saved_self
    assert isinstance(r, lib.autograd.SavedTensor)
    calls = []
    r.register_hooks(lambda t: (calls.append("p"), t * 1)[1], lambda t: (calls.append("u"), t)[1])
    out = [list(calls), _err(lambda: r.register_hooks(lambda t: t, lambda t: t))]
    z.sum().backward()
    out += [list(calls), a.grad.tolist(), _err(lambda: r.register_hooks(lambda t: t, lambda t: t))]
    a.grad = None
    z = a * a
    z.grad_fn._raw_saved_self.register_hooks(lambda t: 5, lambda x: lib.ones(3) * x)
    z.sum().backward()
    out.append(a.grad.tolist())
    y = a.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t.detach() * 2, lambda x: x)
    (g,) = lib.autograd.grad(y.sum(), a, create_graph=True)
    a.grad = None
    g.sum().backward()
    out += [g.tolist(), a.grad.tolist(), _err(lambda: lib.autograd.SavedTensor())]
    return out


def test_saved_tensor_register_hooks():
    ours, theirs = _saved_hooks_run(minigrad), _saved_hooks_run(torch)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, list) and t and isinstance(t[0], float):
            np.testing.assert_allclose(o, t, rtol=1e-6)
        else:
            assert o == t


# --- torch.amp -----------------------------------------------------------------------------------------

def test_amp_module_paths_and_is_autocast_available():
    import minigrad.amp.autocast_mode as ours_mode
    import minigrad.amp.grad_scaler as ours_scaler
    import torch.amp.autocast_mode as theirs_mode

    assert ours_mode.autocast is minigrad.amp.autocast and ours_scaler.GradScaler is minigrad.amp.GradScaler
    assert all(hasattr(ours_mode, n) for n in ("custom_fwd", "custom_bwd", "is_autocast_available"))
    assert all(hasattr(theirs_mode, n) for n in ("custom_fwd", "custom_bwd", "is_autocast_available"))
    for d in ("cpu", "cuda", "meta"):  # (mps, xla: PyTorch's True; minigrad has no such device, so False)
        assert minigrad.amp.is_autocast_available(d) == torch.amp.is_autocast_available(d)
    assert _err(lambda: minigrad.amp.is_autocast_available("foo")) == _err(lambda: torch.amp.is_autocast_available("foo"))


def _custom_amp_run(lib):
    seen = []

    class Cast(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float64)
        def forward(ctx, x):
            seen.append(("fwd", str(x.dtype).split(".")[-1], lib.is_autocast_enabled("cpu")))
            return x * 2

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen.append(("bwd", str(g.dtype).split(".")[-1], lib.is_autocast_enabled("cpu")))
            return g * 2

    class Keep(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            seen.append(("fwdK", lib.is_autocast_enabled("cpu")))
            return x * 2

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen.append(("bwdK", lib.is_autocast_enabled("cpu")))
            return g * 2

    x = lib.ones(2, requires_grad=True)
    Cast.apply(x).sum().backward()
    with lib.autocast("cpu"):
        y, k = Cast.apply(x), Keep.apply(x)
    seen.append(str(y.dtype).split(".")[-1])
    (y.sum() + k.sum()).backward()
    return seen, x.grad.tolist()


def test_custom_fwd_bwd():
    assert _custom_amp_run(minigrad) == _custom_amp_run(torch)
    for f in ("custom_fwd", "custom_bwd"):
        ours, theirs = getattr(minigrad.amp, f), getattr(torch.amp, f)
        assert _err(lambda: ours(lambda c, x: x)) == _err(lambda: theirs(lambda c, x: x))  # noqa: B023
        assert _err(lambda: ours(device_type=1)) == _err(lambda: theirs(device_type=1))  # noqa: B023


@pytest.mark.parametrize("name", ["custom_fwd", "custom_bwd"])
def test_cuda_amp_custom_decorators_deprecated(name):
    texts = []
    for lib in (minigrad, torch):
        with pytest.warns(FutureWarning) as record:
            getattr(lib.cuda.amp, name)(lambda c, x: x)
        texts.append([str(w.message) for w in record])
    assert texts[0] == texts[1]


# --- torch.utils ---------------------------------------------------------------------------------------

def _swap_run(lib):
    import weakref

    a, b = lib.ones(2), lib.zeros(3, dtype=lib.float64, requires_grad=True)
    b.grad = lib.full((3,), 5.0, dtype=lib.float64)
    lib.utils.swap_tensors(a, b)
    out = [a.tolist(), str(a.dtype).split(".")[-1], a.requires_grad, a.grad.tolist(), b.tolist(), b.requires_grad,
           b.grad]
    c = lib.ones(2)
    ref = weakref.ref(c)  # noqa: F841 (held: its presence is what is refused)
    out += [_err(lambda: lib.utils.swap_tensors(c, lib.ones(2))), _err(lambda: lib.utils.swap_tensors(lib.ones(2), c))]
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    z = lib.zeros(2)
    lib.utils.swap_tensors(y, z)
    out += [y.grad_fn is None, type(z.grad_fn).__name__]
    return out


def test_swap_tensors():
    assert _swap_run(minigrad) == _swap_run(torch)


def test_swap_tensors_refuses_different_slots():
    class Slotted(minigrad.Tensor):
        __slots__ = ("extra",)

    s = Slotted(np.ones(2, dtype=np.float32))
    assert _err(lambda: minigrad.utils.swap_tensors(minigrad.ones(2), s)) == (
        "RuntimeError", "Cannot swap t1 and t2 if they have different slots")


def test_utils_hooks_and_deterministic_paths():
    import minigrad.utils.deterministic as ours
    import torch.utils.deterministic as theirs

    assert minigrad.utils.hooks.RemovableHandle is not None
    assert ours.fill_uninitialized_memory is theirs.fill_uninitialized_memory is True

    def set_int(module):
        module.fill_uninitialized_memory = 1

    assert _err(lambda: set_int(ours)) == _err(lambda: set_int(theirs))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_empty_filled_under_deterministic_algorithms(dtype):
    import minigrad.utils.deterministic as ours
    import torch.utils.deterministic as theirs

    got = {}
    for lib, flag in ((minigrad, ours), (torch, theirs)):
        try:
            lib.use_deterministic_algorithms(True)
            dt = getattr(lib, dtype)
            filled = lib.empty(3, dtype=dt).tolist(), lib.empty_strided((2,), (1,), dtype=dt).tolist()
            flag.fill_uninitialized_memory = False
            lib.empty(3, dtype=dt)  # (memory left as it is: nothing to compare)
            got[lib.__name__] = filled
        finally:
            flag.fill_uninitialized_memory = True
            lib.use_deterministic_algorithms(False)
    np.testing.assert_array_equal(np.array(got["minigrad"][0]), np.array(got["torch"][0]))
    np.testing.assert_array_equal(np.array(got["minigrad"][1]), np.array(got["torch"][1]))


# --- Tensor methods ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["indices", "values", "coalesce", "is_coalesced", "sparse_dim", "dense_dim",
                                  "crow_indices", "col_indices", "ccol_indices", "row_indices"])
def test_sparse_accessors_on_a_strided_tensor(name):
    ours = _err(lambda: getattr(minigrad.ones(2, 3), name)())
    theirs = _err(lambda: getattr(torch.ones(2, 3), name)())
    assert ours == theirs
    if theirs is None:
        assert getattr(minigrad.ones(2, 3), name)() == getattr(torch.ones(2, 3), name)()


def test_sparse_accessors_still_reach_the_sparse_classes():
    dense = [[0.0, 1.0], [2.0, 0.0]]
    ours, theirs = minigrad.tensor(dense).to_sparse(), torch.tensor(dense).to_sparse()
    assert ours.indices().tolist() == theirs.indices().tolist() and ours.values().tolist() == theirs.values().tolist()
    assert ours.sparse_dim() == theirs.sparse_dim() == 2
    assert minigrad.tensor(dense).to_sparse_csr().crow_indices().tolist() == [0, 1, 2]


def test_conj_physical_in_place_and_chalf_refused():
    for lib in (minigrad, torch):
        c = lib.tensor([1 + 2j, -3j])
        assert c.conj_physical_() is c and c.tolist() == [1 - 2j, 3j]
        r = lib.tensor([1.0, -2.0])
        assert r.conj_physical_() is r and r.tolist() == [1.0, -2.0]
    assert _err(lambda: minigrad.ones(2).chalf())[0] == "TypeError"


# --- torch.jit -----------------------------------------------------------------------------------------

def test_jit_eager_no_ops():
    for lib in (minigrad, torch):
        jit = lib.jit
        assert issubclass(jit.Error, Exception) and issubclass(jit.ScriptWarning, Warning)
        assert issubclass(jit.TracerWarning, Warning)
        a = jit.Attribute(3, int)
        assert isinstance(a, tuple) and (a.value, a.type) == (3, int)
        assert jit.script_if_tracing(lambda x: x + 1)(1) == 2
        with jit.optimized_execution(True), jit.fuser("fuser1"):
            pass
    assert _err(lambda: minigrad.jit.fuser("bad")) == _err(lambda: torch.jit.fuser("bad").__enter__())
