"""PyTorch API corners real scripts use: grad-mode decorators, device specs, bfloat16, deprecated calls,
names under torch.*, and error texts, each checked against torch where it is installed."""
import warnings

import pytest

import minigrad
import nn


def _both():
    torch = pytest.importorskip("torch")
    return torch, minigrad


# ---- 1. grad-mode decorators -------------------------------------------------------------------------------
@pytest.mark.parametrize("lib", ["torch", "minigrad"])
def test_grad_mode_decorators_without_parentheses(lib):
    m = pytest.importorskip("torch") if lib == "torch" else minigrad
    x = m.ones(2, requires_grad=True)

    @m.no_grad
    def f():
        return (x * 2).requires_grad

    @m.enable_grad
    def g():
        return (x * 2).requires_grad

    @m.inference_mode
    def h():
        return (x * 2).requires_grad, m.is_inference_mode_enabled()

    assert f() is False and f.__name__ == "f"
    with m.no_grad():
        assert g() is True
    assert h() == (False, True)
    assert m.is_grad_enabled() and not m.is_inference_mode_enabled()


@pytest.mark.parametrize("lib", ["torch", "minigrad"])
def test_grad_mode_with_parentheses(lib):
    m = pytest.importorskip("torch") if lib == "torch" else minigrad
    x = m.ones(2, requires_grad=True)

    @m.inference_mode(False)
    def h():
        return (x * 2).requires_grad, m.is_inference_mode_enabled()

    @m.set_grad_enabled(False)
    def s():
        return m.is_grad_enabled()

    assert h() == (True, False)
    assert s() is False and m.is_grad_enabled()  # decorating does not change the mode now
    with m.no_grad(), m.inference_mode(False):  # inference_mode(False) turns recording on, as PyTorch's
        assert m.is_grad_enabled() and not m.is_inference_mode_enabled()
    with m.set_grad_enabled(False):
        assert not m.is_grad_enabled()
    assert m.is_grad_enabled()
    m.set_grad_enabled(False)
    try:
        assert not m.is_grad_enabled()
    finally:
        m.set_grad_enabled(True)


@pytest.mark.parametrize("lib", ["torch", "minigrad"])
def test_no_grad_generator_keeps_mode_per_resume(lib):
    m = pytest.importorskip("torch") if lib == "torch" else minigrad

    @m.no_grad()
    def gen():
        for _ in range(2):
            yield m.is_grad_enabled()
        return "done"

    @m.no_grad
    def gen2():
        got = yield m.is_grad_enabled()
        yield got, m.is_grad_enabled()

    it = gen()
    assert next(it) is False
    assert m.is_grad_enabled()  # the caller's mode between yields
    assert next(it) is False
    with pytest.raises(StopIteration) as e:
        next(it)
    assert e.value.value == "done"
    it2 = gen2()
    assert next(it2) is False and it2.send(5) == (5, False)


def test_grad_mode_repr_and_class_decoration_as_torch():
    torch, m = _both()
    assert repr(m.set_grad_enabled(True)) == repr(torch.set_grad_enabled(True)).replace("torch", "minigrad")
    for lib in (torch, m):
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
            @lib.no_grad()
            class A:
                def __init__(self, lib=lib):
                    self.grad = lib.is_grad_enabled()
        assert A().grad is False


# ---- 2. devices --------------------------------------------------------------------------------------------
_DEVICE_SPECS = [(("cuda", 0), {}), (("cpu", 0), {}), ((), {"type": "cpu"}), ((), {"type": "cuda", "index": 1}),
                 (("cuda:1",), {}), (("cuda",), {}), (("cpu",), {"index": None}), ((b"cpu",), {})]


@pytest.mark.parametrize("args,kwargs", _DEVICE_SPECS)
def test_device_specs_as_torch(args, kwargs):
    torch, m = _both()
    t, d = torch.device(*args, **kwargs), m.device(*args, **kwargs)
    assert (repr(d), str(d), d.type, d.index) == (repr(t), str(t), t.type, t.index)
    assert d == m.device(str(d)) and hash(d) == hash(m.device(str(d))) and m.device(d) == d


