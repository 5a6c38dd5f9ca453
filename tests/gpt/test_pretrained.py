"""GPT-2 in and out: GPT.from_pretrained / save_pretrained against transformers' GPT-2, the name
lookup, train.py and sample.py with --init_from, gpt.export, and every bad input the issue names.

The reference is a tiny GPT-2 made with transformers (2 layers, 2 heads, n_embd 32, the real vocab
of 50257, 64 positions), its weights perturbed so that no bias is zero and no LayerNorm weight one.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy

import minigrad
import nn
from gpt import export, sampling, trainer
from gpt.config import parse_config
from gpt.model import GPT, GPTConfig
from gpt.pretrained import PretrainedError, find_model_dir
from gpt.tokenizer import GPT2Tokenizer

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = ROOT.parent / "shared" / "data"  # as tests/conftest.py's shared_data fixture finds it
ATOL = 1e-4


def _hf():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    return torch, transformers


@pytest.fixture(scope="module")
def hf_tiny(tmp_path_factory):
    """(folder written by transformers' save_pretrained, the transformers model in eval mode)."""
    torch, transformers = _hf()
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=50257, n_positions=64)
    model = transformers.GPT2LMHeadModel(config)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    folder = tmp_path_factory.mktemp("hf") / "tiny-gpt2"
    model.save_pretrained(folder)
    return folder, model.eval()


def hf_logits(model, idx):
    torch, _ = _hf()
    with torch.no_grad():
        return model(torch.tensor(idx)).logits.numpy()


def mg_logits(model, idx):
    """minigrad's logits of every position (the targets make forward return them all)."""
    with minigrad.no_grad():
        logits, _ = model(minigrad.tensor(idx), minigrad.tensor(np.zeros_like(idx)))
    return logits.array


def tokens(n=2, t=16, seed=0):
    return np.random.default_rng(seed).integers(0, 50257, (n, t))


def copy_model(src, dst, tensors=None, config=None):
    """A model folder like src, its tensors or config changed (written with the safetensors library)."""
    dst.mkdir(parents=True)
    arrays = safetensors.numpy.load_file(src / "model.safetensors")
    arrays = tensors(arrays) if tensors else arrays
    safetensors.numpy.save_file(arrays, dst / "model.safetensors", metadata={"format": "pt"})
    cfg = json.loads((src / "config.json").read_text())
    (dst / "config.json").write_text(json.dumps(config(cfg) if config else cfg))
    return dst


# ---- against transformers -------------------------------------------------------------------------
def test_logits_and_loss_equal_transformers(hf_tiny):
    torch, _ = _hf()
    folder, hf = hf_tiny
    model = GPT.from_pretrained(folder)
    model.eval()
    c = model.config
    assert (c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.block_size) == (2, 2, 32, 50257, 64)
    assert c.activation == "gelu_tanh" and c.bias and c.dropout == 0.0  # "gelu_new" in config.json
    idx = tokens()
    np.testing.assert_allclose(mg_logits(model, idx), hf_logits(hf, idx), atol=ATOL, rtol=0)
    with torch.no_grad():
        hf_loss = hf(torch.tensor(idx), labels=torch.tensor(idx)).loss.item()  # transformers shifts the labels
    targets = np.concatenate([idx[:, 1:], np.full((2, 1), -1)], axis=1)
    with minigrad.no_grad():
        _, loss = model(minigrad.tensor(idx), minigrad.tensor(targets))
    assert abs(loss.item() - hf_loss) < ATOL


