"""Weight averaging, as `torch.optim.swa_utils`: Stochastic Weight Averaging (SWA) and exponential moving
averages (EMA) of a model's weights, the SWA learning-rate schedule and the BatchNorm statistics pass.

    swa_model = AveragedModel(model)               # a copy whose weights are the running average
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)  # anneal each group's lr to swa_lr, then hold it
    ... after each epoch past swa_start: swa_model.update_parameters(model); swa_scheduler.step()
    update_bn(loader, swa_model)                   # BatchNorm's running statistics for the averaged weights

    ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999), use_buffers=True)

The averages are taken without autograd, in place, on the averaged copy's own tensors.
"""
import copy
import itertools
import math

import minigrad

from ..module import Module
from .lr_scheduler import LRScheduler, _warn_get_lr_called_within_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place `multi_avg_fn` for lists of tensors: ema = decay * ema + (1 - decay) * current."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @minigrad.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if p_ema.is_floating_point():
                p_ema.lerp_(p_model, 1 - decay)
            else:  # (integer buffers: the weighted sum, truncated back into the buffer's dtype)
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place `multi_avg_fn` for lists of tensors: the running mean of num_averaged + 1 models."""

    @minigrad.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        # AveragedModel passes its int64 n_averaged buffer: 1 / (n + 1) is then a float32 tensor, and PyTorch
        # lerps by that rounded weight, float64 parameters too
        weight = 1 / (num_averaged + 1)
        weight = float(weight) if isinstance(weight, minigrad.Tensor) else weight
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            if p_avg.is_floating_point():
                p_avg.lerp_(p_model, weight)
            else:
                p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An `avg_fn` for one tensor: returns decay * ema + (1 - decay) * current."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @minigrad.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """An `avg_fn` for one tensor: returns the running mean, avg + (current - avg) / (num_averaged + 1)."""

    @minigrad.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of `model` (moved to `device` if given) whose parameters (and with use_buffers, buffers)
    become an average of the models passed to `update_parameters`; calling it calls the copy.

    avg_fn(averaged, current, num_averaged) returns one tensor's new average; multi_avg_fn(averaged_list,
    current_list, num_averaged) updates lists in place; neither: the equal-weight SWA mean. The first
    update copies the model's values. Without use_buffers the buffers are copied from the model at each
    update (BatchNorm statistics: recompute them with `update_bn`). `n_averaged` (an int64 buffer, in the
    state dict) counts the updates.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", minigrad.tensor(0, dtype=minigrad.long, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged_tensors(self, model):
        if self.use_buffers:
            return (itertools.chain(self.module.parameters(), self.module.buffers()),
                    itertools.chain(model.parameters(), model.buffers()))
        return self.parameters(), model.parameters()

    @minigrad.no_grad()
    def update_parameters(self, model):
        """Fold `model`'s current parameters (and buffers, with use_buffers) into the average."""
        mine, theirs = [], []
        first = int(self.n_averaged) == 0
        for p_avg, p_model in zip(*self._averaged_tensors(model)):
            current = p_model.detach().to(p_avg.device)
            mine.append(p_avg.detach())
            theirs.append(current)
            if first:
                p_avg.detach().copy_(current)
        if not first:
            if self.multi_avg_fn is not None:
                for group_mine, group_theirs in _by_device_and_dtype(mine, theirs):
                    self.multi_avg_fn(group_mine, group_theirs, self.n_averaged)
            else:  # (the default is get_swa_avg_fn's formula, tensor by tensor: PyTorch's on the CPU)
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for p_avg, current in zip(mine, theirs):
                    p_avg.copy_(avg_fn(p_avg, current, self.n_averaged))
        if not self.use_buffers:  # the buffers follow the model's
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged.add_(1)


def _by_device_and_dtype(mine, theirs):
    """The (averaged, current) pairs in lists of one device and dtype each (a multi_avg_fn looks at the first
    tensor's dtype to choose its arithmetic, as PyTorch groups them)."""
    groups = {}
    for a, b in zip(mine, theirs):
        group = groups.setdefault((str(a.device), str(a.dtype)), ([], []))
        group[0].append(a)
        group[1].append(b)
    return list(groups.values())


@minigrad.no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running statistics of every BatchNorm layer of `model` in one pass over `loader` (each
    batch a tensor, or a list / tuple whose first item is the input): the statistics are reset and
    averaged over the batches with equal weight (momentum None for the pass), in training mode; the
    momentum and the model's mode are restored afterwards."""
    from ..modules.batchnorm import _BatchNorm

    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):  # (not the instance norms: PyTorch's test)
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _format_param(name, optimizer, param):
    """One value per parameter group: a list or tuple as it is (one per group), a number repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(param)} "
                             f"values, param_groups has {len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


class SWALR(LRScheduler):
    """Anneal each group's lr from its value at construction to `swa_lr` (a number, or one per group) over
    `anneal_epochs` steps, along a half cosine ('cos') or a line ('linear'), then keep it at swa_lr.

    Chainable, as PyTorch's: each step moves from the current lr, so that the schedule joins whatever
    schedule ran before it; `group["swa_lr"]` holds the target.
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr the annealing started from, given the current lr at fraction alpha of the way to swa_lr."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        # The current lr is (1 - a) start + a swa_lr with a = anneal(t) at the previous step: solve it for the
        # start, and step to the next t. (The construction's step, step 0, keeps the lr.)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        starts = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                  for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, starts)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """Every attribute but the optimizer and the annealing function (restored from its name)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
