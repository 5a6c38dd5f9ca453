"""The CUDA backend (minigrad/backends/cuda), checked without a GPU.

* With NVRTC (the nvidia-cuda-nvrtc wheel or a CUDA toolkit): every kernel compiles, as cupy will
  compile it (skipped when no libnvrtc is found).
* With g++: the kernels run on the CPU under an emulation of the CUDA features they use
  (tests/nn/cuda_emulator.py), behind a numpy stand-in for cupy, so the backend's wrappers run
  unchanged. Each result is held against the op's own array code (MINIGRAD_KERNELS=numpy, float64
  tightly, float32 to 1e-5), up to a GPT training step, and every test checks that the kernels it
  means to test did run.

The same checks on a real GPU are in tests/test_cuda.py.
"""
import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends
from minigrad.backends.cuda import kernels as ck

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/ (the NVRTC check) is not a package here
cuda_emulator = pytest.importorskip("cuda_emulator")

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}
RNG = np.random.default_rng(0)


def test_kernels_compile_with_nvrtc():
    from bench.check_kernels import check

    results = check()
    if results is None:
        pytest.skip("no libnvrtc on this machine")
    bad = {k: log for k, (ok, log) in results.items() if not ok}
    assert not bad, "\n".join(f"{k}:\n{v}" for k, v in bad.items())


@pytest.fixture(scope="module")
def emu_lib(tmp_path_factory):
    if not cuda_emulator.have_compiler():
        pytest.skip("g++ is needed to emulate the CUDA kernels")
    return cuda_emulator.build(tmp_path_factory.mktemp("cuda_emu"))


class Emulated:
    """`with emu.kernels():` the ops dispatch numpy float arrays to the CUDA backend (as if they were
    cupy arrays), whose kernels run on the emulator; `served` names the ops it ran."""

    def __init__(self, fake, monkeypatch):
        self.fake, self.monkeypatch, self.served = fake, monkeypatch, set()

    def find(self, op, *args):
        # the CUDA registrations of our own kernels (not the array library's own, eligible under 'numpy')
        for module, device, eligible in backends._registry.get(op, ()):
            if device == "cuda" and "numpy" not in eligible and getattr(args[0], "dtype", np.dtype(int)).kind == "f":
                impl = importlib.import_module(f"minigrad.backends.{module}")
                if impl.supports(*args):
                    self.served.add(op)
                    return impl
        return None

    def kernels(self):
        import contextlib

        @contextlib.contextmanager
        def on():
            with self.monkeypatch.context() as m:
                m.setattr(backends, "find", self.find)
                yield

        return on()


@pytest.fixture
def emu(emu_lib, monkeypatch):
    fake = cuda_emulator.fake_cupy(emu_lib)
    monkeypatch.setattr(ck, "_cp", lambda: fake)
    monkeypatch.setattr(ck, "_kernels", {})
    return Emulated(fake, monkeypatch)


def t(a, grad=True):
    return minigrad.tensor(a, requires_grad=grad)


def run_both(emu, fn, *arrays, served=None):
    """fn(*tensors) -> (outputs, grads of the inputs): first the op's own array code, then the CUDA
    backend on the emulator; `served`: the op that must have reached the backend."""
    results = []
    for kernels in (False, True):
        with emu.kernels() if kernels else backends.kernels("numpy"):
            ts = [t(a.copy()) for a in arrays]
            out = fn(*ts)
            g = np.random.default_rng(1).standard_normal(out.shape).astype(out.array.dtype)
            out.backward(minigrad.tensor(g))
            results.append((out.array.copy(), [None if x.grad is None else x.grad.array.copy() for x in ts]))
    if served is not None:
        assert served in emu.served, f"the CUDA backend's {served} did not run"
    return results


