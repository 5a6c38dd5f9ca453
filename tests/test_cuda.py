"""minigrad on CUDA (cupy): tensors and modules moved to the GPU, every fused op and optimizer on it
(the generic cupy path of each op, and the fused kernels of minigrad/backends/cuda) held
against the CPU, the GPT's forward and backward CPU vs GPU, train.py / sample.py with
--device=cuda, minigrad.cuda's memory API, the CUDA random state, save_on_cpu with cupy.

Tests marked `cuda` skip cleanly where cupy is not installed or sees no GPU; the first few run
anywhere (asking for CUDA without a GPU must fail clearly). TF32 is off in every test.
"""
import json
import sys

import numpy as np
import pytest

import minigrad
import minigrad.cuda
import nn
import nn.functional as F
from minigrad import backends
from minigrad.backends.cuda import kernels as ck


HAS_GPU = minigrad.cuda_is_available()
DEVICES = ["cpu"] + (["cuda"] if HAS_GPU else [])
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-10)}
MODES = ["generic", "fused"]  # the ops' own code on cupy, or the fused kernels


def gpu(fn):
    return pytest.mark.cuda(pytest.mark.skipif(not HAS_GPU, reason="needs cupy and a CUDA GPU")(fn))


@pytest.fixture(autouse=True)
def _exact_matmuls():
    if HAS_GPU:
        minigrad.cuda.set_tf32(False)
    yield


@pytest.fixture
def mode(request):
    return request.param


def kernels(mode):
    """The context a GPU computation runs in: the backends on (MINIGRAD_KERNELS=fast), or off (numpy)."""
    return backends.kernels("fast" if mode == "fused" else "numpy")


def host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def close(a, b, dtype=np.float32, **tol):
    np.testing.assert_allclose(host(a), host(b), **(tol or TOL[dtype]))


# ==== anywhere ========================================================================================
def test_cuda_without_gpu_is_a_clear_error():
    if HAS_GPU:
        pytest.skip("a GPU is present")
    for make in (lambda: minigrad.ones(3, device="cuda"), lambda: minigrad.tensor([1.0]).to("cuda"),
                 lambda: minigrad.randn(2, device="cuda"), lambda: nn.Linear(2, 2).to("cuda"),
                 minigrad.cuda.synchronize, minigrad.cuda.reset_peak_memory_stats):
        with pytest.raises(RuntimeError, match="cuda") as info:
            make()
        msg = str(info.value)
        assert "cupy" in msg or "GPU" in msg, msg
    assert minigrad.cuda.is_available() is False and minigrad.cuda.device_count() == 0
    # the memory questions scripts ask unguarded have PyTorch's answers on a machine without a GPU
    assert minigrad.cuda.memory_allocated() == minigrad.cuda.max_memory_allocated() == 0
    assert minigrad.cuda.memory_reserved() == 0 and minigrad.cuda.empty_cache() is None


def test_tf32_setting_without_cupy_loaded(monkeypatch):
    monkeypatch.setenv("CUPY_TF32", "0")
    if "cupy" in sys.modules:
        pytest.skip("cupy is loaded: covered by test_tf32_setting")
    before = minigrad.cuda.get_tf32()
    minigrad.cuda.set_tf32(True)
    import os

    assert minigrad.cuda.get_tf32() is True and os.environ["CUPY_TF32"] == "1"
    with minigrad.cuda.tf32(False):
        assert minigrad.cuda.get_tf32() is False and os.environ["CUPY_TF32"] == "0"
    assert minigrad.cuda.get_tf32() is True
    minigrad.cuda.set_tf32(before)


