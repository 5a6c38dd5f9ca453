"""minigrad: a define-by-run autograd engine on numpy (and cupy), named and behaving like PyTorch's.

    >>> import minigrad
    >>> x = minigrad.tensor(3.0, requires_grad=True)
    >>> loss = (x * 2 + 1) ** 2
    >>> loss.backward()
    >>> x.grad
    tensor(28.)
"""
import builtins as _builtins
import math as _math
import warnings as _warnings
from . import _aliases, _lazy, autograd, dtypes, ops, random  # noqa: F401
from .backends import get_kernels, get_num_threads, kernels, set_kernels, set_num_threads  # noqa: F401
from .backends.process import raise_mmap_threshold as _raise_mmap_threshold
from .backends.flags import (  # noqa: F401
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode, set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from ._format import set_printoptions  # noqa: F401
from ._warn_once import is_warn_always_enabled, set_warn_always  # noqa: F401
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from .autograd.grad_mode import set_anomaly_enabled  # noqa: F401
from .autograd.grad_mode import is_inference_mode_enabled  # noqa: F401
from .device import OutOfMemoryError, cuda_is_available, device, get_default_device, set_default_device  # noqa: F401
from .dtypes import (  # noqa: F401
    bfloat16, bool_ as bool, double, dtype, float, float16, float32, float64, half, int, int8, int16, int32, int64,
    long, short, uint8, uint16, uint32, uint64,
)
from .dtypes import cdouble, cfloat, complex64, complex128  # noqa: F401
from .factory import deprecated_range as range  # noqa: F401 (PyTorch's name)
from .factory import (  # noqa: F401
    arange, as_tensor, asarray, bernoulli, empty, empty_like, eye, from_numpy, full, full_like, linspace, logspace, normal,
    ones, ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm, scalar_tensor, tensor, zeros,
    zeros_like,
)
from .factory import bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window  # noqa: F401
from .factory import empty_permuted, empty_strided, from_file, frombuffer  # noqa: F401
from .ops import *  # noqa: F401,F403
from .ops import _bind_methods, _standard_gamma, _weight_norm  # noqa: F401
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401
from .tensor import Size, Tensor  # noqa: F401
from .legacy_types import (  # noqa: F401
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor,
)
from .typeinfo import (  # noqa: F401
    can_cast, finfo, get_default_dtype, iinfo, promote_types, result_type, set_default_dtype, set_default_tensor_type,
)

# `from .ops import *` brought ops' submodule linalg too: minigrad.linalg is minigrad/linalg.py, loaded on first use
globals().pop("linalg")
_bind_methods(Tensor)


def _stft_method(name):
    def method(self, *args, **kwargs):  # (minigrad.fft loads at the first call: a script without it never needs it)
        from . import fft

        return getattr(fft, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


Tensor.stft, Tensor.istft = _stft_method("stft"), _stft_method("istft")


def _take_out():  # PyTorch's out= on the top-level functions minigrad/ops/out.py names (the methods take none)
    from .ops.out import take_out

    take_out(globals())


_take_out()
# numpy's floating-point warnings ("divide by zero encountered in divide", "invalid value encountered in sqrt") from
# minigrad's own array code: PyTorch computes the same inf and nan silently. Appended, so that a filter of the user's
# (or `-W error`) decides first; warnings raised in the user's own code are untouched.
_warnings.filterwarnings("ignore", r"(divide by zero|invalid value|overflow|underflow) encountered in",
                         RuntimeWarning, r"(minigrad|nn|gpt)(\.|$)", append=True)
# a step's arrays of a few hundred KiB reuse glibc's heap, as in a PyTorch process (no setting changed)
_raise_mmap_threshold()

def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


pi, e, inf, nan, newaxis = _math.pi, _math.e, _math.inf, _math.nan, None  # PyTorch's constants


def numel(input):
    return input.numel()


def detach(t):
    return t.detach()


def is_inference(input):
    return input.is_inference()


def get_device(input):
    return input.get_device()


resolve_neg = ops.resolve_neg


def set_flush_denormal(mode):
    """False: numpy keeps denormal numbers, so minigrad cannot flush them (PyTorch's answer on a CPU without it)."""
    return False


__version__ = "0.1.0"
class memory_format:
    """A memory format: `to`, `contiguous`, `clone` and Module.to lay a copy out in channels_last(_3d) as PyTorch
    does; elsewhere accepted (a result's layout may differ from PyTorch's)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"minigrad.{self.name}"


contiguous_format, preserve_format = memory_format("contiguous_format"), memory_format("preserve_format")
channels_last, channels_last_3d = memory_format("channels_last"), memory_format("channels_last_3d")


class layout:
    """A tensor's memory layout: minigrad's tensors are all `minigrad.strided` (dense arrays)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"minigrad.{self.name}"


strided, sparse_coo = layout("strided"), layout("sparse_coo")
sparse_csr, sparse_csc = layout("sparse_csr"), layout("sparse_csc")


def typename(obj):
    """PyTorch's type name of a tensor ('minigrad.FloatTensor'), of a class or function (its own qualified
    name: nn.ReLU where nn.ReLU() was meant), or of any other object (its class's)."""
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") or hasattr(obj, "__name__") else type(obj)
    module = getattr(named, "__module__", None) or ""
    qualname = getattr(named, "__qualname__", None) or named.__name__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def get_num_interop_threads():
    """PyTorch's pool for running independent ops at once: minigrad runs ops one after another."""
    return 1


def set_num_interop_threads(n):
    """Accepted for PyTorch's scripts; minigrad runs ops one after another (see get_num_interop_threads)."""


def init_num_threads():
    """PyTorch's per-thread start of its thread pools: numpy's and numba's start themselves."""


def is_storage(obj):
    """Whether obj is a storage (what tensor.storage() or tensor.untyped_storage() returns)."""
    from .storage import TypedStorage

    return isinstance(obj, TypedStorage)  # (UntypedStorage is one too)


def get_device_module(device=None):  # noqa: F811 (PyTorch's parameter name)
    """The module of a device type, as `minigrad.get_device_module("cuda")` is minigrad.cuda; with none, the
    accelerator's when there is one, else minigrad.cpu."""
    import importlib

    from .device import device as device_class

    if device is None:
        name = "cuda" if cuda_is_available() else "cpu"
    elif isinstance(device, (str, device_class)):
        name = device_class(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    return importlib.import_module(f".{name}", __name__)


def thread_safe_generator():
    """The generator a DataLoader thread worker should draw from: minigrad's workers are processes, which draw from
    the default generator, so None (use the default), as PyTorch answers outside thread workers."""
    return None



# what this build has, as torch's flags say it of theirs: linear algebra and FFTs are numpy's (LAPACK, pocketfft);
# neither MKL nor OpenMP is used (the CPU kernels' threads are numba's)
has_lapack, has_spectral, has_mkl, has_openmp = True, True, False, False


def is_distributed(input):
    """Whether input is spread over processes: never here (a DTensor's local shards are tensors of their own)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return False


_aliases.install()  # minigrad.nn, minigrad.optim: PyTorch's paths to the nn package, bound on first use
# PyTorch's top-level names for ops that are nn.functional's here, with the same signatures
_FUNCTIONAL = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
               "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "selu", "selu_", "celu",
               "celu_", "threshold", "threshold_", "prelu", "rrelu_", "hardshrink", "max_pool1d", "max_pool2d",
               "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "pdist", "bilinear", "rms_norm", "channel_shuffle", "conv_tbc")
# the ones whose torch.* form differs (argument order, `train` required, reduction as an int)
from ._functional_forms import *  # noqa: E402,F401,F403
from ._functional_forms import METHODS as _NN_METHODS  # noqa: E402

for _name, _method in _NN_METHODS.items():
    setattr(Tensor, _name, _method)


# PyTorch's top-level in-place functions, each its Tensor method (made on first use)
_IN_PLACE_FUNCTIONS = {
    "abs_", "acos_", "acosh_", "addmv_", "as_strided_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_", "asinh_",
    "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_",
    "deg2rad_", "detach_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_",
    "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
    "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "zero_",
}

# PyTorch's top-level autocast names, minigrad.amp's
_AMP = {"autocast", "GradScaler", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
        "set_autocast_dtype", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "is_autocast_cpu_enabled",
        "set_autocast_cpu_enabled", "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cache_enabled",
        "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
        "autocast_decrement_nesting"}

# the complex dtype minigrad has not (numpy has no complex32): complex64 and complex128 are there
_COMPLEX = {"complex32", "chalf"}

_SYM = {"sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt", "sym_sum", "sym_constrain_range",
        "sym_constrain_range_for_size"}


# names bound at their first read (minigrad/_lazy.py): the engine itself needs none of them
_ON_USE = _lazy.names_of({
    # minigrad.cuda, .amp, .utils, .linalg, ...; minigrad.nn and minigrad.optim are nn and nn.optim (through the
    # alias finder in _aliases.py)
    None: ("cuda", "cpu", "amp", "memory", "viz", "utils", "distributed", "onnx", "serialization", "nn", "optim",
           "_dynamo", "_inductor", "_logging", "accelerator", "version", "distributions", "special", "testing", "mps",
           "multiprocessing", "jit", "func", "profiler", "fft", "sparse", "signal", "hub", "linalg", "library",
           "futures", "return_types", "functional", "overrides", "compiler"),
    ".compiler": ("compile",),  # torch.compile (minigrad.compile: its recorder, programs and guards)
    ".fft": ("stft", "istft"),  # torch.stft is torch.fft's here
    # (and minigrad.sparse: mm, addmm, sum, softmax, the legacy FloatTensor)
    ".sparse": ("sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "spmm", "hspmm", "dsmm", "smm",
                "sspaddmm"),
    ".nn.functional": _FUNCTIONAL,  # torch.conv2d, ...: nn.functional's (minigrad.nn is nn, bound on first use)
    ".utils.dlpack": ("from_dlpack", "to_dlpack"),  # torch.from_dlpack is torch.utils.dlpack's
    "._sym": tuple(_SYM),  # torch.sym_int, sym_max, ...: the builtins on plain numbers
    ".storage": ("TypedStorage", "UntypedStorage"),
    ".func": ("vmap",),  # torch.vmap is torch.func.vmap
    ".amp": tuple(_AMP),  # torch.autocast is torch.amp.autocast, ...
    ".serialization": ("save", "load"),  # minigrad.serialization's (zipfile and pickle load with it)
})


def _made_on_use(name):
    """The names made, not just imported, at their first read."""
    import importlib

    if name.endswith("Storage"):  # torch.FloatStorage, LongStorage, ...: what Tensor.storage_type() returns
        storage_class = importlib.import_module(".storage", __name__).legacy_storage_class(name)
        if storage_class is not None:
            return storage_class
    if name in _IN_PLACE_FUNCTIONS and hasattr(Tensor, name):  # torch.relu_(x), torch.clamp_(x, 0): x's method
        method = getattr(Tensor, name)

        def in_place(input, *args, **kwargs):
            return method(input, *args, **kwargs)

        in_place.__name__ = in_place.__qualname__ = name
        globals()[name] = in_place
        return in_place
    if name.startswith("_foreach_"):  # torch._foreach_mul_(params, 0.999), ...: the method's loop over the list
        foreach = importlib.import_module(".foreach", __name__)
        if name[9:] in foreach.NAMES:
            globals()[name] = foreach.make(name[9:])
            return globals()[name]
    if name in _COMPLEX:  # (still an AttributeError: hasattr(torch, "polar") stays False, as for any missing name)
        raise AttributeError(f"module 'minigrad' has no attribute '{name}': minigrad has no complex32 dtype "
                             "(numpy has none): use complex64")
    raise AttributeError(f"module 'minigrad' has no attribute '{name}'")


__getattr__ = _lazy.attach(__name__, _ON_USE, _made_on_use)


def __dir__():  # (the names bound at first read too, as dir(torch) lists them: minigrad.compile, minigrad.save, ...)
    return sorted(set(globals()) | set(_ON_USE))
