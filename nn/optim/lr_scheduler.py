"""Learning-rate schedules, as `torch.optim.lr_scheduler`, plus nanoGPT's warmup-then-cosine.

A scheduler sets `group["lr"]` of each parameter group; call `scheduler.step()` after
`optimizer.step()` (ReduceLROnPlateau: `scheduler.step(metric)`). `last_epoch` counts the steps
taken (0 right after construction).
"""
from collections import Counter
import math
import types
import warnings
import weakref
from bisect import bisect_right
from functools import partial, wraps

from minigrad.autograd import recording

from .optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available. Please open an issue if "
    "you are unable to replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose."
)


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


def _recorded_step(step):
    """A scheduler class's `step`: while minigrad.compile records, one call, re-run at each replay (it sets
    the live lr), a user's scheduler class with a `step` of its own as the library's."""

    @wraps(step)
    def wrapper(self, *args, **kwargs):
        rec = recording.hook.recorder
        if rec is not None:
            call = wrapper.__get__(self)
            return rec.on_call(partial(call, **kwargs) if kwargs else call, *args)
        return step(self, *args, **kwargs)

    wrapper._recorded = True
    return wrapper


class LRScheduler:
    """Base class. Subclasses implement `get_lr()`: the new lr of each group at `self.last_epoch`.

    Construction records each group's `initial_lr` (once), and takes the first step, which sets
    the lrs for step 0. `state_dict()` holds every attribute but the optimizer (plain numbers
    and lists, so `nn.save` can store it). Schedules with a closed form (the lr as a function of
    the step number alone) define `_get_closed_form_lr()`, which `step(epoch)` and SequentialLR use
    to jump to a step, as PyTorch's.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_recorded", False):
            cls.step = _recorded_step(step)

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
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. You're trying to "
                                   "resume training from a checkpoint but haven't properly loaded the optimizer state\n"
                                   "2. You're using last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0  # set here too, so state_dict() lists it where PyTorch's does
        self._is_initial = False
        self._get_lr_called_within_step = False
        _track_step_calls(optimizer)
        self._initial_step()

    def _initial_step(self):
        """The constructor's step (SequentialLR takes it again for the schedule it starts with):
        chainable schedules keep the current lr there (`_is_initial`)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        """The lr of each parameter group for step `self.last_epoch` (called by `step()`)."""
        raise NotImplementedError

    def get_last_lr(self):
        """The lrs set by the latest `step()`, one per parameter group."""
        return self._last_lr

    def step(self, epoch=None):
        """Advance one step and set each group's lr. `step(epoch)` (deprecated in PyTorch, and warned
        of as there) jumps to step `epoch`, by the closed form where the schedule has one."""
        if self._step_count == 1:  # the first step after the constructor's: was optimizer.step() called?
            _warn_step_order(self.optimizer)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=3)  # (the caller's: past the wrapper)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """Set each group's lr for the next step, or for step `epoch`."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """Every attribute but the optimizer (LambdaLR and MultiplicativeLR record their lambdas as PyTorch's)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}

    def load_state_dict(self, state_dict):
        """Restore `state_dict()`'s output (construct the scheduler first, then load)."""
        self.__dict__.update(state_dict)


def _track_step_calls(optimizer):
    """Have the optimizer's step record `_opt_called`, so that scheduler.step() warns when the optimizer has
    taken no step before it: Optimizer.step does; an optimizer whose class has a step of its own (LBFGS, a
    user's) gets its step wrapped on the instance, once, as PyTorch wraps every one."""
    if type(optimizer).step is Optimizer.step or hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    opt_ref, func = weakref.ref(optimizer), optimizer.step.__func__  # (weak: no cycle through the instance)

    @wraps(func)
    def wrapper(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func.__get__(opt, opt.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


def _warn_step_order(optimizer):
    tracked = hasattr(optimizer.step, "_wrapped_by_lr_sched") or (
        type(optimizer).step is Optimizer.step and "step" not in vars(optimizer))
    if not tracked:  # (the step was replaced on the instance after the scheduler was made)
        warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                      "initialization. Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. "
                      "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                      UserWarning, stacklevel=4)
    elif not getattr(optimizer, "_opt_called", False):
        warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, "
                      "you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  "
                      "Failure to do this will result in PyTorch skipping the first value of the learning rate "
                      "schedule. See more details at "
                      "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate", UserWarning,
                      stacklevel=4)


def _warn_get_lr_called_within_step(scheduler):
    """PyTorch's warning for get_lr() called outside step(): it computes the next lr, not the last."""
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning, stacklevel=3)


