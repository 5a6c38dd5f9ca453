"""`minigrad.amp`: PyTorch's mixed-precision helpers, `GradScaler` and `autocast`.

    scaler = minigrad.amp.GradScaler("cuda", enabled=(dtype == "float16"))  # or minigrad.cuda.amp.GradScaler(...)
    with minigrad.autocast(device_type="cuda", dtype=minigrad.float16):
        loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)             # (optional: to clip the true gradients)
    scaler.step(optimizer)                 # skipped when a gradient is inf or NaN
    scaler.update()

GradScaler is dynamic loss scaling, as PyTorch's: the loss is multiplied by the scale (2**16 at first)
so that small float16 gradients do not flush to zero; before the step each gradient is divided by it
again (in place), and the step is skipped when any gradient came out inf or NaN (the scale was too
large). `update()` then halves the scale after a skipped step (backoff_factor) and doubles it after
growth_interval steps in a row without one (growth_factor). The scale is a float32 value as in
PyTorch, kept on the host: reading whether a gradient overflowed costs one device sync a step.

For device "cuda" without a GPU it warns and disables itself, as PyTorch does; a disabled scaler
passes everything through (`scale(loss)` is `loss`, `step(opt)` is `opt.step()`). Device "cpu"
scales for real, as PyTorch's CPU GradScaler does.

autocast is accepted and does nothing: ops keep running in their inputs' dtypes (float32 models stay
float32, so results are at least as precise as under PyTorch's autocast). That holds for
dtype=minigrad.bfloat16 too (the CPU's default): minigrad has no bfloat16 arrays, and none are made.
It is a context manager and a decorator, as PyTorch's. What it was asked for is recorded, so that
is_autocast_enabled(device_type) and get_autocast_dtype(device_type) answer as PyTorch's inside it.
"""
import functools
import math
import sys
import types
import warnings

import numpy as np

from . import dtypes
from .autograd import no_grad
from .device import cuda_is_available, device

__all__ = ["GradScaler", "autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "is_autocast_cpu_enabled",
           "set_autocast_cpu_enabled", "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
           "autocast_decrement_nesting", "custom_fwd", "custom_bwd", "is_autocast_available"]

# an optimizer's place in one iteration: nothing done yet, gradients unscaled, stepped
_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


def _f32(v):
    """v rounded to float32: PyTorch keeps the scale in a float32 tensor, so every value it takes is one."""
    with np.errstate(over="ignore"):  # (past float32's range: inf, which update() then refuses)
        return float(np.float32(v))


