"""`LKJCholesky`: random correlation matrices (the LKJ law), given as their lower Cholesky factors."""
import math

import minigrad

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all


class LKJCholesky(Distribution):
    """The LKJ law over dim x dim correlation matrices C, density proportional to det(C)^(eta - 1) with eta =
    `concentration`, as a law over C's lower Cholesky factor L (event shape (dim, dim)). The change of variables
    C = L L^T contributes prod_i L_ii^(dim - i) (rows counted from 1), so the density of L is
    prod_{i>=2} L_ii^(2 (eta - 1) + dim - i) / Z(eta)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # the onion method: row i (from 0) of L is sqrt(y_i) u_i on its off-diagonal part, u_i uniform on the unit
        # sphere in i dimensions, with y_i ~ Beta(i / 2, eta + (dim - 1 - i) / 2) (row 0 has no off-diagonal part;
        # its Beta(1/2, .) is a placeholder whose draw is multiplied by zero)
        i = minigrad.arange(dim, dtype=self.concentration.dtype, device=self.concentration.device)
        self._beta = Beta((i / 2).clamp(min=0.5), self.concentration.unsqueeze(-1) + (dim - 1 - i) / 2)
        super().__init__(batch_shape, minigrad.Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = minigrad.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=minigrad.Size()):
        with minigrad.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            # a standard normal vector normalized is uniform on the sphere; tril(-1) keeps row i's first i entries
            z = minigrad.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
            norm = z.pow(2).sum(-1, keepdim=True).sqrt()
            u = z / minigrad.where(norm > 0, norm, minigrad.ones_like(norm))  # (row 0 is all zeros: kept zero)
            w = y.sqrt() * u
            # the diagonal completes each row to unit length (a row of a correlation factor has norm 1)
            tiny = minigrad.finfo(w.dtype).tiny
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + minigrad.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        dim, eta = self.dim, self.concentration
        diag = value.diagonal(0, -2, -1)[..., 1:]
        # the exponent of L_ii, rows i = 2..dim counted from 1: 2 (eta - 1) + dim - i
        rows = minigrad.arange(2, dim + 1, dtype=eta.dtype, device=eta.device)
        power = 2 * (eta - 1).unsqueeze(-1) + dim - rows
        unnormalized = (power * diag.log()).sum(-1)
        # log Z from the onion construction (LKJ 2009): with a = eta + (dim - 1) / 2,
        # log Z = (dim - 1) log(pi) / 2 + mvlgamma(a - 1/2, dim - 1) - (dim - 1) lgamma(a)
        k = dim - 1
        a = eta + 0.5 * k
        log_z = 0.5 * k * math.log(math.pi) + minigrad.mvlgamma(a - 0.5, k) - k * minigrad.lgamma(a)
        return unnormalized - log_z
