"""minigrad.autograd: the engine's public face, named as in `torch.autograd`."""
from . import graph  # noqa: F401
from .engine import _is_checkpoint_valid, backward, grad  # noqa: F401
from .function import AccumulateGrad, Function, Node, once_differentiable  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .grad_mode import (  # noqa: F401
    detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly,
)
from . import functional  # noqa: F401, E402 (torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp)
from . import forward_ad  # noqa: F401, E402 (torch.autograd.forward_ad: dual tensors)

from . import anomaly_mode, variable  # noqa: F401, E402
from .variable import Variable  # noqa: F401, E402
from .grad_mode import is_multithreading_enabled, is_view_replay_enabled, set_multithreading_enabled  # noqa: F401, E402
from .function import SavedTensorHandle as SavedTensor  # noqa: F401, E402


def is_tensor_like(inp):
    """`torch.autograd.is_tensor_like`, which is `torch.overrides.is_tensor_like`."""
    from ..overrides import is_tensor_like

    return is_tensor_like(inp)


def __getattr__(name):
    # torch.autograd.profiler after a bare `import torch`: minigrad.profiler (through the alias finder), which
    # imports the engine itself and so loads on first use
    if name in ("profiler", "profiler_util"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