class GradScaler:
    """Dynamic loss scaling for float16 training (see the module's notes). PyTorch's signature and methods."""

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda" and not cuda_is_available():
            # one frame deeper when a device's own class (minigrad.cuda.amp.GradScaler) called us
            depth = 2 if type(self) is GradScaler else 3
            warnings.warn("minigrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=depth)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale = None  # set by the first scale() (PyTorch's lazy start: load_state_dict may come first)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer = {}  # id(optimizer) -> {"stage": ..., "found_inf": bool or None}

    # ---- the iteration: scale, unscale_, step, update ----------------------------------------------
    def scale(self, outputs):
        """outputs (a tensor, or lists/tuples of them) times the scale; as they are when disabled."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init()
        return self._apply_scale(outputs)

    def _apply_scale(self, val):
        from .tensor import Tensor

        if isinstance(val, Tensor):
            if val.dtype == dtypes.float16 and val.ndim == 0:  # PyTorch's scale is a 0-d float32 tensor: beside
                return val * val.new_tensor(self._scale, dtype=dtypes.float32)  # a 0-d loss it makes float32
            return val * self._scale  # (a Python number: the output keeps its dtype, float16 stays float16)
        if isinstance(val, (list, tuple)):
            return type(val)(self._apply_scale(v) for v in val)
        if isinstance(val, (str, bytes)) or not hasattr(val, "__iter__"):
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return map(self._apply_scale, val)

    def unscale_(self, optimizer):
        """Divide the gradients of optimizer's parameters by the scale, in place, and note whether any is
        inf or NaN. At most once per optimizer between update()s (step() calls it when you have not)."""
        if not self._enabled:
            return
        self._check_started("unscale_")
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        state["found_inf"] = self._unscale_grads(optimizer, 1.0 / self._scale)
        state["stage"] = _UNSCALED

    def _unscale_grads(self, optimizer, inv_scale):
        """True when a gradient is inf or NaN after unscaling; None when no parameter has a gradient."""
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        if not grads:
            return None
        if any(g.dtype == dtypes.float16 for g in grads):
            # float16 gradients would lose what scaling kept: the parameters (their master copy) are float32
            raise ValueError("Attempting to unscale FP16 gradients.")
        from .ops import stack

        with no_grad():
            for g in grads:
                g.mul_(inv_scale)  # inv_scale rounds to the gradient's dtype, as PyTorch's float32 reciprocal
            # every gradient's check stays on the device; one read at the end (one sync on a GPU)
            return not bool(stack([g.isfinite().all() for g in grads]).all())

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs) on unscaled gradients, skipped (returning None) when one of them
        is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_started("step")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        out = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return out

    def update(self, new_scale=None):
        """Set the scale for the next iteration: new_scale if given, else backoff after any skipped step and
        growth after growth_interval unskipped ones in a row. Ends the iteration for every optimizer."""
        if not self._enabled:
            return
        self._check_started("update")
        if new_scale is not None:
            from .tensor import Tensor

            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a float or a 1-element tensor.")
                new_scale = new_scale.item()
            self._scale = _f32(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale = _f32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = _f32(self._scale * self._growth_factor)
                    if math.isfinite(grown):  # a scale that overflows float32 is not taken
                        self._scale = grown
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # ---- settings and state --------------------------------------------------------------------------
    def get_scale(self):
        """The scale as a Python float (init_scale before the first scale(); 1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return _f32(self._init_scale) if self._scale is None else self._scale

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """PyTorch's keys (scale, growth_factor, backoff_factor, growth_interval, _growth_tracker); {} when
        disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = _f32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]

    def __getstate__(self):
        # a pickled scaler starts a fresh iteration (the optimizers it saw are other objects once loaded)
        state = self.__dict__.copy()
        state["_per_optimizer"] = {}
        return state

    # ---- helpers -------------------------------------------------------------------------------------
    def _lazy_init(self):
        self._scale = _f32(self._init_scale)
        self._growth_tracker = self._init_growth_tracker

    def _check_started(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})


# ---- autocast -------------------------------------------------------------------------------------------
# the dtype each device's autocast names when none is given (PyTorch's; minigrad only records it, see the notes)
_AUTOCAST_DTYPES = {"cuda": dtypes.float16, "cpu": dtypes.bfloat16}
# per device: [enabled, dtype], as the innermost autocast (or set_autocast_*) left them
_autocast_state = {name: [False, d] for name, d in _AUTOCAST_DTYPES.items()}


def _state(device_type):
    """The [enabled, dtype] of a device type's autocast ('cuda:0' is 'cuda'); PyTorch's error for a type it does
    not know, minigrad's for one it lacks (as autocast(device_type) says)."""
    state = _autocast_state.get(device_type)
    return state if state is not None else _autocast_state[device(device_type).type]


def is_autocast_enabled(device_type=None):
    """Whether an enabled autocast of `device_type` is active ('cuda' when not given, as PyTorch's)."""
    return _state("cuda" if device_type is None else device_type)[0]


def set_autocast_enabled(device_type, enabled=None):
    """set_autocast_enabled(device_type, enabled), or PyTorch's older set_autocast_enabled(enabled) for 'cuda'."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _state(device_type)[0] = bool(enabled)


def get_autocast_dtype(device_type):
    return _state(device_type)[1]


def set_autocast_dtype(device_type, dtype):
    _state(device_type)[1] = dtype


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", _checked_dtype(dtype))


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", _checked_dtype(dtype))


def _deprecated(old, new):  # (PyTorch's per-device spellings, kept with its warning)
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _checked_dtype(dtype):
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")
    return dtype


# PyTorch caches the low-precision copies of weights made inside autocast regions; minigrad makes none, so the
# cache is a setting read back only, and clearing it has nothing to drop
_cache = {"enabled": True, "nesting": 0}


def is_autocast_cache_enabled():
    return _cache["enabled"]


def set_autocast_cache_enabled(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _cache["enabled"] = enabled


def clear_autocast_cache():
    """Drop the autocast cache: minigrad keeps none (see _cache)."""


def autocast_increment_nesting():
    """One autocast region more entered; returns how many are open (autocast's __enter__ counts itself)."""
    _cache["nesting"] += 1
    return _cache["nesting"]


def autocast_decrement_nesting():
    _cache["nesting"] -= 1
    return _cache["nesting"]


class autocast:
    """PyTorch's `torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`, accepted as a
    no-op: inside it ops run in their inputs' dtypes (see the module's notes). A context manager and a
    decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in ("cpu", "cuda"):
            device(device_type)  # PyTorch's error for a type it does not know, minigrad's for one it lacks
        self.device = device_type
        self.fast_dtype = _AUTOCAST_DTYPES[device_type] if dtype is None else dtype
        if enabled and device_type == "cuda" and not cuda_is_available():  # (PyTorch's words)
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            enabled = False
        if enabled and device_type == "cpu" and self.fast_dtype not in (dtypes.bfloat16, dtypes.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU Autocast "
                          f"only supports dtypes of {dtypes.bfloat16}, {dtypes.float16} currently.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled

    def __enter__(self):
        state = _autocast_state[self.device]
        self._previous = list(state), _cache["enabled"]
        state[:] = [self._enabled, self.fast_dtype]
        if self._cache_enabled is not None:  # (None: the cache setting outside stays, as PyTorch's)
            _cache["enabled"] = bool(self._cache_enabled)
        autocast_increment_nesting()
        return self  # (`with autocast(...) as ac:` reads ac.fast_dtype, as with PyTorch's)

    def __exit__(self, exc_type, exc_val, exc_tb):
        _autocast_state[self.device][:], _cache["enabled"] = self._previous
        autocast_decrement_nesting()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return run


def is_autocast_available(device_type):
    """Whether autocast accepts `device_type`: cpu and cuda, minigrad's devices; PyTorch's error for an unknown type."""
    if device_type in _AUTOCAST_DTYPES:
        return True
    from .device import _TORCH_TYPES

    if device_type.split(":")[0] not in _TORCH_TYPES:
        device(device_type)  # (raises PyTorch's error)
    return False


def _cast(value, device_type, dtype):
    """value with every floating-point tensor on `device_type` cast to dtype, through lists, tuples and dicts."""
    from .tensor import Tensor

    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() and value.device.type == device_type else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: inside an enabled autocast of device_type, with cast_inputs it
    casts the floating-point tensor arguments to that dtype and runs forward with autocast off (else as it is).
    It notes on ctx whether forward ran under autocast, for custom_bwd."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(ctx, *args, **kwargs):
        ctx._dtype = get_autocast_dtype(device_type)
        on = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = on and cast_inputs is None
        if cast_inputs is None or not on:
            return fwd(ctx, *args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(ctx, *_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))

    return forward


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: runs it under the autocast state its forward ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(ctx, *args, **kwargs):
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(ctx, *args, **kwargs)

    return backward


def _module_path(name, doc, **members):
    """A module `minigrad.amp.<name>` (PyTorch's torch.amp.<name>) holding these members, in sys.modules."""
    module = types.ModuleType(f"{__name__}.{name}", doc)
    module.__dict__.update(members)
    module.__all__ = list(members)
    sys.modules[module.__name__] = module
    return module


autocast_mode = _module_path("autocast_mode", "`minigrad.amp.autocast_mode`, as torch.amp.autocast_mode.",
                             autocast=autocast, custom_fwd=custom_fwd, custom_bwd=custom_bwd,
                             is_autocast_available=is_autocast_available)
grad_scaler = _module_path("grad_scaler", "`minigrad.amp.grad_scaler`, as torch.amp.grad_scaler.", GradScaler=GradScaler)


# ---- minigrad.cuda.amp and minigrad.cpu.amp: the same, with the device fixed, as torch.cuda.amp ---------
def _device_amp(device):
    """The module `minigrad.<device>.amp`: GradScaler and autocast with PyTorch's per-device signatures (no
    device argument). Registered in sys.modules, so `from minigrad.cuda.amp import GradScaler` works."""
    name = f"minigrad.{device}.amp"
    if name in sys.modules:
        return sys.modules[name]
    default_dtype = _AUTOCAST_DTYPES[device]

    class DeviceGradScaler(GradScaler):
        def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled)

    class DeviceAutocast(autocast):
        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            warnings.warn(f"`torch.{device}.amp.autocast(args...)` is deprecated. Please use "
                          f"`torch.amp.autocast('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    module = types.ModuleType(name, f"`{name}`: GradScaler and autocast for device '{device}' (see minigrad.amp).")
    for cls, short in ((DeviceGradScaler, "GradScaler"), (DeviceAutocast, "autocast")):
        cls.__name__ = cls.__qualname__ = short
        cls.__module__ = name
        setattr(module, short, cls)
    module.__all__ = ["GradScaler", "autocast"]
    if device == "cuda":  # (torch.cuda.amp's decorators, deprecated as PyTorch's)
        for short, make in (("custom_fwd", custom_fwd), ("custom_bwd", custom_bwd)):
            setattr(module, short, _deprecated_decorator(short, make))
        module.__all__ += ["custom_fwd", "custom_bwd"]
    sys.modules[name] = module
    return module


def _deprecated_decorator(short, make):
    """torch.cuda.amp.custom_fwd / custom_bwd: the torch.amp decorator for device 'cuda', with PyTorch's warning."""
    def decorator(*args, **kwargs):
        warnings.warn(f"`torch.cuda.amp.{short}(args...)` is deprecated. Please use "
                      f"`torch.amp.{short}(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
        return make(*args, device_type="cuda", **kwargs)

    decorator.__name__ = decorator.__qualname__ = short
    return decorator
