"""Transforms: invertible maps y = f(x) with log|det df/dx|, for `TransformedDistribution`
(`torch.distributions.transforms`).

A transform knows its `domain` and `codomain` (constraints), its `sign` (+1 increasing, -1 decreasing, where
it is monotone), `event_dim` (how many rightmost dims one application couples), and
`log_abs_det_jacobian(x, y)`. With `cache_size=1` it keeps its last (x, y) pair, so that the inverse of a
value it just made is that value's x exactly: SAC's tanh-squashed action has log_prob(action) without
atanh(tanh(x)), which loses x where tanh rounds to +-1.
"""
import math
import numbers
import weakref

import numpy as np

import minigrad

from . import constraints
from .utils import _sum_rightmost, broadcast_all, clamp_probs, softplus

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
           "identity_transform"]


class Transform:
    """y = self(x), x = self.inv(y). Subclasses define `_call`, `_inverse` and `log_abs_det_jacobian`."""

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (made once; it refers back to this one without keeping it alive)."""
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """x = f^-1(y) of a transform f, sharing f's cache."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform  # a strong reference: the inverse keeps f alive

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)  # log|dx/dy| = -log|dy/dx|

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts[-1](... parts[1](parts[0](x))): the log-determinants add, each summed over the dims that the
    composition's event covers beyond its own."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # the first part's domain, widened by however many event dims the later parts add
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return minigrad.zeros_like(x)
        # the intermediate values, from the parts' caches where they keep them
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class AbsTransform(Transform):
    """y = |x|: not invertible (the inverse gives the non-negative root), for the half distributions."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class ExpTransform(Transform):
    """y = exp(x); log|dy/dx| = x."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x^exponent on the positive reals; log|dy/dx| = log|exponent y / x|."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return minigrad.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        return minigrad.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


class SigmoidTransform(Transform):
    """y = sigmoid(x), kept inside (0, 1) in floating point; log|dy/dx| = log y + log(1 - y)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def _call(self, x):
        return clamp_probs(minigrad.sigmoid(x))

    def _inverse(self, y):
        finfo = minigrad.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()  # logit

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)  # log sigmoid(x) + log sigmoid(-x)


class SoftplusTransform(Transform):
    """y = log(1 + e^x); log|dy/dx| = log sigmoid(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y  # log(e^y - 1), written to keep precision for large y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x); log|dy/dx| = log(1 - tanh(x)^2), computed as 2 (log 2 - x - softplus(-2x)), which stays
    finite where tanh(x) rounds to +-1. The inverse is atanh, unclamped: use cache_size=1 to get back the x of
    a y this transform made."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale x (numbers or tensors, broadcast); with event_dim > 0 the log-determinant
    log|scale| is summed over that many rightmost dims."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((a == b).all()):
                return False
        return True

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = minigrad.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:-self.event_dim]) + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return minigrad.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    def inverse_shape(self, shape):
        return minigrad.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))


