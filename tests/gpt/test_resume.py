"""Exact resume through the real commands: N iterations, then resumed to 2N, ends bit for bit where a
straight run of 2N does, in every setting (issue 21, case 2), with nothing but a user's flags."""
import json

import numpy as np
import pytest
from cli_runner import cli, tiny

import minigrad
import nn

SETTINGS = {
    "dropout, accumulation, clipping, lr decay": dict(dropout=0.1, gradient_accumulation_steps=2, grad_clip=0.05),
    "the same with --grad_checkpoint": dict(dropout=0.1, gradient_accumulation_steps=2, grad_clip=0.05,
                                            grad_checkpoint=True),
    "constant lr, no clipping": dict(dropout=0.1, decay_lr=False, grad_clip=0.0),
}


def same(a, b, where="checkpoint"):
    """Assert two decoded checkpoint trees are equal, tensors bit for bit."""
    if isinstance(a, minigrad.Tensor):
        assert isinstance(b, minigrad.Tensor) and a.dtype == b.dtype, where
        assert np.array_equal(a.array, b.array), where
    elif isinstance(a, np.ndarray):
        assert np.array_equal(a, b), where
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}/{i}")
    else:
        assert a == b, where


def check_exact_resume(tmp_path, n=4, **over):
    over = {"always_save_checkpoint": True, "eval_interval": 3, **over}
    straight = cli("train.py", *tiny(tmp_path, out_dir=tmp_path / "a", max_iters=2 * n, **over))
    assert straight.returncode == 0, straight.stderr
    first = cli("train.py", *tiny(tmp_path, out_dir=tmp_path / "b", max_iters=n, **over))
    assert first.returncode == 0, first.stderr
    assert nn.load(tmp_path / "b" / "ckpt.safetensors")["iter_num"] == n
    resumed = cli("train.py", *tiny(tmp_path, out_dir=tmp_path / "b", max_iters=2 * n, init_from="resume", **over))
    assert resumed.returncode == 0, resumed.stderr
    assert f"at iteration {n}" in resumed.stdout
    a, b = nn.load(tmp_path / "a" / "ckpt.safetensors"), nn.load(tmp_path / "b" / "ckpt.safetensors")
    assert a["iter_num"] == b["iter_num"] == 2 * n
    for key in ("model", "optimizer", "rng", "sampler", "best_val_loss"):
        same(a[key], b[key], key)
    # and the losses logged after the resume point are those of the straight run
    def losses(run):
        records = [json.loads(line) for line in (tmp_path / run / "log.jsonl").read_text().splitlines()]
        return [(r["iter"], r.get("loss"), r.get("val_loss")) for r in records if r["iter"] > n]

    assert losses("a") == losses("b") and len(losses("a")) >= n


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_resume_is_exact(tmp_path, setting):
    check_exact_resume(tmp_path, **SETTINGS[setting])


def test_resume_is_exact_with_bpe_data(tmp_path, shared_data):
    check_exact_resume(tmp_path, tokenizer="gpt2", gpt2_tiktoken=shared_data / "gpt2.tiktoken", eval_interval=4,
                       dropout=0.1, gradient_accumulation_steps=2)
