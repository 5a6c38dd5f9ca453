"""The training loop behind train.py: nanoGPT's loop on minigrad, with exact resume.

Each iteration: zero_grad, forward and backward over `gradient_accumulation_steps` micro-batches,
clip, step, at a warmup-then-cosine learning rate. Every `eval_interval` iterations (and at the
end) the train and val losses are estimated under no_grad in eval mode; `best.safetensors` is
written when val loss improves, and `ckpt.safetensors` too (at every evaluation with
`always_save_checkpoint`, and whenever the run ends: at max_iters, Ctrl-C or SIGTERM), so a
resumed run continues from the last iteration. A state whose loss or parameters are not
finite is never saved.

A checkpoint holds the model, optimizer state, config, iteration, best val loss, and the RNG and
batch-sampler state, so `init_from="resume"` continues exactly where the run stopped: a run of
2N iterations and one of N resumed to 2N end with the same weights, bit for bit. Nothing else
draws from those streams (the peak-FLOP/s measurement and the memory report included).

Checkpoints are never lost: a fresh run refuses an out_dir holding another run unless
`overwrite`, a resumed run refuses to change the model's shape, writes are atomic, an out_dir is
trained in by one process at a time, and the temporaries of a save cut off by a kill are
removed by the next start.
"""
import json
import math
import re
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from safetensors import SafetensorError

import minigrad
import nn
from minigrad.device import array_module
from gpt.checkpoint import (  # noqa: F401 (TrainError, load_checkpoint: also reached as gpt.trainer.*)
    _RESUME_ENTRIES, BEST_NAME, CKPT_NAME, LOG_NAME, MODEL_KEYS, TrainError, check_out_dir, load_checkpoint,
    prepare_out_dir, resume_path, save_checkpoint, trim_log,
)
from gpt.config import ConfigError, resume_config
from gpt.console import Console, Progress, gib, measure_peak_flops, memory_bytes
from gpt.data import BatchSampler, DataError, Dataset, prepare_dataset
from gpt.distributed import Distributed, Shared
from gpt.model import GPT, GPTConfig
from gpt.plot import update_run_plot
from gpt.pretrained import check_tokenizer, for_finetuning, is_pretrained
from gpt.wandb_log import WandbLog
from nn.optim.lr_scheduler import warmup_cosine_lr

MFU_AFTER = 5  # iterations of a process's run before MFU is shown (nanoGPT's "let the training loop settle")



def check_device(device):
    """A one-line error when `device` cannot be used here (cuda without cupy or a GPU)."""
    if device != "cpu":
        try:
            minigrad.zeros(1, device=device)
        except RuntimeError as e:
            raise TrainError(str(e)) from None

def check_parameters(model_args, device):
    """A one-line error, before the model is built, when its parameters cannot fit in memory:
    float32 weights, gradients and AdamW's two moments, 16 bytes per parameter."""
    L, C, T, V = (model_args[k] for k in ("n_layer", "n_embd", "block_size", "vocab_size"))
    n = L * (12 * C * C + 13 * C) + (V + T + 2) * C
    need, have = 16 * n, memory_bytes(device)
    if have and need > have:
        raise TrainError(f"n_layer={L} with n_embd={C} makes a model of {n:,} parameters, whose weights, gradients "
                         f"and AdamW state need {gib(need)} of memory, more than the {gib(have)} here: lower n_layer "
                         "or n_embd")


def check_memory(cfg, model_config):
    """A one-line error when one training step's activations cannot fit in this machine's memory.

    The estimate is a lower bound (a few float32 tensors of width n_embd per layer and token,
    the logits and their gradient), so a refused setting could never have run."""
    B, T, C, L, V = cfg.batch_size, model_config.block_size, model_config.n_embd, model_config.n_layer, \
        model_config.vocab_size
    per_sequence = T * (4 * (8 * C * L + 2 * V) + 16)
    have = memory_bytes(cfg.device)
    if have and per_sequence > have:  # not even one sequence fits: the batch is not to blame
        raise TrainError(f"one sequence of block_size={T} through n_layer={L} blocks of n_embd={C} needs at least "
                         f"{gib(per_sequence)} of memory for one step, more than the {gib(have)} here: lower "
                         "block_size, n_embd or n_layer")
    if have and B * per_sequence > have:
        raise TrainError(f"batch_size={B} with block_size={T} needs at least {gib(B * per_sequence)} of memory for one "
                         f"step, more than the {gib(have)} here: lower batch_size (and raise "
                         "gradient_accumulation_steps to keep the tokens per iteration)")


