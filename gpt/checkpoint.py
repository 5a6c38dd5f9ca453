"""A training run's files: its checkpoints (what they hold, written atomically, checked when read)
and its out_dir (never taken over by a fresh run unless asked, one process at a time, and the
temporaries of a save cut off by a kill removed at the next start)."""
import json
import os
import weakref
from pathlib import Path

import minigrad
import nn
from gpt.config import config_to_dict
from gpt.model import GELU_APPROXIMATE
from gpt.plot import PLOT_NAME
from minigrad._atomic_files import atomic_write, temporaries

MODEL_KEYS = ("n_layer", "n_head", "n_embd", "block_size", "bias", "vocab_size", "dropout", "activation")
CKPT_NAME, BEST_NAME, LOG_NAME = "ckpt.safetensors", "best.safetensors", "log.jsonl"
RUN_FILES = (CKPT_NAME, BEST_NAME, LOG_NAME)


class TrainError(RuntimeError):
    """A problem that ends training with one clear line (bad checkpoint, missing out_dir, ...)."""


# ---- checkpoints ------------------------------------------------------------------------------
# entry -> the types it may hold; a file that passes the CRC can still have been written by hand
_ENTRIES = {"model": dict, "model_args": dict, "iter_num": int, "best_val_loss": (int, float), "optimizer": dict,
            "config": dict, "rng": dict, "sampler": dict, "dataset": dict, "ranks": dict}
_RESUME_ENTRIES = ("optimizer", "config", "rng", "sampler")


def load_checkpoint(path, need=()):
    """Read and check a training checkpoint written by `save_checkpoint`; errors name the file.

    need: entries required beyond model, model_args and iter_num (resuming needs optimizer,
    config, rng and sampler)."""
    path = Path(path)
    if not path.exists():
        raise TrainError(f"no checkpoint at {path}")
    try:
        ckpt = nn.load(path)
    except Exception as e:  # nn.load's errors already name the file and the problem
        raise TrainError(str(e)) from None
    if not isinstance(ckpt, dict):
        raise TrainError(f"{path} is not a minigrad training checkpoint (it holds a {type(ckpt).__name__})")
    for key in ("model", "model_args", "iter_num", *need):
        if key not in ckpt:
            raise TrainError(f"{path} is not a minigrad training checkpoint (no '{key}' entry)")
    for key, types in _ENTRIES.items():
        if key in ckpt and (not isinstance(ckpt[key], types) or isinstance(ckpt[key], bool)):
            raise TrainError(f"{path}: entry '{key}' holds a {type(ckpt[key]).__name__}, not a "
                             f"{getattr(types, '__name__', 'number')} (was the file edited?)")
    if ckpt["iter_num"] < 0:
        raise TrainError(f"{path}: entry 'iter_num' is {ckpt['iter_num']} (was the file edited?)")
    _check_model_args(ckpt["model_args"], path)
    bad = [k for k, v in ckpt["model"].items() if not isinstance(v, minigrad.Tensor)]
    if bad:
        raise TrainError(f"{path}: model entry {bad[0]!r} is not a tensor (was the file edited?)")
    return ckpt


def _check_model_args(args, path):
    args.setdefault("activation", "gelu")  # checkpoints written before GPT-2's tanh GELU was an option
    for key in MODEL_KEYS:
        value = args.get(key)
        if key == "activation":
            ok = value in GELU_APPROXIMATE
        elif key == "bias":
            ok = isinstance(value, bool)
        elif key == "dropout":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1
        else:
            ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        if not ok:
            raise TrainError(f"{path}: model argument {key}={value!r} is not valid (was the file edited?)")
    if args["n_embd"] % args["n_head"]:
        raise TrainError(f"{path}: model arguments n_embd={args['n_embd']} and n_head={args['n_head']} do not fit")


def save_checkpoint(path, model, optimizer, cfg, iter_num, best_val_loss, sampler, meta, ranks=None):
    """Write everything needed to resume, atomically (a crash leaves the previous file intact).
    `ranks`: every rank's RNG and sampler state, from a data-parallel run (gpt/distributed.py)."""
    extra = {} if ranks is None else {"ranks": ranks}
    nn.save({
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "model_args": {k: getattr(model.config, k) for k in MODEL_KEYS},
        "config": config_to_dict(cfg),
        "iter_num": iter_num,
        "best_val_loss": best_val_loss,
        "rng": minigrad.get_rng_state(),
        "sampler": sampler.state_dict(),
        "dataset": meta,
        **extra,
    }, path)


