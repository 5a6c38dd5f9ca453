"""What train.py loads before its first iteration beyond what the step needs: not the process
group's code (minigrad.distributed) nor argparse (gpt.plot's command line), and the backend
errors of a launched run are still told in one line."""
import os
import subprocess
import sys

import pytest

from gpt import distributed, trainer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# a tiny run in a fresh interpreter: at its "iter 1" line, prints which of these modules are loaded
RUN = """
import io, sys
from gpt.trainer import main

WATCHED = ("minigrad.distributed", "argparse")
seen = []


class Watch(io.TextIOBase):
    def write(self, s):
        if s.startswith("iter 1/") and not seen:
            seen.append([m for m in WATCHED if m in sys.modules])
        return sys.__stdout__.write(s)


sys.stdout = Watch()
code = main(sys.argv[1:])
sys.stdout = sys.__stdout__
print("LOADED", seen, code)
"""


def _flags(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog. " * 40)
    return [f"--out_dir={tmp_path / 'out'}", "--dataset=tiny", f"--input={corpus}", f"--data_dir={tmp_path / 'data'}",
            "--n_layer=1", "--n_head=2", "--n_embd=16", "--block_size=8", "--batch_size=2", "--max_iters=1",
            "--eval_interval=1000", "--eval_iters=1", "--log_interval=1", "--progress=False"]


def test_a_plain_run_loads_neither_the_process_group_nor_argparse_before_its_first_iteration(tmp_path):
    out = subprocess.run([sys.executable, "-c", RUN, *_flags(tmp_path)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "LOADED [[]] 0" in out.stdout, out.stdout[-2000:]


def test_backend_errors_are_none_until_the_process_group_code_is_loaded(monkeypatch):
    monkeypatch.delitem(sys.modules, "minigrad.distributed", raising=False)
    assert distributed.backend_errors() == ()
    monkeypatch.undo()
    import minigrad.distributed as dist

    assert distributed.backend_errors() is dist.DistBackendError


def test_a_backend_error_is_still_one_line_and_exit_1(tmp_path, monkeypatch, capsys):
    import minigrad.distributed as dist

    def vanished(*args, **kwargs):
        raise dist.DistBackendError("rank 1 vanished")

    monkeypatch.setattr(trainer, "Trainer", vanished)
    assert trainer.main(_flags(tmp_path)) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["train.py: error: rank 1 vanished"], err


def test_gpt_plot_command_line_still_parses(tmp_path, capsys):
    from gpt import plot

    with pytest.raises(SystemExit) as e:
        plot.main(["--help"])
    assert e.value.code == 0
    assert "OUT_DIR" in capsys.readouterr().out