def close(a, b, dtype):
    np.testing.assert_allclose(a, b, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(emu, dtype, approximate):
    x = (RNG.standard_normal((3, 50)) * 3).astype(dtype)
    (o0, g0), (o1, g1) = run_both(emu, lambda a: F.gelu(a, approximate=approximate), x, served="gelu")
    close(o1, o0, dtype)
    close(g1[0], g0[0], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((4, 65), -1), ((2, 300), 1), ((3, 7, 5), 1), ((2, 1000), -1), ((5,), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax(emu, dtype, shape, dim, log):
    """The softmax kernels (attention's backward uses the gradient one) against minigrad's softmax op."""
    x = (RNG.standard_normal(shape) * 4).astype(dtype)
    g = RNG.standard_normal(shape).astype(dtype)
    a = t(x.copy())
    y = (minigrad.log_softmax if log else minigrad.softmax)(a, dim)
    y.backward(minigrad.tensor(g))
    out = ck.softmax_forward(x, dim, log)
    close(out, y.array, dtype)
    close(ck.softmax_backward(out, g, dim, log, 1.0), a.grad.array, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(2, 5, 40), (100, 24), (3, 130)])
def test_layer_norm(emu, dtype, affine, shape):
    D = shape[-1]
    x = (RNG.standard_normal(shape) * 2 + 1).astype(dtype)
    w = (RNG.standard_normal(D) + 1).astype(dtype)
    b = RNG.standard_normal(D).astype(dtype)
    if affine:
        res = run_both(emu, lambda a, w_, b_: F.layer_norm(a, (D,), w_, b_), x, w, b, served="layer_norm")
    else:
        res = run_both(emu, lambda a: F.layer_norm(a, (D,)), x, served="layer_norm")
    (o0, g0), (o1, g1) = res
    close(o1, o0, dtype)
    for a, b_ in zip(g1, g0):
        close(a, b_, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.1])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy(emu, dtype, reduction, ls, weighted):
    M, C = 12, 65
    x = (RNG.standard_normal((M, C)) * 3).astype(dtype)
    tgt = RNG.integers(0, C, M)
    tgt[[2, 7]] = -1  # ignored
    w = (RNG.random(C) + 0.5).astype(dtype)

    def f(a):  # (the class weights take no gradient: PyTorch refuses one that asks for it)
        return F.cross_entropy(a, minigrad.tensor(tgt), weight=minigrad.tensor(w) if weighted else None,
                               ignore_index=-1, reduction=reduction, label_smoothing=ls)

    (o0, g0), (o1, g1) = run_both(emu, f, x, served="cross_entropy")
    close(o1, o0, dtype)
    close(g1[0], g0[0], dtype)


@pytest.mark.parametrize("shape", [(3,), (2, 5, 3, 4)])
def test_cross_entropy_layouts(emu, shape):
    dtype = np.float64
    C = shape[0] if len(shape) == 1 else shape[1]
    x = RNG.standard_normal(shape).astype(dtype)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    tgt = RNG.integers(0, C, tshape)
    (o0, g0), (o1, g1) = run_both(emu, lambda a: F.cross_entropy(a, minigrad.tensor(tgt)), x, served="cross_entropy")
    close(o1, o0, dtype)
    close(g1[0], g0[0], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("L,S", [(6, 6), (40, 40)])
def test_attention(emu, dtype, causal, L, S):
    B, H, E = (2, 3, 8) if L < 10 else (1, 2, 8)  # rows of 40 keys: each thread of a warp takes two
    q, k, v = ((RNG.standard_normal((B, H, n, E))).astype(dtype) for n in (L, S, S))
    (o0, g0), (o1, g1) = run_both(emu, lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=causal), q, k,
                                  v, served="attention")
    close(o1, o0, dtype)
    for a, b in zip(g1, g0):
        close(a, b, dtype)


def test_attention_softmax_kernel(emu):
    """The fused kernel alone: scale, causal mask (top-left aligned, also for L != S), in place."""
    for L, S in ((4, 9), (9, 4), (33, 33)):
        s = RNG.standard_normal((2, L, S))
        ref = s * 0.5
        ref = np.where(np.triu(np.ones((L, S), bool), 1), -np.inf, ref)
        ref = np.exp(ref - ref.max(-1, keepdims=True))
        ref /= ref.sum(-1, keepdims=True)
        out = ck.attention_softmax(s.copy(), 0.5, causal=True)
        close(out, ref, np.float64)
        inplace = s.copy()
        ck.attention_softmax(inplace, 0.5, causal=True, out=inplace)
        close(inplace, ref, np.float64)


def test_dropout(emu, monkeypatch):
    """keep = u >= p for float32 uniforms u from minigrad's CUDA generator (the GPU path of
    minigrad.backends.arrays.keep_mask); y = x keep / (1 - p); the gradient is keep / (1 - p)."""
    dtype, p = np.float32, 0.3
    monkeypatch.setattr(minigrad.random, "generator", lambda xp=np: np.random.default_rng(5))
    x = RNG.standard_normal((6, 40)).astype(dtype)
    keep = np.random.default_rng(5).random(x.shape, dtype=np.float32) >= p
    with emu.kernels():
        a = t(x.copy())
        y = F.dropout(a, p, training=True)
        y.backward(minigrad.ones(*y.shape))
    assert "dropout" in emu.served
    close(y.array, x * np.float32(1 / (1 - p)) * keep, dtype)
    close(a.grad.array, np.float32(1 / (1 - p)) * keep, dtype)
    assert 0.5 < keep.mean() < 0.9


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opt_name,kw", [("AdamW", dict(weight_decay=0.1)), ("Adam", dict(weight_decay=0.05)),
                                         ("Adam", dict(amsgrad=True)), ("AdamW", dict(amsgrad=True))])
