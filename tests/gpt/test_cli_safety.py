"""train.py and sample.py as a user runs them: every mistake is one line with exit status 2, and
no checkpoint in out_dir changes unless the user asked for it (issue 21's cases, each by its number)."""
import json
import shutil

import pytest
from cli_runner import checkpoint_hashes, cli, one_line, tiny

import nn


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """An out_dir holding a finished 6-iteration run (ckpt, best, log); tests work on copies."""
    tmp = tmp_path_factory.mktemp("trained")
    r = cli("train.py", *tiny(tmp, always_save_checkpoint=True))
    assert r.returncode == 0, r.stderr
    return tmp


@pytest.fixture
def run_dir(trained, tmp_path):
    """A copy of the trained run: (flags that reach it, its out_dir, its files' sha256)."""
    shutil.copytree(trained, tmp_path, dirs_exist_ok=True)
    out = tmp_path / "out"
    return tiny(tmp_path), out, checkpoint_hashes(out)


def flags(args, **over):
    """`args` with some flags replaced or added."""
    keep = [a for a in args if a.split("=")[0][2:] not in over]
    return keep + [f"--{k}={v}" for k, v in over.items()]


# ---- 1: a fresh run never replaces an earlier run ------------------------------------------------
def test_1_fresh_run_over_an_earlier_run_is_refused(run_dir):
    args, out, before = run_dir
    r = cli("train.py", *flags(args, max_iters=1))
    assert r.returncode == 2
    line = one_line(r.stderr)
    assert line.startswith("train.py: error: out_dir ") and "already holds a run" in line
    assert "ckpt.safetensors at iteration 6, best val loss " in line
    for way in ("--init_from=resume", "another --out_dir", "--overwrite=True"):
        assert way in line
    assert r.stdout == ""  # no work started
    assert checkpoint_hashes(out) == before  # the log too


def test_1_overwrite_replaces_the_earlier_run(run_dir):
    args, out, before = run_dir
    r = cli("train.py", *flags(args, max_iters=3, overwrite=True))
    assert r.returncode == 0, r.stderr
    assert "--overwrite: replacing the run in " in r.stdout
    assert nn.load(out / "ckpt.safetensors")["iter_num"] == 3
    iters = [json.loads(line)["iter"] for line in (out / "log.jsonl").read_text().splitlines()]
    assert iters[0] == 0 and iters == sorted(iters)  # a new log, not the old one continued


# ---- 2: resume is exact in every setting (tests/gpt/test_resume.py) ------------------------------
# ---- 3: a resumed run keeps its model; one that trains nothing writes nothing ---------------------
def test_3_resume_with_another_model_shape_is_refused(run_dir):
    args, out, before = run_dir
    r = cli("train.py", *flags(args, init_from="resume", n_layer=2, max_iters=9))
    assert r.returncode == 2
    line = one_line(r.stderr)
    assert "cannot resume with n_layer=2" in line and "trained with n_layer=1" in line
    assert checkpoint_hashes(out) == before


def test_3_resume_takes_unset_settings_from_the_checkpoint(run_dir, tmp_path):
    _, out, before = run_dir
    # only the out_dir, data_dir and a longer run: the model shape (n_layer=1, not the default 4) comes
    # from the checkpoint
    r = cli("train.py", f"--out_dir={out}", f"--data_dir={tmp_path / 'data'}", "--init_from=resume", "--max_iters=9")
    assert r.returncode == 0, r.stderr
    assert f"resuming from {out / 'ckpt.safetensors'} at iteration 6" in r.stdout
    ckpt = nn.load(out / "ckpt.safetensors")
    assert ckpt["iter_num"] == 9 and ckpt["model_args"]["n_layer"] == 1 and ckpt["config"]["n_embd"] == 16


def test_3_resume_with_nothing_to_train_writes_nothing(run_dir):
    args, out, before = run_dir
    r = cli("train.py", *flags(args, init_from="resume"))  # max_iters=6: where it ended
    assert r.returncode == 0, r.stderr
    assert "nothing to train: " in r.stdout and "iteration 6, max_iters=6" in r.stdout
    assert checkpoint_hashes(out) == before


def test_3_help_says_what_may_change_on_resume():
    r = cli("train.py", "--help")
    assert r.returncode == 0
    assert "keeps" in r.stdout and "n_layer, n_head, n_embd, block_size, bias, dataset" in r.stdout
    assert "max_iters, the learning-rate" in r.stdout
