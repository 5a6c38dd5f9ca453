"""`minigrad.autograd.variable`, the module path of `torch.autograd.variable`."""


def Variable(data, requires_grad=False, volatile=False):
    """PyTorch's old `Variable(t)`: since PyTorch 0.4 a Tensor is one, and Variable(t) gives t itself
    (with `requires_grad=True`, t marked so; `volatile` is ignored, as it has been since then)."""
    if requires_grad:
        data.requires_grad_(True)
    return data
