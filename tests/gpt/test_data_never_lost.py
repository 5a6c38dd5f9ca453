"""Data is never lost, never silently wrong (issue 26): a full disk, a diverged run, a run that
ends, another text under a dataset's name, preparations racing, a meta.json that lies. Each case
runs train.py as a user does and checks the exit status, the one line, and the checkpoints' sha256."""
import errno
import json
import os
import shutil
import subprocess
import sys

import pytest
from cli_runner import ROOT, checkpoint_hashes, cli, env, one_line, tiny

import nn
from nn.serialization import temporaries

CKPT, BEST, LOG = "ckpt.safetensors", "best.safetensors", "log.jsonl"


def checkpoints(out):
    return {k: v for k, v in checkpoint_hashes(out).items() if k.endswith(".safetensors")}


def left_over(out):
    return [p for name in (CKPT, BEST, LOG, "loss.png") for p in temporaries(out / name)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished 6-iteration run (ckpt and best at iteration 6); tests work on copies."""
    tmp = tmp_path_factory.mktemp("trained")
    r = cli("train.py", *tiny(tmp, always_save_checkpoint=True))
    assert r.returncode == 0, r.stderr
    return tmp


@pytest.fixture
def run(trained, tmp_path):
    shutil.copytree(trained, tmp_path, dirs_exist_ok=True)
    return tmp_path, tmp_path / "out"


# ---- 1: a full disk ----------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB filesystem of its own (tmpfs, mounted where root may), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if shutil.which("mount") is None or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(disk)],
                                                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=True)


def fill(disk, leave=0):
    """Fill `disk` up, then free about `leave` bytes."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))


def test_a_disk_that_fills_up_during_a_save_keeps_the_checkpoint(trained, small_disk):
    out = small_disk / "out"
    shutil.copytree(trained / "out", out)
    (out / "loss.png").unlink(missing_ok=True)
    before = checkpoints(out)
    fill(small_disk, leave=24 * 1024)  # room for the log's lines, not for a checkpoint
    r = cli("train.py", *tiny(trained, out_dir=out, init_from="resume", max_iters=9))
    assert r.returncode == 2, r.stderr
    line = one_line(r.stderr)
    assert line.startswith("train.py: error: cannot save iteration 9 to "), line
    assert line.endswith(": No space left on device (best.safetensors is as it was)") or \
        line.endswith(": No space left on device (ckpt.safetensors is as it was)"), line
    assert checkpoints(out) == before and not left_over(out)


def test_a_full_disk_at_resume_start_is_one_line(trained, small_disk):
    out = small_disk / "out"
    shutil.copytree(trained / "out", out)
    (out / "loss.png").unlink(missing_ok=True)
    with open(out / LOG, "a") as f:  # what a run killed after its last save leaves: records it must drop
        f.write(json.dumps({"iter": 7, "loss": 1.0}) + "\n")
    before = checkpoint_hashes(out)
    fill(small_disk)
    r = cli("train.py", *tiny(trained, out_dir=out, init_from="resume", max_iters=9))
    assert r.returncode == 2, r.stderr
    assert one_line(r.stderr) == f"train.py: error: cannot rewrite {out / LOG}: No space left on device (it is as it was)"
    assert checkpoint_hashes(out) == before and not left_over(out)


# ---- 2: a diverged state never replaces a good checkpoint --------------------------------------
def test_a_learning_rate_beyond_float32_is_refused_up_front(run):
    tmp, out = run
    before = checkpoint_hashes(out)
    r = cli("train.py", *tiny(tmp, init_from="resume", learning_rate=1e39, max_iters=12))
    assert r.returncode == 2 and r.stdout == ""
    assert one_line(r.stderr) == ("train.py: error: --learning_rate: learning_rate=1e+39 is beyond float32's range "
                                  "(at most 3.403e+38)")
    assert checkpoint_hashes(out) == before


@pytest.mark.parametrize("grad_clip", [1.0, 0.0])
def test_a_diverged_run_never_replaces_a_good_checkpoint(run, grad_clip):
    tmp, out = run
    before = checkpoints(out)
    r = cli("train.py", *tiny(tmp, init_from="resume", learning_rate=3e38, eval_interval=1, max_iters=12,
                              always_save_checkpoint=True, grad_clip=grad_clip))
    assert r.returncode == 2
    line = one_line(r.stderr)
    assert line.startswith("train.py: error: the estimated losses became nan (train) and nan (val) at iteration 7: "
                           "not saved; lower --learning_rate (now 3e+38)"), line
    assert ("--grad_clip=1.0" in line) is (grad_clip == 0.0)  # suggested only when it is off
    assert line.endswith("(checkpoints so far are kept)")
    assert checkpoints(out) == before and not left_over(out)


def test_parameters_that_are_not_finite_are_never_saved(run):
    import numpy as np

    from gpt.config import parse_config
    from gpt.trainer import Trainer, TrainError

    tmp, out = run
    before = checkpoints(out)
    cfg, _ = parse_config(tiny(tmp, init_from="resume", max_iters=9))
    t = Trainer(cfg, log=lambda msg: None)
    try:
        next(iter(t.model.parameters())).array[0] = np.inf
        with pytest.raises(TrainError, match=r"parameter transformer\.wte\.weight is not finite at iteration 6: "
                                             "not saved"):
            t.save()
    finally:
        t.close()
    assert checkpoints(out) == before


# ---- 3: resume continues where the run stopped --------------------------------------------------
def test_a_run_that_ends_leaves_its_last_iteration_resumable(tmp_path):
    # a learning rate too high: no evaluation beats step 0's, so no best is written
    args = tiny(tmp_path, learning_rate=1.0, decay_lr=False, grad_clip=0.0, max_iters=4, eval_interval=2)
    r = cli("train.py", *args)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert f"(no trained iteration evaluated better than step 0's): saved {out / CKPT} at iteration 4" in r.stdout
    assert nn.load(out / CKPT)["iter_num"] == 4 and not (out / BEST).exists()
    r = cli("train.py", *tiny(tmp_path, init_from="resume", max_iters=6))
    assert r.returncode == 0, r.stderr
    assert f"resuming from {out / CKPT} at iteration 4" in r.stdout
    assert nn.load(out / CKPT)["iter_num"] == 6
    iters = [json.loads(line)["iter"] for line in (out / LOG).read_text().splitlines()]
    assert iters == sorted(iters) and iters[-1] == 6 and 4 in iters  # the log goes on, nothing dropped


def test_a_kill_between_the_first_best_and_ckpt_saves_resumes_from_best(run):
    tmp, out = run
    (out / CKPT).unlink()  # as a kill -9 after best.safetensors, before ckpt.safetensors, leaves it
    best = checkpoints(out)
    r = cli("train.py", *tiny(tmp, init_from="resume", max_iters=8))
    assert r.returncode == 0, r.stderr
    assert (f"resuming from {out / BEST} at iteration 6 ({CKPT} is missing: the run was stopped before saving it)"
            in r.stdout)
    assert nn.load(out / CKPT)["iter_num"] == 8
    if nn.load(out / BEST)["iter_num"] == 6:  # (unless a later evaluation was better)
        assert checkpoints(out)[BEST] == best[BEST]


# ---- 4: another text under the same dataset name ------------------------------------------------
def test_another_text_never_takes_a_prepared_datasets_name(tmp_path):
    b, c = tmp_path / "projB" / "input.txt", tmp_path / "projC" / "input.txt"
    for path, text in ((b, "Speak, speak.\nAll: hear me.\n" * 60), (c, "hear me. All: Speak, speak.\n" * 60)):
        path.parent.mkdir()
        path.write_text(text)
    common = dict(dataset=None, data_dir=tmp_path / "data", max_iters=3)
    r = cli("train.py", *tiny(tmp_path, input=b, out_dir=tmp_path / "outB", **common))
    assert r.returncode == 0, r.stderr
    data, run_b = tmp_path / "data" / "input", tmp_path / "outB"
    prepared, trained_b = checkpoint_hashes(data), checkpoint_hashes(run_b)
    r = cli("train.py", *tiny(tmp_path, input=c, out_dir=tmp_path / "outC", **common))
    assert r.returncode == 2
    assert one_line(r.stderr) == (
        f"train.py: error: dataset 'input' in '{data}' was prepared from {b}, and {c} is another text: give it a "
        f"name of its own with --dataset=NAME (or delete '{data}' to replace it)")
    assert checkpoint_hashes(data) == prepared
    # replaced as that line says; then resuming B is refused: its checkpoint knows the text's sha256
    shutil.rmtree(data)
    r = cli("train.py", *tiny(tmp_path, input=c, out_dir=tmp_path / "outC", **common))
    assert r.returncode == 0, r.stderr
    r = cli("train.py", f"--out_dir={run_b}", f"--data_dir={tmp_path / 'data'}", "--init_from=resume", "--max_iters=6")
    assert r.returncode == 2
    assert one_line(r.stderr) == (
        f"train.py: error: dataset 'input' in {data} is not the text ckpt.safetensors was trained on (it was prepared "
        f"from {c}, the checkpoint's from {b}): delete {data} and resume with --input={b} to prepare it again")
    assert checkpoint_hashes(run_b) == trained_b


# ---- 5: runs preparing one new dataset at once --------------------------------------------------
def test_three_runs_preparing_one_new_dataset_at_once_all_succeed(tmp_path):
    import random

    rng = random.Random(5)
    corpus = tmp_path / "big.txt"  # large enough that preparing it takes a while
    corpus.write_text(" ".join(rng.choice(["alpha", "beta", "gamma", "delta", "zeta"]) for _ in range(250_000)))
    runs = [subprocess.Popen([sys.executable, str(ROOT / "train.py"),
                              *tiny(tmp_path, input=corpus, dataset="big", out_dir=tmp_path / f"out{i}",
                                    eval_only=True, eval_iters=1)],
                             cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(3)]
    results = [(p.communicate(timeout=180), p.returncode) for p in runs]
    for (_, stderr), status in results:
        assert status == 0 and stderr == "", stderr
    assert len({stdout for (stdout, _), _ in results}) == 1  # each evaluated the same prepared data
    assert not [p for p in (tmp_path / "data" / "big").iterdir() if p.name.endswith(".tmp")]


# ---- 6: a meta.json that contradicts the data ---------------------------------------------------
def edit_meta(path, change):
    meta = json.loads(path.read_text())
    change(meta)
    path.write_text(json.dumps(meta))


META_EDITS = {
    "vocab_size 500": (lambda m: m.update(vocab_size=500), "vocab_size 500 is not its tokenizer's 30"),
    "chars cut": (lambda m: m["tokenizer"].update(chars=m["tokenizer"]["chars"][:20]),
                  "vocab_size 30 is not its tokenizer's 20"),
    "a duplicated char": (lambda m: m["tokenizer"]["chars"].__setitem__(1, m["tokenizer"]["chars"][2]),
                          "char tokenizer: character ',' appears twice in the vocabulary"),
}


@pytest.mark.parametrize("edit", list(META_EDITS))
def test_a_meta_json_that_contradicts_the_data_is_refused_at_load(run, edit):
    tmp, out = run
    change, message = META_EDITS[edit]
    meta = tmp / "data" / "tiny" / "meta.json"
    edit_meta(meta, change)
    before = checkpoint_hashes(out)
    for args in (tiny(tmp, input=None, overwrite=True), tiny(tmp, input=None, init_from="resume", max_iters=9)):
        r = cli("train.py", *args)
        assert r.returncode == 2 and r.stdout == ""
        line = one_line(r.stderr)
        assert line.startswith(f"train.py: error: dataset 'tiny' is damaged ('{meta}': {message}")
        assert line.endswith("pass --input=PATH to prepare it again"), line
    assert checkpoint_hashes(out) == before


def test_a_truncated_token_file_is_damaged_not_unprepared(run):
    tmp, out = run
    train_bin = tmp / "data" / "tiny" / "train.bin"
    os.truncate(train_bin, 10)
    r = cli("train.py", *tiny(tmp, input=None, init_from="resume", max_iters=9))
    assert r.returncode == 2
    assert one_line(r.stderr) == (f"train.py: error: dataset 'tiny' is damaged (token file '{train_bin}' has 10 bytes, "
                                  "but meta.json says 2952 uint16 tokens): pass --input=PATH to prepare it again")
