"""Learning-rate schedules, as `torch.optim.lr_scheduler`, plus nanoGPT's warmup-then-cosine.

A scheduler sets `group["lr"]` of each parameter group; call `scheduler.step()` after
`optimizer.step()`. `last_epoch` counts the steps taken (0 right after construction).
"""
import math

from minigrad.autograd import recording

from .optimizer import Optimizer


def warmup_cosine_lr(it, learning_rate, warmup_iters, lr_decay_iters, min_lr):
    """nanoGPT's `get_lr(it)`: linear warmup, cosine decay to `min_lr`, then `min_lr`.

        it < warmup_iters:        learning_rate * (it + 1) / (warmup_iters + 1)
        it > lr_decay_iters:      min_lr
        otherwise:                min_lr + 0.5 (1 + cos(pi r)) (learning_rate - min_lr),
                                  r = (it - warmup_iters) / (lr_decay_iters - warmup_iters)

    When lr_decay_iters == warmup_iters the decay is empty and `it == warmup_iters` gives min_lr.
    """
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    span = lr_decay_iters - warmup_iters
    decay_ratio = (it - warmup_iters) / span if span > 0 else 1.0
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


class LRScheduler:
    """Base class. Subclasses implement `get_lr()`: the new lr of each group at `self.last_epoch`.

    Construction records each group's `initial_lr` (once), and takes the first step, which sets
    the lrs for step 0. `state_dict()` holds every attribute but the optimizer (plain numbers
    and lists, so `nn.save` can store it).
    """

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._initial = True  # the constructor's step: chainable schedules keep the current lr
        try:
            self.step()
        finally:
            self._initial = False

    def get_lr(self):
        """The lr of each parameter group for step `self.last_epoch` (called by `step()`)."""
        raise NotImplementedError

    def get_last_lr(self):
        """The lrs set by the latest `step()`, one per parameter group."""
        return self._last_lr

    def step(self):
        """Advance one step and set each group's lr."""
        if recording.hook.recorder is not None:  # minigrad.compile replays it as one call
            return recording.hook.recorder.on_call(self.step)
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """Every attribute but the optimizer (for LambdaLR, the lambdas are left out too)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}

    def load_state_dict(self, state_dict):
        """Restore `state_dict()`'s output (construct the scheduler first, then load)."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(last_epoch); one lambda, or one per parameter group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (last_epoch // step_size), computed as PyTorch does (multiplying the
    current lr by gamma every step_size steps)."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]


class CosineAnnealingLR(LRScheduler):
    """eta_min + (base_lr - eta_min) (1 + cos(pi t / T_max)) / 2, with PyTorch's recursive formula
    (it updates the current lr, so it composes with other changes to it, and continues as a
    cosine wave past T_max)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._initial:
            return [g["lr"] for g in groups]
        if (t - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (base - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (g["lr"] - eta_min) + eta_min
                for g in groups]


class WarmupCosineLR(LRScheduler):
    """nanoGPT's schedule as a scheduler: `warmup_cosine_lr(last_epoch, base_lr, ...)` for each group.

    Linear warmup over `warmup_iters` steps, cosine decay to `min_lr` at `lr_decay_iters`, then
    `min_lr`. `min_lr` is one value, or one per parameter group.
    """

    def __init__(self, optimizer, warmup_iters, lr_decay_iters, min_lr=0.0, last_epoch=-1):
        if warmup_iters < 0 or lr_decay_iters < warmup_iters:
            raise ValueError(f"need 0 <= warmup_iters <= lr_decay_iters, got warmup_iters={warmup_iters}, "
                             f"lr_decay_iters={lr_decay_iters}")
        n = len(optimizer.param_groups)
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * n
        if len(self.min_lrs) != n:
            raise ValueError(f"Expected {n} min_lr values, but got {len(self.min_lrs)}")
        self.warmup_iters = warmup_iters
        self.lr_decay_iters = lr_decay_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [warmup_cosine_lr(self.last_epoch, base, self.warmup_iters, self.lr_decay_iters, lo)
                for base, lo in zip(self.base_lrs, self.min_lrs)]
