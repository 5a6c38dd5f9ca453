"""The GPT model: nanoGPT's architecture, checked against a PyTorch nanoGPT with the same weights."""
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import minigrad
from gpt.model import GPT, GPTConfig

ROOT = Path(__file__).resolve().parents[2]


def small_config(**kw):
    cfg = dict(block_size=16, vocab_size=37, n_layer=2, n_head=2, n_embd=16, dropout=0.0, bias=True)
    cfg.update(kw)
    return GPTConfig(**cfg)


def torch_reference():
    spec = importlib.util.spec_from_file_location("nanogpt_torch", ROOT / "bench" / "nanogpt_torch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def batch(cfg, B=3, T=None, seed=0):
    rng = np.random.default_rng(seed)
    T = T or cfg.block_size
    x = rng.integers(0, cfg.vocab_size, size=(B, T))
    y = rng.integers(0, cfg.vocab_size, size=(B, T))
    return x, y


def test_parameter_names_follow_nanogpt():
    model = GPT(small_config())
    names = [n for n, _ in model.named_parameters()]
    assert names[0] == "transformer.wte.weight"
    for expected in ("transformer.wpe.weight", "transformer.h.0.ln_1.weight", "transformer.h.0.attn.c_attn.weight",
                     "transformer.h.0.attn.c_proj.bias", "transformer.h.1.mlp.c_fc.weight",
                     "transformer.h.0.mlp.c_proj.bias", "transformer.ln_f.weight"):
        assert expected in names
    # the lm_head is tied to the token embedding: one Parameter, listed once, but both keys in the state dict
    assert "lm_head.weight" not in names
    assert model.lm_head.weight is model.transformer.wte.weight
    sd = model.state_dict()
    assert "lm_head.weight" in sd and "transformer.wte.weight" in sd


def test_init_statistics_and_num_params():
    cfg = GPTConfig(block_size=32, vocab_size=100, n_layer=4, n_head=4, n_embd=64, bias=False)
    minigrad.manual_seed(0)
    model = GPT(cfg)
    w = model.transformer.h[0].mlp.c_fc.weight.array
    assert abs(float(w.std()) - 0.02) < 0.002
    proj = model.transformer.h[0].attn.c_proj.weight.array
    assert abs(float(proj.std()) - 0.02 / np.sqrt(2 * cfg.n_layer)) < 0.002
    total = sum(p.numel() for p in model.parameters())
    assert model.get_num_params() == total - 32 * 64
    assert model.get_num_params(non_embedding=False) == total


def test_forward_shapes_and_loss_at_init():
    cfg = small_config()
    model = GPT(cfg)
    x, y = batch(cfg)
    logits, loss = model(minigrad.tensor(x), minigrad.tensor(y))
    assert logits.shape == (3, cfg.block_size, cfg.vocab_size)
    # at init the prediction is near uniform: loss close to log(vocab)
    assert abs(loss.item() - np.log(cfg.vocab_size)) < 0.3
    logits, loss = model(minigrad.tensor(x))
    assert logits.shape == (3, 1, cfg.vocab_size) and loss is None


def test_matches_pytorch_nanogpt(torch):
    ref = torch_reference()
    for bias in (True, False):
        cfg = small_config(bias=bias)
        minigrad.manual_seed(1)
        model = GPT(cfg)
        tmodel = ref.load_from_minigrad(ref.GPT(cfg), model)
        x, y = batch(cfg)
        y[0, :3] = -1  # ignored targets
        logits, loss = model(minigrad.tensor(x), minigrad.tensor(y))
        loss.backward()
        tlogits, tloss = tmodel(torch.from_numpy(x), torch.from_numpy(y))
        tloss.backward()
        np.testing.assert_allclose(logits.detach().numpy(), tlogits.detach().numpy(), atol=1e-4)
        assert abs(loss.item() - tloss.item()) < 1e-4
        tgrads = dict(tmodel.named_parameters())
        for name, p in model.named_parameters():
            np.testing.assert_allclose(p.grad.numpy(), tgrads[name].grad.numpy(), atol=1e-4, err_msg=name)


def test_training_steps_follow_pytorch_nanogpt(torch):
    # train.py's step (forward, backward, clip to norm 1, AdamW with the warmup-cosine rate) on both
    # frameworks from the same weights on the same batches: the weights stay together
    import nn
    from nn.optim.lr_scheduler import warmup_cosine_lr

    ref = torch_reference()
    cfg = small_config(bias=False)
    minigrad.manual_seed(2)
    model = GPT(cfg)
    tmodel = ref.load_from_minigrad(ref.GPT(cfg), model)
    opt = model.configure_optimizers(0.1, 3e-3, (0.9, 0.99))
    topt = tmodel.configure_optimizers(0.1, 3e-3, (0.9, 0.99))
    for it in range(30):
        lr = warmup_cosine_lr(it, 3e-3, 5, 30, 3e-4)
        for group in opt.param_groups + topt.param_groups:
            group["lr"] = lr
        x, y = batch(cfg, seed=100 + it)
        _, loss = model(minigrad.tensor(x), minigrad.tensor(y))
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        _, tloss = tmodel(torch.from_numpy(x), torch.from_numpy(y))
        tloss.backward()
        tnorm = torch.nn.utils.clip_grad_norm_(tmodel.parameters(), 1.0)
        topt.step()
        topt.zero_grad(set_to_none=True)
        assert abs(loss.item() - tloss.item()) < 1e-4 and abs(float(norm.item()) - float(tnorm)) < 1e-4
    tparams = dict(tmodel.named_parameters())
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.array, tparams[name].detach().numpy(), atol=1e-5, err_msg=name)


