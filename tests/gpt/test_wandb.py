"""train.py --wandb_log=True: nanoGPT's Weights & Biases calls (checked with a stand-in wandb module, and
end to end with the real one offline when it is installed), and one clear line with exit 2 without it."""
import json
import os
import subprocess
import sys
import types

import pytest

from gpt import trainer

from cli_runner import ROOT, env, one_line, tiny

WANDB_ARGS = dict(wandb_log=True, wandb_project="tiny-proj", wandb_run_name="tiny-run", peak_flops=1e9)


class FakeRun:
    def __init__(self, calls):
        self.calls = calls

    def finish(self):
        self.calls.append(("finish",))


def fake_wandb(calls):
    """A module with wandb's init / log that records its calls."""
    module = types.ModuleType("wandb")
    module.init = lambda **kw: (calls.append(("init", kw)), FakeRun(calls))[1]
    module.log = lambda data: calls.append(("log", data))
    return module


def evaluations(out_dir):
    """The evaluation entries of the run's log.jsonl."""
    lines = (json.loads(line) for line in (out_dir / "log.jsonl").read_text().splitlines())
    return [e for e in lines if "val_loss" in e]


def test_logs_as_nanogpt_does(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "wandb", fake_wandb(calls))
    assert trainer.main(tiny(tmp_path, **WANDB_ARGS)) == 0
    (kind, init), *logs, finish = calls
    assert kind == "init" and finish == ("finish",)
    assert (init["project"], init["name"]) == ("tiny-proj", "tiny-run")
    config = init["config"]
    assert (config["max_iters"], config["n_embd"], config["wandb_log"], config["eval_interval"]) == (6, 16, True, 3)
    json.dumps(config)  # plain values, as nanoGPT's config dict
    evals = evaluations(tmp_path / "out")
    assert [c[0] for c in logs] == ["log"] * len(evals) and [e["iter"] for e in evals] == [0, 3, 6]
    for (_, data), e in zip(logs, evals):
        assert list(data) == ["iter", "train/loss", "val/loss", "lr", "mfu"]
        assert (data["iter"], data["train/loss"], data["val/loss"], data["lr"]) == \
            (e["iter"], e["train_loss"], e["val_loss"], e["lr"])
    # nanoGPT's running MFU before it is measured (from a run's sixth iteration), in percent
    assert logs[0][1]["mfu"] == logs[1][1]["mfu"] == -100.0
    assert 0 < logs[2][1]["mfu"] <= 100


def test_eval_only_logs_its_evaluation(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "wandb", fake_wandb(calls))
    assert trainer.main(tiny(tmp_path, eval_only=True, **WANDB_ARGS)) == 0
    assert [c[0] for c in calls] == ["init", "log", "finish"] and calls[1][1]["iter"] == 0


def test_off_by_default(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "wandb", fake_wandb(calls))
    assert trainer.main(tiny(tmp_path, max_iters=1)) == 0
    assert calls == []


def test_without_wandb_one_line_and_exit_2_before_training(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "wandb", None)  # what a Python without wandb gives: ImportError
    assert trainer.main(tiny(tmp_path, **WANDB_ARGS)) == 2
    assert one_line(capsys.readouterr().err) == ("train.py: error: wandb_log=True needs the wandb package, an "
                                                 "optional extra of minigrad: pip install 'minigrad[wandb]'")
    assert not (tmp_path / "out").exists() and not (tmp_path / "data").exists()  # nothing prepared, nothing trained


SPY = """
import atexit, json, runpy, sys
import wandb
calls, init = [], wandb.init

def spy_init(**kw):
    run = init(**kw)
    calls.append(["init", kw["project"], kw["name"]])
    log = wandb.log  # (init binds wandb.log to the run's)
    wandb.log = lambda data: (calls.append(["log", data]), log(data))[1]
    return run

def dump(path=sys.argv[1]):
    with open(path, "w") as f:
        json.dump(calls, f)

wandb.init = spy_init
atexit.register(dump)
sys.argv = ["train.py"] + sys.argv[2:]
runpy.run_path("train.py", run_name="__main__")
"""


def test_real_wandb_offline(tmp_path):
    pytest.importorskip("wandb")
    calls_file = tmp_path / "calls.json"
    e = dict(env(), WANDB_MODE="offline", WANDB_DIR=str(tmp_path), WANDB_SILENT="true", WANDB_CONSOLE="off")
    done = subprocess.run([sys.executable, "-c", SPY, calls_file, *tiny(tmp_path, **WANDB_ARGS)], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and calls_file.exists(), done.stderr
    calls = json.loads(calls_file.read_text())
    assert calls[0] == ["init", "tiny-proj", "tiny-run"] and [c[1]["iter"] for c in calls[1:]] == [0, 3, 6]
    runs = [d for d in os.listdir(tmp_path / "wandb") if d.startswith("offline-run-")]
    assert len(runs) == 1
    [record] = [f for f in os.listdir(tmp_path / "wandb" / runs[0]) if f.endswith(".wandb")]
    data = (tmp_path / "wandb" / runs[0] / record).read_bytes()
    for key in (b"train/loss", b"val/loss", b"mfu", b"tiny-proj", b"tiny-run"):
        assert key in data  # the run's records hold what was logged, for `wandb sync`