class Trainer:
    """Holds the model, optimizer, data and loop state of one training run."""

    def __init__(self, cfg, log=None, dist=None):
        self.cfg = cfg
        # data-parallel (gpt/distributed.py): rank 0 alone logs; a setup that fails on one rank fails on all
        self.dist = dist or Distributed()
        self.log = (log or Console()) if self.dist.master else (lambda msg: None)
        self.out_dir = Path(cfg.out_dir)
        self.stop_signal = None  # SIGINT or SIGTERM once one asked this process to stop
        self.stop_requested = False  # the ranks' agreed decision, taken once per iteration
        self._lock = None
        self._ckpt = None
        self._wandb = None  # a WandbLog with --wandb_log=True, on rank 0
        self.running_mfu = -1.0  # the smoothed MFU (nanoGPT's -1 until a step is measured)
        try:
            self.dist.together(self._configure)
            self.dist.together(self._prepare_data, rank0_first=True)  # rank 0 writes the dataset, the others read it
            self.dist.together(self._setup)
            self.train_model = self.dist.wrap(self.model)  # DDP under several ranks, else the model
            self.micro_step, self.eval_step = _steps(self.train_model, self.model, self.cfg.compile)
        except BaseException:
            self.close()
            raise

    # ---- setup --------------------------------------------------------------------------
    def _configure(self):
        """Checks that need no data, and a resumed run's settings (its checkpoint's, unless given)."""
        check_device(self.cfg.device)
        check_out_dir(self.cfg)
        if self.cfg.init_from == "resume":
            self._resume_from = resume_path(self.out_dir)
            self._ckpt = load_checkpoint(self._resume_from, need=_RESUME_ENTRIES)
            self.cfg = resume_config(self.cfg, self._ckpt["config"], where=str(self._resume_from))
        if self.cfg.wandb_log and self.dist.master:
            self._wandb = WandbLog(self.cfg)  # (no wandb installed: an error now, before any work)

    def _setup(self):
        ckpt, self._ckpt = self._ckpt, None
        # GPT-2's weights or a folder in their layout (gpt/pretrained.py), read before anything is written
        pretrained = for_finetuning(self.cfg, self.log) if is_pretrained(self.cfg.init_from) else None
        self._load_data()
        self._build(ckpt, pretrained)
        check_memory(self.cfg, self.model.config)
        if not self.cfg.eval_only and self.dist.master:  # only now that every setting is checked is out_dir touched
            self._lock = prepare_out_dir(self.cfg, self.log)
        self._new_log = not (self.out_dir / LOG_NAME).exists()  # a run of its own, not one resumed
        self.iter_num, self.best_val_loss = 0, float("inf")
        self.ckpt_iter = None  # the iteration ckpt.safetensors holds, once this run knows it
        if ckpt is not None:
            self._restore(ckpt)
        self.peak_flops = self.cfg.peak_flops or None  # None: measured at the first MFU (_mfu)
        self.tokens_per_iter = self.dist.world * self.dist.micro_steps(self.cfg) * self.cfg.batch_size * \
            self.model.config.block_size

    def _prepare_data(self):
        cfg = self.cfg
        self._data_path = prepare_dataset(cfg.dataset, data_dir=cfg.data_dir, input=cfg.input or None,
                                          tokenizer=_tokenizer_arg(cfg), ranks_path=cfg.gpt2_tiktoken or None)

    def _load_data(self):
        cfg = self.cfg
        self.dataset = Dataset.load(self._data_path)
        self.dataset.check_block_size(cfg.block_size)
        self.meta = self.dataset.meta

    def _build(self, ckpt, pretrained=None):
        cfg = self.cfg
        model_args = {k: getattr(cfg, k) for k in MODEL_KEYS if k not in ("vocab_size", "activation")}
        model_args["vocab_size"], model_args["activation"] = self.dataset.vocab_size, "gelu"
        if ckpt is not None:  # the architecture is the checkpoint's (a fine-tuned GPT-2's is no flag's)
            model_args.update({k: v for k, v in ckpt["model_args"].items() if k in MODEL_KEYS and k != "dropout"})
        trained_on = (ckpt or {}).get("dataset") or {}
        if trained_on.get("sha256") not in (None, self.meta["sha256"]):  # same name, another text
            raise TrainError(
                f"dataset {cfg.dataset!r} in {self.dataset.path} is not the text {self._resume_from.name} was trained "
                f"on (it was prepared from {self.meta['source']}, the checkpoint's from {trained_on.get('source')}): "
                f"delete {self.dataset.path} and resume with --input={trained_on.get('source')} to prepare it again")
        if ckpt is not None and ckpt["model_args"]["vocab_size"] != self.dataset.vocab_size:
            raise TrainError(
                f"the checkpoint's vocabulary ({ckpt['model_args']['vocab_size']}) differs from dataset "
                f"{cfg.dataset!r} ({self.dataset.vocab_size}): resume with the dataset it was trained on")
        minigrad.manual_seed(self.dist.seed(cfg.seed))  # seed + rank, as nanoGPT
        if pretrained is not None:
            check_tokenizer(pretrained, self.meta["tokenizer"]["kind"], self.dataset.vocab_size, f"dataset {cfg.dataset!r}")
            self.model = pretrained
            for k in ("n_layer", "n_head", "n_embd", "block_size", "bias"):  # the config saved says what was trained
                setattr(self.cfg, k, getattr(pretrained.config, k))
        else:
            check_parameters(model_args, cfg.device)
            self.model = GPT(GPTConfig(grad_checkpoint=cfg.grad_checkpoint, **model_args))
        if cfg.device != "cpu":
            self.model.to(cfg.device)
        self.optimizer = self.model.configure_optimizers(cfg.weight_decay, cfg.learning_rate, (cfg.beta1, cfg.beta2))
        self.sampler = BatchSampler(self.dataset, cfg.batch_size, self.model.config.block_size,
                                    seed=self.dist.seed(cfg.seed))

    def _restore(self, ckpt):
        path = self._resume_from
        rng, sampler = self.dist.restore_states(ckpt, path)  # this rank's (another world size is refused)
        try:
            self.model.load_state_dict(ckpt["model"])
            self.optimizer.load_state_dict(ckpt["optimizer"])
            self.sampler.load_state_dict(sampler)
            minigrad.set_rng_state(rng)
        except (RuntimeError, ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
            raise TrainError(f"checkpoint {path} does not fit this model: {e}") from None
        self.iter_num = int(ckpt["iter_num"])
        self.ckpt_iter = self.iter_num if path.name == CKPT_NAME else None
        self.best_val_loss = float(ckpt.get("best_val_loss", float("inf")))
        missing = "" if path.name == CKPT_NAME else f" ({CKPT_NAME} is missing: the run was stopped before saving it)"
        self.log(f"resuming from {path} at iteration {self.iter_num}{missing}")
        if not self.cfg.eval_only and self.dist.master:
            trim_log(self.out_dir / LOG_NAME, self.iter_num, self.log)

    def close(self):
        """Release out_dir and end the W&B run (run() does, when it ends)."""
        if self._wandb is not None:
            self._wandb.finish()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

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
                loss = self.eval_step(minigrad.tensor(x, device=self.cfg.device),
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
            self.dist.sync_gradients(micro == steps - 1)  # the ranks average gradients in the last backward only
            loss = self.micro_step(x, y, steps)
            total += loss.item()
        if cfg.grad_clip != 0.0:
            nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return total

    def memory_report(self):
        """The bytes one training step keeps for backward, by node type and by module (the report
        is taken before backward; the step is then undone: no gradient is applied, and the
        batch and dropout streams are put back)."""
        from minigrad.memory import module_scopes, saved_tensors_report

        state, rng = self.sampler.state_dict(), minigrad.get_rng_state()
        x, y = self.sampler.get_batch("train")
        with module_scopes(self.model):
            _, loss = self.model(minigrad.tensor(x, device=self.cfg.device), minigrad.tensor(y, device=self.cfg.device))
        report = saved_tensors_report(loss)
        del loss  # frees the graph: nothing was trained
        self.sampler.load_state_dict(state)
        minigrad.set_rng_state(rng)
        return report

    def _diverged_advice(self):
        clip = " or set --grad_clip=1.0" if self.cfg.grad_clip == 0 else ""
        return f"lower --learning_rate (now {self.cfg.learning_rate:g}){clip} (checkpoints so far are kept)"

    def save(self, name=CKPT_NAME):
        """Write checkpoint `name`. With several ranks every rank calls this (it gathers their RNG
        and sampler states); rank 0 writes, the others wait. A state whose parameters are not
        all finite is refused: it would replace a good checkpoint with one that cannot train."""
        bad = next((n for n, p in self.model.named_parameters() if not array_module(p.array).isfinite(p.array).all()),
                   None)
        if bad is not None:
            raise TrainError(f"parameter {bad} is not finite at iteration {self.iter_num}: not saved; "
                             f"{self._diverged_advice()}")
        ranks = self.dist.gather_states(minigrad.get_rng_state(), self.sampler.state_dict()) \
            if self.dist.world > 1 else None
        if self.dist.master:
            path = self.out_dir / name
            try:
                save_checkpoint(path, self.model, self.optimizer, self.cfg, self.iter_num, self.best_val_loss,
                                self.sampler, self.meta, ranks)
            except (OSError, SafetensorError) as e:  # a full disk, a read-only folder: the file there is as it was
                kept = "is as it was" if path.exists() else "was not written"
                raise TrainError(f"cannot save iteration {self.iter_num} to {path}: {_reason(e)} "
                                 f"({path.name} {kept})") from None
        self.dist.wait_for_rank0()
        if name == CKPT_NAME:
            self.ckpt_iter = self.iter_num

    def _record(self, entry):
        if not self.dist.master:
            return
        entry.setdefault("tokens", entry["iter"] * self.tokens_per_iter)  # gpt.plot's second x axis
        try:
            with open(self.out_dir / LOG_NAME, "a") as f:
                f.write(json.dumps(entry) + "\n")
        except OSError as e:
            raise TrainError(f"cannot write {self.out_dir / LOG_NAME}: {_reason(e)} (checkpoints so far are kept)") \
                from None

    def evaluate_and_save(self):
        """Estimate the losses, log them, and save as nanoGPT does: best.safetensors when val
        loss improves, ckpt.safetensors then too (or at every evaluation with
        always_save_checkpoint); never the untrained model, nor a state ckpt already holds, nor
        one whose loss is not finite (that ends the run)."""
        losses, improved = None, False
        if self.dist.master:  # with several ranks, rank 0 evaluates; the others wait at the save
            losses = self.estimate_loss()
            self.log(f"step {self.iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            if not all(map(math.isfinite, losses.values())):  # a diverged state is never saved
                raise TrainError(f"the estimated losses became {losses['train']} (train) and {losses['val']} (val) "
                                 f"at iteration {self.iter_num}: not saved; {self._diverged_advice()}")
            self._record({"iter": self.iter_num, "train_loss": losses["train"], "val_loss": losses["val"],
                          "lr": self.lr_at(self.iter_num)})
            if self._wandb is not None:
                self._wandb.log(self.iter_num, losses, self.lr_at(self.iter_num), self.running_mfu)
            if self.iter_num > 0:  # step 0's plot would be one point a curve, and drawing it (matplotlib's
                # import, ~0.5 s) would delay the first iteration: loss.png comes with the first trained evaluation
                update_run_plot(self.out_dir, self.log, say_missing=self._new_log)  # OUT_DIR/loss.png (gpt/plot.py)
                self._new_log = False
            improved = losses["val"] < self.best_val_loss
            if improved:
                self.best_val_loss = losses["val"]
        if self.dist.world > 1:
            self.dist.wait_for_rank0()
            improved = self.dist.any(improved)  # every rank makes the same saves: each is a collective
        if self.iter_num > 0:
            # best first: a kill between the two leaves a ckpt whose resume makes this evaluation again
            if improved:
                self.save(BEST_NAME)
            if (improved or self.cfg.always_save_checkpoint) and self.ckpt_iter != self.iter_num:
                self.save(CKPT_NAME)
        return losses

    def _mfu(self, dt):
        """This step's MFU, at most 1: a step faster than the peak means the peak was measured
        while the machine was busy, so it is measured again (and is at least this step's rate)."""
        fwdbwd = self.dist.micro_steps(self.cfg) * self.cfg.batch_size  # this process's share
        if self.peak_flops is None:  # measured here, not at start: the first iteration is not kept waiting
            self.peak_flops = measure_peak_flops(self.cfg.device)
        m = self.model.estimate_mfu(fwdbwd, dt, self.peak_flops)
        if m > 1:
            achieved = m * self.peak_flops
            if self.cfg.peak_flops:
                if self.peak_flops == self.cfg.peak_flops:  # said once
                    self.log(f"note: a step ran at {achieved:.3g} FLOP/s, above --peak_flops={self.peak_flops:.3g}; "
                             "MFU is a share of the fastest step's rate from now on")
                self.peak_flops = achieved
            else:
                self.peak_flops = max(achieved, measure_peak_flops(self.cfg.device))
            m = self.model.estimate_mfu(fwdbwd, dt, self.peak_flops)
        return min(m, 1.0)

    # ---- the loop -----------------------------------------------------------------------
    def run(self):
        """Train until max_iters; Ctrl-C (or SIGTERM) finishes the current iteration, saves and
        stops, leaving the signal in `stop_signal`. Releases out_dir when it ends."""
        try:
            return self._run()
        finally:
            self.close()

    def _run(self):
        cfg = self.cfg
        self.log(f"model: {self.model.get_num_params() / 1e6:.2f}M parameters, "
                 f"{self.tokens_per_iter:,} tokens per iteration, dataset {cfg.dataset!r} "
                 f"(vocab {self.dataset.vocab_size})")
        if self.dist.world > 1:
            self.log(self.dist.global_batch(cfg, self.model.config.block_size))
        if cfg.memory_report:
            self.log(str(self.memory_report()))
        if self._wandb is not None:
            self._wandb.start()
        if cfg.eval_only:  # report the estimate and stop: no training, no checkpoint written
            losses = self.estimate_loss()
            self.log(f"step {self.iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            if self._wandb is not None:
                self._wandb.log(self.iter_num, losses, self.lr_at(self.iter_num), self.running_mfu)
            return losses
        if self.ckpt_iter is not None and self.iter_num >= cfg.max_iters:
            self.log(f"nothing to train: {self.out_dir / CKPT_NAME} is at iteration {self.iter_num}, "
                     f"max_iters={cfg.max_iters} (raise --max_iters to train on)")
            return None
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        bar = Progress(cfg, self.iter_num, self.log, draw=self.dist.master)
        try:
            losses = self._loop(bar)
        finally:
            bar.close()
            for s, handler in previous.items():
                signal.signal(s, handler)
        if self.stop_requested:
            self._save_on_stop()
        return losses

    def _loop(self, bar):
        cfg = self.cfg
        t_last = time.perf_counter()
        mfu, local_iters = -1.0, 0
        while self.iter_num < cfg.max_iters and not self._stopping():
            if self.iter_num % cfg.eval_interval == 0 and (self.iter_num > 0 or cfg.eval_iters > 0):
                self.evaluate_and_save()
                t_last = time.perf_counter()  # don't count evaluation in the step time
            lr = self.lr_at(self.iter_num)
            loss = self.train_step(lr)
            if not math.isfinite(loss):
                raise TrainError(f"loss became {loss} at iteration {self.iter_num}; {self._diverged_advice()}")
            dt = time.perf_counter() - t_last
            self.iter_num += 1
            local_iters += 1
            if local_iters > MFU_AFTER:  # as nanoGPT: the first iterations load kernels, their MFU says nothing
                m = self._mfu(dt)
                mfu = self.running_mfu = m if mfu < 0 else 0.9 * mfu + 0.1 * m
            bar.update(self.iter_num, loss, lr, self.tokens_per_iter / dt, mfu, dt)
            if self.iter_num % cfg.log_interval == 0:
                self._record({"iter": self.iter_num, "loss": loss, "lr": lr, "ms": dt * 1e3,
                              "tokens_per_s": self.tokens_per_iter / dt, **({"mfu": mfu} if mfu >= 0 else {})})
            t_last = time.perf_counter()
        if self._stopping():  # (asked again: a signal in the last iteration also stops before the final save)
            return None
        losses = self.evaluate_and_save()
        if self.ckpt_iter != self.iter_num and self.iter_num > 0:  # the end is resumable: ckpt is the last iteration
            self.save(CKPT_NAME)
            if self.dist.master:
                best = f"{BEST_NAME} keeps the best" if (self.out_dir / BEST_NAME).exists() else \
                    "no trained iteration evaluated better than step 0's"
                self.log(f"val loss {losses['val']:.4f} is not below the best, {self.best_val_loss:.4f} ({best}): "
                         f"saved {self.out_dir / CKPT_NAME} at iteration {self.iter_num} to continue from")
        return losses

    def _save_on_stop(self):
        path = self.out_dir / CKPT_NAME
        if self.ckpt_iter == self.iter_num:
            self.log(f"stopped: {path} holds iteration {self.iter_num} (continue with --init_from=resume)")
        elif self.iter_num == 0:
            self.log("stopped before the first iteration: nothing saved")
        else:
            self.save(CKPT_NAME)
            self.log(f"stopped: saved {path} at iteration {self.iter_num} (continue with --init_from=resume)")

    def _stopping(self):
        """Whether to stop now: a Ctrl-C or SIGTERM seen by any rank stops them all at the same iteration."""
        self.stop_requested = self.dist.any(self.stop_signal is not None)
        return self.stop_requested

    def _on_signal(self, signum, frame):
        if self.stop_signal is not None:  # a second Ctrl-C stops at once
            raise KeyboardInterrupt
        self.stop_signal = signum
        name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        self.log(f"\n{name}: finishing this iteration, then saving a checkpoint (Ctrl-C again to abort)")


def _steps(train_model, model, compile):
    """The training micro-step (forward and backward) and the evaluation step; with --compile=True,
    each is captured once and replayed (minigrad.compile)."""
    def micro_step(x, y, steps):
        _, loss = train_model(x, y)
        loss = loss / steps
        loss.backward()
        return loss

    def eval_step(x, y):
        return model(x, y)[1]

    if compile:
        return minigrad.compile(micro_step), minigrad.compile(eval_step)
    return micro_step, eval_step


def _reason(e):
    """An OSError's or safetensors' error's cause, as the OS words it ("No space left on device")."""
    if isinstance(e, OSError):
        return e.strerror or str(e)
    m = re.search(r"I/O error: (.*?)(?: \(os error \d+\))?$", str(e))
    return m.group(1) if m else str(e)


def _tokenizer_arg(cfg):
    kind = getattr(cfg, "tokenizer", None) or None
    if kind in (None, "auto") and is_pretrained(cfg.init_from):
        return "gpt2"  # a pretrained GPT-2 reads GPT-2's token ids
    return kind


def main(argv=None):
    """train.py's entry point: returns the process exit status (2 for a user's mistake, 128 +
    the signal's number when SIGINT or SIGTERM stopped the run, after saving)."""
    from gpt.config import help_text, parse_config
    from gpt.distributed import backend_errors, launched_rank

    argv = sys.argv[1:] if argv is None else argv
    # numpy's overflow warnings are noise here: a loss that stops being finite is said in one line
    warnings.filterwarnings("ignore", r"(overflow|invalid value|divide by zero) encountered", RuntimeWarning)
    console = Console()
    if any(a in ("-h", "--help") for a in argv):
        console(help_text())
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
            console(n)
        trainer = Trainer(cfg, log=console, dist=dist)
        trainer.run()
    except Shared as e:
        if not quiet:
            _fail(e)
        return dist.exit(2)
    except backend_errors() as e:  # another rank failed or vanished, or a collective timed out
        _fail(e)
        return dist.exit(1)
    except (ConfigError, DataError, TrainError, ValueError) as e:
        if dist.world > 1 or not quiet:
            _fail(f"{_who(dist)}{e}")
        dist.fail(e)
        return dist.exit(2)
    except MemoryError:
        _fail(f"{_who(dist)}out of memory: lower batch_size or block_size (checkpoints so far are kept)")
        dist.fail(MemoryError("out of memory"))
        return dist.exit(2)
    except KeyboardInterrupt:
        _fail(f"{_who(dist)}aborted (checkpoints so far are kept)")
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
    if trainer.stop_requested or trainer.stop_signal is not None:  # stopped by a signal, after saving
        return 128 + int(trainer.stop_signal or signal.SIGINT)
    return 0


def _who(dist):
    return f"rank {dist.rank}: " if dist.world > 1 else ""


def _fail(msg):
    try:
        print(f"train.py: error: {msg}", file=sys.stderr)
    except OSError:
        pass
    return 2