def test_configure_optimizers_decays_matrices_only():
    model = GPT(small_config())
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.ndim >= 2 for p in decay["params"]) and all(p.ndim < 2 for p in no_decay["params"])
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))


def test_crop_block_size():
    cfg = small_config()
    model = GPT(cfg)
    model.crop_block_size(8)
    assert model.transformer.wpe.weight.shape == (8, cfg.n_embd)
    x, y = batch(cfg, T=8)
    _, loss = model(minigrad.tensor(x), minigrad.tensor(y))
    assert np.isfinite(loss.item())
    with pytest.raises(ValueError, match="block size"):
        model(minigrad.tensor(batch(cfg, T=9)[0]))


def test_bad_shapes_are_clear():
    with pytest.raises(ValueError, match=r"n_embd \(10\) must be divisible by n_head \(3\)"):
        GPTConfig(n_embd=10, n_head=3)
    model = GPT(small_config())
    with pytest.raises(ValueError, match="block size is only 16"):
        model(minigrad.tensor(np.zeros((1, 17), dtype=np.int64)))


def test_estimate_mfu_uses_given_peak():
    model = GPT(small_config())
    fpt = model.flops_per_token()
    mfu = model.estimate_mfu(fwdbwd_per_iter=2, dt=0.5, peak_flops=1e9)
    assert mfu == pytest.approx(fpt * 16 * 2 / 0.5 / 1e9)


@pytest.mark.parametrize("temperature,top_k", [(0, None), (1.0, None), (0.8, 5)])
def test_cached_generation_equals_recomputation(temperature, top_k):
    cfg = small_config(block_size=32)
    minigrad.manual_seed(3)
    model = GPT(cfg)
    prompt = minigrad.tensor(batch(cfg, B=2, T=5)[0])
    minigrad.manual_seed(7)
    a = model.generate(prompt, 27, temperature=temperature, top_k=top_k, use_cache=True)
    minigrad.manual_seed(7)
    b = model.generate(prompt, 27, temperature=temperature, top_k=top_k, use_cache=False)
    assert a.shape == (2, 32)
    assert a.tolist() == b.tolist()
    assert a[:, :5].tolist() == prompt.tolist()


def test_top_k_of_the_whole_vocabulary_or_more_samples_as_nanogpt_filters():
    # nanoGPT's filter with k = min(top_k, V) masks nothing when k reaches V: skipping it draws the same
    import nn.functional as F

    rng = np.random.default_rng(0)
    logits = minigrad.tensor(rng.standard_normal((3, 11)).astype(np.float32))
    for top_k in (11, 50):
        minigrad.manual_seed(5)
        ours = [GPT._sample(logits, 0.8, top_k).tolist() for _ in range(20)]
        minigrad.manual_seed(5)
        theirs = []
        for _ in range(20):
            scaled = logits / 0.8
            v, _ = minigrad.topk(scaled, min(top_k, 11))
            kept = scaled.masked_fill(scaled < v[:, [-1]], float("-inf"))
            theirs.append(minigrad.multinomial(F.softmax(kept, dim=-1), num_samples=1).tolist())
        assert ours == theirs


