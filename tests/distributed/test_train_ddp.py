"""`mpiexec -n 2 python train.py`: exact resume, checkpoints across 1 and 2 ranks, one-line refusals,
and faults (Ctrl-C, SIGTERM, a killed rank, a rank that raises) that end the job in seconds."""
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import nn
from _mpi_launch import HAVE_MPI, ROOT, TRAIN, WORKERS, mpi_env, rank_pid, read_until, start, train_args

pytestmark = pytest.mark.skipif(not HAVE_MPI, reason="mpi4py or mpiexec is not installed (pip install -e '.[mpi]')")


def model_of(path):
    return {k: v.numpy() for k, v in nn.load(path)["model"].items()}


def errors(proc):
    return [line for line in (proc.stdout + proc.stderr).splitlines() if "error" in line]


def test_resume_under_two_ranks_is_bit_exact(mpirun, tmp_path):
    straight = mpirun(2, TRAIN, *train_args(tmp_path, "a", max_iters=8))
    assert straight.returncode == 0, straight.stdout + straight.stderr
    assert straight.stdout.count("iter 8/8") == 1  # rank 0 alone prints
    first = mpirun(2, TRAIN, *train_args(tmp_path, "b", max_iters=4))
    assert first.returncode == 0, first.stdout + first.stderr
    resumed = mpirun(2, TRAIN, *train_args(tmp_path, "b", max_iters=8, init_from="resume"))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming from" in resumed.stdout and resumed.stdout.count("resuming from") == 1
    a, b = nn.load(tmp_path / "a" / "ckpt.safetensors"), nn.load(tmp_path / "b" / "ckpt.safetensors")
    assert a["iter_num"] == b["iter_num"] == 8 and a["ranks"]["world_size"] == 2
    for k in a["model"]:
        assert np.array_equal(a["model"][k].numpy(), b["model"][k].numpy()), k
    assert a["ranks"]["sampler"] == b["ranks"]["sampler"] and a["ranks"]["rng"] == b["ranks"]["rng"]
    # the two ranks drew different batches (seed + rank), and rank 0's state is the file's own
    assert a["ranks"]["sampler"][0] != a["ranks"]["sampler"][1] and a["sampler"] == a["ranks"]["sampler"][0]

    # the 2-rank checkpoint's model loads in one process (sample.py's loader) ...
    from gpt import sampling

    model, _ = sampling.load_model(tmp_path / "a")
    for k, v in model.state_dict().items():
        assert np.array_equal(v.numpy(), a["model"][k].numpy()), k
    # ... but resuming its training in one process is refused with one line
    one = subprocess.run([sys.executable, str(TRAIN), *train_args(tmp_path, "a", max_iters=10, init_from="resume")],
                         cwd=ROOT, env=mpi_env(), capture_output=True, text=True, timeout=60)
    assert one.returncode == 2 and errors(one) == [
        f"train.py: error: {tmp_path / 'a' / 'ckpt.safetensors'} was written by 2 ranks and this run has 1: resume "
        "it with `mpiexec -n 2 python train.py ...` (each rank's batches continue from its own saved state)"]


def test_a_single_process_checkpoint_loads_under_two_ranks_but_does_not_resume(mpirun, tmp_path):
    one = subprocess.run([sys.executable, str(TRAIN), *train_args(tmp_path, max_iters=3)], cwd=ROOT, env=mpi_env(),
                         capture_output=True, text=True, timeout=60)
    assert one.returncode == 0, one.stdout + one.stderr
    loaded = mpirun(2, WORKERS, "load_into_ddp", tmp_path, tmp_path / "out" / "ckpt.safetensors")
    assert loaded.returncode == 0 and sorted(p.name for p in tmp_path.glob("ok_*")) == ["ok_0", "ok_1"], \
        loaded.stdout + loaded.stderr
    resumed = mpirun(2, TRAIN, *train_args(tmp_path, max_iters=6, init_from="resume"))
    assert resumed.returncode == 2 and len(errors(resumed)) == 1, resumed.stdout + resumed.stderr
    assert "was written by 1 process and this run has 2: resume it with `python train.py ...`" in resumed.stderr


