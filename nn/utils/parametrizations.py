"""Ready-made parametrizations, as `torch.nn.utils.parametrizations`: weight_norm, spectral_norm and orthogonal.

weight_norm and spectral_norm register a parametrization (nn/utils/parametrize.py) on a module's weight, so the state dict keys are
PyTorch's ('parametrizations.weight.original0' / 'original1' for weight norm's g and v;
'parametrizations.weight.original' and the power iteration's 'parametrizations.weight.0._u' / '._v'
buffers for spectral norm). orthogonal keeps PyTorch's 'parametrizations.weight.original' and
'parametrizations.weight.0.base'.
"""
import minigrad
from minigrad import Tensor

from .. import functional as F
from ..module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


def _norm_except_dim(v, dim):
    """PyTorch's norm_except_dim(v, 2, dim): the 2-norm over every dim but `dim`, keeping v's rank (dim -1:
    of the whole tensor, a 0-d result). Shapes: (*) -> (1, .., v.shape[dim], .., 1) or ()."""
    if dim == -1:
        return v.norm()
    if not -v.ndim <= dim < v.ndim:  # (PyTorch's error, raised where weight_norm is applied)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-v.ndim}, {v.ndim - 1}], but got "
                         f"{dim})")
    dim = dim % v.ndim
    others = tuple(d for d in range(v.ndim) if d != dim)
    if not others:
        return v.abs()
    return minigrad.linalg.vector_norm(v, 2, dim=others, keepdim=True)


def _weight_norm(v, g, dim):
    """w = g v / ||v|| (norm over every dim but `dim`): PyTorch's _weight_norm."""
    return minigrad._weight_norm(v, g, dim)


class _WeightNorm(Module):
    """(g, v) -> g v / ||v||: the weight's direction and magnitude as two tensors (Salimans & Kingma)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize `module.<name>` as g v / ||v||, the norm over every dim but `dim` (None: over the whole
    tensor, g a scalar). g and v are `parametrizations.<name>.original0` and `.original1`; a state dict
    of the older nn.utils.weight_norm (`<name>_g`, `<name>_v`) loads too. Returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """W -> W / sigma(W), sigma the largest singular value of W as a (W.shape[dim], -1) matrix, estimated by
    power iteration: the buffers _u, _v (left and right singular vector estimates) take
    `n_power_iterations` steps at each call in training mode, none in eval mode (15 at construction).
    A 1-d weight is divided by its norm."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            self.register_buffer("_u", F.normalize(weight_mat.new_empty(h).normal_(0, 1), dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(weight_mat.new_empty(w).normal_(0, 1), dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        """(d_dim, product of the other dims), `dim` moved to the front."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    @minigrad.no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        """u <- normalize(W v), v <- normalize(W^T u), n times, in place in the buffers."""
        for _ in range(n_power_iterations):
            self._u.copy_(F.normalize(minigrad.mv(weight_mat, self._v), dim=0, eps=self.eps))
            self._v.copy_(F.normalize(minigrad.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat.detach(), self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # (copies: the next call updates the buffers in place)
        sigma = minigrad.vdot(u, minigrad.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value  # (any weight is its own preimage: W / sigma(W) is not inverted, as in PyTorch)


def _default_dim(module):
    """0, or 1 for a transposed convolution (its weight is (in, out, *kernel): the outputs are dim 1)."""
    from ..modules.conv import _ConvTransposeNd

    return 1 if isinstance(module, _ConvTransposeNd) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize `module.<name>` as W / sigma(W), its largest singular value (Miyato et al.'s spectral
    normalization for GAN discriminators); dim None: 0, or 1 for ConvTranspose. Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal ---------------------------------------------------------------------------------------------------
_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _make_orthogonal(A):
    """The Q of A's QR with R's diagonal made positive: the one orthonormal basis Gram-Schmidt gives A's columns."""
    Q, R = minigrad.linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _is_orthogonal(Q):
    k = Q.shape[-1]
    return minigrad.allclose(Q.mT @ Q, minigrad.eye(k, dtype=Q.dtype), atol=10.0 * Q.shape[-2] * minigrad.finfo(Q.dtype).eps)


class _Orthogonal(Module):
    """X -> a matrix with orthonormal columns (rows, for a wide one): exp or the Cayley transform of the skew
    matrix of X's lower triangle, or the product of the Householder reflections X's columns below the diagonal
    define. With the trivialization, the result is multiplied into `base` (an orthogonal matrix made from the
    weight at registration), and the original starts at -I, which every map takes to the identity."""

    def __init__(self, weight, orthogonal_map):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k  # (a wide matrix: its transpose's columns are made orthonormal)
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map == "householder":
            A = X.tril(-1)
            Q = minigrad.linalg.householder_product(A, 2.0 / (1.0 + (A * A).sum(dim=-2)))
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)  # (the diagonal's signs: -1 at -I)
        else:
            X = X.tril()
            if n != k:  # the n x n skew matrix whose first k columns X holds
                X = minigrad.cat([X, X.new_zeros(*X.shape[:-1], n - k)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == "matrix_exp":
                Q = minigrad.linalg.matrix_exp(A)
            else:  # Cayley: (I - A/2)^-1 (I + A/2)
                eye = minigrad.eye(n, dtype=A.dtype)
                Q = minigrad.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            Q = Q[..., :k]
        Q = self.base @ Q
        return Q.mT if transposed else Q

    @minigrad.no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {tuple(self.shape)}. "
                             f"Got a tensor of shape {tuple(Q.shape)}.")
        neg_eye = minigrad.zeros_like(Q)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        n, k = Q.shape[-2], Q.shape[-1]
        if n < k:
            Q, n, k = Q.mT, k, n
        if n != k:  # random columns complete Q to a square matrix; its first k columns stay Q's span
            Q = minigrad.cat([Q, minigrad.randn(*Q.shape[:-1], n - k, dtype=Q.dtype)], dim=-1)
            self.base = _make_orthogonal(Q)
        else:
            self.base = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Reparametrize the matrix (or batch of matrices) `module.<name>` to stay orthogonal (orthonormal columns,
    or rows where it is wide) through training. `orthogonal_map`: "matrix_exp", "cayley" or "householder";
    None: matrix_exp for a square weight, householder otherwise. The weight keeps its value at registration,
    made orthogonal (the Q of its QR) when it is not. Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: '
                         f"{orthogonal_map}")
    if not use_trivialization:
        raise NotImplementedError("orthogonal(use_trivialization=False) is not supported by minigrad: the "
                                  "default trivialization (a base matrix and an original at -I) is")
    parametrize.register_parametrization(module, name, _Orthogonal(weight, orthogonal_map), unsafe=True)
    return module
