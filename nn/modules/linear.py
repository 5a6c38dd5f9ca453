"""Linear (y = x W^T + b) and Identity."""
import math

import minigrad

from .. import functional as F
from .. import init
from .._functional.linear import check_linear, check_tensor_arg
from ..module import Module
from ..parameter import Parameter


class Identity(Module):
    """Returns its input unchanged (a placeholder that takes any arguments). Shape: (*) -> (*)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b, with W of shape (out_features, in_features) as in PyTorch.

    Shapes: input (*, in_features) -> output (*, out_features).
    Init (PyTorch's): W ~ U(-1/sqrt(in), 1/sqrt(in)) via kaiming_uniform_(a=sqrt(5)), b likewise.
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(minigrad.empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(minigrad.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the initial values again (PyTorch's init for this layer)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        weight = self.weight  # (a registered parameter: each read goes through Module.__getattr__)
        if not isinstance(input, minigrad.Tensor) or input.array.shape[-1:] != (self.in_features,) or \
                input.array.dtype != weight.array.dtype:
            check_tensor_arg(input, "linear", "input", 1)  # PyTorch's errors (the reference kernel checks nothing)
            check_linear(input, weight, self.bias)
        return F.linear(input, weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under PyTorch's name for MultiheadAttention's out_proj (a class PyTorch's quantization
    tools leave alone); here it is a Linear in every way but its name."""
class Bilinear(Module):
    """y_k = x1^T A_k x2 + b_k. Shapes: input1 (*, in1_features), input2 (*, in2_features) -> (*, out_features);
    weight (out, in1, in2) and bias (out,) both U(-1/sqrt(in1), 1/sqrt(in1)) (PyTorch's init)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(minigrad.empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(minigrad.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
