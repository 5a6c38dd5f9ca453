"""The switches PyTorch scripts set on `torch.backends` and `torch`: TF32 matmuls, float32 matmul
precision, deterministic algorithms. Each is one setting here, read or written from every spelling.

    minigrad.backends.cuda.matmul.allow_tf32 = True      # the same switch as
    minigrad.set_float32_matmul_precision("high")         # and as minigrad.cuda.set_tf32(True)

TF32 is the one that changes what runs (float32 matmuls on a GPU, through cupy: see minigrad/cuda.py).
The reduced-precision-reduction flags and `use_deterministic_algorithms` are kept and read back only:
they select nothing in minigrad.
"""

_PRECISIONS = ("highest", "high", "medium")
_precision = {"named": None}  # 'high' or 'medium' as set_float32_matmul_precision last named it (both mean TF32)


def _tf32():
    from .. import cuda

    return cuda.get_tf32()


def _set_tf32(enabled):
    from .. import cuda

    cuda.set_tf32(bool(enabled))


class CudaMatmul:
    """`torch.backends.cuda.matmul`: allow_tf32, allow_fp16/bf16_reduced_precision_reduction."""

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return _tf32()

    @allow_tf32.setter
    def allow_tf32(self, value):
        _precision["named"] = None
        _set_tf32(value)


matmul = CudaMatmul()


def get_float32_matmul_precision():
    """'highest' (full float32 products), or the 'high' / 'medium' last set (TF32 allowed), as PyTorch reports them."""
    if not _tf32():
        return "highest"
    return _precision["named"] or "high"


def set_float32_matmul_precision(precision):
    """'highest' keeps float32 products exact; 'high' and 'medium' let them use TF32 (PyTorch's meaning)."""
    if precision not in _PRECISIONS:
        import warnings

        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _precision["named"] = precision
    _set_tf32(precision != "highest")


# fill_uninitialized_memory: under deterministic algorithms, `empty` fills its memory (NaN, or an integer's largest)
_deterministic = {"mode": False, "warn_only": False, "fill_uninitialized_memory": True}


def use_deterministic_algorithms(mode, *, warn_only=False):
    _deterministic.update(mode=bool(mode), warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


_DEBUG_MODES = ("default", "warn", "error")  # (the integer levels 0, 1, 2 in this order)


def get_deterministic_debug_mode():
    """use_deterministic_algorithms' setting as one level: 0 off, 1 warn only, 2 on."""
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def set_deterministic_debug_mode(debug_mode):
    """use_deterministic_algorithms by level: "default" or 0 (off), "warn" or 1 (warn only), "error" or 2 (on)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


# torch.backends.cuda's scaled-dot-product-attention switches (nn.attention.sdpa_kernel sets them): minigrad has
# one attention, so they select nothing; each reads back what was set, all on by default (PyTorch's)
_sdp = {"cudnn": True, "flash": True, "mem_efficient": True, "math": True}


def sdp_enabled(name):
    return _sdp[name]


def set_sdp(name, enabled):
    _sdp[name] = bool(enabled)
