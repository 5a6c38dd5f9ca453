"""train.py and sample.py end to end: a tiny run, checkpoints, exact resume, sampling, bad input."""
import json

import numpy as np
import pytest

import minigrad
import nn
from gpt import sampling, trainer
from gpt.config import parse_config
from gpt.trainer import Trainer, TrainError

TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n" * 40)


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(TEXT)
    return path


def tiny_args(tmp_path, corpus, **over):
    args = dict(out_dir=tmp_path / "out", dataset="tiny", input=corpus, data_dir=tmp_path / "data",
                n_layer=2, n_head=2, n_embd=16, block_size=16, batch_size=4, max_iters=6, eval_interval=3,
                eval_iters=2, log_interval=1, warmup_iters=2, lr_decay_iters=12, peak_flops=1e9, progress=False,
                dropout=0.1)
    args.update(over)
    return [f"--{k}={v}" for k, v in args.items()]


def run(argv, log=lambda *a: None):
    cfg, _ = parse_config(argv)
    t = Trainer(cfg, log=log)
    t.run()
    return t


def weights(model):
    return {k: v.array.copy() for k, v in model.state_dict().items()}


def test_tiny_training_run_writes_checkpoints_and_log(tmp_path, corpus):
    t = run(tiny_args(tmp_path, corpus, dropout=0.0, max_iters=30, learning_rate=3e-3, lr_decay_iters=30))
    out = tmp_path / "out"
    assert (out / "ckpt.safetensors").exists() and (out / "best.safetensors").exists()
    records = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    evals = [r for r in records if "val_loss" in r]
    assert [r["iter"] for r in evals] == [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30]
    # this repetitive text is easy: the loss must fall well below its starting value
    assert evals[-1]["val_loss"] < evals[0]["val_loss"] - 0.3
    assert t.iter_num == 30
    ckpt = nn.load(out / "ckpt.safetensors")
    assert ckpt["iter_num"] == 30 and ckpt["model_args"]["n_layer"] == 2
    assert ckpt["config"]["batch_size"] == 4


def test_checkpoint_round_trip(tmp_path, corpus):
    t = run(tiny_args(tmp_path, corpus))
    model, ckpt = sampling.load_model(tmp_path / "out")
    for k, v in t.model.state_dict().items():
        assert np.array_equal(model.state_dict()[k].array, v.array), k
    assert ckpt["best_val_loss"] == t.best_val_loss


def test_resume_is_exact(tmp_path, corpus):
    """2N iterations in one run == N iterations, then resumed to 2N: bit for bit (dropout on)."""
    straight = run(tiny_args(tmp_path / "a", corpus, max_iters=8))
    first = run(tiny_args(tmp_path / "b", corpus, max_iters=4))
    assert first.iter_num == 4
    resumed = run(tiny_args(tmp_path / "b", corpus, max_iters=8, init_from="resume"))
    assert resumed.iter_num == 8
    a, b = weights(straight.model), weights(resumed.model)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    sa, sb = straight.optimizer.state_dict()["state"], resumed.optimizer.state_dict()["state"]
    for i in sa:
        assert np.array_equal(sa[i]["exp_avg"].array, sb[i]["exp_avg"].array)


def test_eval_only_reports_the_losses_and_writes_nothing(tmp_path, corpus):
    run(tiny_args(tmp_path, corpus, max_iters=4))
    ckpt = tmp_path / "out" / "ckpt.safetensors"
    before = ckpt.read_bytes()
    lines = []
    t = run(tiny_args(tmp_path, corpus, max_iters=4, init_from="resume", eval_only=True, eval_iters=3), log=lines.append)
    assert t.iter_num == 4
    reported = [line for line in lines if line.startswith("step 4: train loss ")]
    assert len(reported) == 1
    val = float(reported[0].rsplit("val loss ", 1)[1])
    assert np.isfinite(val) and abs(val - t.estimate_loss()["val"]) < 1e-4  # the same batches: the same estimate
    assert ckpt.read_bytes() == before


def test_gradient_accumulation_runs(tmp_path, corpus):
    t = run(tiny_args(tmp_path, corpus, gradient_accumulation_steps=2, max_iters=2))
    assert t.tokens_per_iter == 2 * 4 * 16


def test_resume_errors_are_one_clear_line(tmp_path, corpus, capsys):
    argv = tiny_args(tmp_path, corpus, init_from="resume")
    assert trainer.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not exist" in err[0]