def test_the_default_accumulation_runs_under_two_ranks_and_says_the_global_batch(mpirun, tmp_path):
    # no --gradient_accumulation_steps: the default 1, one micro-batch on each rank
    args = [a for a in train_args(tmp_path, max_iters=2) if not a.startswith("--gradient_accumulation_steps=")]
    proc = mpirun(2, TRAIN, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = [line for line in proc.stdout.splitlines() if line.startswith("data-parallel: ")]
    assert said == ["data-parallel: 2 ranks x 1 micro-batch x 4 sequences = a global batch of 8 sequences (128 "
                    "tokens) per iteration (gradient_accumulation_steps=1 rounded up to 2, a multiple of the ranks)"]
    assert "128 tokens per iteration" in proc.stdout.splitlines()[0]
    ckpt = nn.load(tmp_path / "out" / "ckpt.safetensors")
    assert ckpt["iter_num"] == 2 and ckpt["ranks"]["world_size"] == 2
    # each rank drew its own batches: one per iteration
    assert [s["batches_drawn"] for s in ckpt["ranks"]["sampler"]] == [2, 2]


def test_config_errors_under_two_ranks_are_one_line(mpirun, tmp_path):
    bad = mpirun(2, TRAIN, *train_args(tmp_path, n_layr=3))
    assert bad.returncode == 2 and len(errors(bad)) == 1 and "n_layr" in bad.stderr


def test_ranks_with_different_configs_are_caught_at_start(mpirun, tmp_path):
    proc = mpirun(2, WORKERS, "train_differing", tmp_path, *train_args(tmp_path))
    assert proc.returncode == 2 and errors(proc) == [
        "train.py: error: rank 1's configuration differs from rank 0's: n_layer=3 on rank 1, 2 on rank 0"]


def _long_run(tmp_path, **over):
    args = dict(max_iters=100000, eval_interval=100000, lr_decay_iters=100000)
    args.update(over)
    return train_args(tmp_path, **args)


@pytest.mark.parametrize("how", ["SIGINT to mpiexec", "SIGTERM to rank 1"])
def test_ctrl_c_on_any_rank_stops_all_with_one_checkpoint(tmp_path, how):
    proc = start(2, TRAIN, *_long_run(tmp_path))
    read_until(proc, "iter 3/")
    t0 = time.monotonic()
    sig = signal.SIGTERM if "SIGTERM" in how else signal.SIGINT
    os.kill(proc.pid if "mpiexec" in how else rank_pid(proc, 1), sig)
    out, _ = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 30
    assert proc.returncode == 128 + sig, out  # the shell's status for the signal, after saving (issue 21)
    assert out.count("stopped: saved") == 1, out
    ckpt = nn.load(tmp_path / "out" / "ckpt.safetensors")
    assert 3 <= ckpt["iter_num"] < 100000 and ckpt["ranks"]["world_size"] == 2


def test_a_rank_that_raises_ends_the_job_naming_it(tmp_path):
    proc = start(2, WORKERS, "train_raising", tmp_path, *_long_run(tmp_path))
    t0 = time.monotonic()
    out, _ = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 30 and proc.returncode != 0
    # (the ranks' output reaches the pipe in chunks: a line of one may run into a line of the other)
    assert "train.py: error: rank 1: injected fault at iteration 3\n" in out.replace("3iter", "3\niter"), out
    assert "train.py: error: rank 1 failed: TrainError: injected fault at iteration 3" in out, out
    assert out.count("train.py: error") == 2, out


def test_a_killed_rank_ends_the_job(tmp_path):
    """With MPICH's launcher cleanup (it SIGKILLs the others, its banner naming a rank's pid) and without
    it (the others notice). Whichever comes first, the job ends, and a survivor that speaks names
    the dead rank in one line; MPICH itself may end a survivor whose collective meets the dead peer
    before the survivor's check does, and then only MPICH and hydra speak."""
    for launcher in ((), ("-disable-auto-cleanup",)):
        proc = start(2, TRAIN, *_long_run(tmp_path, out=f"out{len(launcher)}"), launcher=launcher)
        read_until(proc, "iter 3/")
        t0 = time.monotonic()
        victim, survivor = rank_pid(proc, 1), rank_pid(proc, 0)
        os.kill(victim, signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        assert time.monotonic() - t0 < 30 and proc.returncode != 0, out
        said = [line for line in out.splitlines() if "train.py: error" in line]
        # the line is written whole (one write, its newline included); hydra forwards a rank's output
        # through its proxy, and its banner has been seen printed before that line's newline, on the
        # same line: what follows the line is the launcher's, the line itself must be exactly ours
        ours = re.compile(rf"train\.py: error: rank 1 \(pid {victim}\) died(YOUR APPLICATION TERMINATED .*)?")
        assert len(said) <= 1 and all(ours.fullmatch(line) for line in said), out
        if not launcher:  # without its cleanup, hydra's own messages vary (a broken pipe to the dead rank ...)
            # hydra's banner names the first rank it reaps: the victim, or the survivor its cleanup killed
            assert said or any(f"PID {pid} RUNNING AT" in out for pid in (victim, survivor)), out