def _at_least_1d(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim; not bijective (adding a constant to x leaves y alone), so the inverse
    log y is one preimage and there is no log-determinant."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        return minigrad.softmax(x, dim=-1)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _at_least_1d(shape)
        return shape

    def inverse_shape(self, shape):
        _at_least_1d(shape)
        return shape


class StickBreakingTransform(Transform):
    """K reals to a point of the (K+1)-simplex: z_i = sigmoid(x_i - log(K + 1 - i)) breaks off that share of
    the stick left, y_i = z_i prod_{j<i} (1 - z_j), and y_{K+1} is what remains. The offset maps x = 0 to the
    simplex's centre. log|det dy/dx| = sum_i log(z_i (1 - z_i) prod_{j<i} (1 - z_j)) = sum_i (log y_i + log(1 - z_i)),
    with log(1 - z_i) = -(x_i - o_i) + log sigmoid(x_i - o_i)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    @staticmethod
    def _log_offset(k, like):
        return minigrad.arange(k, 0, -1, dtype=like.dtype, device=like.device).log()

    def _call(self, x):
        z = minigrad.sigmoid(x - self._log_offset(x.shape[-1], x))
        ones = minigrad.ones_like(x.narrow(-1, 0, 1))
        left = (1 - z).cumprod(-1)  # the stick remaining after each break
        return minigrad.cat([z, ones], -1) * minigrad.cat([ones, left], -1)

    def _inverse(self, y):
        head = y.narrow(-1, 0, y.shape[-1] - 1)
        left = (1 - head.cumsum(-1)).clamp(min=minigrad.finfo(y.dtype).tiny)
        return head.log() - left.log() + self._log_offset(head.shape[-1], y)  # logit of the share broken off

    def log_abs_det_jacobian(self, x, y):
        shifted = x - self._log_offset(x.shape[-1], x)
        head = y.narrow(-1, 0, y.shape[-1] - 1)
        return (-shifted - softplus(-shifted) + head.log()).sum(-1)

    def forward_shape(self, shape):
        _at_least_1d(shape)
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _at_least_1d(shape)
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class IndependentTransform(Transform):
    """`base_transform` with its `reinterpreted_batch_ndims` rightmost batch dims made event dims: the
    log-determinant sums over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """The rightmost dims of shape `in_shape` reshaped to `out_shape` (as many entries): volume-preserving,
    log|det| = 0."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = minigrad.Size(in_shape)
        self.out_shape = minigrad.Size(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return minigrad.zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]), dtype=x.dtype, device=x.device)

    @staticmethod
    def _swap(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return tuple(shape[:cut]) + tuple(new)

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


def _check_dim(x, dim, length, what="length"):
    # (PyTorch's type for these: AssertionError)
    if not -x.dim() <= dim < x.dim():
        raise AssertionError(f"dim {dim} out of range for tensor with {x.dim()} dimensions")
    if x.shape[dim] != length:
        raise AssertionError(f"x.size({dim}) = {x.shape[dim]} must equal {what} {length}")


class CatTransform(Transform):
    """Each transform of `tseq` on its slice (`lengths` entries, 1 each by default) along `dim`, the results
    concatenated: a different constraint per block of one parameter vector."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise ValueError("tseq must be a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, x):
        _check_dim(x, self.dim, self.length)
        start = 0
        for t, length in zip(self.transforms, self.lengths):
            yield t, start, length
            start += length

    def _call(self, x):
        return minigrad.cat([t(x.narrow(self.dim, s, n)) for t, s, n in self._slices(x)], self.dim)

    def _inverse(self, y):
        return minigrad.cat([t.inv(y.narrow(self.dim, s, n)) for t, s, n in self._slices(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [_sum_rightmost(t.log_abs_det_jacobian(x.narrow(self.dim, s, n), y.narrow(self.dim, s, n)),
                                self.event_dim - t.event_dim) for t, s, n in self._slices(x)]
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:  # the cat dim is a batch dim of the log-determinant: the pieces line up along it
            return minigrad.cat(terms, dim)
        total = terms[0]  # inside the event: each piece is already summed over it
        for term in terms[1:]:
            total = total + term
        return total

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """The i-th transform of `tseq` on the i-th slice along `dim`, the results stacked."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise ValueError("tseq must be a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, x):
        _check_dim(x, self.dim, len(self.transforms), "len(transforms)")
        return [x.select(self.dim, i) for i in range(len(self.transforms))]

    def _call(self, x):
        return minigrad.stack([t(v) for t, v in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return minigrad.stack([t.inv(v) for t, v in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return minigrad.stack([t.log_abs_det_jacobian(a, b)
                               for t, a, b in zip(self.transforms, self._slices(x), self._slices(y))], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = F(x), the cdf of `distribution` (a copula's map to the unit interval); log|dy/dx| = log p(x)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class LowerCholeskyTransform(Transform):
    """A square matrix to a lower-triangular one with positive diagonal: keep the strict lower triangle,
    exponentiate the diagonal (not bijective: the upper triangle is dropped)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(0, -2, -1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(0, -2, -1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """A square matrix to L L^T, L its LowerCholeskyTransform image; the inverse goes through the Cholesky
    factor."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(minigrad.linalg.cholesky(y))


def _tril_positions(n, diag):
    """Flat (row-major) positions in an n x n matrix of the entries on and below diagonal `diag`."""
    rows, cols = np.tril_indices(n, diag)
    return rows * n + cols


class CorrCholeskyTransform(Transform):
    """D(D-1)/2 reals to the Cholesky factor of a D x D correlation matrix: tanh maps each to a partial
    correlation r_ij in (-1, 1), and row i breaks the unit norm like a stick, y_ij = r_ij sqrt(1 - sum_{k<j} y_ik^2).
    log|det| = sum of log(1 - tanh^2 x) and, for the stick breaking, 1/2 sum log(1 - sum_{k<j} y_ik^2)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    @staticmethod
    def _size(count):
        d = round((0.25 + 2 * count) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != count:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return d

    @staticmethod
    def _to_vec(matrix, diag):
        n = matrix.shape[-1]
        flat = matrix.reshape(tuple(matrix.shape[:-2]) + (n * n,))
        return flat.index_select(-1, minigrad.Tensor._wrap(_tril_positions(n, diag)))

    @staticmethod
    def _to_strict_tril(vec, d):
        # each cell reads its entry of vec, or the zero appended after them where it lies on or above the diagonal
        where = np.full(d * d, vec.shape[-1])
        where[_tril_positions(d, -1)] = np.arange(vec.shape[-1])
        padded = minigrad.cat([vec, minigrad.zeros_like(vec.narrow(-1, 0, 1))], -1)
        return padded.index_select(-1, minigrad.Tensor._wrap(where)).reshape(tuple(vec.shape[:-1]) + (d, d))

    def _call(self, x):
        eps = minigrad.finfo(x.dtype).eps
        r = self._to_strict_tril(x.tanh().clamp(min=-1 + eps, max=1 - eps), self._size(x.shape[-1]))
        left = (1 - r * r).sqrt().cumprod(-1)  # sqrt of the squared norm left in the row after each entry
        ones = minigrad.ones_like(r.narrow(-1, 0, 1))
        eye = minigrad.eye(r.shape[-1], dtype=x.dtype, device=x.device)
        return (r + eye) * minigrad.cat([ones, left.narrow(-1, 0, r.shape[-1] - 1)], -1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        ones = minigrad.ones_like(y.narrow(-1, 0, 1))
        before = minigrad.cat([ones, left.narrow(-1, 0, y.shape[-1] - 1)], -1)
        t = self._to_vec(y, -1) / self._to_vec(before, -1).sqrt()
        return ((1 + t) / (1 - t)).log() / 2  # atanh

    def log_abs_det_jacobian(self, x, y):
        left = self._to_vec(1 - (y * y).cumsum(-1), -2)
        stick = 0.5 * left.log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)  # log(1 - tanh(x)^2)
        return stick + tanh

    def forward_shape(self, shape):
        _at_least_1d(shape)
        d = self._size(shape[-1])
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)