def test_generation_past_the_block_size_and_stop_token():
    cfg = small_config(block_size=8)
    model = GPT(cfg)
    prompt = minigrad.tensor([[1, 2, 3]])
    out = model.generate(prompt, 30, temperature=0)
    assert out.shape == (1, 33)
    assert 0 <= int(out.array.min()) and int(out.array.max()) < cfg.vocab_size
    first = int(out[0, 3])
    stopped = model.generate(prompt, 30, temperature=0, stop_token=first)
    assert stopped.shape == (1, 4)


def test_generation_rejects_bad_token_ids():
    model = GPT(small_config())
    with pytest.raises(ValueError, match="token id 37 is outside the vocabulary"):
        model.generate(minigrad.tensor([[1, 37]]), 2)


def test_generate_builds_no_graph():
    model = GPT(small_config())
    out = model.generate(minigrad.tensor([[1, 2]]), 3)
    assert out.grad_fn is None and not out.requires_grad


def test_a_compiled_cached_step_replays_on_each_cache_bit_for_bit():
    """minigrad.compile of the model with a KV cache: the cache's append and the positions are ops,
    so a replay extends the cache it is given, at its own length (nothing frozen at capture)."""
    from gpt.model import KVCache

    cfg = small_config(block_size=24)
    minigrad.manual_seed(5)
    model = GPT(cfg)
    model.eval()
    step = minigrad.compile(model)
    rng = np.random.default_rng(0)
    with minigrad.no_grad():
        for trial in range(2):  # the second cache is a new object: the same program replays on it
            prompt = minigrad.tensor(batch(cfg, B=2, T=3 + trial)[0])
            a, b = KVCache(cfg.n_layer), KVCache(cfg.n_layer)
            model(prompt, cache=a), model(prompt, cache=b)
            for i in range(cfg.block_size - prompt.shape[1]):
                tok = minigrad.tensor(rng.integers(0, cfg.vocab_size, (2, 1)))
                fast = step(tok, cache=a)[0]
                slow = model(tok, cache=b)[0]
                assert np.array_equal(fast.array, slow.array), (trial, i)
            assert a.length == b.length == cfg.block_size
            for la, lb in zip(a.layers, b.layers):
                assert np.array_equal(la.k[:, :, :a.length], lb.k[:, :, :b.length])
                assert np.array_equal(la.v[:, :, :a.length], lb.v[:, :, :b.length])
            with pytest.raises(ValueError, match="block size is only 24"):  # checked inside the replay too
                step(tok, cache=a)
        assert step._compiled.stats.captures == 1
        c = KVCache(cfg.n_layer)
        model(prompt, cache=c)
        with pytest.raises(ValueError, match="only fill an empty cache"):
            model(prompt, cache=c)


@pytest.mark.parametrize("temperature,top_k", [(0, None), (1.0, None), (0.8, 5)])
def test_compiled_generation_gives_the_same_tokens(temperature, top_k):
    """generate's compiled step (the default): the same tokens as the eager one (compile=False), through
    the prompt, the one-token steps and the cache's refills."""
    cfg = small_config(block_size=16)
    minigrad.manual_seed(2)
    model = GPT(cfg)
    prompt = minigrad.tensor(batch(cfg, B=2, T=3)[0])
    for run in range(2):  # the second run replays what the first captured
        minigrad.manual_seed(9 + run)
        a = model.generate(prompt, 30, temperature=temperature, top_k=top_k, compile=False)  # refills twice
        minigrad.manual_seed(9 + run)
        b = model.generate(prompt, 30, temperature=temperature, top_k=top_k)
        assert a.tolist() == b.tolist()
    stats = model._compiled_decode().stats
    # the one-token step and the refill of block_size // 2 tokens: captured once each
    assert (stats.captures, stats.eager_calls) == (2, 0) and stats.replays > 40
    _check_generation_programs(model, cfg)


