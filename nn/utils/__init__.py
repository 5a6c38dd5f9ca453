"""Gradient utilities, as `torch.nn.utils`: clip_grad_norm_ (= get_total_norm then clip_grads_with_norm_),
clip_grad_value_; parameters_to_vector and vector_to_parameters. (Also here, loaded at first use: parametrize, parametrizations, prune, weight_norm /
remove_weight_norm, spectral_norm / remove_spectral_norm; fusion's fuse_conv_bn_eval, ...; skip_init; and rnn.)

They work on the gradient arrays directly (in place, nothing recorded), as an optimizer does.
"""
import math
import types
from operator import is_
import warnings

import numpy as np

from minigrad import Tensor
from minigrad.autograd import recording
from minigrad.device import array_module
from minigrad.ops.complex import refuse


def _grads(parameters):
    """The existing `.grad` tensors of a tensor or an iterable of tensors."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


def _vector_norm(a, norm_type, xp):
    """The `norm_type`-norm of all of array `a`'s elements, as a 0-d array of a's (real) dtype. Shape: (*) -> ()."""
    real = a.real.dtype  # a complex tensor's norm is real, as PyTorch's
    if a.size == 0:
        return xp.zeros((), dtype=real)
    flat = a.reshape(-1)
    if norm_type == 2.0:
        return xp.sqrt(xp.vdot(flat, flat).real)  # one BLAS pass, no temporary the size of the gradient
    if norm_type == math.inf:
        return xp.abs(flat).max()
    if norm_type == -math.inf:  # (the smallest magnitude, as linalg.vector_norm's)
        return xp.abs(flat).min()
    if norm_type == 1.0:
        return xp.abs(flat).sum()
    if norm_type == 0.0:
        return xp.count_nonzero(flat).astype(real)
    return (xp.abs(flat) ** norm_type).sum() ** (1.0 / norm_type)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so that their joint norm is at most `max_norm`; return that norm.

    The norm is taken over all gradients together, as if they were concatenated into one vector.
    Shapes: each `p.grad` (*) is scaled in place; returns a 0-d Tensor (the norm before clipping).

    A non-finite norm (a nan or inf gradient) raises PyTorch's RuntimeError with `error_if_nonfinite`;
    otherwise the gradients are scaled by it as PyTorch scales them: an inf norm makes the inf entries
    nan and the others 0, a nan norm makes them all nan.
    """
    if isinstance(parameters, types.GeneratorType):  # (a list, so that the generator is read once)
        parameters = list(parameters)
        if not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    norm_type = float(norm_type)  # (a bad one refused even with no gradients, as PyTorch's)
    if recording.hook.recorder is not None:  # minigrad.compile replays it as one call
        params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
        return recording.hook.recorder.on_call(_CompiledClip(), params, max_norm, norm_type, error_if_nonfinite, foreach)
    grads = _grads(parameters)
    if not grads:
        import minigrad

        return minigrad.tensor(0.0)
    if any(g.is_sparse for g in grads):  # (PyTorch's norm has no sparse kernel: its error)
        from minigrad.sparse import _no_sparse_kernel

        raise _no_sparse_kernel("linalg_vector_norm")
    xp = array_module(grads[0].array)
    total = _total_norm(grads, float(norm_type), xp, error_if_nonfinite)
    _scale(grads, max_norm / (total + 1e-6), xp)  # (the coefficient in the gradients' dtype, as PyTorch's)
    return Tensor._wrap(xp.asarray(total))


class _CompiledClip:
    """clip_grad_norm_ as a minigrad.compile replay calls it: `_clip_form` (made after a full call) where
    it applies, else the full call."""

    def __init__(self):
        self.form, self.__qualname__ = None, "clip_grad_norm_"

    def __call__(self, params, max_norm, norm_type, error_if_nonfinite, foreach):
        out = None if self.form is None else self.form(params, max_norm, norm_type, error_if_nonfinite)
        if out is None:
            out = clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite, foreach)
            self.form = _clip_form(params)
        return out


