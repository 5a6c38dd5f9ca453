"""train.py's first iteration waits for neither the process group's code nor argparse (what a run loads
then: tests/gpt/test_no_checkpoint_code_at_start.py), and the backend errors of a launched run are
still told in one line, gpt.plot's command line still parses."""
import sys

import pytest

from gpt import distributed, trainer


def _flags(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog. " * 40)
    return [f"--out_dir={tmp_path / 'out'}", "--dataset=tiny", f"--input={corpus}", f"--data_dir={tmp_path / 'data'}",
            "--n_layer=1", "--n_head=2", "--n_embd=16", "--block_size=8", "--batch_size=2", "--max_iters=1",
            "--eval_interval=1000", "--eval_iters=1", "--log_interval=1", "--progress=False"]


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
