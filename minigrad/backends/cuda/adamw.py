"""Adam / AdamW's update on the GPU: one elementwise kernel per parameter, in place."""
from . import kernels


def update(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled, step_scale, eps_scaled,
           max_exp_avg_sq=None):
    """As minigrad/backends/cpu/adamw.py's update; returns True."""
    kernels.adam_update(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled, step_scale,
                        eps_scaled, max_exp_avg_sq)
    return True
