"""python -m gpt.plot and train.py's OUT_DIR/loss.png: what is read from log.jsonl, the image, bad input."""
import json
import sys

import pytest

from gpt import plot
from gpt.config import parse_config
from gpt.trainer import Trainer

PNG = b"\x89PNG\r\n\x1a\n"


def write_log(out_dir, entries, tail=""):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries) + tail)
    return out_dir


def run_log(evals=(0, 10, 20), tokens_per_iter=64, start=4.0):
    entries = []
    for it in evals:
        entries.append({"iter": it, "train_loss": start - it / 10, "val_loss": start + 0.1 - it / 11,
                        "lr": 1e-3, "tokens": it * tokens_per_iter})
        if it:
            entries.append({"iter": it, "loss": start - it / 10 + 0.05, "lr": 1e-3, "tokens": it * tokens_per_iter})
    return entries


def test_read_log_keeps_the_latest_run_of_each_iteration(tmp_path):
    # a run resumed from iteration 10 (its evaluation there repeats) and a line cut short by a crash
    entries = run_log((0, 10, 20)) + run_log((10, 20, 30), start=3.0)
    runs = plot.read_log(write_log(tmp_path / "a", entries, tail='{"iter": 40, "train_lo'))
    assert [e["iter"] for e in runs["evals"]] == [0, 10, 20, 30]
    assert runs["evals"][0]["train_loss"] == 4.0 and runs["evals"][1]["train_loss"] == 2.0  # the resumed one
    assert [e["iter"] for e in runs["steps"]] == [10, 20, 30]
    # started again from scratch in the same folder: only the new run remains
    runs = plot.read_log(write_log(tmp_path / "b", run_log((0, 10, 20)) + run_log((0, 10))))
    assert [e["iter"] for e in runs["evals"]] == [0, 10]


def test_two_runs_on_one_figure_with_named_axes_and_a_legend_entry_per_run(tmp_path):
    pytest.importorskip("matplotlib")
    a = write_log(tmp_path / "scratch", run_log())
    b = write_log(tmp_path / "finetuned", run_log(tokens_per_iter=1024, start=3.0))
    fig = plot.figure([plot.read_log(a), plot.read_log(b)], ["scratch", "finetuned"])
    by_iter, by_tokens = fig.axes
    assert by_iter.get_xlabel() == "iteration" and by_tokens.get_xlabel() == "tokens seen"
    assert "loss" in by_iter.get_ylabel() and "loss" in by_tokens.get_ylabel()
    (legend,) = fig.legends
    names = [t.get_text() for t in legend.get_texts()]
    for run in ("scratch", "finetuned"):
        assert {f"{run}: train (estimate)", f"{run}: val (estimate)", f"{run}: train, each step"} <= set(names)
    # the tokens axis is the iterations times each run's tokens per iteration
    lines = {line.get_label(): line for line in by_tokens.get_lines()}
    assert list(lines["finetuned: val (estimate)"].get_xdata()) == [0, 10240, 20480]
    assert list(lines["finetuned: val (estimate)"].get_ydata()) == [3.1, 3.1 - 10 / 11, 3.1 - 20 / 11]


def test_cli_writes_a_png(tmp_path, capsys):
    matplotlib_image = pytest.importorskip("matplotlib.image")
    a = write_log(tmp_path / "a", run_log())
    b = write_log(tmp_path / "b", run_log(start=3.0))
    out = tmp_path / "both.png"
    assert plot.main([str(a), str(b), f"--out={out}"]) == 0
    assert out.read_bytes()[:8] == PNG
    height, width, _ = matplotlib_image.imread(out).shape
    assert width > 800 and height > 300


@pytest.mark.parametrize("make, args, message", [
    (lambda d: None, [], "does not exist"),
    (lambda d: d.mkdir(), [], "has no log.jsonl: train.py writes it"),
    (lambda d: write_log(d, [{"iter": 0, "lr": 1e-3}]), [], "holds no losses yet"),
    (lambda d: write_log(d, run_log()), ["--out=loss.xyz"], "cannot write a xyz image"),
    (lambda d: write_log(d, run_log()), ["--out=missing/dir/loss.png"], "does not exist"),
])
def test_cli_bad_input_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, make, args, message):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    make(tmp_path / "run")
    assert plot.main([str(tmp_path / "run"), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpt.plot: error: ") and message in err[0]
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.xyz"))


def tiny_run(tmp_path, log):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("All the world's a stage, and all the men and women merely players. " * 30)
    cfg, _ = parse_config([f"--out_dir={tmp_path / 'out'}", "--dataset=tiny", f"--input={corpus}",
                           f"--data_dir={tmp_path / 'data'}", "--n_layer=1", "--n_head=2", "--n_embd=16",
                           "--block_size=16", "--batch_size=2", "--max_iters=4", "--eval_interval=2", "--eval_iters=1",
                           "--log_interval=1", "--peak_flops=1e9", "--progress=False"])
    Trainer(cfg, log=log).run()
    return tmp_path / "out"


def test_train_py_draws_loss_png_at_each_evaluation(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    drawn = []
    real = plot.write_plot
    monkeypatch.setattr(plot, "write_plot", lambda *a, **k: (drawn.append(a), real(*a, **k)))
    out = tiny_run(tmp_path, log=lambda *a: None)
    assert len(drawn) == 2  # the evaluations at 2 and 4 (step 0's, one point a curve, is not drawn)
    assert (out / "loss.png").read_bytes()[:8] == PNG
    entries = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert all(e["tokens"] == e["iter"] * 2 * 16 for e in entries)


def test_without_matplotlib_training_says_so_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    lines = []
    out = tiny_run(tmp_path, log=lines.append)
    notices = [line for line in lines if "loss.png" in line and "matplotlib" in line]
    assert notices == ["note: no loss.png is drawn without matplotlib: pip install 'minigrad[plot]' (matplotlib)"]
    assert not (out / "loss.png").exists() and (out / "log.jsonl").exists()  # the run went on without it
    assert plot.main([str(out)]) == 2
    assert "drawing needs matplotlib, which is not installed: pip install 'minigrad[plot]'" in capsys.readouterr().err