def test_the_exact_gelu_would_not_give_gpt2s_logits(hf_tiny):
    """The activation matters at this tolerance: the check above could fail."""
    folder, hf = hf_tiny
    model = GPT.from_pretrained(folder)
    model.eval()
    idx = tokens()
    want = hf_logits(hf, idx)
    tanh_error = np.abs(mg_logits(model, idx) - want).max()
    for block in model.transformer.h:
        block.mlp.gelu.approximate = "none"
    exact_error = np.abs(mg_logits(model, idx) - want).max()
    assert exact_error > ATOL and exact_error > 100 * tanh_error


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_generation_equals_transformers(hf_tiny, use_cache):
    torch, _ = _hf()
    folder, hf = hf_tiny
    model = GPT.from_pretrained(folder)
    prompt = tokens(t=6, seed=1)
    with torch.no_grad():
        want = hf.generate(torch.tensor(prompt), attention_mask=torch.ones(prompt.shape, dtype=torch.long),
                           max_new_tokens=24, do_sample=False, pad_token_id=50256).numpy()
    got = model.generate(minigrad.tensor(prompt), 24, temperature=0, use_cache=use_cache)
    assert got.shape == (2, 30)
    np.testing.assert_array_equal(got.array, want)


@pytest.mark.parametrize("bias, activation, vocab", [(True, "gelu_tanh", 50257), (False, "gelu", 100)])
def test_export_loads_in_transformers_and_round_trips_exactly(tmp_path, bias, activation, vocab):
    """minigrad -> HF (save_pretrained) -> transformers: the same logits; -> HF's own save -> minigrad:
    the same weights, bit for bit (a bias=False model comes back with zero biases)."""
    _, transformers = _hf()
    minigrad.manual_seed(3)
    model = GPT(GPTConfig(block_size=48, vocab_size=vocab, n_layer=2, n_head=4, n_embd=32, bias=bias,
                          activation=activation))
    for p in model.parameters():  # no bias zero, no LayerNorm weight one
        p.array += np.random.default_rng(p.numel()).normal(0, 0.05, p.shape).astype(np.float32)
    model.eval()
    model.save_pretrained(tmp_path / "export")
    assert sorted(os.listdir(tmp_path / "export")) == ["config.json", "model.safetensors"]
    hf = transformers.GPT2LMHeadModel.from_pretrained(tmp_path / "export").eval()
    assert hf.config.activation_function == ("gelu_new" if activation == "gelu_tanh" else "gelu")
    idx = np.random.default_rng(0).integers(0, vocab, (2, 20))
    np.testing.assert_allclose(hf_logits(hf, idx), mg_logits(model, idx), atol=ATOL, rtol=0)

    hf.save_pretrained(tmp_path / "hf-saved")
    back = GPT.from_pretrained(tmp_path / "hf-saved")
    assert back.config.activation == activation and back.config.block_size == 48
    theirs = dict(back.named_parameters())
    for name, p in model.named_parameters():
        assert np.array_equal(theirs[name].array, p.array), name
    if not bias:
        assert all(not theirs[n].array.any() for n in theirs if n.endswith(".bias"))
    assert back.lm_head.weight is back.transformer.wte.weight  # still tied


# ---- the file layout, without transformers ----------------------------------------------------------
def minigrad_model_dir(tmp_path, name="mg", **over):
    args = dict(block_size=32, vocab_size=50257, n_layer=2, n_head=2, n_embd=16, bias=True, activation="gelu_tanh")
    args.update(over)
    minigrad.manual_seed(0)
    model = GPT(GPTConfig(**args))
    model.save_pretrained(tmp_path / name)
    return tmp_path / name, model


def test_openai_names_and_mask_buffers_load_as_the_same_model(tmp_path):
    """OpenAI's files name tensors without 'transformer.' and hold attention-mask buffers."""
    folder, model = minigrad_model_dir(tmp_path)

    def openai_layout(arrays):
        out = {k.removeprefix("transformer."): v for k, v in arrays.items()}
        for i in range(2):
            out[f"h.{i}.attn.bias"] = np.tril(np.ones((1, 1, 32, 32), np.float32))
            out[f"h.{i}.attn.masked_bias"] = np.array(-1e4, np.float32)
        return out

    openai = copy_model(folder, tmp_path / "openai", tensors=openai_layout)
    loaded = GPT.from_pretrained(openai)
    for (name, p), (_, q) in zip(model.named_parameters(), loaded.named_parameters()):
        assert np.array_equal(p.array, q.array), name


