"""torch.nn.attention: `SDPBackend` and `sdpa_kernel`, the context manager that picks scaled_dot_product_attention's
kernels. minigrad has one attention (nn/_functional/attention.py), so the choice selects nothing; it is recorded
in torch.backends.cuda's switches (`minigrad.backends.cuda.enable_flash_sdp`, ...), where `*_sdp_enabled()` reads
it back inside the context as PyTorch's does. flex_attention is in nn/attention/flex_attention.py."""
import contextlib
import enum

from minigrad import backends

# torch.nn.attention's names of torch.backends.cuda's (reached as the switches below are, through `backends`)
SDPAParams = backends.cuda.SDPAParams
can_use_flash_attention = backends.cuda.can_use_flash_attention
can_use_efficient_attention = backends.cuda.can_use_efficient_attention


class SDPBackend(enum.Enum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__

    def __str__(self):
        return f"SDPBackend.{self.name}"


_SWITCHES = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
             "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
             "overrideable": SDPBackend.OVERRIDEABLE}
_priority = [1, 2, 0, 3, 4]  # PyTorch's default order, as ints
_overrideable = [True]  # (the one switch torch.backends.cuda has no public function for)


def _enabled(name):
    return _overrideable[0] if name == "overrideable" else getattr(backends.cuda, f"{name}_sdp_enabled")()


def _enable(name, on):
    if name == "overrideable":
        _overrideable[0] = bool(on)
    else:
        getattr(backends.cuda, f"enable_{name}_sdp")(on)


def _cur_sdpa_kernel_backends(with_priority=False):
    """The backends whose switch is on (in priority order with `with_priority`)."""
    on = [backend for name, backend in _SWITCHES.items() if _enabled(name)]
    return sorted(on, key=lambda b: _priority.index(int(b))) if with_priority else on


def _set_backends(backends, set_priority):
    for name, backend in _SWITCHES.items():
        _enable(name, backend in backends)
    if set_priority:
        _priority[:] = [int(b) for b in backends] + [p for p in _priority if p not in [int(b) for b in backends]]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Only `backends` (one SDPBackend or a list) enabled inside the context; the previous switches after it."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    backends = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _set_backends(backends, set_priority)
        yield {}
    finally:
        _set_backends(previous, set_priority)


__all__ = ["SDPBackend", "sdpa_kernel", "SDPAParams", "can_use_flash_attention", "can_use_efficient_attention"]