def test_adam(emu, dtype, opt_name, kw):
    p0 = RNG.standard_normal((7, 9)).astype(dtype)
    grads = [RNG.standard_normal((7, 9)).astype(dtype) for _ in range(3)]
    finals = []
    for kernels in (False, True):
        with emu.kernels() if kernels else backends.kernels("numpy"):
            p = nn.Parameter(minigrad.tensor(p0.copy()))
            opt = getattr(nn.optim, opt_name)([p], lr=0.01, **kw)
            for g in grads:
                p.grad = minigrad.tensor(g.copy())
                opt.step()
            finals.append((p.array.copy(), {k: v.array.copy() for k, v in opt.state[p].items() if k != "step"}))
    assert "adamw" in emu.served
    close(finals[1][0], finals[0][0], dtype)
    for k in finals[0][1]:
        close(finals[1][1][k], finals[0][1][k], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpt_step(emu, dtype):
    """A tiny GPT's logits, loss, every gradient and an AdamW step: CPU ops vs the kernels."""
    from gpt.model import GPT, GPTConfig

    cfg = GPTConfig(block_size=16, vocab_size=37, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True)
    minigrad.manual_seed(0)
    ref = GPT(cfg)
    sd = {k: v.array.astype(dtype) for k, v in ref.state_dict().items()}
    x = RNG.integers(0, 37, (2, 16))
    y = RNG.integers(0, 37, (2, 16))
    runs = []
    for kernels in (False, True):
        with emu.kernels() if kernels else backends.kernels("numpy"):
            model = GPT(cfg)
            model.load_state_dict({k: minigrad.tensor(v.copy()) for k, v in sd.items()})
            if dtype == np.float64:
                model.double()
            opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
            logits, loss = model(minigrad.tensor(x), minigrad.tensor(y))
            loss.backward()
            grads = {n: p.grad.array.copy() for n, p in model.named_parameters()}
            opt.step()
            after = {n: p.array.copy() for n, p in model.named_parameters()}
            runs.append((logits.array.copy(), float(loss.item()), grads, after))
    assert {"gelu", "layer_norm", "attention", "cross_entropy", "adamw"} <= emu.served
    (l0, s0, g0, a0), (l1, s1, g1, a1) = runs
    close(l1, l0, dtype)
    assert abs(s1 - s0) <= TOL[dtype]["atol"] * 10
    for n in g0:
        close(g1[n], g0[n], dtype)
        close(a1[n], a0[n], dtype)
