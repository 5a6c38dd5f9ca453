"""Elementwise activations: GELU, ReLU, Tanh. Each maps shape (*) to (*)."""
import minigrad

from .. import functional as F
from ..module import Module


class GELU(Module):
    """x * Phi(x) (Phi the standard normal CDF); approximate='tanh' uses GPT-2's tanh formula."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"


class ReLU(Module):
    """max(x, 0)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input):
        return minigrad.tanh(input)
