"""train.py --compile=True: the same run as eager, bit for bit, with the steps replayed."""
import numpy as np

from gpt.config import parse_config
from gpt.trainer import Trainer

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n" * 40


def _run(tmp_path, compile):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT)
    args = dict(out_dir=tmp_path / f"out{compile}", dataset="tiny", input=corpus, data_dir=tmp_path / "data",
                n_layer=2, n_head=2, n_embd=16, block_size=16, batch_size=4, max_iters=5, eval_interval=2,
                eval_iters=2, log_interval=1, warmup_iters=2, lr_decay_iters=12, peak_flops=1e9, progress=False,
                dropout=0.1, gradient_accumulation_steps=2, compile=compile)
    cfg, notices = parse_config([f"--{k}={v}" for k, v in args.items()])
    assert not any("compile" in n for n in notices)
    lines = []
    t = Trainer(cfg, log=lines.append)
    t.run()
    losses = [e for e in lines if "loss" in str(e)]
    return t, {k: v.array.copy() for k, v in t.model.state_dict().items()}, losses


def test_compiled_training_equals_eager(tmp_path):
    _, eager, eager_log = _run(tmp_path, False)
    t, comp, comp_log = _run(tmp_path, True)
    assert eager.keys() == comp.keys()
    for k in eager:
        assert np.array_equal(eager[k], comp[k]), k
    strip = [str(e).split(" time")[0].split(", ")[0] for e in eager_log]
    assert strip == [str(e).split(" time")[0].split(", ")[0] for e in comp_log]
    assert t.micro_step.stats.replays >= 8 and t.micro_step.stats.captures == 1
    assert t.eval_step.stats.replays >= 1


def test_compiled_model_with_backward_outside_trains_as_eager():
    """nanoGPT's own use of torch.compile: `model = compile(model)`, the loss's backward and AdamW outside."""
    import warnings

    import minigrad
    from gpt.model import GPT, GPTConfig
    from minigrad.compiler import RecompileWarning

    cfg = GPTConfig(block_size=16, vocab_size=40, n_layer=2, n_head=2, n_embd=16, dropout=0.1, bias=True)
    rng = np.random.default_rng(0)
    batches = [(minigrad.tensor(rng.integers(0, 40, (3, 16))), minigrad.tensor(rng.integers(0, 40, (3, 16))))
               for _ in range(4)]
    runs = []
    for compiled in (False, True):
        minigrad.manual_seed(0)
        model = GPT(cfg)
        fwd = minigrad.compile(model) if compiled else model
        opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
        log = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecompileWarning)  # (an evaluation's grad mode: a program of its own)
            for x, y in batches:
                logits, loss = fwd(x, y)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                model.eval()
                with minigrad.no_grad():
                    log.append((loss.item(), fwd(x, y)[1].item()))
                model.train()
        runs.append((log, {k: v.array.copy() for k, v in model.state_dict().items()}, logits.grad_fn.name()))
    (eager_log, eager_state, _), (log, state, node) = runs
    assert log == eager_log
    assert all(np.array_equal(eager_state[k], state[k]) for k in eager_state)
    assert node == "CompiledFunctionBackward" and fwd._compiled.stats.replays == 6


def test_resuming_across_compile_modes_is_exact(tmp_path):
    """A run trained eagerly and resumed with --compile=True, and the reverse, end bit for bit where a
    straight eager run does: checkpoint (model, AdamW, RNG, sampler) and the losses logged after the resume."""
    import json

    import nn
    from cli_runner import tiny
    from test_resume import same

    def train(out, compile, max_iters, resume=False):
        flags = dict(out_dir=tmp_path / out, max_iters=max_iters, compile=compile, dropout=0.1,
                     gradient_accumulation_steps=2, grad_clip=0.05, eval_interval=2, always_save_checkpoint=True)
        cfg, _ = parse_config(tiny(tmp_path, **flags, **({"init_from": "resume"} if resume else {})))
        Trainer(cfg, log=lambda msg: None).run()

    def losses(out):
        records = [json.loads(line) for line in (tmp_path / out / "log.jsonl").read_text().splitlines()]
        return [(r["iter"], r.get("loss"), r.get("val_loss")) for r in records if r["iter"] > 3]

    train("straight", False, 6)
    want = nn.load(tmp_path / "straight" / "ckpt.safetensors")
    for first, then in ((False, True), (True, False)):
        out = f"{first}-{then}"
        train(out, first, 3)
        train(out, then, 6, resume=True)
        got = nn.load(tmp_path / out / "ckpt.safetensors")
        assert got["iter_num"] == 6
        for key in ("model", "optimizer", "rng", "sampler", "best_val_loss"):
            same(want[key], got[key], key)
        assert losses(out) == losses("straight") and len(losses(out)) >= 3

