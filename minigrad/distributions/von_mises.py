"""`VonMises`: the circular normal distribution on angles (wind directions, phases, joint angles)."""
import math

import minigrad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

# Abramowitz & Stegun 9.8.1-9.8.4: log I0(x) and log I1(x) for x > 0 from polynomials in (x / 3.75)^2 below 3.75
# and in 3.75 / x above it (relative error under 2e-7, the approximation PyTorch uses too)
_I_SMALL = {0: [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
            1: [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]}
_I_LARGE = {0: [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537, -0.01647633,
                0.00392377],
            1: [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312, 0.01787654,
                -0.00420059]}


def _polynomial(y, coefficients):
    result = coefficients[-1] + 0 * y  # Horner: c0 + y (c1 + y (c2 + ...))
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for order 0 or 1 and x > 0."""
    assert order == 0 or order == 1
    small = _polynomial((x / 3.75).pow(2), _I_SMALL[order])
    if order == 1:
        small = x.abs() * small  # I1(x) = x (1/2 + ...)
    small = small.log()
    # log I(x) = x - log(x) / 2 + log(sqrt(x) e^-x I(x))
    large = x - 0.5 * x.log() + _polynomial(3.75 / x, _I_LARGE[order]).log()
    return minigrad.where(x < 3.75, small, large)


class VonMises(Distribution):
    """Density exp(kappa cos(x - loc)) / (2 pi I0(kappa)) on angles, `loc` the mean direction, `concentration`
    kappa > 0 (0 is uniform on the circle, large is close to Normal(loc, 1/sqrt(kappa))). Draws lie in [-pi, pi)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(VonMises, batch_shape, _instance, "loc", "concentration")

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # kappa cos(x - loc) - log(2 pi) - log I0(kappa)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _proposal_r(self):
        """r of Best & Fisher's wrapped-Cauchy envelope for the concentration (in float64)."""
        kappa = self.concentration.detach().double()
        tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        # (1 + rho^2) / (2 rho), which cancels badly for tiny kappa: there its expansion 1 / kappa + kappa
        return minigrad.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho.pow(2)) / (2 * rho))

    @minigrad.no_grad()
    def sample(self, sample_shape=minigrad.Size()):
        """Best & Fisher (1979): propose from a wrapped Cauchy, accept with the density ratio; repeat for the
        entries not yet accepted."""
        shape = self._extended_shape(sample_shape)
        kappa = self.concentration.detach().double().expand(shape)
        r = self._proposal_r.expand(shape)
        x = minigrad.zeros(shape, dtype=minigrad.float64)
        done = minigrad.zeros(shape, dtype=minigrad.bool)
        while not bool(done.all()):
            u1, u2, u3 = minigrad.rand((3,) + tuple(shape), dtype=minigrad.float64).unbind()
            z = (math.pi * u1).cos()
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
            x = minigrad.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
        # centred on loc and wrapped into [-pi, pi)
        return ((x + math.pi + self.loc.detach().double()) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        # the circular variance 1 - I1(kappa) / I0(kappa)
        kappa = self.concentration
        return 1 - (_log_modified_bessel_fn(kappa, order=1) - _log_modified_bessel_fn(kappa, order=0)).exp()
