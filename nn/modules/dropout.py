"""Dropout: zero random elements while training."""
from .. import functional as F
from ..module import Module, init_named


class Dropout(Module):
    """Zero each element with probability p and scale the survivors by 1/(1-p), in training mode only.

    Shape: (*) -> (*). In eval mode (or with p=0) it returns its input.
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:  # (PyTorch's comparisons: a string p is refused in its words too)
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _DropoutNd(Dropout):
    fn = None

    def forward(self, input):
        return type(self).fn(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels with probability p in training. Shapes: (N, C, L) or (C, L)."""

    fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels with probability p in training. Shapes: (N, C, H, W)."""

    fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zero whole channels with probability p in training. Shapes: (N, C, D, H, W) or (C, D, H, W)."""

    fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's zero mean and unit variance, in training. Shape: (*) -> (*)."""

    fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels, in training. Shapes: (N, C, *)."""

    fn = staticmethod(F.feature_alpha_dropout)


init_named(Dropout, owner="_DropoutNd")
