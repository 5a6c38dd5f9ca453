"""`torch.nn.grad`: a convolution's gradient in its input or in its weight, given the gradient of its output.

Each is the convolution's own backward (nn/_functional/conv.py): the input gradient is the transposed
convolution of grad_output with the weight, the weight gradient the correlation of the input with
grad_output, both differentiable again.

    >>> gx = minigrad.nn.grad.conv2d_input(x.shape, w, gy, stride=2, padding=1)   # == x.grad after y.backward(gy)
"""
from ._functional._common import check_tensor
from ._functional.conv import ConvolutionTranspose, ConvolutionWeight, expand_param, out_size

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _setup(n, name, x_shape, w_shape, grad_output, stride, padding, dilation, groups):
    """The convolution's stride, pads and dilation, after checking that grad_output is its output's shape."""
    check_tensor(grad_output, "grad_output", name)
    x_shape, w_shape = [int(s) for s in x_shape], [int(s) for s in w_shape]
    if len(x_shape) != n + 2 or len(w_shape) != n + 2:
        raise RuntimeError(f"Expected {n + 2}-dimensional input for {n + 2}-dimensional weight {w_shape}, but got "
                           f"{len(x_shape)}-dimensional input of size {x_shape} instead")
    stride, dilation = expand_param(stride, n, "stride"), expand_param(dilation, n, "dilation")
    pads = tuple((p, p) for p in expand_param(padding, n, "padding"))
    if groups <= 0 or w_shape[0] % groups or x_shape[1] != w_shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {w_shape}, expected input{x_shape} to have "
                           f"{w_shape[1] * groups} channels, but got {x_shape[1]} channels instead")
    out = [x_shape[0], w_shape[0]] + [out_size(s, k, st, d, lo, hi) for s, k, st, d, (lo, hi) in
                                      zip(x_shape[2:], w_shape[2:], stride, dilation, pads)]
    if list(grad_output.shape) != out:
        raise RuntimeError(f"{name}: expected grad_output of size {out} (the convolution's output for input "
                           f"{x_shape} and weight {w_shape}), but got {list(grad_output.shape)}")
    return stride, pads, dilation


def _input_grad(n, name, input_size, weight, grad_output, stride, padding, dilation, groups):
    check_tensor(weight, "weight", name)
    stride, pads, dilation = _setup(n, name, input_size, weight.shape, grad_output, stride, padding, dilation, groups)
    return ConvolutionTranspose.apply(grad_output, weight, None, stride, pads, dilation, groups,
                                      tuple(int(s) for s in input_size[2:]))


def _weight_grad(n, name, input, weight_size, grad_output, stride, padding, dilation, groups):
    check_tensor(input, "input", name)
    stride, pads, dilation = _setup(n, name, input.shape, weight_size, grad_output, stride, padding, dilation, groups)
    return ConvolutionWeight.apply(input, grad_output, tuple(int(s) for s in weight_size[2:]), stride, pads, dilation,
                                   groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d in its input (of shape input_size): conv_transpose1d of grad_output with weight."""
    return _input_grad(1, "conv1d_input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d in its weight (of shape weight_size): sum over the batch of input's windows * grad_output."""
    return _weight_grad(1, "conv1d_weight", input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d in its input (of shape input_size): conv_transpose2d of grad_output with weight."""
    return _input_grad(2, "conv2d_input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d in its weight (of shape weight_size): sum over the batch of input's windows * grad_output."""
    return _weight_grad(2, "conv2d_weight", input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d in its input (of shape input_size): conv_transpose3d of grad_output with weight."""
    return _input_grad(3, "conv3d_input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d in its weight (of shape weight_size): sum over the batch of input's windows * grad_output."""
    return _weight_grad(3, "conv3d_weight", input, weight_size, grad_output, stride, padding, dilation, groups)
