"""Every fused op's three layers agree: the reference (primitive ops, autograd), the op (its own
array code: MINIGRAD_KERNELS=numpy) and the backends (the default), values and gradients, and with
PyTorch; a GPT step agrees on all three; the reference's graph is made of primitive nodes; and the
backend package sits beside the engine, not inside it."""
import ast
from pathlib import Path

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends
from nn._functional import reference

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("reference", "numpy", "fast")
FUSED = {"AddmmBackward0", "MmBackward0", "EmbeddingBackward0", "GeluBackward0", "NativeLayerNormBackward0",
         "NllLossBackward0", "NativeDropoutBackward0", "ScaledDotProductAttentionBackward0"}


def run(fn, arrays, layer, seed=1):
    """fn(*tensors) under `layer` -> (output, gradients of the float inputs) for a fixed upstream gradient."""
    with backends.kernels(layer):
        ts = [minigrad.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in arrays]
        out = fn(*ts)
        g = np.random.default_rng(seed).standard_normal(out.shape).astype(out.array.dtype)
        out.backward(minigrad.tensor(g))
    return out.array.copy(), [t.grad.array.copy() for t in ts if t.grad is not None]


def agree(fn, *arrays, tol=1e-9, torch_fn=None):
    results = [run(fn, arrays, layer) for layer in LAYERS]
    for layer, (out, grads) in zip(LAYERS[1:], results[1:]):
        np.testing.assert_allclose(out, results[0][0], rtol=tol, atol=tol, err_msg=layer)
        assert len(grads) == len(results[0][1])
        for a, b in zip(grads, results[0][1]):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=layer)
    if torch_fn is not None:
        torch = pytest.importorskip("torch")
        ts = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        out = torch_fn(torch, *ts)
        out.backward(torch.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(results[2][0].dtype)))
        np.testing.assert_allclose(results[2][0], out.detach().numpy(), rtol=tol, atol=tol)
        for a, t in zip(results[2][1], [t for t in ts if t.grad is not None]):
            np.testing.assert_allclose(a, t.grad.numpy(), rtol=tol, atol=tol)


RNG = np.random.default_rng(0)


def r(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-9), (np.float32, 2e-5)])
def test_linear_gelu_layer_norm(dtype, tol):
    x, w, b = r(6, 5, 8, dtype=dtype), r(16, 8, dtype=dtype), r(16, dtype=dtype)
    agree(lambda x, w, b: F.linear(x, w, b), x, w, b, tol=tol,
          torch_fn=lambda t, x, w, b: t.nn.functional.linear(x, w, b))
    agree(lambda x, w: F.linear(x, w), x, w, tol=tol)
    # large enough for the team (64K elements and 4M multiply-adds)
    xl, wl = r(512, 128, dtype=dtype), r(256, 128, dtype=dtype)
    agree(lambda x, w: F.gelu(F.linear(x, w)), xl, wl, tol=tol * 10)
    for approximate in ("none", "tanh"):
        agree(lambda x, a=approximate: F.gelu(x, approximate=a), x, tol=tol,
              torch_fn=lambda t, x, a=approximate: t.nn.functional.gelu(x, approximate=a))
    ln_w, ln_b = r(8, dtype=dtype), r(8, dtype=dtype)
    agree(lambda x, w, b: F.layer_norm(x, (8,), w, b), x, ln_w, ln_b, tol=tol,
          torch_fn=lambda t, x, w, b: t.nn.functional.layer_norm(x, (8,), w, b))
    agree(lambda x: F.layer_norm(x, (5, 8)), x, tol=tol)
    agree(lambda x, w, b: F.layer_norm(x, (128,), w, b), xl, r(128, dtype=dtype), r(128, dtype=dtype), tol=tol * 10)