def _clip_form(params):
    """The 2-norm clip of these parameters' gradients again, with eager's array calls (`_total_norm`'s vdots,
    sqrts and stack of the norms, `_scale`'s multiplies) and none of the Python around them; it returns None,
    having written nothing, where eager might do otherwise: other parameters, a gradient come or gone (or
    sparse, or of another dtype), another norm_type, a max_norm not a number, a non-finite norm (eager's
    error, or its scaling under errstate). max_norm and error_if_nonfinite are read at each call (`foreach`
    changes nothing). None where no such form: no gradients, a non-float or non-numpy one, a non-leaf."""
    held = list(params)
    stepped = [p for p in held if p._grad is not None]
    unstepped = [p for p in held if p._grad is None]
    if not stepped or any(p.grad_fn is not None for p in held) or any(type(p._grad) is not Tensor for p in stepped):
        return None
    dtype = stepped[0]._grad.array.dtype
    if dtype.kind != "f" or any(type(p._grad.array) is not np.ndarray or p._grad.array.dtype != dtype for p in stepped):
        return None
    ndarray, sqrt, isfinite, multiply, asarray = np.ndarray, np.sqrt, np.isfinite, np.multiply, np.asarray
    vdot = getattr(np.vdot, "_implementation", np.vdot)  # (numpy's C vdot without its dispatch wrapper)

    def replay(params, max_norm, norm_type, error_if_nonfinite):
        if norm_type != 2.0 or type(max_norm) not in (float, int) or len(params) != len(held) \
                or not all(map(is_, params, held)) or any(p._grad is not None or p.grad_fn is not None for p in unstepped):
            return None
        grads, arrays, norms = [], [], []
        for p in stepped:
            g = p._grad
            if type(g) is not Tensor:  # (None: frozen since; sparse)
                return None
            a = g.array
            if type(a) is not ndarray or a.dtype is not dtype:
                return None
            flat = a.reshape(-1)
            norms.append(sqrt(vdot(flat, flat).real))  # (_vector_norm's; an empty one's 0 is zeros' 0)
            grads.append(g)
            arrays.append(a)
        stacked = asarray(norms)  # (np.stack's values and dtype: the norms are scalars of one dtype)
        total = sqrt(vdot(stacked, stacked).real)
        if not isfinite(total):
            return None
        coef = max_norm / (total + 1e-6)
        if not coef >= 1.0:  # (finite gradients: no errstate needed)
            c = asarray(coef, dtype=dtype)
            for g, a in zip(grads, arrays):
                multiply(a, c, out=a)
                g._version_counter[0] += 1  # (g._bump_version())
        return Tensor._wrap(asarray(total))

    return replay


def _total_norm(tensors, norm_type, xp, error_if_nonfinite=False):
    """The norm of the tensors' norms: theirs all together, as if concatenated (a 0-d array); a non-finite
    one raises PyTorch's error where `error_if_nonfinite`."""
    total = _vector_norm(xp.stack([_vector_norm(t.array, norm_type, xp) for t in tensors]), norm_type, xp)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total