def test_cuda_rng_state_is_json_and_restores_without_a_gpu():
    minigrad.manual_seed(3)
    st = minigrad.get_rng_state()
    assert "cuda" not in st  # no CUDA draw yet
    st2 = dict(st, cuda={"seed": 3, "draws": 7})
    minigrad.set_rng_state(json.loads(json.dumps(st2)))
    assert minigrad.get_rng_state()["cuda"] == {"seed": 3, "draws": 7}
    assert minigrad.random.generator(object()).state == {"seed": 3, "draws": 7}
    minigrad.set_rng_state(st)  # a snapshot from before any CUDA draw: the CUDA generator starts over
    assert "cuda" not in minigrad.get_rng_state()
    assert minigrad.random.generator(object()).state == {"seed": 3, "draws": 0}


def test_cuda_generator_is_counter_based(monkeypatch):
    """CudaGenerator's draws and state, with numpy standing in for cupy's random module."""
    import types

    fake = types.SimpleNamespace(random=types.SimpleNamespace(Philox4x3210=np.random.Philox, Generator=np.random.Generator),
                                 argsort=np.argsort, int64=np.int64, asarray=np.asarray)
    monkeypatch.setattr(minigrad.random, "_import_cupy", lambda: fake)
    g = minigrad.random.CudaGenerator(5)
    a = g.random((3, 4), dtype=np.float32)
    b = g.standard_normal(6)
    assert a.dtype == np.float32 and g.state == {"seed": 5, "draws": 2}
    c = g.integers(0, 10, size=(5,))
    p = g.permutation(20)
    assert sorted(p.tolist()) == list(range(20)) and g.state["draws"] == 4 and c.max() < 10
    h = minigrad.random.CudaGenerator(**json.loads(json.dumps(g.state)))
    g2 = minigrad.random.CudaGenerator(5)
    assert np.array_equal(g2.random((3, 4), dtype=np.float32), a) and np.array_equal(g2.standard_normal(6), b)
    assert np.array_equal(h.random(7), minigrad.random.CudaGenerator(5, 4).random(7))
    assert not np.array_equal(minigrad.random.CudaGenerator(6).random(7), minigrad.random.CudaGenerator(5).random(7))
    with pytest.raises(ValueError):
        g.integers(5, 5)
    assert g.state["draws"] == 4  # a failed draw does not advance the counter


def test_kernels_only_take_gpu_float_arrays():
    impl = backends.find("dropout", np.zeros(3, np.float32), 0.5)  # a CPU array: never CUDA's kernel
    assert impl is None or impl.__name__ == "minigrad.backends.cpu.dropout"
    assert ck._threads(1) == 32 and ck._threads(384) == 96 and ck._threads(50304) == 1024
    assert all(ck._threads(n) % 32 == 0 for n in range(1, 5000, 37))


# ==== on the GPU: devices, modules ====================================================================
@gpu
@pytest.mark.parametrize("dtype", [minigrad.float32, minigrad.float64, minigrad.int64, minigrad.bool])
def test_tensor_to_cuda_and_back(dtype):
    a = minigrad.tensor(np.arange(12).reshape(3, 4) % 3).to(dtype)
    g = a.to("cuda")
    assert g.is_cuda and g.device.type == "cuda" and g.dtype == dtype and g.shape == a.shape
    assert type(g.array).__module__.startswith("cupy")
    back = g.cpu()
    assert not back.is_cuda and np.array_equal(back.array, a.array)
    assert a.cuda().is_cuda and a.to(device="cuda:0").is_cuda and g.to("cuda") is g


@gpu
def test_gradient_flows_across_devices():
    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x.to("cuda") * 2.0).sum()
    y.backward()
    assert not x.grad.is_cuda
    close(x.grad.array, [2.0, 2.0, 2.0])


@gpu
def test_module_to_cuda_and_back():
    minigrad.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    ref = net(minigrad.tensor(x)).array
    params = list(net.parameters())
    net.to("cuda")
    assert list(net.parameters()) == params and all(p.is_cuda for p in params)
    out = net(minigrad.tensor(x, device="cuda"))
    assert out.is_cuda
    close(out.array, ref)
    assert all(type(v.array).__module__.startswith("cupy") for v in net.state_dict().values())
    net.to("cpu")
    assert not any(p.is_cuda for p in params)