def test_embedding_softmax_cross_entropy():
    w = r(10, 4)
    idx = np.array([[0, 3, 3], [9, 0, 3]])
    agree(lambda i, w: F.embedding(i, w), idx, w, torch_fn=lambda t, i, w: t.nn.functional.embedding(i, w))
    agree(lambda i, w: F.embedding(i, w, padding_idx=3), idx, w)
    x = r(4, 3, 7)
    for dim in (0, -1):
        agree(lambda x, d=dim: F.softmax(x, dim=d), x, torch_fn=lambda t, x, d=dim: t.softmax(x, dim=d))
        agree(lambda x, d=dim: F.log_softmax(x, dim=d), x, torch_fn=lambda t, x, d=dim: t.log_softmax(x, dim=d))
    logits, cw = r(12, 7), np.abs(r(7)) + 0.1
    target = RNG.integers(0, 7, 12)
    target[3] = -100
    for kwargs in ({}, dict(weight=True), dict(label_smoothing=0.2), dict(reduction="sum"), dict(reduction="none")):
        def ours(x, t, kwargs=kwargs):  # (class weights are constants: no gradient, as in PyTorch)
            return F.cross_entropy(x, t, **dict(kwargs, weight=minigrad.tensor(cw) if kwargs.get("weight") else None))

        def theirs(torch, x, t, kwargs=kwargs):
            return torch.nn.functional.cross_entropy(x, t, **dict(kwargs, weight=torch.tensor(cw) if kwargs.get("weight")
                                                                  else None))
        agree(ours, logits, target, torch_fn=theirs)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-9), (np.float32, 2e-5)])
def test_attention(dtype, tol):
    qkv = r(2, 16, 3 * 4 * 8, dtype=dtype)

    def heads(a):
        q, k, v = a.split(32, dim=2)
        return [t.view(2, 16, 4, 8).transpose(1, 2) for t in (q, k, v)]

    agree(lambda a: F.scaled_dot_product_attention(*heads(a), is_causal=True), qkv, tol=tol,
          torch_fn=lambda t, a: t.nn.functional.scaled_dot_product_attention(
              *[x.reshape(2, 16, 4, 8).transpose(1, 2) for x in a.split(32, dim=2)], is_causal=True))
    q, k, v = r(3, 5, 8, dtype=dtype), r(3, 6, 8, dtype=dtype), r(3, 6, 4, dtype=dtype)
    mask = RNG.random((5, 6)) > 0.3
    mask[:, 0] = True
    agree(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=minigrad.tensor(mask)), q, k, v, tol=tol,
          torch_fn=lambda t, q, k, v: t.nn.functional.scaled_dot_product_attention(q, k, v,
                                                                                    attn_mask=t.tensor(mask)))


def test_dropout_layers_drop_and_scale_alike():
    x = np.abs(r(64, 64)) + 1.0
    for layer in LAYERS:
        out, (gx,) = run(lambda x: F.dropout(x, 0.25), [x], layer)
        kept = out != 0
        assert 0.6 < kept.mean() < 0.9, layer
        np.testing.assert_allclose(out[kept], x[kept] / 0.75)
        g = np.random.default_rng(1).standard_normal(out.shape)
        np.testing.assert_allclose(gx, np.where(kept, g / 0.75, 0.0))


@pytest.mark.parametrize("amsgrad,decoupled", [(False, True), (True, True), (False, False)])
def test_adam_update(amsgrad, decoupled):
    results = []
    for layer in LAYERS:
        p = nn.Parameter(minigrad.tensor(np.linspace(-1, 1, 90000, dtype=np.float32)))
        opt = (nn.optim.AdamW if decoupled else nn.optim.Adam)([p], lr=0.01, weight_decay=0.1, amsgrad=amsgrad)
        with backends.kernels(layer):
            for step in range(3):
                p.grad = minigrad.tensor(np.cos(np.arange(90000, dtype=np.float32) * (step + 1)))
                opt.step()
        results.append(p.array.copy())
    for layer, got in zip(LAYERS[1:], results[1:]):
        np.testing.assert_allclose(got, results[0], rtol=1e-5, atol=1e-6, err_msg=layer)


def _gpt_step(layer):
    from gpt.model import GPT, GPTConfig

    minigrad.manual_seed(0)
    with backends.kernels(layer):
        model = GPT(GPTConfig(block_size=16, vocab_size=40, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True))
        rng = np.random.default_rng(0)
        x, y = (minigrad.tensor(rng.integers(0, 40, (3, 16))) for _ in range(2))
        _, loss = model(x, y)
        loss.backward()
    return loss, {n: p.grad.array.copy() for n, p in model.named_parameters()}


