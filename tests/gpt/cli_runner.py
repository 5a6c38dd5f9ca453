"""Running train.py and sample.py as a user does: a fresh Python process from the repository root."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n" * 40)


def env():
    e = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    e.pop("PYTHONWARNINGS", None)
    return e


def cli(script, *args, timeout=120, extra_env=None, **kw):
    """Run `python script args...` (with `extra_env` added to the environment); returns the
    CompletedProcess (text stdout and stderr)."""
    return subprocess.run([sys.executable, str(ROOT / script), *map(str, args)], cwd=ROOT,
                          env={**env(), **(extra_env or {})}, capture_output=True, text=True, timeout=timeout, **kw)


def popen(script, *args, **kw):
    return subprocess.Popen([sys.executable, str(ROOT / script), *map(str, args)], cwd=ROOT, env=env(), **kw)


def tiny(tmp, **over):
    """Flags of a tiny run on TEXT (written to tmp/corpus.txt) with its data and out_dir under tmp."""
    tmp = Path(tmp)
    corpus = tmp / "corpus.txt"
    if not corpus.exists():
        tmp.mkdir(parents=True, exist_ok=True)
        corpus.write_text(TEXT)
    args = dict(out_dir=tmp / "out", dataset="tiny", input=corpus, data_dir=tmp / "data", n_layer=1, n_head=2,
                n_embd=16, block_size=16, batch_size=4, max_iters=6, eval_interval=3, eval_iters=2, log_interval=1,
                warmup_iters=2, lr_decay_iters=12, progress=False)
    args.update(over)
    return [f"--{k}={v}" for k, v in args.items() if v is not None]


def checkpoint_hashes(out_dir):
    """{name: sha256} of every file in out_dir (checkpoints, log, temporaries)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(out_dir).iterdir()) if p.is_file()}


COMPILING = "minigrad: compiling CPU kernels for this machine"  # said once where numba's disk cache is cold


def one_line(text):
    """The single non-empty line of `text` (asserts there is exactly one), besides the notice that kernels
    are compiling: a cold cache's, whichever test first runs a kernel says it."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith(COMPILING)]
    assert len(lines) == 1, lines
    return lines[0]


def edit_tree(path, change, recompute_crc=False):
    """Rewrite the checkpoint at `path` with its object tree changed by `change(tree)`: a hand edit
    (by default leaving the tree's CRC as it was, as an editor would)."""
    import zlib

    import safetensors
    import safetensors.numpy

    with safetensors.safe_open(str(path), framework="np") as f:
        meta = dict(f.metadata())
        arrays = {k: f.get_tensor(k) for k in f.keys()}
    tree = json.loads(meta["minigrad.tree"])
    change(tree)
    meta["minigrad.tree"] = json.dumps(tree)
    if recompute_crc:
        meta["minigrad.tree_crc32"] = f"{zlib.crc32(meta['minigrad.tree'].encode()):08x}"
    safetensors.numpy.save_file(arrays, str(path), metadata=meta)
