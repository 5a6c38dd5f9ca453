"""Constraints: which values a distribution's parameters and samples may take (`torch.distributions.constraints`).

Each constraint has `check(value)`, a bool tensor of `value`'s shape less the constraint's `event_dim`
rightmost dims, True where the value is allowed. Distributions use them when `validate_args` is on,
through `holds(constraint, value)`.
"""
import numpy as np

import minigrad

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than", "greater_than_eq", "half_open_interval",
    "independent", "integer_interval", "interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular",
    "MixtureSameFamilyConstraint", "multinomial", "nonnegative",
    "nonnegative_integer", "one_hot", "positive", "positive_definite", "positive_integer", "positive_semidefinite", "real",
    "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    """A set of allowed values; `check(value)` says, entry by entry, which values are in it."""

    is_discrete = False  # the set holds integers only
    event_dim = 0  # how many rightmost dims one check covers

    def check(self, value):
        raise NotImplementedError

    def _checks_arrays(self):
        """Whether `check` takes a numpy or cupy array as well as a tensor: this module's formulas do (they use
        operators and methods both have); a subclass's own `check` is asked of tensors."""
        return type(self).check.__module__ == __name__

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


def holds(constraint, value):
    """Whether every entry of tensor `value` satisfies `constraint`: a distribution's validation. A yes or no
    about the data, with no gradient: this module's checks run on the array (a few array calls where each
    tensor op would pay for an op, and record one for a parameter that requires grad)."""
    # (a tensor bound, Binomial's total_count, keeps the check on tensors: numpy's booleans of a 0-d array and a
    # tensor's do not mix, as PyTorch refuses `np.True_ & tensor(True)`)
    data = value.array if isinstance(value, minigrad.Tensor) and constraint._checks_arrays() \
        and not _tensor_bound(constraint) else value
    return bool(constraint.check(data).all())


def _tensor_bound(constraint):
    return any(isinstance(v, minigrad.Tensor) or isinstance(v, Constraint) and _tensor_bound(v)
               for v in vars(constraint).values())


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (Uniform's support, for one)."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def __call__(self, *, is_discrete=False, event_dim=0):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """True for `dependent` and `dependent_property` placeholders (their values are not checked)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that computes an instance's constraint; read on the class it is a `dependent` placeholder."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        property.__init__(self, fn)
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def __call__(self, fn):
        # used as @dependent_property(is_discrete=..., event_dim=...): wrap the method
        return _DependentProperty(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        # every entry 0 or 1, and exactly one 1 along the last dim
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    """Integers >= lower_bound (PyTorch's name, though it allows equality)."""

    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only at NaN (infinities are allowed)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """The closed interval [lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    """[lower_bound, upper_bound)."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    """Non-negative vectors (along the last dim) that sum to 1."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & (abs(value.sum(-1) - 1) < 1e-6)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices: zero above the diagonal."""

    event_dim = 2

    def check(self, value):
        tril = value.tril() if isinstance(value, minigrad.Tensor) else np.tril(value)
        return (value == tril).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal (a covariance's Cholesky factor)."""

    event_dim = 2

    def check(self, value):
        return _LowerTriangular().check(value) & (value.diagonal(0, -2, -1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: each row has unit Euclidean norm."""

    event_dim = 2

    def check(self, value):
        finfo = minigrad.finfo(value.dtype) if isinstance(value, minigrad.Tensor) else np.finfo(value.dtype)
        tol = finfo.eps * value.shape[-1] * 10  # (rounding in the row norms grows with their length)
        unit_rows = (abs(((value * value).sum(-1)) ** 0.5 - 1.0) <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


def _on_host(value):
    """`value` (a tensor, numpy or cupy array) as a float64 numpy array: the matrix checks run there."""
    a = value.array if isinstance(value, minigrad.Tensor) else value
    return np.asarray(a.get() if hasattr(a, "get") else a, dtype=np.float64)


def _answer(value, ok):
    return minigrad.tensor(ok) if isinstance(value, minigrad.Tensor) else ok


class _Square(Constraint):
    """Square matrices (a check on the shape alone)."""

    event_dim = 2

    def check(self, value):
        return _answer(value, np.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1]))


class _Symmetric(_Square):
    """Square matrices equal to their transpose (to 1e-6)."""

    def check(self, value):
        square = super().check(value)
        if not square.all():  # (PyTorch's answer then: the shape alone)
            return square
        a = _on_host(value)
        return _answer(value, np.isclose(a, np.swapaxes(a, -1, -2), atol=1e-6).all(-1).all(-1))


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with no negative eigenvalue."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return _answer(value, (np.linalg.eigvalsh(_on_host(value)) >= 0).all(-1))


class _PositiveDefinite(_Symmetric):
    """Symmetric square matrices with a Cholesky factor (all eigenvalues positive)."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():  # (PyTorch's answer then: the symmetry alone, for every matrix)
            return symmetric
        a = _on_host(value)
        n = a.shape[-1]
        flat, factorable = a.reshape(-1, n, n), np.empty(a.size // max(n * n, 1), dtype=bool)
        for i, m in enumerate(flat):
            try:
                np.linalg.cholesky(m)
                factorable[i] = True
            except np.linalg.LinAlgError:
                factorable[i] = False
        return _answer(value, factorable.reshape(a.shape[:-2]))


class _Multinomial(Constraint):
    """Count vectors: non-negative entries summing to at most `upper_bound` (PyTorch checks no more than that)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class _IndependentConstraint(Constraint):
    """`base_constraint` over the `reinterpreted_batch_ndims` rightmost dims at once (all must hold)."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def _checks_arrays(self):
        return self.base_constraint._checks_arrays()

    def check(self, value):
        ok = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return ok

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Cat(Constraint):
    """The constraints of `cseq` on consecutive slices of `lengths` entries along `dim` (CatTransform's domain)."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def _checks_arrays(self):
        return False  # (narrow and cat: tensor calls)

    def check(self, value):
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return minigrad.cat(checks, self.dim)


class _Stack(Constraint):
    """The i-th constraint of `cseq` on the i-th slice along `dim` (StackTransform's domain)."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim  # a negative dim inside the event adds one to it

    def _checks_arrays(self):
        return False

    def check(self, value):
        return minigrad.stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """A mixture's support: the components' constraint asked of the value put back against the component dim
    (`value.unsqueeze(-1 - event_dim)`), true where every component allows it."""

    def __init__(self, base_constraint):
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def _checks_arrays(self):
        return False  # (unsqueeze: a tensor's method)

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self):
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = _IndependentConstraint(real, 1)
lower_cholesky = _LowerCholesky()
lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
positive_definite = _PositiveDefinite()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
multinomial = _Multinomial
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
cat = _Cat
stack = _Stack

