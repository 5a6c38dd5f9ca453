"""The training loop behind train.py: nanoGPT's loop on minigrad, with exact resume.

Each iteration: zero_grad, forward and backward over `gradient_accumulation_steps` micro-batches,
clip, step, at a warmup-then-cosine learning rate. Every `eval_interval` iterations (and at the
end) the train and val losses are estimated under no_grad in eval mode and checkpoints are
written: `ckpt.safetensors` (the latest) and `best.safetensors` (best val loss so far).

A checkpoint holds the model, optimizer state, config, iteration, best val loss, and the RNG and
batch-sampler state, so `init_from="resume"` continues exactly where the run stopped: a run of
2N iterations and one of N resumed to 2N end with the same weights, bit for bit.
"""
import json
import math
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

import minigrad
import nn
from gpt.config import ConfigError
from gpt.data import BatchSampler, DataError, Dataset, prepare_dataset
from gpt.distributed import Distributed, Shared
from gpt.model import GPT, GPTConfig, measure_peak_flops
from nn.optim.lr_scheduler import warmup_cosine_lr

MODEL_KEYS = ("n_layer", "n_head", "n_embd", "block_size", "bias", "vocab_size", "dropout")
CKPT_NAME, BEST_NAME = "ckpt.safetensors", "best.safetensors"


class TrainError(RuntimeError):
    """A problem that ends training with one clear line (bad checkpoint, missing out_dir, ...)."""


def load_checkpoint(path):
    """Read a training checkpoint written by `save_checkpoint`; errors name the file."""
    path = Path(path)
    if not path.exists():
        raise TrainError(f"no checkpoint at {path}")
    try:
        ckpt = nn.load(path)
    except Exception as e:  # nn.load's errors already name the file and the problem
        raise TrainError(str(e)) from None
    for key in ("model", "model_args", "iter_num"):
        if key not in ckpt:
            raise TrainError(f"{path} is not a minigrad training checkpoint (no '{key}' entry)")
    return ckpt


def save_checkpoint(path, model, optimizer, cfg, iter_num, best_val_loss, sampler, meta, ranks=None):
    """Write everything needed to resume, atomically (a crash leaves the previous file intact).
    `ranks`: every rank's RNG and sampler state, from a data-parallel run (gpt/distributed.py)."""
    extra = {} if ranks is None else {"ranks": ranks}
    nn.save({
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "model_args": {k: getattr(model.config, k) for k in MODEL_KEYS},
        "config": asdict(cfg),
        "iter_num": iter_num,
        "best_val_loss": best_val_loss,
        "rng": minigrad.get_rng_state(),
        "sampler": sampler.state_dict(),
        "dataset": meta,
        **extra,
    }, path)