def _scale(grads, coef, xp):
    """Multiply each gradient in place by min(coef, 1), as PyTorch (a nan coef too); by 1 is a no-op, so skipped."""
    if not coef >= 1.0:
        with np.errstate(invalid="ignore"):  # (inf * 0 for an inf norm: nan, as PyTorch, without numpy's warning)
            for g in grads:
                xp.multiply(g.array, xp.asarray(coef, dtype=g.array.dtype), out=g.array)
                g._bump_version()


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The `norm_type`-norm of all the tensors' elements together, as if concatenated (PyTorch 2.6's); a 0-d
    Tensor, 0. for no tensors. `foreach` is accepted for PyTorch's signature (every path here is one)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if recording.hook.recorder is not None:  # minigrad.compile replays it as one call
        return recording.hook.recorder.on_call(get_total_norm, tensors, norm_type, error_if_nonfinite, foreach)
    norm_type = float(norm_type)
    if not tensors:
        import minigrad

        return minigrad.tensor(0.0)
    xp = array_module(tensors[0].array)
    return Tensor._wrap(xp.asarray(_total_norm(tensors, norm_type, xp, error_if_nonfinite)))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the parameters' gradients in place by min(max_norm / (total_norm + 1e-6), 1) (PyTorch 2.6's):
    clip_grad_norm_ with the norm given, e.g. get_total_norm's. As PyTorch, a non-finite total_norm is used
    as it is (inf zeroes the gradients, nan makes them nan). Returns None."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    if recording.hook.recorder is not None:  # minigrad.compile replays it as one call (it writes the arrays)
        return recording.hook.recorder.on_call(clip_grads_with_norm_, params, max_norm, total_norm, foreach)
    grads = _grads(params)
    if not grads:
        return None
    xp = array_module(grads[0].array)
    total = total_norm.array if isinstance(total_norm, Tensor) else xp.asarray(total_norm, dtype=grads[0].array.dtype)
    _scale(grads, float(max_norm) / (total + 1e-6), xp)
    return None


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated: clip_grad_norm_, with PyTorch's FutureWarning."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value], in place. Shapes: each p.grad (*).
    (`foreach`: PyTorch's signature; every path here is one.)"""
    if recording.hook.recorder is not None:  # minigrad.compile replays it as one call (it writes the arrays)
        params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
        return recording.hook.recorder.on_call(clip_grad_value_, params, clip_value, foreach)
    clip_value = float(clip_value)
    grads = _grads(parameters)
    refuse("clamp", *grads)
    for g in grads:
        array_module(g.array).clip(g.array, -clip_value, clip_value, out=g.array)
        g._bump_version()


def _zero_grad(parameters, set_to_none=True):
    """Forget (set_to_none) or zero the `.grad` of each parameter: the one mechanism behind
    `Module.zero_grad` and `Optimizer.zero_grad`."""
    if recording.hook.recorder is not None:  # minigrad.compile replays it as one call
        return recording.hook.recorder.on_call(_CompiledZeroGrad("_zero_grad"), list(parameters), set_to_none)
    for p in parameters:
        g = p.grad
        if g is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if g.is_sparse:  # emptied in place, as PyTorch's zero_() of a sparse tensor: no elements left
            g._indices_t, g._values_t, g._coalesced = g._indices_t[:, :0], g._values_t[:0].detach(), True
            continue
        # a gradient built with create_graph is part of a graph: cut it off before overwriting it
        g.grad_fn, g._requires_grad = None, False
        g.array.fill(0)
        g._bump_version()


class _CompiledZeroGrad:
    """`zero_grad` as a minigrad.compile replay calls it: with set_to_none, each leaf's gradient let go of
    directly (`p._grad = None`: what `p.grad`'s getter and setter come to for a leaf of Tensor's own `grad`
    property outside a capture), none of the property calls around it; a non-leaf (the getter's warning), a
    subclass's own `grad` or zeroing in place runs `_zero_grad` itself. The parameters are the call's
    argument, or, given an optimizer, those of its param_groups at each call (a group added since)."""

    def __init__(self, qualname, optimizer=None):
        self.__qualname__, self.optimizer = qualname, optimizer

    def __call__(self, *args):
        if self.optimizer is None:
            params, set_to_none = args
        else:
            (set_to_none,) = args
            params = [p for g in self.optimizer.param_groups for p in g["params"]]
        if not set_to_none:
            return _zero_grad(params, set_to_none)
        for p in params:
            if p.grad_fn is None and type(p).grad is _GRAD:
                p._grad = None
            else:
                _zero_grad((p,), set_to_none)


_GRAD = Tensor.grad  # (the property itself)


def parameters_to_vector(parameters):
    """Every parameter flattened and concatenated, in order, as one 1-d tensor (differentiable, a copy).
    Shapes: parameters of shapes (*) -> (total numel,)."""
    import minigrad

    params = list(parameters)
    _one_device(params)
    return minigrad.cat([p.view(-1) for p in params])  # (a non-contiguous parameter: view's error, as PyTorch's)


def vector_to_parameters(vec, parameters):
    """Make each parameter's data its slice of `vec`, consecutive, unrecorded (the inverse of
    parameters_to_vector). As PyTorch: the parameters become views of `vec` (its memory and dtype), and a
    longer `vec`'s tail is left over. Shapes: vec (at least the total numel,)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    _one_device(params)
    start = 0
    for p in params:
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data  # (a short vec: view_as's error, as PyTorch's)
        start += n


def _one_device(params):
    devices = {p.device.type for p in params}
    if len(devices) > 1:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")


from . import rnn  # noqa: E402 (torch.nn.utils.rnn: pad_sequence, PackedSequence, pack_padded_sequence, ...)

# parametrize, parametrizations and the older weight_norm / spectral_norm build on nn.Module, which imports
# this package: they are loaded at first use (`nn.utils.weight_norm`, `from nn.utils import parametrize`).
# (The older two live in _weight_norm.py and _spectral_norm.py: `nn.utils.weight_norm` is the function.)
_LAZY = {"parametrize": None, "parametrizations": None, "prune": None, "stateless": None, "weight_norm": "_weight_norm",
         "remove_weight_norm": "_weight_norm", "spectral_norm": "_spectral_norm",
         "remove_spectral_norm": "_spectral_norm", "fusion": None, "fuse_conv_bn_eval": "fusion",
         "fuse_conv_bn_weights": "fusion", "fuse_linear_bn_eval": "fusion", "fuse_linear_bn_weights": "fusion",
         "init": None, "skip_init": "init"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module = importlib.import_module(f"{__name__}.{_LAZY[name] or name}")
    value = module if _LAZY[name] is None else getattr(module, name)
    globals()[name] = value
    return value
