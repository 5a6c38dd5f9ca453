"""kill -9 at random moments, half of them in the middle of a checkpoint's write: no checkpoint is
ever lost or unloadable, each restart resumes from the checkpoint's iteration, the next start
removes what a cut-off save left, and the run ends where one never killed does (issue 21)."""
import os
import random
import signal
import subprocess
import time

import numpy as np
import pytest
from cli_runner import cli, popen, tiny

import nn
from gpt.trainer import _RESUME_ENTRIES, load_checkpoint
from nn.serialization import temporaries

KILLS = 12


CHECKPOINTS = ("ckpt.safetensors", "best.safetensors")


def stale(out, names=(*CHECKPOINTS, "log.jsonl")):
    """The temporaries of the saves (of `names`) now under way or cut off."""
    return {p for name in names for p in temporaries(out / name)}


def wait_for(predicate, timeout=60.0, every=0.0005):
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(every)


def writing(out, before, n):
    """A predicate: true while the n-th checkpoint write since `before` is under way."""
    seen = set()

    def check():
        now = stale(out, CHECKPOINTS) - before
        seen.update(now)
        return len(seen) >= n and bool(now)

    return check


def stop_in_a_write(p, out, before, n):
    """Freeze `p` (SIGSTOP) in the middle of a checkpoint's write, its n-th since `before` or a
    later one. A write can end between seeing its temporary and the signal, so a stop that finds
    no temporary lets the process go on to its next write: the kill that follows lands mid-write
    however fast or slow the machine is."""
    check = writing(out, before, n)
    while True:
        wait_for(check)
        p.send_signal(signal.SIGSTOP)
        _, status = os.waitpid(p.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), status
        if stale(out, CHECKPOINTS) - before:
            return
        p.send_signal(signal.SIGCONT)


@pytest.mark.slow
def test_kill_9_at_random_moments_never_loses_a_checkpoint(tmp_path):
    rng = random.Random(21)
    out = tmp_path / "out"
    # a checkpoint at every second iteration, so that saves are frequent enough to be hit
    args = tiny(tmp_path, max_iters=10**6, eval_interval=2, eval_iters=1, log_interval=10**6, lr_decay_iters=10**6,
                always_save_checkpoint=True, dropout=0.1)
    first = popen("train.py", *args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: (out / "ckpt.safetensors").exists())
    first.kill()
    first.wait()

    during_write = left_behind = 0
    for k in range(KILLS):
        expected = load_checkpoint(out / "ckpt.safetensors", need=_RESUME_ENTRIES)["iter_num"]
        before = stale(out)
        p = popen("train.py", *args, "--init_from=resume", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if k % 4 == 1:  # at a random moment from the start: importing, loading, training or saving
            time.sleep(rng.uniform(0.0, 2.0))
        else:
            line = p.stdout.readline()
            while line.startswith("removed "):
                line = p.stdout.readline()
            assert line.startswith(f"resuming from {out / 'ckpt.safetensors'} at iteration {expected}"), line
            assert not before & stale(out)  # what the last kill left is gone
            if k % 4 == 3:  # at a random moment of training
                time.sleep(rng.uniform(0.0, 0.5))
            else:  # while the first, second or third checkpoint of this start is being written
                stop_in_a_write(p, out, before, rng.randrange(1, 4))
                during_write += 1
        p.send_signal(signal.SIGKILL)
        stdout, stderr = p.communicate(timeout=60)
        assert p.returncode == -signal.SIGKILL, stderr
        if "resuming from" in stdout:
            assert f"at iteration {expected}" in stdout and not before & stale(out)
        left_behind += bool(stale(out, CHECKPOINTS) - before)
        for name in ("ckpt.safetensors", "best.safetensors"):  # both load after every kill
            if (out / name).exists():
                load_checkpoint(out / name, need=_RESUME_ENTRIES)
    assert during_write == KILLS // 2 and left_behind >= during_write  # saves really were cut off

    # a last, uninterrupted run to a few iterations on: it cleans up, and ends where a run never
    # killed ends, bit for bit
    end = load_checkpoint(out / "ckpt.safetensors")["iter_num"] + 4
    done = cli("train.py", *args, "--init_from=resume", f"--max_iters={end}")
    assert done.returncode == 0, done.stderr
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]
    # (evaluating and saving less often changes nothing in the training streams)
    straight = cli("train.py", *args, f"--out_dir={tmp_path / 'straight'}", f"--max_iters={end}",
                   f"--eval_interval={end}")
    assert straight.returncode == 0, straight.stderr
    a, b = nn.load(out / "ckpt.safetensors"), nn.load(tmp_path / "straight" / "ckpt.safetensors")
    assert a["iter_num"] == b["iter_num"] == end
    for name, t in a["model"].items():
        assert np.array_equal(t.array, b["model"][name].array), name
