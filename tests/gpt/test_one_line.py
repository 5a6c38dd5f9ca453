"""One line for every mistake (issue 26): each names the setting and the fix, exit status 2, and
nothing in out_dir changes; the notices a run prints are said once, where they belong."""
import json
import os
import shutil
import subprocess
import sys

import pytest
from cli_runner import ROOT, checkpoint_hashes, cli, edit_tree, env, one_line, tiny

import nn
from gpt.console import memory_bytes


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trained")
    r = cli("train.py", *tiny(tmp))
    assert r.returncode == 0, r.stderr
    return tmp


@pytest.fixture
def run(trained, tmp_path):
    shutil.copytree(trained, tmp_path, dirs_exist_ok=True)
    return tmp_path, tmp_path / "out"


def refused(r):
    """The one error line of a run refused before any work."""
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    return one_line(r.stderr)


# ---- sample.py --------------------------------------------------------------------------------
def test_a_sample_too_long_for_memory_says_the_limit(run):
    _, out = run
    before = checkpoint_hashes(out)
    line = refused(cli("sample.py", f"--out_dir={out}", "--max_new_tokens=1000000000000"))
    assert line.startswith("sample.py: error: --max_new_tokens=1000000000000 needs at least "), line
    assert "TiB of memory to hold one sample, more than the " in line
    assert line.endswith("here: generate fewer tokens (the model's context is its last 16 tokens: a longer sample is "
                         "not a longer context)")
    assert checkpoint_hashes(out) == before


def test_a_folder_after_start_file_is_named_a_folder(run, tmp_path):
    _, out = run
    line = refused(cli("sample.py", f"--out_dir={out}", f"--start=FILE:{tmp_path}"))
    assert line == f"sample.py: error: prompt file {tmp_path} is a folder: give --start=FILE:path a text file"


def test_a_temperature_too_small_to_divide_by_is_refused(run):
    _, out = run
    line = refused(cli("sample.py", f"--out_dir={out}", "--temperature=1e-45"))
    assert line == ("sample.py: error: --temperature=1e-45 is too small to divide the logits by: use 0 (greedy, which "
                    "is what it would sample) or at least 1e-06")
    r = cli("sample.py", f"--out_dir={out}", "--temperature=1e-6", "--num_samples=1", "--max_new_tokens=5")
    assert r.returncode == 0 and r.stderr == "", r.stderr  # the smallest one allowed samples, silently


# ---- train.py: settings -------------------------------------------------------------------------
def test_a_model_too_large_for_memory_is_refused_before_it_is_built(tmp_path):
    n = 200000 * (12 * 128 * 128 + 13 * 128)  # the blocks; then the embeddings of 30 characters and 16 positions
    if (memory_bytes() or 0) > 16 * n:
        pytest.skip("this machine could hold the model")
    line = refused(cli("train.py", *tiny(tmp_path, n_layer=200000, n_embd=128), timeout=60))
    assert line.startswith(f"train.py: error: n_layer=200000 with n_embd=128 makes a model of {n + (30 + 16 + 2) * 128:,} "
                           "parameters, whose weights, gradients and AdamW state need "), line
    assert line.endswith("here: lower n_layer or n_embd")
    assert not (tmp_path / "out").exists()


def test_a_model_too_wide_blames_its_width_not_the_batch(tmp_path):
    line = refused(cli("train.py", *tiny(tmp_path, n_embd=100000), timeout=60))
    assert line.startswith("train.py: error: n_layer=1 with n_embd=100000 makes a model of "), line
    assert "batch_size" not in line and line.endswith("lower n_layer or n_embd")


def test_a_sequence_too_long_for_memory_blames_the_sequence_not_the_batch(tmp_path):
    # a model that fits, but whose activations for one sequence do not
    line = refused(cli("train.py", *tiny(tmp_path, block_size=10**9), timeout=60))
    assert "block_size=1000000000" in line and "batch_size" not in line, line


@pytest.mark.parametrize("flag, message", [
    ("--seed=-1", "seed must not be negative, got -1"),
    ("--out_dir=", "out_dir must not be empty: --out_dir=NAME"),
    ("--data_dir=", "data_dir must not be empty: --data_dir=NAME"),
    ("--input=/dev/null", "input '/dev/null' is not a text file or a folder of text files"),
])
def test_a_bad_setting_is_named(tmp_path, flag, message):
    args = [a for a in tiny(tmp_path) if a.split("=")[0] != flag.split("=")[0]]
    assert refused(cli("train.py", *args, flag)) == f"train.py: error: {message}"
    assert not (tmp_path / "out").exists() and not (ROOT / "ckpt.safetensors").exists()


def test_a_checkpoint_setting_that_does_not_parse_is_named(run):
    tmp, out = run
    ckpt = out / "ckpt.safetensors"
    edit_tree(ckpt, lambda t: t["config"].update(learning_rate="abc"), recompute_crc=True)
    before = checkpoint_hashes(out)
    line = refused(cli("train.py", *tiny(tmp, init_from="resume", max_iters=8, learning_rate=None)))
    assert line == (f"train.py: error: {ckpt}: learning_rate='abc' should be of type float (finite): give "
                    "--learning_rate=VALUE to resume")
    assert checkpoint_hashes(out) == before
    r = cli("train.py", *tiny(tmp, init_from="resume", max_iters=8, learning_rate=1e-3))  # as the line says
    assert r.returncode == 0, r.stderr
    assert nn.load(ckpt)["config"]["learning_rate"] == 1e-3


# ---- notices --------------------------------------------------------------------------------
def test_without_matplotlib_the_note_is_said_once_per_out_dir(tmp_path):
    blocked = tmp_path / "no_matplotlib"
    (blocked / "matplotlib").mkdir(parents=True)
    (blocked / "matplotlib" / "__init__.py").write_text("raise ImportError('matplotlib is not installed')\n")
    without = {"PYTHONPATH": f"{blocked}{os.pathsep}{ROOT}"}
    note = "note: no loss.png is drawn without matplotlib: pip install 'minigrad[plot]' (matplotlib)"
    r = cli("train.py", *tiny(tmp_path), extra_env=without)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(note) == 1
    r = cli("train.py", *tiny(tmp_path, init_from="resume", max_iters=9), extra_env=without)
    assert r.returncode == 0, r.stderr
    assert note not in r.stdout  # the same out_dir: said already
    assert "without matplotlib" in cli("train.py", "--help").stdout


def test_gpt_plot_draws_into_the_out_dir_it_reads(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "run"
    out.mkdir()
    (out / "log.jsonl").write_text("".join(json.dumps({"iter": i, "train_loss": 3.0 - i / 10, "val_loss": 3.1 - i / 10})
                                           + "\n" for i in (0, 5, 10)))
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    r = subprocess.run([sys.executable, "-m", "gpt.plot", str(out)], cwd=elsewhere, env=env(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"wrote {out / 'loss.png'}"
    assert (out / "loss.png").read_bytes()[:4] == b"\x89PNG" and not list(elsewhere.iterdir())


def test_the_readme_mpiexec_example_runs_as_pasted_after_the_baby_one():
    readme = (ROOT / "README.md").read_text()
    baby = next(line for line in readme.splitlines() if line.startswith("python train.py config/train_shakespeare_char"))
    ddp = next(line for line in readme.splitlines() if line.startswith("mpiexec -n 2 python train.py"))
    assert "--out_dir=" in ddp and "--out_dir=" not in baby  # its own out_dir, not the baby example's
