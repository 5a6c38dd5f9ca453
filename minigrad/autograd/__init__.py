"""minigrad.autograd: the engine's public face, named as in `torch.autograd`."""
from . import graph  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .function import AccumulateGrad, Function, Node, once_differentiable  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .grad_mode import (  # noqa: F401
    detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly,
)
from . import functional  # noqa: F401, E402 (torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp)
from . import forward_ad  # noqa: F401, E402 (torch.autograd.forward_ad: dual tensors)


def Variable(data, requires_grad=False, volatile=False):
    """PyTorch's old `Variable(t)`: since PyTorch 0.4 a Tensor is one, and Variable(t) gives t itself
    (with `requires_grad=True`, t marked so; `volatile` is ignored, as it has been since then)."""
    if requires_grad:
        data.requires_grad_(True)
    return data
