"""A generated token's block as one op (gpt/block_step.py, nn/_functional/block_step.py,
minigrad/backends/cpu/block_step.py): what the block's modules compute, up to the products' rounding, with
the cache written alike; taken only for a cached single position in inference."""
import numpy as np
import pytest

import minigrad
from gpt import block_step
from gpt.kv_cache import KVCache
from gpt.model import GPT, GPTConfig


def fused_here():
    x = np.zeros((1, 8), np.float32)
    return minigrad.backends.find("block_step", x, x, x, x, x) is not None


needs_kernel = pytest.mark.skipif(not fused_here(), reason="no CPU kernels here (numba, MINIGRAD_KERNELS=fast)")


def model_of(bias=True, activation="gelu", n_embd=48, n_head=3, block_size=40):
    minigrad.manual_seed(1)
    cfg = GPTConfig(block_size=block_size, vocab_size=29, n_layer=2, n_head=n_head, n_embd=n_embd, dropout=0.0,
                    bias=bias, activation=activation)
    model = GPT(cfg)
    model.eval()
    rng = np.random.default_rng(0)
    with minigrad.no_grad():  # (biases and layer norms away from their 0 / 1 start, so they count)
        for p in model.parameters():
            p.add_(minigrad.tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.05))
    return model, cfg


def run_steps(model, cfg, tokens, prompt_length):
    """Logits of each one-token step after a prompt, and the cache's keys and values after them."""
    cache = KVCache(cfg.n_layer)
    with minigrad.no_grad():
        model(tokens[:, :prompt_length], cache=cache)
        logits = [model(tokens[:, j:j + 1], cache=cache)[0].numpy() for j in range(prompt_length, tokens.shape[1])]
    n = cache.length
    return logits, [(layer.k[:, :, :n].copy(), layer.v[:, :, :n].copy()) for layer in cache.layers], n


@needs_kernel
@pytest.mark.parametrize("bias,activation,rows,prompt_length", [
    (True, "gelu", 1, 1), (False, "gelu", 2, 5), (True, "gelu_tanh", 3, 2), (False, "gelu_tanh", 1, 7)])
def test_the_fused_block_computes_what_the_modules_compute(monkeypatch, bias, activation, rows, prompt_length):
    model, cfg = model_of(bias, activation)
    tokens = minigrad.tensor(np.random.default_rng(rows).integers(0, cfg.vocab_size, (rows, 30)))
    calls = []
    real = block_step.run
    monkeypatch.setattr(block_step, "run", lambda *a: (lambda y: calls.append(y is not None) or y)(real(*a)))
    fused, fused_cache, n = run_steps(model, cfg, tokens, prompt_length)
    steps = tokens.shape[1] - prompt_length + (prompt_length == 1)  # (a one-token prompt is such a step too)
    assert sum(calls) == steps * cfg.n_layer and n == tokens.shape[1]  # (the cache grew past its first buffers)
    monkeypatch.setattr(block_step, "run", lambda *a: None)  # the modules, op by op
    plain, plain_cache, _ = run_steps(model, cfg, tokens, prompt_length)
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)
    for (k, v), (k0, v0) in zip(fused_cache, plain_cache):
        np.testing.assert_allclose(k, k0, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(v, v0, rtol=2e-5, atol=2e-5)


@needs_kernel
def test_taken_only_for_one_cached_position_in_inference():
    model, cfg = model_of()
    block = model.transformer.h[0]
    one, two = minigrad.zeros(1, 1, cfg.n_embd), minigrad.zeros(1, 2, cfg.n_embd)

    def taken(x):
        layer = KVCache(cfg.n_layer).layers[0]
        y = block_step.run(block, x, layer)
        assert y is None or (tuple(y.shape) == tuple(x.shape) and layer.length == 1)
        return y is not None

    with minigrad.no_grad():
        assert taken(one)
        assert not taken(two)  # a prompt fills the cache through the modules
        assert not taken(one.double())
        with minigrad.backends.kernels("numpy"):
            assert not taken(one)
        model.train()
        assert not taken(one)  # (dropout's mode)
        model.eval()
    assert not taken(one)  # grad mode on


def test_what_the_cpu_kernel_takes():
    from minigrad.backends.cpu import block_step as kernel

    x, w = np.zeros((2, 16), np.float32), np.zeros((48, 16), np.float32)
    assert kernel.supports(x, w, w, w, w)
    assert not kernel.supports(x.astype(np.float64), w, w, w, w)
    assert not kernel.supports(x, w, np.asfortranarray(np.zeros((16, 16), np.float32)), w, w)
    assert not kernel.supports(np.zeros((2, kernel.MAX_WIDTH + 1), np.float32), w, w, w, w)
    assert not kernel.supports(np.zeros((kernel.MAX_ROWS + 1, 16), np.float32), w, w, w, w)
    # past WIDTH_ANY_THREADS, only where BLAS would multiply a row on one thread too (faster on its threads)
    from minigrad.backends.cpu import team
    from minigrad.backends.process import num_threads

    wide = np.zeros((1, kernel.WIDTH_ANY_THREADS + 64), np.float32)
    with num_threads(1):
        assert kernel.supports(wide, w, w, w, w)
    if team.available() and team.has_team():
        with num_threads(2):
            assert not kernel.supports(wide, w, w, w, w)
            assert kernel.supports(wide[:, :kernel.WIDTH_ANY_THREADS], w, w, w, w)


@needs_kernel
def test_compiled_and_eager_generation_run_the_same_fused_step():
    """generate's compiled step replays BlockStep: the same tokens as eager generation, which takes it too."""
    model, cfg = model_of(block_size=24)
    prompt = minigrad.tensor([[1, 2, 3]])
    minigrad.manual_seed(5)
    a = model.generate(prompt, 40, temperature=0.8, compile=False)  # past the block size: refills
    minigrad.manual_seed(5)
    b = model.generate(prompt, 40, temperature=0.8)
    assert a.tolist() == b.tolist()
    programs = list(model._compiled_decode().cache.values())
    assert any(p.code.count("forward BlockStep") == cfg.n_layer for p in programs)


def test_no_gradient_through_it():
    from nn._functional.block_step import BlockStep

    with pytest.raises(RuntimeError, match="nothing differentiates through it"):
        BlockStep.backward(None, None)
