"""Running programs under `mpiexec -n N` for the tests here, which skip cleanly without mpi4py or mpiexec."""
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKERS = Path(__file__).resolve().parent / "workers.py"
HAVE_MPI = importlib.util.find_spec("mpi4py") is not None and shutil.which("mpiexec") is not None


def mpi_env(**extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MINIGRAD_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env.pop("MINIGRAD_DIST_TIMEOUT", None)
    env.update(extra)
    return env




def launch(n, *args, timeout=60, env=None, launcher=()):
    """`mpiexec [launcher options] -n n python *args` from the worktree root; the CompletedProcess."""
    cmd = ["mpiexec", *launcher, "-n", str(n), sys.executable, *map(str, args)]
    return subprocess.run(cmd, cwd=ROOT, env=env or mpi_env(), capture_output=True, text=True, timeout=timeout)


TRAIN = ROOT / "train.py"
TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n" * 40)


def train_args(tmp_path, out="out", **over):
    """train.py flags for a tiny run on a tiny corpus in tmp_path (prepared by the first run)."""
    corpus = tmp_path / "corpus.txt"
    if not corpus.exists():
        corpus.write_text(TEXT)
    args = dict(out_dir=tmp_path / out, dataset="tiny", input=corpus, data_dir=tmp_path / "data", n_layer=2,
                n_head=2, n_embd=16, block_size=16, batch_size=4, max_iters=6, eval_interval=3, eval_iters=2,
                log_interval=1, warmup_iters=2, lr_decay_iters=12, peak_flops=1e9, progress=False, dropout=0.1,
                gradient_accumulation_steps=2)
    args.update(over)
    return [f"--{k}={v}" for k, v in args.items()]


def start(n, *args, env=None, launcher=()):
    """`mpiexec -n n python *args` in the background, stdout and stderr merged into one pipe."""
    cmd = ["mpiexec", *launcher, "-n", str(n), sys.executable, *map(str, args)]
    return subprocess.Popen(cmd, cwd=ROOT, env=env or mpi_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def read_until(proc, text, timeout=60):
    """Lines of proc's output up to the first that contains `text` (fails after `timeout` s)."""
    import selectors
    import time

    lines, deadline = [], time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if text in line:
                return lines
    proc.kill()
    raise AssertionError(f"no line with {text!r} in:\n" + "".join(lines))


def rank_pid(proc, rank):
    """The pid of rank `rank` among mpiexec `proc`'s descendants (from their PMI_RANK)."""
    todo, seen = [proc.pid], []
    while todo:
        pid = todo.pop()
        seen.append(pid)
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    for pid in seen:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        except OSError:
            continue
        if env.get(b"PMI_RANK") == str(rank).encode() and b"python" in open(f"/proc/{pid}/cmdline", "rb").read():
            return pid
    raise AssertionError(f"rank {rank} not found under pid {proc.pid}")
