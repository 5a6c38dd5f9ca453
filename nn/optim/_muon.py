"""Muon, as `torch.optim.Muon`: momentum, then the update orthogonalized by a Newton-Schulz iteration."""
import math

from minigrad.device import array_module
from minigrad.dtypes import bfloat16_round  # PyTorch runs the Newton-Schulz iteration in bfloat16

from ._adafactor import lerp_
from .optimizer import Optimizer

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximate U V^T of grad = U S V^T (singular values brought to about 1), by ns_steps quintic
    Newton-Schulz steps X = a X + (b X X^T + c (X X^T)^2) X on the wide orientation of grad / ||grad||,
    every result rounded to bfloat16 as PyTorch's."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (float(x) for x in ns_coefficients)
    xp = array_module(grad)
    x = bfloat16_round(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    x = bfloat16_round(x / bfloat16_round(max(float(xp.linalg.norm(x)), eps)))
    for _ in range(ns_steps):
        gram = bfloat16_round(x @ x.T)
        gram_update = bfloat16_round(b * gram + c * (gram @ gram))
        x = bfloat16_round(a * x + gram_update @ x)
    return x.T if tall else x


def adjust_lr(lr, adjust_lr_fn, shape):
    """The lr scaled for the matrix's shape (A, B): sqrt(max(1, A/B)) ("original", the default) or
    0.2 sqrt(max(A, B)) ("match_rms_adamw": the update's RMS matches AdamW's)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """Muon (Jordan et al.), for the 2-D weights of hidden layers. Per parameter p with gradient g:

        B = lerp(B, g, 1 - momentum)                  (B: the momentum buffer)
        U = lerp(g, B, momentum) (nesterov) or B
        O = NS(U)                                     (Newton-Schulz orthogonalization, in bfloat16)
        p = p * (1 - lr * weight_decay) - adjust_lr(lr, p.shape) * O

    State per parameter, PyTorch's name: `momentum_buffer` (p's shape). Other parameters (biases,
    embeddings) belong to another optimizer, e.g. AdamW: Muon refuses them at construction.
    """

    sparse_refusal = "Muon does not support sparse gradients"

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _step_group(self, group):
        lr, wd, momentum = float(group["lr"]), float(group["weight_decay"]), float(group["momentum"])
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = p.new_zeros(p.shape)
            w, g, buf = p.array, p.grad.array, state["momentum_buffer"].array
            lerp_(buf, g, 1 - momentum)
            update = g.copy() if group["nesterov"] else buf
            if group["nesterov"]:
                lerp_(update, buf, momentum)
            ortho = zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
            w *= 1 - lr * wd
            w -= adjust_lr(lr, group["adjust_lr_fn"], w.shape) * ortho.astype(w.dtype)
            p._bump_version()


Muon.__module__ = __name__.rpartition(".")[0]  # nn.optim (PyTorch's: its module is private)
