"""Adam / AdamW's update on the GPU: one elementwise kernel per parameter, in place."""
from . import kernels


def supports(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *scalars):
    """float32 and float64 cupy parameters."""
    return param.dtype.char in "fd"


def forward(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled, step_scale,
            eps_scaled):
    """As minigrad/backends/cpu/adamw.py's forward."""
    kernels.adam_update(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled, step_scale,
                        eps_scaled, max_exp_avg_sq)