def _nodes(t):
    seen, stack, names = set(), [t.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        stack.extend(nxt for nxt, _ in getattr(node, "next_functions", ()))
    return names


def test_a_gpt_step_agrees_on_every_layer_and_the_reference_graph_is_primitive():
    steps = {layer: _gpt_step(layer) for layer in LAYERS}
    ref_loss, ref_grads = steps["reference"]
    for layer in ("numpy", "fast"):
        loss, grads = steps[layer]
        np.testing.assert_allclose(loss.array, ref_loss.array, rtol=1e-5, atol=1e-5)
        assert grads.keys() == ref_grads.keys()
        for name in grads:
            np.testing.assert_allclose(grads[name], ref_grads[name], rtol=1e-5, atol=1e-5, err_msg=f"{layer} {name}")
    ref_nodes, fast_nodes = _nodes(ref_loss), _nodes(steps["fast"][0])
    assert not FUSED & set(ref_nodes), FUSED & set(ref_nodes)
    assert FUSED - {"NativeDropoutBackward0", "MmBackward0"} <= set(fast_nodes)
    assert len(ref_nodes) > 2 * len(fast_nodes)  # 166 against 73 here


def test_reference_is_what_runs_under_the_reference_setting():
    x = minigrad.tensor(r(4, 8), requires_grad=True)
    with backends.kernels("reference"):
        assert F.gelu(x).grad_fn.name() != "GeluBackward0"
    assert F.gelu(x).grad_fn.name() == "GeluBackward0"
    assert reference.gelu  # public, linked from the op's docstring


def test_the_switch():
    assert backends.get_kernels() == "fast"
    with backends.kernels("numpy"):
        assert backends.get_kernels() == "numpy" and backends.find("gelu", np.zeros(2, np.float32), "none") is None
    with pytest.raises(ValueError, match="MINIGRAD_KERNELS must be one of"):
        backends.set_kernels("turbo")
    assert minigrad.get_kernels() == "fast"


def _imports(path):
    """The modules a source file imports (relative ones resolved against its package)."""
    rel = path.relative_to(ROOT).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out += [mod] + [f"{mod}.{a.name}" for a in node.names]
    return out


def test_the_engine_and_gpt_import_no_backend_and_backends_import_no_nn():
    engine = [ROOT / "minigrad/tensor.py", *(ROOT / "minigrad/autograd").glob("*.py"), *(ROOT / "gpt").glob("*.py")]
    for path in engine:
        bad = [m for m in _imports(path) if m.startswith("minigrad.backends")]
        assert not bad, (path, bad)
    for path in (ROOT / "minigrad/ops").glob("*.py"):  # an op may ask the registry (`backends.find`), no more
        bad = [m for m in _imports(path) if m.startswith("minigrad.backends")
               and m not in ("minigrad.backends", "minigrad.backends.find")]
        assert not bad, (path, bad)
    for path in (ROOT / "minigrad/backends").rglob("*.py"):
        bad = [m for m in _imports(path) if m.split(".")[0] in ("nn", "gpt")]
        assert not bad, (path, bad)
    for path in [*(ROOT / "nn").rglob("*.py")]:  # only the public dispatch API and the array helpers
        bad = [m for m in _imports(path) if m.startswith("minigrad.backends.")
               and not m.startswith("minigrad.backends.arrays")]
        assert not bad, (path, bad)


def test_a_bad_kernels_value_is_one_line_and_status_2():
    import os
    import subprocess
    import sys

    env = dict(os.environ, MINIGRAD_KERNELS="turbo", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "train.py", "--max_iters=1"], cwd=ROOT, env=env, capture_output=True,
                         text=True)
    assert out.returncode == 2
    assert out.stderr.strip() == "train.py: error: MINIGRAD_KERNELS must be one of reference, numpy, fast, got 'turbo'"


def test_importing_minigrad_and_nn_loads_neither_numba_nor_cupy():
    import subprocess
    import sys

    code = "import sys, minigrad, nn, nn.functional; print('numba' in sys.modules, 'cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["False", "False"]


def test_with_a_cpu_size_a_small_models_training_step_loads_no_numba():
    # a small MLP's step (embedding, linear, tanh, cross_entropy, AdamW) stays under the CPU kernels'
    # size when one is set: numba's start-up (~0.8 s) is not paid
    import subprocess
    import sys

    code = ("import sys, minigrad, minigrad.nn as nn, minigrad.nn.functional as F\n"
            "minigrad.backends.CPU_MIN_ELEMENTS = 16384\n"
            "m = nn.Sequential(nn.Embedding(27, 10), nn.Flatten(), nn.Linear(30, 64), nn.Tanh(), nn.Linear(64, 27))\n"
            "opt = minigrad.optim.AdamW(m.parameters())\n"
            "loss = F.cross_entropy(m(minigrad.randint(0, 27, (32, 3))), minigrad.randint(0, 27, (32,)))\n"
            "loss.backward(); opt.step()\n"
            "print('numba' in sys.modules, m[2].weight.grad.abs().sum().item() > 0)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["False", "True"]