def test_resume_with_a_different_model_shape_is_refused_without_touching_the_checkpoint(tmp_path, corpus):
    run(tiny_args(tmp_path, corpus, max_iters=3))
    ckpt = tmp_path / "out" / "ckpt.safetensors"
    before = ckpt.read_bytes()
    # a corrupted checkpoint gives one clear error and stays as it was
    bad = tmp_path / "out" / "ckpt.safetensors"
    bad.write_bytes(before[: len(before) // 2])
    with pytest.raises(TrainError, match="ckpt.safetensors"):
        run(tiny_args(tmp_path, corpus, init_from="resume", max_iters=6))
    assert bad.read_bytes() == before[: len(before) // 2]


def test_bad_config_values_end_with_one_line(tmp_path, corpus, capsys):
    assert trainer.main(tiny_args(tmp_path, corpus, n_embd=10, n_head=3)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "n_embd" in err[0] and "n_head" in err[0]
    assert trainer.main(["--batch_sise=3"]) == 2
    assert "batch_size" in capsys.readouterr().err
    assert trainer.main(tiny_args(tmp_path, corpus, block_size=4096)) == 2
    assert "4096" in capsys.readouterr().err


def test_help_lists_every_knob(capsys):
    assert trainer.main(["--help"]) == 0
    out = capsys.readouterr().out
    for knob in ("out_dir", "eval_interval", "gradient_accumulation_steps", "lr_decay_iters", "grad_checkpoint",
                 "init_from", "min_lr", "device"):
        assert knob in out


def test_sample_streams_text_from_the_checkpoint(tmp_path, corpus, capsys):
    run(tiny_args(tmp_path, corpus, max_iters=3))
    code = sampling.main([f"--out_dir={tmp_path / 'out'}", "--start=First", "--num_samples=2",
                          "--max_new_tokens=20", "--seed=1"])
    out = capsys.readouterr().out
    assert code == 0
    samples = out.split("---------------")
    assert len(samples) == 3 and samples[0].startswith("First") and len(samples[0]) >= 20
    # the same seed gives the same text
    sampling.main([f"--out_dir={tmp_path / 'out'}", "--start=First", "--num_samples=2", "--max_new_tokens=20",
                   "--seed=1"])
    assert capsys.readouterr().out == out


def test_sample_prompt_from_file_and_errors(tmp_path, corpus, capsys):
    run(tiny_args(tmp_path, corpus, max_iters=3))
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("All:\n")
    assert sampling.main([f"--out_dir={tmp_path / 'out'}", f"--start=FILE:{prompt}", "--num_samples=1",
                          "--max_new_tokens=5"]) == 0
    assert capsys.readouterr().out.startswith("All:\n")
    # a prompt longer than the context: the model sees its last block_size tokens (nanoGPT's way)
    assert sampling.main([f"--out_dir={tmp_path / 'out'}", "--start=" + "a" * 40, "--max_new_tokens=5",
                          "--num_samples=1"]) == 0
    captured = capsys.readouterr()
    assert "longer than the model's context of 16: generating from its last 16" in captured.err
    assert captured.out.startswith("a" * 40) and len(captured.out.split("\n---")[0]) >= 45
    assert sampling.main([f"--out_dir={tmp_path / 'out'}", "--start=Zebra!", "--max_new_tokens=5"]) == 2
    assert "Z" in capsys.readouterr().err
    assert sampling.main([f"--out_dir={tmp_path / 'nowhere'}"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_eval_does_not_move_the_training_batches(tmp_path, corpus):
    cfg, _ = parse_config(tiny_args(tmp_path, corpus))
    t = Trainer(cfg, log=lambda *a: None)
    state = json.dumps(t.sampler.state_dict())
    rng = json.dumps(minigrad.get_rng_state())
    t.estimate_loss()
    assert json.dumps(t.sampler.state_dict()) == state and json.dumps(minigrad.get_rng_state()) == rng


def test_memory_report_flag_prints_saved_bytes_by_module(tmp_path, corpus):
    lines = []
    cfg, _ = parse_config(tiny_args(tmp_path, corpus, memory_report=True, max_iters=1))
    t = Trainer(cfg, log=lines.append)
    report = t.memory_report()
    assert report.total_bytes > 0
    assert any(k.startswith("transformer.h.0") for k in report.by_scope)
    t.run()
    assert any("saved for backward" in line for line in lines)


def test_graph_of_a_gpt_training_step():
    from gpt.viz import training_step
    from minigrad.viz import to_mermaid

    loss, params = training_step()
    text = to_mermaid(loss, params=params)
    assert text.startswith("flowchart TD")
    for name in ("NllLossBackward0", "NativeLayerNormBackward0", "ScaledDotProductAttentionBackward0",
                 "GeluBackward0", "EmbeddingBackward0", "AccumulateGrad"):
        assert name in text
