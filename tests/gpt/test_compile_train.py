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