@pytest.mark.parametrize("device", DEVICES)
def test_random_is_reproducible_on_each_device(device):
    minigrad.manual_seed(7)
    a = minigrad.randn(1000, device=device)
    b = minigrad.rand(10, device=device, dtype=minigrad.float32)
    minigrad.manual_seed(7)
    assert np.array_equal(host(minigrad.randn(1000, device=device).array), host(a.array))
    assert np.array_equal(host(minigrad.rand(10, device=device, dtype=minigrad.float32).array), host(b.array))
    assert b.dtype == minigrad.float32 and abs(float(host(a.array).std()) - 1.0) < 0.1
    p = host(minigrad.randperm(50, device=device).array)
    assert sorted(p.tolist()) == list(range(50))
    r = host(minigrad.randint(0, 5, (100,), device=device).array)
    assert r.min() >= 0 and r.max() < 5


@gpu
def test_cuda_rng_state_round_trip():
    minigrad.manual_seed(11)
    minigrad.randn(3, device="cuda")
    state = minigrad.get_rng_state()
    assert set(state) == {"cpu", "cuda"}
    json.dumps(state)
    a = minigrad.randn(5, 5, device="cuda")
    b = minigrad.rand(5, device="cuda")
    minigrad.set_rng_state(json.loads(json.dumps(state)))
    assert np.array_equal(minigrad.randn(5, 5, device="cuda").array.get(), a.array.get())
    assert np.array_equal(minigrad.rand(5, device="cuda").array.get(), b.array.get())


@gpu
def test_checkpoint_with_dropout_on_cuda_matches_no_checkpoint():
    from minigrad.utils.checkpoint import checkpoint

    w = minigrad.randn(16, 16, device="cuda", requires_grad=True)
    x = minigrad.randn(8, 16, device="cuda")

    def block(h):
        return F.dropout(h @ w, 0.5, training=True).tanh()

    grads = []
    for ck_on in (False, True):
        minigrad.manual_seed(5)
        w.grad = None
        out = checkpoint(block, x, use_reentrant=False) if ck_on else block(x)
        out.sum().backward()
        grads.append(w.grad.array.get())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-6)


# ==== on the GPU: every fused op, generic cupy path and fused kernels, against the CPU =================
def both(fn, arrays, mode, grad_seed=1):
    """(cpu out, cpu grads), (gpu out, gpu grads) of fn(*tensors), with the same upstream gradient."""
    res = []
    for dev in ("cpu", "cuda"):
        ts = [minigrad.tensor(a, device=dev, requires_grad=a.dtype.kind == "f") for a in arrays]
        ctx = kernels(mode) if dev == "cuda" else backends.kernels("numpy")
        with ctx:
            out = fn(*ts)
            g = np.random.default_rng(grad_seed).standard_normal(out.shape).astype(out.array.dtype)
            out.backward(minigrad.tensor(g, device=dev))
        res.append((host(out.array), [None if t.grad is None else host(t.grad.array) for t in ts]))
    return res


def check(res, dtype, **tol):
    (o0, g0), (o1, g1) = res
    close(o1, o0, dtype, **tol)
    for a, b in zip(g1, g0):
        assert (a is None) == (b is None)
        if a is not None:
            close(a, b, dtype, **tol)


RNG = np.random.default_rng(0)


@gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(mode, dtype, approximate):
    x = (RNG.standard_normal((64, 300)) * 3).astype(dtype)
    check(both(lambda a: F.gelu(a, approximate=approximate), [x], mode), dtype)


@gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((64, 65), -1), ((8, 1000), 1), ((4, 7, 5), 1), ((3, 50304), -1)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax(mode, dtype, shape, dim, log):
    x = (RNG.standard_normal(shape) * 4).astype(dtype)
    f = F.log_softmax if log else F.softmax
    check(both(lambda a: f(a, dim=dim), [x], mode), dtype)


@gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(4, 64, 384), (3000, 48), (5, 1030)])
def test_layer_norm(mode, dtype, affine, shape):
    D = shape[-1]
    x = (RNG.standard_normal(shape) * 2 + 1).astype(dtype)
    if affine:
        w, b = (RNG.standard_normal(D) + 1).astype(dtype), RNG.standard_normal(D).astype(dtype)
        res = both(lambda a, w_, b_: F.layer_norm(a, (D,), w_, b_), [x, w, b], mode)
    else:
        res = both(lambda a: F.layer_norm(a, (D,)), [x], mode)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 and shape[0] == 3000 else {}  # column sums of 3000
    check(res, dtype, **tol)


@gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls,weighted,C", [(0.0, False, 65), (0.1, False, 65), (0.0, True, 65), (0.1, True, 65),
                                          (0.0, False, 50304), (0.1, True, 50304)])
def test_cross_entropy(mode, dtype, reduction, ls, weighted, C):
    M = 64
    x = (RNG.standard_normal((M, C)) * 3).astype(dtype)
    tgt = RNG.integers(0, C, M)
    tgt[[3, 9]] = -1
    w = (RNG.random(C) + 0.5).astype(dtype)

    def f(a):  # (the class weights take no gradient: PyTorch refuses one that asks for it)
        return F.cross_entropy(a, minigrad.tensor(tgt, device=a.device),
                               weight=minigrad.tensor(w, device=a.device) if weighted else None,
                               ignore_index=-1, reduction=reduction, label_smoothing=ls)

    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 and reduction == "sum" else {}
    check(both(f, [x], mode), dtype, **tol)


@gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("L,E", [(64, 16), (256, 64)])
def test_attention(mode, dtype, causal, L, E):
    q, k, v = (RNG.standard_normal((2, 3, L, E)).astype(dtype) for _ in range(3))
    check(both(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=causal), [q, k, v], mode), dtype,
          **({"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {}))


@gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_attention_masks(mode, kind):
    dtype = np.float64
    q, k, v = (RNG.standard_normal((2, 2, n, 8)) for n in (5, 7, 7))
    if kind == "bool":
        m = RNG.random((5, 7)) > 0.4
        m[1] = False
    else:
        m = RNG.standard_normal((2, 1, 5, 7))
    res = []
    for dev in ("cpu", "cuda"):
        ts = [minigrad.tensor(a, device=dev, requires_grad=True) for a in (q, k, v)]
        with kernels(mode) if dev == "cuda" else backends.kernels("numpy"):
            out = F.scaled_dot_product_attention(*ts, attn_mask=minigrad.tensor(m, device=dev))
            out.sum().backward()
        res.append((host(out.array), [host(t.grad.array) for t in ts]))
    assert np.isfinite(res[1][0]).all()
    check(res, dtype)


@gpu
@pytest.mark.parametrize("mode", MODES)
def test_dropout_on_cuda(mode):
    x = minigrad.ones(256, 256, device="cuda", requires_grad=True)
    with kernels(mode):
        minigrad.manual_seed(0)
        y = F.dropout(x, 0.25, training=True)
        y.sum().backward()
    yd, gd = y.array.get(), x.grad.array.get()
    kept = yd != 0
    assert 0.72 < kept.mean() < 0.78
    np.testing.assert_allclose(yd[kept], 1 / 0.75, rtol=1e-6)
    np.testing.assert_array_equal(gd != 0, kept)  # backward uses the forward's mask
    with kernels(mode):
        minigrad.manual_seed(0)
        y2 = F.dropout(x.detach(), 0.25, training=True)
    np.testing.assert_array_equal(y2.array.get(), yd)  # manual_seed repeats the mask


@gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opt_name,kw", [("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
                                         ("Adam", dict(lr=0.01, weight_decay=0.05)),
                                         ("AdamW", dict(lr=0.01, weight_decay=0.1)),
                                         ("AdamW", dict(lr=0.01, amsgrad=True))])
