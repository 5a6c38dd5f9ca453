"""tune_process() and Python's cyclic collector: the collector is paused while it imports numba (no
collection walks numba's new objects), what is alive when it returns is frozen (no later full collection
walks the modules again), the collector's on/off state is the caller's afterwards, and undo() unfreezes."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CODE = """
import gc, sys
import minigrad
{before}
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
tuning = minigrad.backends.tune_process()
gc.callbacks.clear()
print("numba", "numba" in sys.modules, "collections", len(collections), "frozen", gc.get_freeze_count() > 0,
      "enabled", gc.isenabled(), "applied_gc", "gc" in tuning.applied)
tuning.undo()
print("after_undo frozen", gc.get_freeze_count(), "applied", sorted(tuning.applied))
"""


def run(before=""):
    env = dict(os.environ, PYTHONPATH=ROOT, MINIGRAD_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CODE.format(before=before)], capture_output=True, text=True,
                         timeout=300, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_tune_process_freezes_what_is_alive_and_collects_nothing_meanwhile():
    out = run()
    assert "collections 0 " in out  # numba's import (where installed) made no collection run
    assert "frozen True" in out and "applied_gc True" in out
    assert "enabled True" in out
    assert "after_undo frozen 0 applied []" in out


def test_tune_process_leaves_a_disabled_collector_disabled():
    out = run("gc.disable()")
    assert "enabled False" in out
    assert "frozen True" in out


def test_undo_leaves_a_freeze_made_before_it():
    # Python unfreezes all or nothing: undo() must not thaw what the program froze itself
    out = run("gc.freeze()")
    assert "frozen True" in out
    assert "after_undo frozen 0 " not in out