def test_device_equality_as_torch():
    torch, m = _both()
    for lib in (torch, m):
        dev = lib.device
        assert dev("cuda:0") == dev("cuda", 0) and dev("cuda:0") != dev("cuda") and dev("cuda:1") != dev("cuda:0")
        assert not dev("cpu") == "cpu" and dev("cpu") != "cpu"  # never equal to a string
        assert {dev("cuda", 0): 1}.get(dev("cuda:0")) == 1 and len({dev("cuda"), dev("cuda:0")}) == 2
    assert m.as_tensor(__import__("numpy").zeros(2), device=m.device("cpu")).device == m.device("cpu")
    x = m.ones(2)
    assert x.to("cpu:0") is x and x.to(m.device("cpu", 0)) is x


@pytest.mark.parametrize("lib", ["torch", "minigrad"])
def test_as_tensor_of_a_tensor_converts_without_the_copy_warning(lib):
    m = pytest.importorskip("torch") if lib == "torch" else minigrad
    x = m.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = m.as_tensor(x, dtype=m.float32, device="cpu")
        wider = m.as_tensor(x, dtype=m.float64)
    assert same is x
    assert wider.dtype == m.float64 and type(wider.grad_fn).__name__ == "ToCopyBackward0"


_BAD_DEVICE_SPECS = [(("cuda:-1",), {}), (("cuda", -1), {}), (("cuda:x",), {}), (("gpu",), {}), (("cuda:1", 2), {}),
                     (("cuda", 1.0), {}), (("cuda:01",), {}), (("CUDA",), {}), (("cuda", True), {}), (("cuda:",), {}),
                     ((" cuda",), {}), (("cuda",), {"index": 1.0}), ((1,), {})]


@pytest.mark.parametrize("args,kwargs", _BAD_DEVICE_SPECS)
def test_device_errors_as_torch(args, kwargs):
    torch, m = _both()
    with pytest.raises(Exception) as t:
        torch.device(*args, **kwargs)
    with pytest.raises(type(t.value)) as e:
        m.device(*args, **kwargs)
    assert str(e.value) == str(t.value)


def test_device_types_minigrad_lacks():
    with pytest.raises(RuntimeError, match="^minigrad has no 'mps' device: its devices are cpu and cuda$"):
        minigrad.device("mps")


# ---- 3. bfloat16 -------------------------------------------------------------------------------------------
_BF16_ERROR = r"^bfloat16 tensors are not supported by minigrad \(numpy has no bfloat16\): use float32 or float16 instead$"


def test_bfloat16_dtype_as_torch():
    torch, m = _both()
    b, tb = m.bfloat16, torch.bfloat16
    assert repr(b) == "minigrad.bfloat16" and b.itemsize == tb.itemsize == 2 and b.is_floating_point
    assert b != m.float16 and m.float16 != b and b == m.bfloat16 and len({b, m.float16, m.float32}) == 3
    ptdtype = {"float32": m.float32, "bfloat16": m.bfloat16, "float16": m.float16}["bfloat16"]  # nanoGPT's
    assert ptdtype is b
    f, tf = m.finfo(b), torch.finfo(tb)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(f, name) == getattr(tf, name), name


@pytest.mark.parametrize("make", [lambda m: m.zeros(2, dtype=m.bfloat16), lambda m: m.ones(2).to(m.bfloat16),
                                  lambda m: m.tensor([1.0], dtype=m.bfloat16), lambda m: m.ones(2).bfloat16(),
                                  lambda m: m.set_default_dtype(m.bfloat16)])
def test_bfloat16_tensors_refused_in_one_line(make):
    with pytest.raises(TypeError, match=_BF16_ERROR):
        make(minigrad)
    assert minigrad.get_default_dtype() == minigrad.float32