def _lambdas_state(lr_lambdas):
    """PyTorch's `lr_lambdas` entry of a state dict: None for a plain function (a def or a lambda, which
    cannot be saved), a copy of the attributes of a callable object."""
    return [None if isinstance(fn, types.FunctionType) or not hasattr(fn, "__dict__") else fn.__dict__.copy()
            for fn in lr_lambdas]


LRScheduler.step = _recorded_step(LRScheduler.step)


class _LambdaState:
    """state_dict / load_state_dict of the schedules driven by `lr_lambdas` (LambdaLR, MultiplicativeLR)."""

    def state_dict(self):
        state = super().state_dict()
        state["lr_lambdas"] = _lambdas_state(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop("lr_lambdas", None) or ()
        super().load_state_dict(state_dict)  # the lambdas themselves stay the constructor's
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


def _one_per_group(optimizer, lr_lambda):
    """A lambda for each parameter group: the one given for all, or a list of one each."""
    n = len(optimizer.param_groups)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * n


class LambdaLR(_LambdaState, LRScheduler):
    """lr = base_lr * lr_lambda(last_epoch); one lambda, or one per parameter group. The state dict
    holds, under `lr_lambdas`, None for each plain function and the attributes of a callable object."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _one_per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (last_epoch // step_size), computed as PyTorch does (multiplying the
    current lr by gamma every step_size steps)."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """eta_min + (base_lr - eta_min) (1 + cos(pi t / T_max)) / 2, with PyTorch's recursive formula
    (it updates the current lr, so it composes with other changes to it, and continues as a
    cosine wave past T_max)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        if (t - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (base - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (g["lr"] - eta_min) + eta_min
                for g in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


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


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= last_epoch), computed as PyTorch does
    (multiplying the current lr by gamma at each milestone; a milestone listed twice counts twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        # PyTorch's Counter (milestone -> times listed); nn.save gives it back as a plain dict, which serves as well
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        hits = self.milestones.get(self.last_epoch, 0)
        if hits == 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma**hits for g in groups]

    def _get_closed_form_lr(self):
        passed = sum(n for m, n in self.milestones.items() if m <= self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** last_epoch, computed as PyTorch does (the current lr times gamma each step)."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The lr goes linearly from base_lr * start_factor to base_lr * end_factor over `total_iters`
    steps, then stays. PyTorch's chained form: each step multiplies the current lr by the ratio of
    this step's factor to the previous one's, so it composes with other changes to the lr."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        # factor(t) / factor(t - 1), factor(t) = start + (end - start) t / total_iters
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [g["lr"] * ratio for g in groups]

    def _get_closed_form_lr(self):
        span = self.end_factor - self.start_factor
        return [base * (self.start_factor + span * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


def _per_group(name, optimizer, value):
    """One value per parameter group: `value` itself when it is a list or tuple, else repeated."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} values, "
                             f"param_groups has {n}.")
        return list(value)
    return [value] * n


_PHASE_KEYS = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): the lr rises from max_lr / div_factor to max_lr over the
    first `pct_start` of `total_steps`, then falls to max_lr / (div_factor * final_div_factor);
    `three_phase` comes back down to the initial lr first, symmetrically, then falls to the minimum.
    Each phase anneals by cosine (default) or linearly, from the phase's start at its first step
    to its end at its last.

    With `cycle_momentum` the momentum moves the opposite way, between `max_momentum` and
    `base_momentum`: the group's `momentum` (SGD, RMSprop) or `betas[0]` (Adam, AdamW). The
    schedule is by step number (a closed form, PyTorch's), so it does not compose with other
    changes to the lr. It writes `initial_lr`, `max_lr`, `min_lr` (and `max_momentum`,
    `base_momentum`) into each group, as PyTorch does. Stepping past `total_steps` is an error.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")

        # phases, PyTorch's dicts: the last step of the phase, the group keys of the lr at its start and end,
        # and of the momentum
        warmup_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            phases = [(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                       "max_momentum"),
                      (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            phases = [(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        self._schedule_phases = [dict(zip(_PHASE_KEYS, phase)) for phase in phases]
        self._anneal_func_type = anneal_strategy  # PyTorch's name (and place) in state_dict()
        self.cycle_momentum = cycle_momentum

        groups = optimizer.param_groups
        if last_epoch == -1:
            for group, top in zip(groups, _per_group("max_lr", optimizer, max_lr)):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                highs = _per_group("max_momentum", optimizer, max_momentum)
                lows = _per_group("base_momentum", optimizer, base_momentum)
                for group, high, low in zip(groups, highs, lows):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(f"Tried to step {t} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            phase_start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                phase_end, lr_from, lr_to, m_from, m_to = (phase[k] for k in _PHASE_KEYS)
                if t <= phase_end or i == len(self._schedule_phases) - 1:
                    pct = (t - phase_start) / (phase_end - phase_start)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m_from], group[m_to], pct))
                    break
                phase_start = phase_end
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the lr by `factor` when the metric passed to `step(metrics)` has not improved for
    more than `patience` steps; then waits `cooldown` steps before counting again. An improvement
    is a metric below best * (1 - threshold) (mode 'min', threshold_mode 'rel') or best - threshold
    ('abs'); in mode 'max', above best * (1 + threshold) or best + threshold. The lr
    never goes below `min_lr` (one value, or one per group), and a reduction smaller than `eps` is
    skipped. It sets no lr at construction, unlike the other schedules.
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        # attributes set in PyTorch's order, so state_dict() lists its keys as PyTorch's does
        self.factor = factor
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def is_better(self, a, best):
        """Whether metric `a` improves on `best`, by the mode and threshold."""
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if self.threshold_mode == "rel" else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if self.threshold_mode == "rel" else a > best + self.threshold

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def step(self, metrics):
        """Record this step's metric (a number or a one-element tensor); reduce the lrs if it is time."""
        current = float(metrics)
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad steps in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(self.min_lrs) != len(groups):  # groups added since construction
            if self.default_min_lr is None:
                raise RuntimeError("The number of param groups in the `optimizer` "
                                   f"({len(groups)}) differs from when `ReduceLROnPlateau` was initialized "
                                   f"({len(self.min_lrs)}), usually due to a new param group being added to "
                                   "the optimizer. Please modify the `min_lrs` field to match the length of the "
                                   "`optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    def get_lr(self):
        raise NotImplementedError("ReduceLROnPlateau sets the lr in step(metrics), from the metric")


class ConstantLR(LRScheduler):
    """lr = base_lr * factor for the first `total_iters` steps, then base_lr. PyTorch's chained form:
    the current lr times factor at step 0 and divided by it at step total_iters, so it composes
    with other changes to the lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch != self.total_iters:
            return [g["lr"] for g in groups]
        return [g["lr"] * (1.0 / self.factor) for g in groups]

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """Each step multiplies the current lr by lr_lambda(last_epoch); one lambda, or one per parameter
    group. (The state dict holds the lambdas as LambdaLR's does.)"""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _one_per_group(optimizer, lr_lambda)
        for fn in self.lr_lambdas:  # (PyTorch checks here, where LambdaLR fails only at the first step)
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, groups)]


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(t, total_iters) / total_iters) ** power: down to 0 at total_iters, then
    0. PyTorch's chained form: each step multiplies the current lr by this step's factor over the
    previous one's."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self._is_initial or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        t, total = self.last_epoch, self.total_iters
        decay = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [g["lr"] * decay for g in groups]

    def _get_closed_form_lr(self):
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter): a cosine from base_lr down to eta_min over T_i steps, then a
    restart at base_lr, with T_0 for the first period and each next one T_mult times longer:

        lr = eta_min + (base_lr - eta_min) (1 + cos(pi T_cur / T_i)) / 2

    `step()` advances T_cur by one; `step(epoch)` sets it from `epoch`, which may be fractional
    (e.g. epoch + i / iters within an epoch), as PyTorch's. `last_epoch` is floor(epoch).
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None):
        """One step on (no argument), or to `epoch` (a number >= 0, fractional allowed)."""
        # (no `_step_count`, as PyTorch's: this step never warns of the order of the steps)
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                # the period epoch falls in: periods T_0 T_mult^k end at T_0 (T_mult^(n+1) - 1) / (T_mult - 1)
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith): the lr goes linearly from base_lr up to max_lr over
    `step_size_up` steps and back down over `step_size_down` (default: the same), scaled by

        triangular: 1 ;  triangular2: 1 / 2^(cycle - 1) ;  exp_range: gamma^step

    or by `scale_fn(cycle or step)` (with scale_mode 'cycle' or 'iterations'). The schedule is by
    step number, so it does not compose with other changes to the lr; call step() after each batch.
    With `cycle_momentum` the momentum moves the opposite way, from max_momentum down to
    base_momentum: the group's `momentum` (SGD, RMSprop) or `betas[0]` (Adam, AdamW), and each
    group gets `max_momentum` and `base_momentum` entries, as PyTorch's. Construction sets each
    group's lr to base_lr. A custom scale_fn that is a plain function or lambda is not part of the
    state dict (a callable object's attributes are), as in PyTorch.
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        # the built-in modes fix what the scale is a function of
        self.scale_mode = scale_mode if scale_fn is not None else ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def scale_fn(self, x):
        """The amplitude's scale at cycle (or step) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # the position in the cycle, in [0, 1)
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * scale_factor * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, high - (high - low) * scale_factor * scale)
        return lrs

    def state_dict(self):
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()  # a callable object: its attributes
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        fn_state = state_dict.pop("_scale_fn_custom", None)
        super().load_state_dict(state_dict)  # the custom function itself stays the constructor's
        if fn_state is not None:
            self._scale_fn_custom.__dict__.update(fn_state)


def _check_schedulers(name, optimizer, schedulers):
    """SequentialLR's and ChainedScheduler's checks of the schedules they drive."""
    if len(schedulers) < 1:
        raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                             "kwargs to be specified when calling `step`, but got one at index "
                             f"{i} in the given schedulers sequence.")
        if optimizer is not scheduler.optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is "
                             f"different from {type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """A schedule made of others (`_schedulers`): its state dict holds theirs."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, state in zip(self._schedulers, inner):
            scheduler.load_state_dict(state)


class SequentialLR(_Composite):
    """One schedule after another: schedulers[i] runs from milestones[i - 1] on, restarted at its
    step 0 there (by its closed form where it has one, as PyTorch's). Construction resets each
    group's lr to its `initial_lr`, takes back the constructors' steps of the schedules and starts
    the first one again."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_schedulers(type(self).__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo_steps(self)
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = self._schedulers[idx].get_last_lr()

    def _undo_steps(self, scheduler):
        """Take back the constructor's step of every schedule inside `scheduler`, nested ones too."""
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self._undo_steps(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)  # the next schedule starts at its step 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Several schedules at once: each step() steps every one of them, in order, so chainable
    schedules (which change the current lr) compose, e.g. ConstantLR and ExponentialLR."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(type(self).__name__, optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]


class _LRScheduler(LRScheduler):
    """PyTorch's older name of LRScheduler, kept (as there) for schedules written against it: a subclass, so
    that its name stays `_LRScheduler`."""