def test_optimizer_steps_match_cpu(mode, dtype, opt_name, kw):
    p0 = RNG.standard_normal((33, 17)).astype(dtype)
    b0 = RNG.standard_normal(17).astype(dtype)
    grads = [(RNG.standard_normal((33, 17)).astype(dtype), RNG.standard_normal(17).astype(dtype)) for _ in range(4)]
    finals = []
    for dev in ("cpu", "cuda"):
        ps = [nn.Parameter(minigrad.tensor(a.copy(), device=dev)) for a in (p0, b0)]
        opt = getattr(nn.optim, opt_name)(ps, **kw)
        with kernels(mode) if dev == "cuda" else backends.kernels("numpy"):
            for gs in grads:
                for p, g in zip(ps, gs):
                    p.grad = minigrad.tensor(g, device=dev)
                opt.step()
        finals.append([host(p.array) for p in ps] + [host(v.array) for p in ps for k, v in opt.state[p].items()
                                                     if isinstance(v, minigrad.Tensor)])
    for a, b in zip(finals[1], finals[0]):
        close(a, b, dtype, **({"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {}))


@gpu
def test_kernels_are_built_once():
    x = minigrad.randn(4, 100, device="cuda").array
    ck.softmax_forward(x)
    ck.gelu_forward(x)
    built = dict(ck._kernels)
    for _ in range(3):
        ck.softmax_forward(x)
        ck.gelu_forward(x)
    assert ck._kernels == built and all(ck._kernels[k] is v for k, v in built.items())


# ==== on the GPU: the GPT ============================================================================
def gpt_run(device, dtype, mode, cfg, x, y, sd):
    from gpt.model import GPT

    model = GPT(cfg)
    model.load_state_dict({k: minigrad.tensor(v) for k, v in sd.items()})
    if dtype == np.float64:
        model.double()
    model.to(device)
    with kernels(mode) if device == "cuda" else backends.kernels("numpy"):
        logits, loss = model(minigrad.tensor(x, device=device), minigrad.tensor(y, device=device))
        loss.backward()
    grads = {n: host(p.grad.array) for n, p in model.named_parameters()}
    return host(logits.array), float(loss.item()), grads


@gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpt_forward_backward_cpu_vs_gpu(mode, dtype):
    from gpt.model import GPT, GPTConfig

    cfg = GPTConfig(block_size=64, vocab_size=65, n_layer=2, n_head=4, n_embd=64, dropout=0.0, bias=True)
    minigrad.manual_seed(0)
    sd = {k: v.array.copy() for k, v in GPT(cfg).state_dict().items()}
    x = RNG.integers(0, 65, (4, 64))
    y = RNG.integers(0, 65, (4, 64))
    y[0, :5] = -1  # ignored targets
    ref = gpt_run("cpu", dtype, mode, cfg, x, y, sd)
    out = gpt_run("cuda", dtype, mode, cfg, x, y, sd)
    tol = dict(rtol=0, atol=1e-4) if dtype == np.float32 else dict(rtol=0, atol=1e-10)
    close(out[0], ref[0], **tol)
    assert abs(out[1] - ref[1]) <= tol["atol"]
    assert out[2].keys() == ref[2].keys()
    for n in ref[2]:
        close(out[2][n], ref[2][n], **tol)


@gpu
def test_train_and_sample_on_cuda(tmp_path, capsys):
    from gpt import sampling
    from gpt.config import parse_config
    from gpt.trainer import Trainer

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("First Citizen:\nBefore we proceed any further, hear me speak.\n\n" * 40)
    args = dict(out_dir=tmp_path / "out", dataset="tiny", input=corpus, data_dir=tmp_path / "data", n_layer=2,
                n_head=2, n_embd=32, block_size=16, batch_size=4, max_iters=8, eval_interval=4, eval_iters=2,
                log_interval=1, warmup_iters=2, lr_decay_iters=8, peak_flops=1e12, progress=False, dropout=0.1,
                device="cuda")
    cfg, _ = parse_config([f"--{k}={v}" for k, v in args.items()])
    t = Trainer(cfg, log=lambda *a: None)
    t.run()
    assert t.iter_num == 8 and all(p.is_cuda for p in t.model.parameters())
    records = [json.loads(line) for line in (tmp_path / "out" / "log.jsonl").read_text().splitlines()]
    assert all(np.isfinite(r.get("loss", 0.0)) for r in records)
    code = sampling.main([f"--out_dir={tmp_path / 'out'}", "--start=First", "--num_samples=1", "--max_new_tokens=10",
                          "--seed=1", "--device=cuda"])
    assert code == 0 and capsys.readouterr().out.startswith("First")


# ==== on the GPU: memory, TF32, save_on_cpu ===========================================================
@gpu
def test_memory_api():
    import cupy

    mc = minigrad.cuda
    assert mc.is_available() and mc.device_count() >= 1 and isinstance(mc.get_device_name(), str)
    mc.synchronize()
    base = mc.memory_allocated()
    a = minigrad.zeros(1 << 20, device="cuda")  # 4 MiB
    assert mc.memory_allocated() >= base + 4 * 2**20
    mc.reset_peak_memory_stats()
    start = mc.memory_allocated()
    b = cupy.ones(1 << 22, dtype=cupy.float32)  # 16 MiB, then freed
    del b
    c = cupy.ones(1 << 10, dtype=cupy.float32)
    mc.synchronize()
    assert mc.max_memory_allocated() >= start + 16 * 2**20
    assert mc.memory_allocated() < start + 16 * 2**20
    mc.reset_peak_memory_stats()
    assert mc.max_memory_allocated() == mc.memory_allocated()
    mc.stop_peak_tracking()
    del a, c
    mc.empty_cache()
    assert mc.memory_reserved() >= mc.memory_allocated()


@gpu
def test_tf32_setting():
    import cupy

    before = minigrad.cuda.get_tf32()
    try:
        minigrad.cuda.set_tf32(True)
        major = int(cupy.cuda.Device().compute_capability) // 10
        assert minigrad.cuda.get_tf32() is (major >= 8)
        minigrad.cuda.set_tf32(False)
        assert minigrad.cuda.get_tf32() is False
        a = minigrad.randn(256, 256, device="cuda")
        ref = a.array.get().astype(np.float64) @ a.array.get().astype(np.float64)
        np.testing.assert_allclose((a @ a).array.get(), ref, rtol=1e-4, atol=1e-3)  # full float32 (TF32: ~1e-2)
    finally:
        minigrad.cuda.set_tf32(before)


def _packed(t):
    """What the graph behind t keeps of its saved tensors (the packed values of saved-tensor hooks)."""
    stack, seen, out = [t.grad_fn], set(), []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for s in getattr(node, "_saved", None) or ():
            if s is not None and s.tensor is None and s.packed is not None:
                out.append(s.packed)
        stack.extend(nxt for nxt, _ in getattr(node, "next_functions", ()))
    return out


@gpu
@pytest.mark.parametrize("pin", [False, True])
def test_save_on_cpu_with_cupy(pin):
    from minigrad.autograd.graph import save_on_cpu

    x = minigrad.randn(64, 32, device="cuda", requires_grad=True)
    w = minigrad.randn(32, 16, device="cuda", requires_grad=True)
    with save_on_cpu(pin_memory=pin):
        y = F.gelu((x @ w).tanh() * 3.0).sum()
    kept = _packed(y)
    assert kept and all(dev == "cuda" and isinstance(a, np.ndarray) for dev, a in kept)  # host copies
    y.backward()
    assert x.grad.is_cuda and w.grad.is_cuda
    xr = minigrad.tensor(x.array.get(), requires_grad=True)
    wr = minigrad.tensor(w.array.get(), requires_grad=True)
    F.gelu((xr @ wr).tanh() * 3.0).sum().backward()
    close(x.grad.array, xr.grad.array, rtol=1e-4, atol=1e-4)
    close(w.grad.array, wr.grad.array, rtol=1e-4, atol=1e-4)