def _check_generation_programs(model, cfg):
    """The one-token step runs each block as one BlockStep where a backend takes it (gpt/block_step.py),
    else, as the cache's refill always does, the layers on their arrays (array_forward), attention too,
    whose keys and values grow with the cache: its inputs' shapes are not held to the capture's."""
    programs = list(model._compiled_decode().cache.values())
    fused = block_step_available()
    assert sum("BlockStep" in p.code for p in programs) == (1 if fused else 0)
    for program in programs:
        if "BlockStep" in program.code:
            assert program.code.count("forward BlockStep") == cfg.n_layer and "Attention" not in program.code
            continue
        for op in ("Attention", "LayerNorm", "LinearNoBias", "Gelu", "Embedding"):
            assert f"out = {op}_array" in program.code, op
        attention_steps = re.findall(r"# \d+: forward Attention .*?\n(.*?)out = Attention_array", program.code, re.S)
        assert len(attention_steps) == cfg.n_layer and not any("shape" in lines for lines in attention_steps)


def block_step_available():
    """Whether a backend runs a float32 block on one position as one op here (numba there, kernels on)."""
    x = np.zeros((1, 8), np.float32)
    return minigrad.backends.find("block_step", x, x, x, x, x) is not None


def test_one_program_serves_every_temperature_and_each_top_k_has_its_own():
    """The temperature reaches the compiled step as a tensor: sampling at any number of temperatures
    captures the step and the refill once (a baked-in number would fill the program cache after a
    few, and generation would fall back to the eager step)."""
    cfg = small_config(block_size=16)
    minigrad.manual_seed(2)
    model = GPT(cfg)
    prompt = minigrad.tensor(batch(cfg, B=2, T=3)[0])
    for temperature in (0.5, 0.8, 1.0, 1.25, 2.0, 3.0, 0.3, 1.7, 0.9, 1.1):
        minigrad.manual_seed(4)
        a = model.generate(prompt, 20, temperature=temperature, compile=False)
        minigrad.manual_seed(4)
        b = model.generate(prompt, 20, temperature=temperature)
        assert a.tolist() == b.tolist(), temperature
    stats = model._compiled_decode().stats
    assert (stats.captures, stats.eager_calls) == (2, 0)
    for top_k in (2, 3, 5, 8, 13, 21):  # each top_k is its own pair of programs (topk's shape is k)
        minigrad.manual_seed(5)
        a = model.generate(prompt, 20, temperature=0.9, top_k=top_k, compile=False)
        minigrad.manual_seed(5)
        b = model.generate(prompt, 20, temperature=0.9, top_k=top_k)
        assert a.tolist() == b.tolist(), top_k
    assert (stats.captures, stats.eager_calls) == (2 + 2 * 6, 0)  # none fell back to the eager step


def test_a_copy_of_a_model_compiles_its_own_generation_step():
    import copy

    cfg = small_config(block_size=16)
    minigrad.manual_seed(2)
    model = GPT(cfg)
    prompt = minigrad.tensor([[1, 2, 3]])
    model.generate(prompt, 5)
    twin = copy.deepcopy(model)
    assert model._compiled_decode().stats.captures == 1 and twin._compiled_decode().stats.captures == 0
    with minigrad.no_grad():
        twin.lm_head.weight.mul_(2.0)  # (the twin's own parameters: a program of the original would miss this)
    minigrad.manual_seed(9)
    a = twin.generate(prompt, 20)
    minigrad.manual_seed(9)
    b = twin.generate(prompt, 20, compile=False)
    assert a.tolist() == b.tolist()


def test_threads_generating_with_one_model_get_their_own_tokens():
    """Generation replays one compiled step per model; threads sharing the model (a server, say) must
    each get the tokens they would get alone: captures are per thread, replays one at a time."""
    import copy
    import threading

    cfg = small_config(block_size=32)
    minigrad.manual_seed(1)
    model = GPT(cfg)
    prompts = [minigrad.tensor([[i + 1, 2 * i + 3]]) for i in range(4)]
    # alone: each on a copy of the model (a copy compiles its own step)
    want = [copy.deepcopy(model).generate(p, 40, temperature=0).tolist() for p in prompts]
    got, errors = [[] for _ in prompts], []

    def work(i):
        try:
            for _ in range(3):  # the first calls capture at the same time; later ones replay
                got[i].append(model.generate(prompts[i], 40, temperature=0).tolist())
        except Exception as e:  # (a thread's exception would otherwise only be printed)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(prompts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert got == [[w] * 3 for w in want]
