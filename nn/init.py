"""Weight initialisation, as `torch.nn.init`: fill a tensor in place from minigrad's seeded generator.

Every function writes the tensor's array directly (no graph is recorded, as under no_grad),
bumps its version and returns it; `minigrad.manual_seed(n)` makes the draws reproducible.
"""
import math

import numpy as np

from minigrad import no_grad, random
from minigrad.autograd import recording
from minigrad.device import array_module


def _fill(tensor, values):
    """Write `values` (an array broadcastable to tensor's shape, or a scalar) into `tensor`, in place."""
    # (a write outside an op: inside a minigrad.compile capture it would happen at the capture only)
    recording.escape("an nn.init fill (a write to a tensor's array in place)",
                     "a replay would not write it again; initialize outside the compiled function")
    with no_grad():
        tensor.array[...] = values
        tensor._bump_version()
    return tensor


def _samples(tensor, draw):
    """`draw(rng, shape, dtype)` from the tensor's device's default generator, in the tensor's dtype.

    numpy's generator only draws float32 / float64, so other floating dtypes are drawn as float32."""
    xp = array_module(tensor.array)
    dt = tensor.array.dtype
    draw_dt = dt if dt in (np.float32, np.float64) else np.float32
    return draw(random.generator(xp), tensor.array.shape, draw_dt)


def uniform_(tensor, a=0.0, b=1.0):
    """Fill with samples of U(a, b). Shape: any (*), in place."""
    return _fill(tensor, _samples(tensor, lambda rng, s, d: rng.random(s, dtype=d) * (b - a) + a))


def normal_(tensor, mean=0.0, std=1.0):
    """Fill with samples of N(mean, std^2). Shape: any (*), in place."""
    return _fill(tensor, _samples(tensor, lambda rng, s, d: rng.standard_normal(s, dtype=d) * std + mean))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Fill with N(mean, std^2) samples conditioned on lying in [a, b] (redrawn until they do). Shape: any (*)."""
    vals = _samples(tensor, lambda rng, s, d: rng.standard_normal(s, dtype=d) * std + mean)
    xp = array_module(vals)
    rng = random.generator(xp)
    bad = (vals < a) | (vals > b)
    while bool(bad.any()):  # rejection sampling: each round keeps the in-range draws
        n = int(bad.sum())
        vals[bad] = rng.standard_normal(n, dtype=vals.dtype) * std + mean
        bad = (vals < a) | (vals > b)
    return _fill(tensor, vals)


def constant_(tensor, val):
    """Fill with `val`. Shape: any (*), in place."""
    return _fill(tensor, val)


def ones_(tensor):
    """Fill with 1. Shape: any (*), in place."""
    return _fill(tensor, 1)


def zeros_(tensor):
    """Fill with 0. Shape: any (*), in place."""
    return _fill(tensor, 0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix. Shape: (n, m), in place."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    xp = array_module(tensor.array)
    return _fill(tensor, xp.eye(*tensor.array.shape, dtype=tensor.array.dtype))


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table): relu sqrt(2), tanh 5/3, leaky_relu sqrt(2/(1+a^2)), ..."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d", "sigmoid"]
    if nonlinearity in linear_fns:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight of shape (out, in, *receptive field)."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0):
    """Glorot uniform: U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out)). Shape: (out, in, *)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)). Shape: (out, in, *)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan). Shape: (out, in, *).

    `Linear` uses a=sqrt(5), which gives bound = 1/sqrt(fan_in)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """He normal: N(0, std^2), std = gain / sqrt(fan). Shape: (out, in, *)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))
