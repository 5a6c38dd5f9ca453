"""minigrad.autograd: the engine's public face, named as in `torch.autograd`."""
from . import graph  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .function import AccumulateGrad, Function, Node, once_differentiable  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
