"""`torch.nn.utils.stateless`: PyTorch's older name of `torch.func.functional_call` (deprecated there)."""
import warnings

from minigrad import func


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the given parameters and buffers; see minigrad.func.functional_call."""
    warnings.warn("This API is deprecated as of PyTorch 2.0 and will be removed in a future version of PyTorch. "
                  "Please use torch.func.functional_call instead which is a drop-in replacement for this API.",
                  FutureWarning, stacklevel=2)
    return func.functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
