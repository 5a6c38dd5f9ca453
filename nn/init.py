"""Weight initialisation, as `torch.nn.init`: fill a tensor in place from minigrad's seeded generator.

Every function writes the tensor's array directly (no graph is recorded, as under no_grad),
bumps its version and returns it; `minigrad.manual_seed(n)` makes the draws reproducible, and
`generator=` (a `minigrad.Generator`) draws from a stream of its own instead, as PyTorch >= 2.1.
"""
import math
import warnings

import numpy as np

from minigrad import Tensor, no_grad, random, special
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


def _rng(tensor, generator):
    """`generator`, or the tensor's device's default generator (both draw with numpy Generator's names)."""
    return generator if generator is not None else random.generator(array_module(tensor.array))


def _samples(tensor, draw, kind, generator=None):
    """`draw(rng, shape, dtype)` from `generator` (or the default one), in the tensor's dtype.

    numpy's generator only draws float32 / float64, so other floating dtypes are drawn as float32; an integer
    tensor gets PyTorch's error for a `kind` ("uniform" / "normal") draw."""
    dt = tensor.array.dtype
    if dt.kind == "c":  # (PyTorch's: a complex tensor's real and imaginary parts each drawn alike)
        part = np.dtype(dt.char.lower())
        return draw(_rng(tensor, generator), tensor.array.shape + (2,), part).view(dt).reshape(tensor.array.shape)
    random.check_floating(kind, tensor.dtype)
    draw_dt = dt if dt in (np.float32, np.float64) else np.float32
    return draw(_rng(tensor, generator), tensor.array.shape, draw_dt)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of U(a, b). Shape: any (*), in place."""
    random.check_uniform(a, b, tensor.dtype)
    return _fill(tensor, _samples(tensor, lambda rng, s, d: rng.random(s, dtype=d) * (b - a) + a, "uniform",
                                   generator))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of N(mean, std^2). Shape: any (*), in place. A complex tensor's parts are each
    N(mean, std^2 / 2), as PyTorch's."""
    random.check_std(std)
    if tensor.array.dtype.kind == "c":
        std = std * math.sqrt(0.5)
    return _fill(tensor, _samples(tensor, lambda rng, s, d: rng.standard_normal(s, dtype=d) * std + mean,
                                   "normal", generator))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std^2) samples conditioned on lying in [a, b]. Shape: any (*).

    Drawn through the normal's inverse CDF from U(Phi(alpha), Phi(beta)), alpha and beta the bounds in
    standard units: one draw per entry however far [a, b] lies from the mean (redrawing until inside never
    ends then), clipped to [a, b] against rounding."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    if a <= b:  # (PyTorch's error for an integer tensor names its normal draw, or its uniform one's bounds check)
        random.check_floating("normal", tensor.dtype)
    random.check_uniform(a, b, tensor.dtype)
    alpha, beta = (a - mean) / std, (b - mean) / std
    # the bounds' side of the mean, mirrored below it: Phi far above 0 rounds to 1, erfc's lower tail does not
    side = -1.0 if alpha + beta > 0 else 1.0
    lo, hi = (math.erfc(-side * alpha / math.sqrt(2)) / 2, math.erfc(-side * beta / math.sqrt(2)) / 2)
    xp = array_module(tensor.array)
    u = xp.asarray(_rng(tensor, generator).random(tensor.array.shape, dtype=np.float64)) * (hi - lo) + lo
    z = side * special.ndtri(Tensor._wrap(u)).array
    return _fill(tensor, xp.clip(mean + std * z, a, b))


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
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")  # (PyTorch's text)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out)). Shape: (out, in, *)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)). Shape: (out, in, *)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan). Shape: (out, in, *).

    `Linear` uses a=sqrt(5), which gives bound = 1/sqrt(fan_in)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)  # (PyTorch's warning)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2), std = gain / sqrt(fan). Shape: (out, in, *)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)  # (PyTorch's warning)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def _standard_normal(tensor, shape, generator):
    """N(0, 1) draws of `shape` from `generator` (or the tensor's device's default one), in the tensor's
    dtype where numpy's generator draws it (float32 / float64), else float32."""
    dt = tensor.array.dtype
    if dt.kind != "c":  # (PyTorch draws them with normal_ on a tensor of its dtype: an integer one refuses)
        random.check_floating("normal", tensor.dtype)
    return _rng(tensor, generator).standard_normal(shape, dtype=dt if dt in (np.float32, np.float64) else np.float32)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix times `gain` (Saxe et al.), PyTorch's construction: the Q of
    the QR decomposition of a standard normal matrix, its columns' signs fixed by R's diagonal so that
    Q is uniformly distributed. The tensor is seen as (shape[0], the product of the rest): its rows are
    orthonormal (W W^T = gain^2 I) when rows <= cols, its columns when rows >= cols. Shape: (n, *), n >= 1
    dimensions after the first."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    xp = array_module(tensor.array)
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _standard_normal(tensor, (rows, cols), generator)
    if rows < cols:  # QR of the tall transpose: orthonormal columns there are orthonormal rows here
        flat = flat.T
    q, r = xp.linalg.qr(flat)
    q *= xp.sign(xp.diagonal(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(tensor.shape))


def dirac_(tensor, groups=1):
    """Fill a convolution weight with the Dirac delta: a convolution with it copies input channel c
    to output channel c (within each of `groups` groups of output channels), as many channels as
    both sides have; the rest is 0. Shape: (out, in, *kernel), 3 to 5 dimensions; out divisible by groups."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tensor.shape
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = shape[0] // groups
    xp = array_module(tensor.array)
    values = xp.zeros(shape, dtype=tensor.array.dtype)
    centre = tuple(s // 2 for s in shape[2:])  # the kernel's middle (the later one of two, for even sizes)
    for g in range(groups):
        for d in range(min(out_per_group, shape[1])):
            values[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor with N(0, std^2) draws, then set ceil(sparsity * rows) entries of each column,
    chosen at random, to 0 (Martens). Shape: (rows, cols)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    xp = array_module(tensor.array)
    values = _standard_normal(tensor, (rows, cols), generator) * std
    # each column's zeros: the first num_zeros rows of a random order of its rows (independent per column)
    order = _rng(tensor, generator).random((rows, cols)).argsort(axis=0)[:num_zeros]
    values[order, xp.arange(cols)] = 0
    return _fill(tensor, values)


def _make_deprecate(meth):
    """PyTorch's old name of an initializer (without the trailing _): warns, then calls it."""
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"{old_name}(...): deprecated, use `{new_name}`."
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