class Trainer:
    """Holds the model, optimizer, data and loop state of one training run."""

    def __init__(self, cfg, log=None, dist=None):
        self.cfg = cfg
        # data-parallel (gpt/distributed.py): rank 0 alone logs; a failed setup fails on every rank
        self.dist = dist or Distributed()
        self.log = (log or (lambda msg: print(msg, flush=True))) if self.dist.master else (lambda msg: None)
        self.out_dir = Path(cfg.out_dir)
        self.stop_requested = False  # the ranks' agreed decision, taken once per iteration
        self.interrupted = False  # this process saw Ctrl-C (or the launcher's SIGTERM)
        self.dist.together(self._prepare_data, rank0_first=True)  # rank 0 writes the dataset, the others read it
        self.dist.together(self._setup)
        self.train_model = self.dist.wrap(self.model)  # DDP under several ranks, else the model

    # ---- setup --------------------------------------------------------------------------
    def _setup(self):
        cfg = self.cfg
        resume = cfg.init_from == "resume"
        ckpt = None
        if resume:
            if not self.out_dir.is_dir():
                raise TrainError(f"cannot resume: out_dir {self.out_dir} does not exist")
            ckpt = load_checkpoint(self.out_dir / CKPT_NAME)

        path = self._prepare_data()
        self.dataset = Dataset.load(path)
        self.dataset.check_block_size(cfg.block_size)
        self.meta = self.dataset.meta

        model_args = {k: getattr(cfg, k) for k in MODEL_KEYS if k != "vocab_size"}
        model_args["vocab_size"] = self.dataset.vocab_size
        if ckpt is not None:
            saved = ckpt["model_args"]
            # the architecture comes from the checkpoint; say so when the flags disagree
            for k in MODEL_KEYS:
                if k in saved and k != "dropout" and saved[k] != model_args.get(k):
                    self.log(f"note: {k}={saved[k]} from the checkpoint (config said {model_args.get(k)})")
                    model_args[k] = saved[k]
            if saved.get("vocab_size") != self.dataset.vocab_size:
                raise TrainError(
                    f"the checkpoint's vocabulary ({saved.get('vocab_size')}) differs from dataset "
                    f"{cfg.dataset!r} ({self.dataset.vocab_size}): resume with the dataset it was trained on"
                )
        minigrad.manual_seed(self.dist.seed(cfg.seed))  # seed + rank
        self.model = GPT(GPTConfig(grad_checkpoint=cfg.grad_checkpoint, **model_args))
        if cfg.device != "cpu":
            self.model.to(cfg.device)
        self.optimizer = self.model.configure_optimizers(cfg.weight_decay, cfg.learning_rate, (cfg.beta1, cfg.beta2))
        self.sampler = BatchSampler(self.dataset, cfg.batch_size, self.model.config.block_size,
                                    seed=self.dist.seed(cfg.seed))
        self.iter_num = 0
        self.best_val_loss = float("inf")
        if ckpt is not None:
            try:
                self.model.load_state_dict(ckpt["model"])
                self.optimizer.load_state_dict(ckpt["optimizer"])
            except (RuntimeError, ValueError, KeyError) as e:
                raise TrainError(f"checkpoint {self.out_dir / CKPT_NAME} does not fit this model: {e}") from None
            self.iter_num = int(ckpt["iter_num"])
            self.best_val_loss = float(ckpt["best_val_loss"])
            rng, sampler = self.dist.restore_states(ckpt, self.out_dir / CKPT_NAME)  # this rank's
            self.sampler.load_state_dict(sampler)
            minigrad.set_rng_state(rng)
            self.log(f"resuming from {self.out_dir / CKPT_NAME} at iteration {self.iter_num}")
        self.peak_flops = cfg.peak_flops or measure_peak_flops(cfg.device)
        self.tokens_per_iter = cfg.gradient_accumulation_steps * cfg.batch_size * self.model.config.block_size

    def _prepare_data(self):
        cfg = self.cfg
        return prepare_dataset(cfg.dataset, data_dir=cfg.data_dir, input=cfg.input or None,
                               tokenizer=_tokenizer_arg(cfg), ranks_path=getattr(cfg, "gpt2_tiktoken", None) or None)

    # ---- pieces of the loop -------------------------------------------------------------
    def lr_at(self, it):
        cfg = self.cfg
        if not cfg.decay_lr:
            return cfg.learning_rate
        return warmup_cosine_lr(it, cfg.learning_rate, cfg.warmup_iters, cfg.lr_decay_iters, cfg.min_lr)

    @minigrad.no_grad()
    def estimate_loss(self):
        """Mean loss over eval_iters batches of each split, in eval mode.

        The batches come from their own generator, seeded by the iteration, so evaluating never
        changes the training batches (that is what makes resume exact)."""
        out = {}
        self.model.eval()
        for split in ("train", "val"):
            sampler = BatchSampler(self.dataset, self.cfg.batch_size, self.model.config.block_size,
                                   seed=self.cfg.seed + 1 + self.iter_num)
            losses = np.zeros(self.cfg.eval_iters)
            for k in range(self.cfg.eval_iters):
                x, y = sampler.get_batch(split)
                _, loss = self.model(minigrad.tensor(x, device=self.cfg.device),
                                     minigrad.tensor(y, device=self.cfg.device))
                losses[k] = loss.item()
            out[split] = float(losses.mean())
        self.model.train()
        return out

    def train_step(self, lr):
        """One optimizer step over gradient_accumulation_steps micro-batches; returns the loss."""
        cfg = self.cfg
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        total = 0.0
        steps = self.dist.micro_steps(cfg)  # this rank's share of gradient_accumulation_steps
        for micro in range(steps):
            x, y = self.sampler.get_batch("train")
            x = minigrad.tensor(x, device=cfg.device)
            y = minigrad.tensor(y, device=cfg.device)
            self.dist.sync_gradients(micro == steps - 1)
            _, loss = self.train_model(x, y)
            loss = loss / steps
            loss.backward()
            total += loss.item()
        if cfg.grad_clip != 0.0:
            nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return total

    def memory_report(self):
        """The bytes one training step keeps for backward, by node type and by module (the report
        is taken before backward; the step is then undone: no gradient is applied)."""
        from minigrad.memory import module_scopes, saved_tensors_report

        x, y = self.sampler.get_batch("train")
        state = self.sampler.state_dict()
        with module_scopes(self.model):
            _, loss = self.model(minigrad.tensor(x, device=self.cfg.device), minigrad.tensor(y, device=self.cfg.device))
        report = saved_tensors_report(loss)
        del loss  # frees the graph: nothing was trained
        self.sampler.load_state_dict(state)
        return report

    def save(self, *names):
        """Write the checkpoint under each name (default ckpt.safetensors). With several ranks every
        rank calls this (it gathers their RNG and sampler states); rank 0 writes, the others wait."""
        ranks = self.dist.gather_states(minigrad.get_rng_state(), self.sampler.state_dict()) \
            if self.dist.world > 1 else None
        if self.dist.master:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            for name in names or (CKPT_NAME,):
                save_checkpoint(self.out_dir / name, self.model, self.optimizer, self.cfg, self.iter_num,
                                self.best_val_loss, self.sampler, self.meta, ranks)
        self.dist.wait_for_rank0()

    def _record(self, entry):
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with open(self.out_dir / "log.jsonl", "a") as f:
            f.write(json.dumps(entry) + "\n")

    def evaluate_and_save(self):
        losses, improved = None, False
        if self.dist.master:  # with several ranks, rank 0 evaluates; the others wait at the save
            losses = self.estimate_loss()
            self.log(f"step {self.iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            self._record({"iter": self.iter_num, "train_loss": losses["train"], "val_loss": losses["val"],
                          "lr": self.lr_at(self.iter_num)})
            improved = losses["val"] < self.best_val_loss
            if improved:
                self.best_val_loss = losses["val"]
        self.dist.wait_for_rank0()
        if self.iter_num > 0 or self.cfg.always_save_checkpoint:
            self.save(CKPT_NAME, BEST_NAME) if improved else self.save(CKPT_NAME)
        return losses

    # ---- the loop -----------------------------------------------------------------------
    def run(self):
        """Train until max_iters; Ctrl-C finishes the current iteration, saves and stops."""
        cfg = self.cfg
        self.log(f"model: {self.model.get_num_params() / 1e6:.2f}M parameters, "
                 f"{self.tokens_per_iter:,} tokens per iteration, dataset {cfg.dataset!r} "
                 f"(vocab {self.dataset.vocab_size})")
        if cfg.memory_report:
            self.log(str(self.memory_report()))
        if cfg.eval_only:  # report the estimate and stop: no training, no checkpoint written
            if not self.dist.master:
                return None
            losses = self.estimate_loss()
            self.log(f"step {self.iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            return losses
        previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, self._on_interrupt)
        previous_term = signal.signal(signal.SIGTERM, self._on_interrupt) if self.dist.world > 1 else None
        bar = _progress(cfg, self.iter_num, self.log, draw=self.dist.master)
        try:
            t_last = time.perf_counter()
            mfu = -1.0
            while self.iter_num < cfg.max_iters and not self.stop_requested:
                if self.iter_num % cfg.eval_interval == 0 and (self.iter_num > 0 or cfg.eval_iters > 0):
                    self.evaluate_and_save()
                    t_last = time.perf_counter()  # don't count evaluation in the step time
                lr = self.lr_at(self.iter_num)
                loss = self.train_step(lr)
                self.stop_requested = self.dist.any(self.interrupted)  # a Ctrl-C on one rank stops all
                if not math.isfinite(loss):
                    raise TrainError(f"loss became {loss} at iteration {self.iter_num}; lower the learning rate "
                                     f"or set grad_clip (checkpoints so far are kept)")
                now = time.perf_counter()
                dt, t_last = now - t_last, now
                self.iter_num += 1
                tok_s = self.tokens_per_iter / dt
                m = self.model.estimate_mfu(self.dist.micro_steps(cfg) * cfg.batch_size, dt, self.peak_flops)
                mfu = m if mfu < 0 else 0.9 * mfu + 0.1 * m
                bar.update(self.iter_num, loss, lr, tok_s, mfu, dt)
                if self.iter_num % cfg.log_interval == 0:
                    self._record({"iter": self.iter_num, "loss": loss, "lr": lr, "ms": dt * 1e3,
                                  "tokens_per_s": tok_s, "mfu": mfu})
            if not self.stop_requested:
                losses = self.evaluate_and_save()
            else:
                self.save(CKPT_NAME)
                self.log(f"interrupted: saved {self.out_dir / CKPT_NAME} at iteration {self.iter_num}")
                losses = None
        finally:
            bar.close()
            signal.signal(signal.SIGINT, previous)
            if previous_term is not None:
                signal.signal(signal.SIGTERM, previous_term)
        return losses

    def _on_interrupt(self, signum, frame):
        if self.interrupted:  # a second Ctrl-C stops at once
            raise KeyboardInterrupt
        self.interrupted = True
        self.log("\nCtrl-C: finishing this iteration, then saving a checkpoint (Ctrl-C again to abort)")


