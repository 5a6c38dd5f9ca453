"""What a run loads before its first iteration: the checkpoint code (zipfile and pickle's reader,
safetensors' writer) waits for the first save, the process group's code (minigrad.distributed) for a launched
run, argparse for gpt.plot's command line; the log, plot and data writers share its atomic writes."""
import os
import subprocess
import sys

from gpt import checkpoint, data, plot, pretrained

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# a tiny run in a fresh interpreter: at its "iter 1" line, prints which of the modules it need not load are loaded
RUN = """
import io, sys
from gpt.trainer import main

NOT_YET = ("minigrad.serialization", "nn.serialization", "safetensors.numpy", "minigrad.distributed", "argparse")
seen = []


class Watch(io.TextIOBase):
    def write(self, s):
        if s.startswith("iter 1/") and not seen:
            seen.append([m for m in NOT_YET if m in sys.modules])
        return sys.__stdout__.write(s)


sys.stdout = Watch()
code = main(sys.argv[1:])
sys.stdout = sys.__stdout__
print("LOADED", seen, code)
"""


def test_a_run_loads_no_checkpoint_process_group_or_parser_code_before_its_first_iteration(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog. " * 40)
    flags = [f"--out_dir={tmp_path / 'out'}", "--dataset=tiny", f"--input={corpus}", f"--data_dir={tmp_path / 'data'}",
             "--n_layer=1", "--n_head=2", "--n_embd=16", "--block_size=8", "--batch_size=2", "--max_iters=2",
             "--eval_interval=1000", "--eval_iters=1", "--log_interval=1", "--progress=False"]
    out = subprocess.run([sys.executable, "-c", RUN, *flags], capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "LOADED [[]] 0" in out.stdout, out.stdout[-2000:]
    assert (tmp_path / "out" / "ckpt.safetensors").exists()  # and the run's end still saves through it


def test_atomic_writes_are_one_mechanism():
    import minigrad.serialization as serialization
    import nn.serialization  # (imported on first use)

    for module in (nn.serialization, checkpoint, data, plot, pretrained):
        assert module.atomic_write is serialization.atomic_write
    assert checkpoint.temporaries is nn.serialization.temporaries is serialization.temporaries
