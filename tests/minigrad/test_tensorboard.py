"""minigrad.utils.tensorboard.SummaryWriter: event files read back with TensorBoard's own EventAccumulator
(skipped without the tensorboard extra), histograms equal to torch's SummaryWriter's, PyTorch's layout of
log dirs, and one clear error line when the extra is missing."""
import os
import re
import socket
import sys

import numpy as np
import pytest

import minigrad
from minigrad.utils.tensorboard import SummaryWriter


def event_files(path):
    return sorted(f for f in os.listdir(path) if f.startswith("events.out.tfevents."))


def test_scalars_read_back(tmp_path, read):
    values = [minigrad.tensor(0.25), minigrad.tensor([1.5], requires_grad=True), np.float64(2.0), 3, 4.75]
    with SummaryWriter(tmp_path) as w:
        for step, v in enumerate(values):
            w.add_scalar("loss/train", v, step * 10, walltime=1000.0 + step)
        w.add_scalar("lr", minigrad.tensor(1e-3, dtype=minigrad.float64), 0, new_style=True, double_precision=True)
    acc = read(tmp_path)
    got = acc.Scalars("loss/train")
    assert [e.step for e in got] == [0, 10, 20, 30, 40] and [e.wall_time for e in got] == [1000.0 + i for i in range(5)]
    assert [e.value for e in got] == [0.25, 1.5, 2.0, 3.0, 4.75]
    [lr] = acc.Tensors("lr")
    assert list(lr.tensor_proto.double_val) == [1e-3]  # float64, not rounded to float32
    assert event_files(tmp_path) and w.all_writers is None  # the context manager closed it


def test_scalar_must_be_one_element(tmp_path, read):
    with SummaryWriter(tmp_path) as w, pytest.raises(AssertionError, match="Tensor should contain one element"):
        w.add_scalar("x", minigrad.zeros(2))


def test_add_scalars_writes_one_run_per_tag(tmp_path, read, TorchWriter):
    with SummaryWriter(tmp_path / "mg") as w:
        for step in range(3):
            w.add_scalars("loss/all", {"train": 1.0 / (step + 1), "val": 2.0 + step}, step)
    with TorchWriter(tmp_path / "th") as w:
        w.add_scalars("loss/all", {"train": 1.0}, 0)
    runs = {d for d in os.listdir(tmp_path / "mg") if not d.startswith("events")}
    assert runs == {"loss_all_train", "loss_all_val"} and event_files(tmp_path / "mg")
    assert {d for d in os.listdir(tmp_path / "th") if not d.startswith("events")} == {"loss_all_train"}  # torch's names
    train, val = read(tmp_path / "mg" / "loss_all_train"), read(tmp_path / "mg" / "loss_all_val")
    assert train.Tags()["scalars"] == val.Tags()["scalars"] == ["loss/all"]  # one chart, two curves
    assert [e.value for e in train.Scalars("loss/all")] == pytest.approx([1.0, 0.5, 1 / 3])
    assert [e.value for e in val.Scalars("loss/all")] == [2.0, 3.0, 4.0]


@pytest.mark.parametrize("bins,max_bins", [("tensorflow", None), (10, None), ("auto", None), (16, 5),
                                           ([-1.0, 0.0, 0.5, 4.0], None)])
def test_histograms_equal_torch(tmp_path, read, torch, TorchWriter, bins, max_bins):
    values = np.random.default_rng(0).standard_normal(500)
    with SummaryWriter(tmp_path / "mg") as w:
        w.add_histogram("w", minigrad.tensor(values, requires_grad=True), 7, bins=bins, max_bins=max_bins)
    with TorchWriter(tmp_path / "th") as w:
        w.add_histogram("w", torch.tensor(values), 7, bins=bins, max_bins=max_bins)
    [got], [want] = read(tmp_path / "mg").Histograms("w"), read(tmp_path / "th").Histograms("w")
    assert got.step == want.step == 7
    assert got.histogram_value == want.histogram_value  # min, max, num, sum, sum_squares, limits, counts
    h = got.histogram_value
    inside = 500 if not isinstance(bins, list) else ((values >= bins[0]) & (values <= bins[-1])).sum()
    assert h.num == 500 and sum(h.bucket) == inside and h.min == values.min() and h.max == values.max()


def test_histogram_of_nothing_is_an_error(tmp_path, read):
    with SummaryWriter(tmp_path) as w, pytest.raises(ValueError, match="The input has no element."):
        w.add_histogram("w", minigrad.zeros(0))


def test_text(tmp_path, read, TorchWriter):
    with SummaryWriter(tmp_path / "mg") as w:
        w.add_text("notes", "**lr** = 3e-4 ✓", 2)
    with TorchWriter(tmp_path / "th") as w:
        w.add_text("notes", "**lr** = 3e-4 ✓", 2)
    got, want = read(tmp_path / "mg"), read(tmp_path / "th")
    assert got.Tags()["tensors"] == want.Tags()["tensors"] == ["notes/text_summary"]
    [g], [t] = got.Tensors("notes/text_summary"), want.Tensors("notes/text_summary")
    assert g.step == 2 and g.tensor_proto == t.tensor_proto
    assert g.tensor_proto.string_val[0].decode() == "**lr** = 3e-4 ✓"
    assert got.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"


def test_flush_writes_before_close(tmp_path, read):
    w = SummaryWriter(tmp_path, flush_secs=3600, max_queue=1000)
    w.add_scalar("x", 1.0, 0)
    w.flush()
    assert [e.value for e in read(tmp_path).Scalars("x")] == [1.0]
    w.close()
    w.close()  # a second close does nothing
    w.add_scalar("x", 2.0, 1)  # after close: a new event file
    w.close()
    assert len(event_files(tmp_path)) == 2
    assert [e.value for e in read(tmp_path).Scalars("x")] == [1.0, 2.0]


def test_purge_step_hides_the_crashed_runs_later_steps(tmp_path, read):
    with SummaryWriter(tmp_path) as w:
        for step in range(10):
            w.add_scalar("loss", float(step), step)
    with SummaryWriter(tmp_path, purge_step=5) as w:  # resumed from a checkpoint at step 5
        for step in range(5, 8):
            w.add_scalar("loss", 100.0 + step, step)
    got = read(tmp_path).Scalars("loss")
    assert [(e.step, e.value) for e in got] == [(s, float(s)) for s in range(5)] + [(s, 100.0 + s) for s in range(5, 8)]


def test_default_log_dir_and_suffix(tmp_path, monkeypatch, read):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1", filename_suffix=".v2") as w:
        w.add_scalar("x", 0.0)
    logdir = w.get_logdir()
    assert re.fullmatch(r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(socket.gethostname()) + r"_lr0\.1",
                        logdir)
    [name] = event_files(tmp_path / logdir)
    assert name.endswith(".v2")


def test_missing_extra_is_one_clear_line(monkeypatch, tmp_path):
    for name in [m for m in sys.modules if m == "tensorboard" or m.startswith("tensorboard.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # what an environment without it gives: ImportError
    with pytest.raises(ImportError) as info:
        SummaryWriter(tmp_path)
    assert str(info.value) == ("SummaryWriter needs the tensorboard package, an optional extra of minigrad: "
                               "pip install 'minigrad[tensorboard]'")
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no second traceback
    assert not os.listdir(tmp_path)