def _tokenizer_arg(cfg):
    return getattr(cfg, "tokenizer", None) or None


class _progress:
    """A tqdm bar on a terminal; plain log lines every log_interval when output is a file or pipe."""

    def __init__(self, cfg, start, log=print, draw=True):
        self.cfg = cfg
        self.log = log
        self.tty = sys.stderr.isatty() and cfg.progress and draw
        self.bar = None
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=cfg.max_iters, initial=start, dynamic_ncols=True, unit="it")

    def update(self, it, loss, lr, tok_s, mfu, dt):
        if self.bar is not None:
            self.bar.n = it
            self.bar.set_postfix_str(f"loss {loss:.4f}, lr {lr:.2e}, {tok_s:,.0f} tok/s, mfu {mfu * 100:.1f}%")
        elif it % self.cfg.log_interval == 0 or it == 1:
            self.log(f"iter {it}/{self.cfg.max_iters}: loss {loss:.4f}, lr {lr:.2e}, time {dt * 1e3:.1f} ms, "
                     f"{tok_s:,.0f} tok/s, mfu {mfu * 100:.1f}%")

    def close(self):
        if self.bar is not None:
            self.bar.close()


def main(argv=None):
    """train.py's entry point: returns the process exit status."""
    from gpt.config import help_text, parse_config
    from gpt.distributed import launched_rank
    from minigrad.distributed import DistBackendError

    argv = sys.argv[1:] if argv is None else argv
    if any(a in ("-h", "--help") for a in argv):
        print(help_text())
        return 0
    # under mpiexec every rank runs this: an error all ranks meet is printed by rank 0 alone, one a
    # rank meets by itself by that rank, which tells the others (they exit naming it)
    dist = Distributed()
    quiet = launched_rank() != 0  # until the ranks have joined, every rank parses the same argv
    try:
        cfg, notices = parse_config(argv)
        dist = Distributed(cfg)  # under mpiexec: join the other ranks, check they all have this config
        quiet = not dist.master
        for n in notices if not quiet else ():
            print(n)
        trainer = Trainer(cfg, dist=dist)
        trainer.run()
    except Shared as e:
        if not quiet:
            print(f"train.py: error: {e}", file=sys.stderr)
        return dist.exit(2)
    except DistBackendError as e:  # another rank failed or vanished, or a collective timed out
        print(f"train.py: error: {e}", file=sys.stderr)
        return dist.exit(1)
    except (ConfigError, DataError, TrainError, ValueError) as e:
        if dist.world > 1 or not quiet:
            print(f"train.py: error: {_who(dist)}{e}", file=sys.stderr)
        dist.fail(e)
        return dist.exit(2)
    except KeyboardInterrupt:
        print(f"train.py: {_who(dist)}aborted", file=sys.stderr)
        dist.fail(KeyboardInterrupt("aborted by a second Ctrl-C"))
        return dist.exit(130)
    except BaseException as e:
        if dist.world == 1:
            raise
        import traceback

        traceback.print_exc()  # a bug: its traceback, and the others told which rank stopped
        dist.fail(e)
        return dist.exit(1)
    dist.close()
    return 0


def _who(dist):
    return f"rank {dist.rank}: " if dist.world > 1 else ""