def test_bfloat16_autocast_and_cuda_query():
    torch, m = _both()
    with m.autocast(device_type="cpu", dtype=m.bfloat16):
        assert (m.ones(2, 2) @ m.ones(2, 2)).dtype == m.float32  # a no-op, as minigrad.amp documents
    with m.autocast(device_type="cpu") as ctx, torch.autocast(device_type="cpu") as torch_ctx:
        assert type(ctx) is m.autocast and type(torch_ctx) is torch.autocast  # (`as` binds the context, as PyTorch's)
    assert m.cpu.amp.autocast().fast_dtype is m.bfloat16
    assert m.cuda.is_bf16_supported() is False and m.cuda.is_bf16_supported(including_emulation=False) is False
    import inspect

    assert str(inspect.signature(m.cuda.is_bf16_supported)) == "(including_emulation=True)"
    assert torch.cuda.is_bf16_supported() is False or torch.cuda.is_available()


# ---- 4. deprecated calls tutorials still make ----------------------------------------------------------------
_RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).")


@pytest.mark.parametrize("args,kwargs", [((0, 3), {}), ((1, 4, 0.5), {}), ((3, 0, -1), {}), ((0, 3), {"dtype": "int64"}),
                                         ((0, 1, 0.1), {})])
def test_range_as_torch(args, kwargs):
    torch, m = _both()
    tk = {k: getattr(torch, v) for k, v in kwargs.items()}
    mk = {k: getattr(m, v) for k, v in kwargs.items()}
    with pytest.warns(UserWarning) as tw:
        t = torch.range(*args, **tk)
    with pytest.warns(UserWarning) as mw:
        r = m.range(*args, **mk)
    assert str(mw[0].message) == str(tw[0].message) == _RANGE_WARNING and mw[0].filename == __file__
    assert str(r.dtype).split(".")[1] == str(t.dtype).split(".")[1] and r.tolist() == t.tolist()


@pytest.mark.parametrize("args", [(3,), (0, 3, 0), (3, 0)])
def test_range_errors_as_torch(args):
    torch, m = _both()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as t:
            torch.range(*args)
        with pytest.raises(type(t.value)) as e:
            m.range(*args)
    assert str(e.value) == str(t.value)