def test_half_precision_files_load_as_float32(tmp_path):
    folder, model = minigrad_model_dir(tmp_path)
    half = copy_model(folder, tmp_path / "f16", tensors=lambda a: {k: v.astype(np.float16) for k, v in a.items()})
    loaded = GPT.from_pretrained(half)
    for (name, p), (_, q) in zip(model.named_parameters(), loaded.named_parameters()):
        assert q.array.dtype == np.float32
        np.testing.assert_array_equal(q.array, p.array.astype(np.float16).astype(np.float32), err_msg=name)


def test_override_args_and_crop_block_size(tmp_path):
    folder, model = minigrad_model_dir(tmp_path)
    m = GPT.from_pretrained(folder, dict(dropout=0.1))
    assert m.config.dropout == 0.1 and m.transformer.h[0].attn.dropout == 0.1
    with pytest.raises(ValueError, match="override_args can only set dropout and grad_checkpoint, not 'n_layer'"):
        GPT.from_pretrained(folder, dict(n_layer=3))
    m = GPT.from_pretrained(folder)
    m.eval()
    model.eval()
    m.crop_block_size(16)
    assert m.config.block_size == 16 and m.transformer.wpe.weight.shape == (16, 16)
    idx = tokens(t=16)
    np.testing.assert_array_equal(mg_logits(m, idx), mg_logits(model, idx))


def test_names_are_found_in_the_pretrained_dir_and_the_hugging_face_cache(tmp_path, monkeypatch):
    folder, _ = minigrad_model_dir(tmp_path)
    monkeypatch.delenv("MINIGRAD_PRETRAINED_DIR", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    # the Hugging Face cache: snapshots of files that are links to blobs; refs/main names the current one
    repo = tmp_path / "hf_home" / "hub" / "models--openai-community--gpt2"
    for snap in ("old", "abc123"):
        (repo / "snapshots" / snap).mkdir(parents=True)
    for f in ("config.json", "model.safetensors"):
        (repo / "snapshots" / "abc123" / f).symlink_to(folder / f)
        (repo / "snapshots" / "old" / f).symlink_to(folder / f)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    assert find_model_dir("gpt2") == repo / "snapshots" / "abc123"
    assert find_model_dir("openai-community/gpt2") == repo / "snapshots" / "abc123"  # the repo id works too
    assert GPT.from_pretrained("gpt2").config.n_embd == 16
    # $MINIGRAD_PRETRAINED_DIR/NAME comes first
    mine = tmp_path / "mine"
    (mine / "gpt2").mkdir(parents=True)
    for f in ("config.json", "model.safetensors"):
        (mine / "gpt2" / f).symlink_to(folder / f)
    monkeypatch.setenv("MINIGRAD_PRETRAINED_DIR", str(mine))
    assert find_model_dir("gpt2") == mine / "gpt2"
    # a name with no files: one line saying what, where, and how to get them
    with pytest.raises(PretrainedError) as e:
        GPT.from_pretrained("gpt2-medium")
    msg = str(e.value)
    assert "\n" not in msg
    for part in ("config.json", "model.safetensors", str(mine / "gpt2-medium"),
                 str(tmp_path / "hf_home" / "hub" / "models--openai-community--gpt2-medium"),
                 "huggingface.co/openai-community/gpt2-medium"):
        assert part in msg


def test_peak_memory_of_loading_stays_near_the_weights_size(tmp_path):
    """Loading holds the weights once: the peak RSS grows by less than 1.5x their size (measured in a
    fresh process; reading the whole file first, or drawing the random init, would reach ~2x)."""
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("needs Linux's /proc to reset the peak RSS")
    folder, _ = minigrad_model_dir(tmp_path, n_layer=2, n_head=4, n_embd=256, block_size=256)
    child = (
        "import sys\nimport minigrad\nfrom gpt.model import GPT\n"
        "def kb(key):\n    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(key))\n"
        "open('/proc/self/clear_refs', 'w').write('5')\nbase = kb('VmRSS')\n"
        "m = GPT.from_pretrained(sys.argv[1])\n"
        "print((kb('VmHWM') - base) * 1024 / sum(p.array.nbytes for p in m.parameters()))\n"
    )
    out = subprocess.run([sys.executable, "-c", child, str(folder)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) < 1.5


# ---- bad input: one line, nothing loaded or written -------------------------------------------------
def _rename_first_block_tensor(arrays):
    arrays["transformer.h.0.attn.q_proj.weight"] = arrays.pop("transformer.h.0.attn.c_attn.weight")
    return arrays


def _misshape_fc(arrays):
    arrays["transformer.h.1.mlp.c_fc.weight"] = arrays["transformer.h.1.mlp.c_fc.weight"][:, :40].copy()
    return arrays


def _truncate(folder):
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-1000])


