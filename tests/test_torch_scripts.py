"""PyTorch scripts of the kinds users bring (tests/scripts/: our own, written in torch form) run on
minigrad with only their import lines changed (`import torch` -> `import minigrad as torch`,
`from torch.X import` -> `from minigrad.X import`), and end near PyTorch's loss.

The two frameworks draw different random numbers from the same seed, so the runs start from
different weights: the bar is the same kind of result (a loss within a band around PyTorch's), not
the same bits. Each script prints `final <loss>` last; some assert more inside (the autograd check,
the word model's reload)."""
import json
import math
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "tests" / "scripts"
TEXT = ROOT.parent / "shared" / "data" / "tinyshakespeare.txt"
IMPORT = re.compile(r"^(\s*)(import|from)\s+torch\b(.*)$")


def to_minigrad(source):
    """The script with its import lines, and only those, pointed at minigrad."""
    out = []
    for line in source.splitlines():
        m = IMPORT.match(line)
        if m:
            indent, word, rest = m.groups()
            if word == "import" and rest == "":
                line = f"{indent}import minigrad as torch"
            else:
                line = f"{indent}{word} minigrad{rest}"
        out.append(line)
    return "\n".join(out) + "\n"


def test_only_import_lines_change():
    src = "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\nx = torch.ones(2)\n"
    assert to_minigrad(src).splitlines() == [
        "import minigrad as torch", "import minigrad.nn as nn", "from minigrad.utils.data import DataLoader",
        "x = torch.ones(2)"]


ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}

# PyTorch's runs: a process that imports torch once, then forks a child per script that runs it as
# `python script args` would (its own process, cwd, argv, sys.path[0], stdout and stderr). Importing
# torch was a large part of each reference run; nothing else is shared, as the parent runs no op.
FORKSERVER = r"""
import json, os, runpy, sys, traceback
import torch
for request in sys.stdin:
    r = json.loads(request)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(r["cwd"])
            for fd, name, mode in ((0, os.devnull, os.O_RDONLY), (1, r["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                   (2, r["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
                os.dup2(os.open(name, mode), fd)
            sys.argv = r["argv"]
            sys.path[0] = os.path.dirname(r["argv"][0])
            runpy.run_path(r["argv"][0], run_name="__main__")
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)
"""


@pytest.fixture(scope="module")
def torch_runner():
    server = subprocess.Popen([sys.executable, "-c", FORKSERVER], env=ENV, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    yield server
    server.stdin.close()
    server.wait(timeout=60)


def run(path, args, tmp_path, framework, torch_runner=None):
    script = tmp_path / f"{framework}_{path.name}"
    source = path.read_text()
    script.write_text(to_minigrad(source) if framework == "minigrad" else source)
    argv = [str(script), *map(str, args)]
    if torch_runner is None:
        done = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                              timeout=600)
        returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    else:
        out, err = tmp_path / f"{framework}.stdout", tmp_path / f"{framework}.stderr"
        request = dict(cwd=str(tmp_path), argv=argv, stdout=str(out), stderr=str(err))
        torch_runner.stdin.write(json.dumps(request) + "\n")
        torch_runner.stdin.flush()
        assert select.select([torch_runner.stdout], [], [], 600)[0], f"{framework} run of {path.name} timed out"
        returncode = json.loads(torch_runner.stdout.readline())
        stdout, stderr = out.read_text(), err.read_text()
    assert returncode == 0, f"{framework} run of {path.name} failed:\n{stdout[-2000:]}\n{stderr[-4000:]}"
    last = [line for line in stdout.splitlines() if line.startswith("final ")]
    assert last, stdout
    return float(last[-1].split()[1]), stdout


def text_or_skip():
    if not TEXT.is_file():
        pytest.skip("../shared/data/tinyshakespeare.txt is not present")
    return TEXT


CASES = {  # name: (script, args, how far from PyTorch's final loss it may end: a ratio)
    "poly_regression": ("poly_regression.py", [], 1.1),
    "names_mlp": ("names_mlp.py", [300], 1.1),
    "names_rnn": ("names_models.py", ["rnn", 40], 1.15),
    "names_gru": ("names_models.py", ["gru", 40], 1.15),
    "names_bow": ("names_models.py", ["bow", 40], 1.15),
    "names_transformer": ("names_models.py", ["transformer", 40], 1.15),
    "names_mlp_module": ("names_models.py", ["mlp", 40], 1.15),
    "lecture_gpt": ("lecture_gpt.py", ["TEXT", 40], 1.1),
    "word_lstm": ("word_lm.py", ["LSTM", "TEXT", 1, "model.pt"], 1.1),
    "word_gru": ("word_lm.py", ["GRU", "TEXT", 1, "model.pt"], 1.1),
    "word_transformer": ("word_lm.py", ["Transformer", "TEXT", 1, "model.pt"], 1.1),
    "lstmcell_lbfgs": ("lstm_lbfgs.py", [1], 10.0),  # one LBFGS step from another start: a loose band
    "autograd_check": ("autograd_check.py", [], None),
    "per_sample": ("per_sample.py", [30], 1.15),  # a tutorial's loops, a sample at a time
    "manual_backprop": ("manual_backprop.py", [10], 1.25),  # asserts its hand-written gradients inside
    # packed sequences, EmbeddingBag, swa_utils, a resumed checkpoint, out=: a loss near 0.1 from another
    # start, so a wider band (it asserts inside that the averaged model learned the classes)
    "text_classifier": ("text_classifier.py", [3], 2.0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_torch_script_runs_with_import_edits_only(name, tmp_path, torch, torch_runner):
    script, args, band = CASES[name]
    if "TEXT" in args:
        args = [text_or_skip() if a == "TEXT" else a for a in args]
    ours, out = run(SCRIPTS / script, args, tmp_path, "minigrad")
    assert math.isfinite(ours), out
    theirs, _ = run(SCRIPTS / script, args, tmp_path, "torch", torch_runner)
    if band is not None:
        assert theirs / band <= ours <= theirs * band, f"minigrad ended at {ours}, PyTorch at {theirs}"


def test_the_tensorboard_log_of_a_script_is_written(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ours, _ = run(SCRIPTS / "names_models.py", ["gru", 10, tmp_path / "runs"], tmp_path, "minigrad")
    acc = EventAccumulator(str(tmp_path / "runs"))
    acc.Reload()
    steps = [e.step for e in acc.Scalars("Loss/train")]
    assert steps == list(range(10))
    assert acc.Scalars("Loss/final")[0].value == pytest.approx(ours, rel=1e-6)