def test_set_default_tensor_type_as_torch(monkeypatch):
    torch, m = _both()
    monkeypatch.setattr(m._warn_once, "_said_once", set())  # (said once a process: as if not said before)
    try:
        with pytest.warns(UserWarning, match=r"^torch\.set_default_tensor_type\(\) is deprecated as of PyTorch 2\.1"):
            m.set_default_tensor_type(m.DoubleTensor)
        assert m.get_default_dtype() == m.float64 and m.ones(1).dtype == m.float64
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # once a process
            m.set_default_tensor_type("torch.FloatTensor")
        assert m.get_default_dtype() == m.float32
        m.set_default_tensor_type("torch.DoubleTensor")
        assert m.get_default_dtype() == m.float64
    finally:
        m.set_default_dtype(m.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for theirs, ours in (("torch.LongTensor", "torch.LongTensor"), (torch.LongTensor, m.LongTensor),
                             ("float", "float"), (5, 5), (torch.float64, m.float64)):
            with pytest.raises(Exception) as t:
                torch.set_default_tensor_type(theirs)
            with pytest.raises(type(t.value)) as e:
                m.set_default_tensor_type(ours)
            assert str(e.value) == str(t.value)
        torch.set_default_tensor_type(torch.FloatTensor)
    assert m.get_default_dtype() == m.float32


def test_add_sub_alpha_first_overload_as_torch(monkeypatch):
    torch, m = _both()
    monkeypatch.setattr(m._warn_once, "_said_once", set())  # (said once a process: as if not said before)
    with pytest.warns(UserWarning) as w:
        got = m.ones(3).add(2, m.full((3,), 5.0))
    assert str(w[0].message) == ("This overload of add is deprecated:\n\tadd(Number alpha, Tensor other)\nConsider "
                                 "using one of the following signatures instead:\n\tadd(Tensor other, *, Number alpha = 1)")
    assert w[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.ones(3).add(2, torch.full((3,), 5.0))
        assert got.tolist() == want.tolist() == [11.0] * 3
        assert m.ones(3).sub(2, m.ones(3)).tolist() == torch.ones(3).sub(2, torch.ones(3)).tolist()
        assert m.add(m.ones(3), 2, m.ones(3)).tolist() == [3.0] * 3


# ---- 5. names real scripts reference -----------------------------------------------------------------------
@pytest.mark.parametrize("indices,shape", [([4, 1], (2, 3)), (5, (2, 3)), ([[7]], (2, 3, 2)), (3, 5), ([-1, -7], (2, 3))])
def test_unravel_index_as_torch(indices, shape):
    torch, m = _both()
    got, want = m.unravel_index(m.tensor(indices), shape), torch.unravel_index(torch.tensor(indices), shape)
    assert len(got) == len(want) and all(g.tolist() == w.tolist() and g.dtype == m.int64 for g, w in zip(got, want))


@pytest.mark.parametrize("indices,shape", [([1.5], (2, 3)), ([1], (2, -3)), ([True], (2, 3))])
def test_unravel_index_errors_as_torch(indices, shape):
    torch, m = _both()
    with pytest.raises(Exception) as t:
        torch.unravel_index(torch.tensor(indices), shape)
    with pytest.raises(type(t.value)) as e:
        m.unravel_index(m.tensor(indices), shape)
    assert str(e.value) == str(t.value).replace("torch.", "minigrad.")


def test_functional_ops_under_top_level_names():
    torch, m = _both()
    import numpy as np

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 6, 6)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    pairs = [
        ("conv2d", (x, w), {"padding": 1}),
        ("conv1d", (x[:, :, 0], w[:, :, 0]), {}),
        ("cosine_similarity", (x[0, 0], x[1, 0]), {"dim": 1}),
        ("pairwise_distance", (x[0, 0], x[1, 0]), {}),
        ("layer_norm", (x, (6,)), {}),
        ("dropout", (x, 0.5, False), {}),
    ]
    for name, args, kwargs in pairs:
        margs = [m.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        targs = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        np.testing.assert_allclose(getattr(m, name)(*margs, **kwargs).numpy(),
                                   getattr(torch, name)(*targs, **kwargs).numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def test_tensor_bernoulli_and_pinning():
    torch, m = _both()
    p = m.full((2000,), 0.25)
    g = m.Generator().manual_seed(0)
    draws = p.bernoulli(generator=g)
    assert draws.dtype == m.float32 and set(draws.tolist()) <= {0.0, 1.0} and 0.2 < draws.mean().item() < 0.3
    assert m.ones(3, dtype=m.float64).bernoulli().dtype == m.float64 and m.ones(3).bernoulli(0.0).tolist() == [0.0] * 3
    assert m.ones(2).is_pinned() is torch.ones(2).is_pinned() is False
    if not torch.cuda.is_available() and not m.cuda.is_available():
        with pytest.raises(RuntimeError) as t:
            torch.ones(2).pin_memory()
        with pytest.raises(RuntimeError) as e:
            m.ones(2).pin_memory()
        assert str(e.value) == str(t.value)


def test_cuda_mps_names_without_a_gpu():
    torch, m = _both()
    assert issubclass(m.cuda.OutOfMemoryError, RuntimeError) and m.cuda.OutOfMemoryError is m.OutOfMemoryError
    if m.cuda.is_available():
        pytest.skip("a GPU is present")
    m.cuda.set_device(-1)  # a negative index does nothing, as PyTorch's
    assert m.cuda.is_initialized() is torch.cuda.is_initialized() is False  # (a DDP script's check)
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled: minigrad's device='cuda' needs cupy"):
        m.cuda.get_device_properties(0)
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        m.cuda.set_device(0)
    for lib in (torch, m):
        with pytest.raises(ValueError, match="^Expected a cuda device, but got: cpu$"):
            lib.cuda.set_device(lib.device("cpu"))
    assert m.mps.is_available() is torch.mps.is_available() is False
    assert m.mps.device_count() == torch.mps.device_count() == 0 and m.mps.manual_seed(0) is None
    for name in ("synchronize", "empty_cache", "current_allocated_memory"):
        with pytest.raises(RuntimeError) as t:
            getattr(torch.mps, name)()
        with pytest.raises(RuntimeError) as e:
            getattr(m.mps, name)()
        assert str(e.value) == str(t.value)


def _square(i, q):  # (at module level: spawn pickles it by name)
    q.put(i * i)


def test_multiprocessing_is_pythons_with_spawn():
    import multiprocessing

    import minigrad.multiprocessing as mp

    assert mp.Process is multiprocessing.Process and mp.cpu_count() == multiprocessing.cpu_count()
    assert callable(mp.set_start_method) and callable(mp.Queue) and mp is minigrad.multiprocessing
    q = mp.get_context("spawn").SimpleQueue()
    mp.spawn(_square, args=(q,), nprocs=2)
    assert sorted([q.get(), q.get()]) == [0, 1]


def test_nn_parallel_reachable_from_the_top():
    import subprocess
    import sys

    code = "import minigrad as torch; print(torch.nn.parallel.DistributedDataParallel.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "DistributedDataParallel"


# ---- 6. error texts ----------------------------------------------------------------------------------------
_ERROR_CASES = {
    "int": lambda m: int(m.tensor([1, 2])),
    "float": lambda m: float(m.tensor([1.0, 2.0])),
    "float_empty": lambda m: float(m.tensor([])),
    "ragged": lambda m: m.tensor([[1, 2], [3]]),
    "ragged_float": lambda m: m.tensor([[1.0], [3.0, 4.0]]),
    "ragged_deep": lambda m: m.tensor([[[1, 2]], [[3]]]),
    "not_a_sequence": lambda m: m.tensor([[1, 2], 3]),
    "zero_dim_index": lambda m: m.tensor(2.5)[0],
    "zero_dim_slice": lambda m: m.tensor(2.5)[0:1],
    "zero_dim_tensor_index": lambda m: m.tensor(2.5)[m.tensor(0)],
    "index_select_float": lambda m: m.index_select(m.ones(3), 0, m.tensor([0.0])),
    "index_select_uint8": lambda m: m.ones(3).index_select(0, m.tensor([0], dtype=m.uint8)),
    "index_select_2d_float": lambda m: m.ones(3).index_select(0, m.tensor([[0.0]])),
}


@pytest.mark.parametrize("case", sorted(_ERROR_CASES))
def test_error_texts_as_torch(case):
    torch, m = _both()
    with pytest.raises(Exception) as t:
        _ERROR_CASES[case](torch)
    with pytest.raises(type(t.value)) as e:
        _ERROR_CASES[case](m)
    assert str(e.value) == str(t.value)


def test_cuda_without_cupy_is_torchs_assertion_and_minigrads_hint():
    if minigrad.cuda.is_available():
        pytest.skip("a GPU is present")
    pytest.importorskip("torch")
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("cupy is installed (its errors for a missing GPU are RuntimeErrors)")
    for make in (lambda: minigrad.ones(2).cuda(), lambda: minigrad.ones(2, device="cuda")):
        with pytest.raises(AssertionError) as e:
            make()
        assert isinstance(e.value, RuntimeError)  # (so `except RuntimeError` code keeps working)
        assert str(e.value).startswith("Torch not compiled with CUDA enabled: ") and "cupy" in str(e.value)
        assert "\n" not in str(e.value)


def test_set_default_device_as_pytorchs_tutorials_use_it():
    # the NLP-from-scratch tutorials start with `torch.set_default_device(device)` (device: cuda if available)
    device = minigrad.device("cuda") if minigrad.cuda.is_available() else minigrad.device("cpu")
    minigrad.set_default_device(device)
    try:
        assert minigrad.get_default_device() == (device if device.type == "cuda" else minigrad.device("cpu"))
        assert minigrad.zeros(2).device.type == device.type and minigrad.randn(2).device.type == device.type
        assert nn.Linear(2, 2).weight.device.type == device.type
        if not minigrad.cuda.is_available():
            minigrad.set_default_device("cuda")
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                minigrad.zeros(2)
    finally:
        minigrad.set_default_device(None)
    assert minigrad.get_default_device() == minigrad.device("cpu") and minigrad.ones(1).device.type == "cpu"


def test_a_device_is_a_context_manager_for_the_default_device():
    # `with torch.device(device):` around model building (gpt-fast, Lightning's examples)
    with minigrad.device("cuda") as d:
        assert d == minigrad.device("cuda") and minigrad.get_default_device().type == "cuda"
        with minigrad.device("cpu"):
            assert minigrad.get_default_device().type == "cpu" and nn.Linear(2, 2).weight.device.type == "cpu"
        assert minigrad.get_default_device().type == "cuda"
        if not minigrad.cuda.is_available():
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                minigrad.zeros(2)
    assert minigrad.get_default_device() == minigrad.device("cpu") and minigrad.ones(1).device.type == "cpu"
    with pytest.raises(ValueError), minigrad.device("cuda"):  # left as it was when the block raises
        raise ValueError
    assert minigrad.get_default_device() == minigrad.device("cpu")


def _said(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]


def test_warnings_pytorch_gives_where_scripts_often_go_wrong():
    torch = pytest.importorskip("torch")
    import numpy as np

    def cases(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        return [lambda: y.grad,  # a non-leaf's .grad: None, with PyTorch's pointer to retain_grad
                lambda: lib.cuda.amp.autocast(), lambda: lib.cpu.amp.autocast(), lambda: lib.cuda.amp.GradScaler(),
                lambda: lib.autocast("cuda")]

    for ours, theirs in zip(cases(minigrad), cases(torch)):
        assert [(c, m.replace("minigrad.", "torch.")) for c, m in _said(ours)] == _said(theirs)
    x, y = minigrad.ones(2, requires_grad=True), None
    y = x * 2
    y.retain_grad()
    assert _said(lambda: y.grad) == []  # (retained: no warning)
    frozen = np.frombuffer(b"\0" * 16, np.float32)
    said = _said(lambda: minigrad.from_numpy(frozen))
    assert said == _said(lambda: torch.from_numpy(frozen)) or said == []  # (once a process, as PyTorch's)
    t = minigrad.from_numpy(frozen)
    t.add_(1.0)  # (a read-only array is copied: writes work, as they do in PyTorch)
    t[0] = 5.0
    assert t.tolist() == [5.0, 1.0, 1.0, 1.0] and not frozen.any()


def test_a_loss_prints_as_pytorchs():
    torch = pytest.importorskip("torch")
    import nn.functional as F

    logits, target = [[0.5, 1.0, -1.0], [2.0, 0.1, 0.3]], [1, 0]
    ours = F.cross_entropy(minigrad.tensor(logits, requires_grad=True), minigrad.tensor(target))
    theirs = torch.nn.functional.cross_entropy(torch.tensor(logits, requires_grad=True), torch.tensor(target))
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "NllLossBackward0"
    assert repr(ours).split("grad_fn")[1] == repr(theirs).split("grad_fn")[1]


def test_meshgrid_without_indexing_warns_and_is_ij_as_pytorchs():
    torch = pytest.importorskip("torch")
    a, b = [1.0, 2.0], [3.0, 4.0, 5.0]
    mine = _said(lambda: minigrad.meshgrid(minigrad.tensor(a), minigrad.tensor(b)))
    assert mine == _said(lambda: torch.meshgrid(torch.tensor(a), torch.tensor(b)))
    assert minigrad.meshgrid(minigrad.tensor(a), minigrad.tensor(b), indexing="ij")[0].shape == (2, 3)
    assert _said(lambda: minigrad.meshgrid(minigrad.tensor(a), minigrad.tensor(b), indexing="xy")) == []


# ---- float() of a tensor that requires grad ----------------------------------------------------------------
def test_float_of_a_grad_tensor_warns_only_with_grad_mode_on(monkeypatch):
    """As PyTorch's: float(loss) warns (once a process) with grad mode on, never under no_grad, so LBFGS,
    whose step runs under no_grad and calls float() of the closure's loss, says nothing (the style-transfer
    tutorial printed the warning)."""
    import sys

    import nn.optim as optim

    monkeypatch.setattr(sys.modules["minigrad._warn_once"], "_said_once", set())
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with minigrad.no_grad():
            float((x * x).sum())
        opt = optim.LBFGS([x], max_iter=3)

        def closure():
            opt.zero_grad()
            loss = (x * x).sum()
            loss.backward()
            assert minigrad.is_grad_enabled()
            return loss

        opt.step(closure)
    assert not [w for w in caught if "to a scalar" in str(w.message)]
    with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a scalar"):
        float((x * x).sum())


# ---- autograd.Function with setup_context (PyTorch 2's style), node reprs, saved attributes -----------------
def _cube_function(m):
    class MyCube(m.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,), (_, dx) = inputs, output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    class Linear(m.autograd.Function):
        @staticmethod
        def forward(input, weight, bias):
            return input.mm(weight.t()) + bias

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            return (grad_output.mm(weight) if ctx.needs_input_grad[0] else None,
                    grad_output.t().mm(input) if ctx.needs_input_grad[1] else None,
                    grad_output.sum(0) if ctx.needs_input_grad[2] else None)

    return MyCube, Linear


@pytest.mark.parametrize("lib", ["torch", "minigrad"])
def test_function_with_setup_context(lib):
    m = pytest.importorskip("torch") if lib == "torch" else minigrad
    MyCube, Linear = _cube_function(m)
    x = m.tensor([1.0, 2.0], requires_grad=True)
    result, dx = MyCube.apply(x)
    (g,) = m.autograd.grad(result.sum(), x, create_graph=True)
    (g2,) = m.autograd.grad(g.sum(), x)
    assert g.tolist() == [3.0, 12.0] and g2.tolist() == [6.0, 12.0]
    assert type(result.grad_fn).__name__ == "MyCubeBackward"
    a, w, b = m.ones(2, 3), m.full((4, 3), 2.0, requires_grad=True), m.zeros(4, requires_grad=True)
    out = Linear.apply(a, w, b)
    out.sum().backward()
    assert out.tolist() == [[6.0] * 4] * 2 and w.grad.tolist() == [[2.0] * 3] * 4 and b.grad.tolist() == [2.0] * 4
    with m.no_grad():  # no node: setup_context still runs (its saves go nowhere)
        assert MyCube.apply(m.tensor([2.0]))[0].tolist() == [8.0]


def test_user_function_node_repr_and_saved_exponent_as_torch():
    torch = pytest.importorskip("torch")
    reprs = []
    for m in (torch, minigrad):
        MyCube, _ = _cube_function(m)
        x = m.tensor([1.0], requires_grad=True)
        node = MyCube.apply(x)[0].grad_fn
        reprs.append(repr(node).split(" object at")[0].replace("minigrad", "torch"))
        assert (x ** 2).grad_fn._saved_exponent == 2
    assert reprs[0] == reprs[1] == "<torch.autograd.function.MyCubeBackward"


@pytest.mark.parametrize("lib", ["torch", "minigrad"])
def test_is_inference(lib):
    m = pytest.importorskip("torch") if lib == "torch" else minigrad
    w = m.ones(3, requires_grad=True)
    with m.inference_mode():
        r = w * 2
    with m.no_grad():
        q = w * 2
    assert r.is_inference() and not q.is_inference() and not w.is_inference()