BAD = {
    "no files": (lambda src, dst: dst.mkdir(), "has no config.json and no model.safetensors"),
    "no weights": (lambda src, dst: (dst.mkdir(), (dst / "config.json").write_bytes((src / "config.json").read_bytes())),
                   "has no model.safetensors"),
    "pickle only": (lambda src, dst: (dst.mkdir(), (dst / "config.json").write_text("{}"),
                                      (dst / "pytorch_model.bin").write_bytes(b"x")), "never loaded"),
    "a file": (lambda src, dst: dst.write_text("x"), "is a file"),
    "missing path": (lambda src, dst: None, "is neither a GPT-2 name"),
    "another architecture's names": (lambda src, dst: copy_model(src, dst, tensors=_rename_first_block_tensor),
                                     "tensor 'transformer.h.0.attn.q_proj.weight' is not part of a GPT-2"),
    "a shape that does not fit": (lambda src, dst: copy_model(src, dst, tensors=_misshape_fc),
                                  r"tensor 'transformer.h.1.mlp.c_fc.weight' has shape \[16, 40\], but a GPT-2 "
                                  r"with n_layer=2, n_embd=16.* has \[16, 64\]"),
    "a missing tensor": (lambda src, dst: copy_model(src, dst, tensors=lambda a: {
        k: v for k, v in a.items() if k != "transformer.ln_f.bias"}), "has no tensor 'ln_f.bias'"),
    "n_embd not divisible by n_head": (lambda src, dst: copy_model(src, dst, config=lambda c: dict(c, n_head=3)),
                                       r"n_embd \(16\) is not divisible by n_head \(3\)"),
    "another model type": (lambda src, dst: copy_model(src, dst, config=lambda c: dict(c, model_type="llama")),
                           "describes a 'llama' model"),
    "an unknown activation": (lambda src, dst: copy_model(src, dst, config=lambda c: dict(
        c, activation_function="swish")), "activation_function 'swish' is not one of"),
    "config not JSON": (lambda src, dst: (copy_model(src, dst), (dst / "config.json").write_text("{n_layer: 2")),
                        "config.json is not JSON"),
    "a truncated file": (lambda src, dst: (copy_model(src, dst), _truncate(dst)),
                         r"model.safetensors is truncated: tensor '.*' ends at byte"),
    "a cut header": (lambda src, dst: (copy_model(src, dst), (dst / "model.safetensors").write_bytes(
        (src / "model.safetensors").read_bytes()[:100])), "truncated or not a safetensors file"),
    "not safetensors": (lambda src, dst: (copy_model(src, dst), (dst / "model.safetensors").write_bytes(
        b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!")), "is not a safetensors file"),
    "a git-lfs pointer": (lambda src, dst: (copy_model(src, dst), (dst / "model.safetensors").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n")), "Git LFS pointer"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_model_folders_raise_one_line(tmp_path, case):
    src, _ = minigrad_model_dir(tmp_path)
    make, message = BAD[case]
    bad = tmp_path / "bad"
    make(src, bad)
    with pytest.raises(PretrainedError, match=message) as e:
        GPT.from_pretrained(bad)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("case", ["no files", "another architecture's names", "a shape that does not fit",
                                  "n_embd not divisible by n_head", "a truncated file"])
def test_train_py_with_a_bad_model_says_one_line_and_writes_nothing(tmp_path, case, capsys):
    src, _ = minigrad_model_dir(tmp_path)
    make, message = BAD[case]
    make(src, tmp_path / "bad")
    argv = [str(ROOT / "config" / "finetune_shakespeare.py"), f"--init_from={tmp_path / 'bad'}",
            f"--out_dir={tmp_path / 'out'}", f"--data_dir={tmp_path / 'data'}", "--peak_flops=1e9"]
    assert trainer.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("train.py: error: ")
    assert not (tmp_path / "out").exists() and not (tmp_path / "data").exists()  # checked before the data


def test_a_vocabulary_that_does_not_fit_the_tokenizer_is_refused(tmp_path, shared_data, capsys):
    small, _ = minigrad_model_dir(tmp_path, name="small-vocab", vocab_size=100)
    ranks = f"--gpt2_tiktoken={shared_data / 'gpt2.tiktoken'}"
    assert sampling.main([f"--init_from={small}", ranks, "--start=Hi"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "vocabulary (100 ids) does not fit GPT-2's tokenizer (50257 ids)" in err[0]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("To be, or not to be, that is the question. " * 50)
    argv = [f"--init_from={small}", f"--out_dir={tmp_path / 'out'}", f"--data_dir={tmp_path / 'data'}",
            "--dataset=tiny", f"--input={corpus}", ranks, "--block_size=16", "--peak_flops=1e9"]
    assert trainer.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "vocabulary (100 ids) does not fit dataset 'tiny' (50257 ids)" in err[0]
    assert not (tmp_path / "out").exists()
    # a dataset of characters cannot feed a GPT-2: refused before anything trains
    big, _ = minigrad_model_dir(tmp_path, name="big-vocab")
    argv = [f"--init_from={big}", f"--out_dir={tmp_path / 'out'}", f"--data_dir={tmp_path / 'data'}",
            "--dataset=shakespeare_char", f"--input={corpus}", "--peak_flops=1e9"]
    assert trainer.main(argv) == 2
    assert "'shakespeare_char' is tokenized with 'char'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_init_from_accepts_gpt2_names_and_paths():
    for value in ("gpt2-xl", "gpt2", "some/folder"):
        cfg, _ = parse_config([f"--init_from={value}"])
        assert cfg.init_from == value


# ---- end to end: the real commands ------------------------------------------------------------------
def command(*args, timeout=300):
    out = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def finetuned(hf_tiny, tmp_path_factory):
    """out_dir of `python train.py config/finetune_shakespeare.py --init_from=<the tiny GPT-2>` (tiny sizes)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    folder, _ = hf_tiny
    tmp = tmp_path_factory.mktemp("finetune")
    excerpt = tmp / "shakespeare.txt"
    excerpt.write_text(SHARED_DATA.joinpath("tinyshakespeare.txt").read_text()[:30000])
    log = command("train.py", ROOT / "config" / "finetune_shakespeare.py", f"--init_from={folder}",
                  f"--out_dir={tmp / 'out'}", f"--data_dir={tmp / 'data'}", f"--input={excerpt}",
                  f"--gpt2_tiktoken={SHARED_DATA / 'gpt2.tiktoken'}", "--block_size=32", "--batch_size=2",
                  "--gradient_accumulation_steps=1", "--max_iters=4", "--eval_interval=2", "--eval_iters=2",
                  "--learning_rate=1e-3", "--always_save_checkpoint=True", "--peak_flops=1e9", "--progress=False")
    return tmp / "out", log


def test_finetuning_from_a_gpt2_folder_runs_offline(finetuned, hf_tiny):
    out, log = finetuned
    folder, _ = hf_tiny
    assert f"init_from={folder}" in log and "context cropped from 64 to block_size=32 tokens" in log
    ckpt = nn.load(out / "ckpt.safetensors")
    args = ckpt["model_args"]
    assert (args["block_size"], args["vocab_size"], args["n_embd"], args["activation"]) == (32, 50257, 32, "gelu_tanh")
    assert ckpt["iter_num"] == 4 and ckpt["config"]["init_from"] == str(folder)
    evals = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines() if "val_loss" in line]
    assert [e["iter"] for e in evals] == [0, 2, 4]
    start = GPT.from_pretrained(folder)
    assert not np.array_equal(ckpt["model"]["transformer.h.0.mlp.c_fc.weight"].array,
                              start.transformer.h[0].mlp.c_fc.weight.array)  # it trained
    pytest.importorskip("matplotlib")
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sample_py_from_a_gpt2_folder_equals_transformers_greedy_text(hf_tiny, shared_data):
    torch, _ = _hf()
    folder, hf = hf_tiny
    ranks = shared_data / "gpt2.tiktoken"
    tok = GPT2Tokenizer(ranks)
    prompt = "To be, or not"
    stdout = command("sample.py", f"--init_from={folder}", f"--start={prompt}", "--num_samples=1",
                     "--max_new_tokens=12", "--temperature=0", f"--gpt2_tiktoken={ranks}")
    ids = tok.encode(prompt)
    with torch.no_grad():
        greedy = hf.generate(torch.tensor([ids]), attention_mask=torch.ones((1, len(ids)), dtype=torch.long),
                             max_new_tokens=12, do_sample=False, pad_token_id=50256)[0, len(ids):].tolist()
    assert stdout == prompt + tok.decode(greedy) + "\n---------------\n"


def test_fine_tuned_run_samples_and_exports_to_transformers(finetuned, tmp_path, capsys):
    _, transformers = _hf()
    out, _ = finetuned
    code = sampling.main([f"--out_dir={out}", "--start=ROMEO:", "--num_samples=1", "--max_new_tokens=5",
                          f"--gpt2_tiktoken={SHARED_DATA / 'gpt2.tiktoken'}"])
    assert code == 0 and capsys.readouterr().out.startswith("ROMEO:")
    target = tmp_path / "exported"
    assert export.main([str(out), str(target)]) == 0
    model, _ = sampling.load_model(out)
    hf = transformers.GPT2LMHeadModel.from_pretrained(target).eval()
    idx = tokens(t=32)
    np.testing.assert_allclose(hf_logits(hf, idx), mg_logits(model, idx), atol=ATOL, rtol=0)
    # an export already there is kept unless --force; a bad out_dir writes nothing
    before = (target / "model.safetensors").read_bytes()
    capsys.readouterr()
    assert export.main([str(out), str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exists: pass --force" in err[0]
    assert (target / "model.safetensors").read_bytes() == before
    assert export.main([str(out), str(target), "--force", "--ckpt=best"]) == 0
    assert export.main([str(tmp_path / "nowhere"), str(tmp_path / "new")]) == 2
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "new").exists()


def test_a_fine_tuned_run_resumes_with_gpt2s_activation(finetuned, tmp_path):
    out, _ = finetuned
    shutil.copytree(out, tmp_path / "out")
    saved = nn.load(out / "ckpt.safetensors")
    cfg = dict(saved["config"], out_dir=str(tmp_path / "out"), init_from="resume", max_iters=6)
    argv = [f"--{k}={v}" for k, v in cfg.items() if v != ""]
    lines = []
    t = trainer.Trainer(parse_config(argv)[0], log=lines.append)
    assert t.model.config.activation == "gelu_tanh" and t.model.config.block_size == 32
    assert not any("activation" in line for line in lines)  # no flag sets it: no note about it
    t.run()
    assert t.iter_num == 6