def describe_run(out_dir):
    """One phrase on the run in out_dir: its checkpoint's iteration and best val loss."""
    out_dir = Path(out_dir)
    found = [n for n in RUN_FILES if (out_dir / n).exists()]
    for name in (CKPT_NAME, BEST_NAME):
        if name in found:
            try:
                ckpt = load_checkpoint(out_dir / name)
            except TrainError:
                return f"{', '.join(found)}; {name} does not load"
            best = ckpt.get("best_val_loss", float("nan"))
            return f"{name} at iteration {ckpt['iter_num']}, best val loss {best:.4f}"
    return ", ".join(found)


def resume_path(out_dir):
    """The checkpoint a resumed run starts from: ckpt.safetensors, or best.safetensors where a
    kill between a run's first two saves left no ckpt (best is written first, and is as complete)."""
    out_dir = Path(out_dir)
    return out_dir / CKPT_NAME if (out_dir / CKPT_NAME).exists() or not (out_dir / BEST_NAME).exists() \
        else out_dir / BEST_NAME


# ---- checks made before any work ----------------------------------------------------------------

def check_out_dir(cfg):
    """Refuse an out_dir this run must not write to: a file, a missing run to resume, or, for a
    fresh run, an earlier run's checkpoints (unless cfg.overwrite)."""
    out_dir = Path(cfg.out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise TrainError(f"out_dir {out_dir} is a file, not a folder: choose another --out_dir")
    if cfg.init_from == "resume":
        if not out_dir.is_dir():
            raise TrainError(f"cannot resume: out_dir {out_dir} does not exist")
        if not resume_path(out_dir).exists():
            raise TrainError(f"cannot resume: no checkpoint at {out_dir / CKPT_NAME}")
        return
    if cfg.eval_only or cfg.overwrite or not out_dir.is_dir():
        return
    if any((out_dir / n).exists() for n in (CKPT_NAME, BEST_NAME)):
        raise TrainError(f"out_dir {out_dir} already holds a run ({describe_run(out_dir)}): continue it with "
                         "--init_from=resume, choose another --out_dir, or replace it with --overwrite=True")


class _OutDirLock:
    """An exclusive lock on the out_dir folder while this process trains in it (the OS drops it
    when the process ends, even by kill -9); a second train.py in the same out_dir is refused."""

    def __init__(self, out_dir):
        self.fd = None
        try:
            import fcntl
        except ImportError:  # no flock (Windows): no lock
            return
        fd = os.open(out_dir, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise TrainError(f"another process is training in out_dir {out_dir}: wait for it to end, or "
                             "choose another --out_dir") from None
        self.fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)

    def release(self):
        if self.fd is not None:
            self._finalizer()
            self.fd = None


def prepare_out_dir(cfg, log):
    """Create and lock out_dir; remove what a killed run left there (temporaries of a save that
    was cut off) and, for --overwrite, the earlier run's files. Returns the lock."""
    out_dir = Path(cfg.out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        lock = _OutDirLock(out_dir)
    except OSError as e:
        raise TrainError(f"cannot use out_dir {out_dir}: {e.strerror or e}") from None
    for name in (*RUN_FILES, PLOT_NAME):
        for tmp in temporaries(out_dir / name):
            os.unlink(tmp)
            log(f"removed {tmp}, left by a save that was cut off")
    if cfg.init_from != "resume":
        found = [n for n in RUN_FILES if (out_dir / n).exists()]
        if found == [LOG_NAME]:  # check_out_dir let it pass: a run that never saved a checkpoint
            log(f"starting a new {out_dir / LOG_NAME}: the run that wrote the old one saved no checkpoint")
        elif found:
            log(f"--overwrite: replacing the run in {out_dir} ({describe_run(out_dir)})")
        for n in found:
            (out_dir / n).unlink()
    return lock


def trim_log(path, iter_num, log):
    """Drop the records of iterations after `iter_num` from the log at `path`: a resumed run
    continues from its checkpoint, and the iterations a killed run made after it were lost."""
    if not path.exists():
        return
    lines = path.read_text().splitlines(keepends=True)
    # (a last line without its newline was cut off by a kill)
    keep = [line for line in lines if line.endswith("\n") and _record_iter(line) <= iter_num]
    if len(keep) < len(lines):
        try:
            atomic_write(path, lambda tmp: Path(tmp).write_text("".join(keep)))
        except OSError as e:  # a full disk: the log is as it was, and nothing was trained yet
            raise TrainError(f"cannot rewrite {path}: {e.strerror or e} (it is as it was)") from None
        log(f"{path}: dropped {len(lines) - len(keep)} records of iterations after {iter_num}, which the "
            "checkpoint does not hold")


def _record_iter(line):
    try:
        return int(json.loads(line)["iter"])
    except (ValueError, KeyError, TypeError):
        return -1  # not a record of ours: kept


# ---- peak FLOP/s --------------------------------------------------------------------------------
