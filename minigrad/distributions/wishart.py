"""`Wishart`: random positive definite matrices, the law of sum_k x_k x_k^T for df Gaussian vectors x_k."""
import math
import numbers
import warnings

import minigrad

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .chi2 import Chi2
from .utils import lazy_property

_LOG_2 = math.log(2.0)


def _mvdigamma(x, p):
    """d/dx mvlgamma(x, p) = sum_{j<p} digamma(x - j/2)."""
    j = minigrad.arange(p, dtype=x.dtype, device=x.device)
    return minigrad.digamma(x.unsqueeze(-1) - j / 2).sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart law W_p(df, V) over p x p positive definite matrices, V given as exactly one of
    covariance_matrix, precision_matrix (V^-1) or scale_tril (V's lower Cholesky factor L); df > p - 1 (a
    Python number or a tensor broadcasting with the matrices' batch dims). rsample is the Bartlett decomposition
    L A A^T L^T, A lower triangular with sqrt(chi2(df - i)) on the diagonal and standard normals below it."""

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        # (PyTorch checks this with an assert, so the error is an AssertionError)
        assert len(given) == 1, "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = minigrad.Size(tuple(param.shape[:-2]))
            self.df = minigrad.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = minigrad.Size(minigrad.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = minigrad.Size(tuple(param.shape[-2:]))
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        # df's lower bound depends on p: this instance's own table (PyTorch writes it into the class's)
        self.arg_constraints = dict(Wishart.arg_constraints, df=constraints.greater_than(p - 1))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.",
                          stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = minigrad.linalg.cholesky(param)
        else:  # V = P^-1, from P's own Cholesky factor
            self._unbroadcasted_scale_tril = minigrad.linalg.cholesky(minigrad.cholesky_inverse(
                minigrad.linalg.cholesky(param)))
        # the Bartlett factor's squared diagonal: chi2 with df - i degrees of freedom in row i
        i = minigrad.arange(p, dtype=self.df.dtype, device=self.df.device)
        self._dist_chi2 = Chi2(self.df.unsqueeze(-1) - i)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = minigrad.Size(batch_shape)
        matrix_shape = batch_shape + self._event_shape
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        new.df = self.df.expand(batch_shape)
        new.arg_constraints = self.arg_constraints
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new._dist_chi2 = self._dist_chi2.expand(batch_shape + self._event_shape[-1:])
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return minigrad.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self):
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        # (df - p - 1) V, defined only where df > p + 1 (nan elsewhere, as PyTorch gives)
        factor = self.df - self._event_shape[-1] - 1
        factor = minigrad.where(factor > 0, factor, minigrad.full_like(factor, float("nan")))
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        # Var X_ij = df (V_ij^2 + V_ii V_jj)
        V = self.covariance_matrix
        d = V.diagonal(0, -2, -1)
        return self._df_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def rsample(self, sample_shape=minigrad.Size()):
        sample_shape = minigrad.Size(sample_shape)
        shape = self._extended_shape(sample_shape)
        A = minigrad.randn(shape, dtype=self.df.dtype, device=self.df.device).tril(-1)
        A = A + minigrad.diag_embed(self._dist_chi2.rsample(sample_shape).sqrt())
        LA = self._unbroadcasted_scale_tril @ A
        return LA @ LA.mT

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log W(X) = -df (p log 2 / 2 + log sqrt det V) - mvlgamma(df / 2, p) + (df - p - 1) / 2 log det X
        #            - tr(V^-1 X) / 2
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det_v = L.diagonal(0, -2, -1).log().sum(-1)
        trace = minigrad.cholesky_solve(value, L).diagonal(0, -2, -1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det_v) - minigrad.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * minigrad.linalg.slogdet(value)[1] - trace / 2)

    def entropy(self):
        # H = (p + 1) (p log 2 / 2 + log sqrt det V) + mvlgamma(df / 2, p) - (df - p - 1) / 2 mvdigamma(df / 2, p)
        #     + df p / 2
        nu, p = self.df, self._event_shape[-1]
        half_log_det_v = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det_v) + minigrad.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
