"""Ops minigrad builds from smaller ops, and ops it fuses, end in the node PyTorch names (LinalgLstsqBackward0,
AddmmBackward0, LogitBackward0; not the MmBackward0 of a composite's last step), with edges to the inputs' nodes;
their values, gradients and second derivatives stay PyTorch's."""
import numpy as np
import pytest

import minigrad
import nn.functional as MF
from minigrad.autograd.gradcheck import gradgradcheck

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402


def _spd(rng, n=3):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def _away_from(v):
    """An input maker of values no nearer than 0.05 to the clamp bound v (a gradient at a tie is a convention)."""
    def make(rng):
        a = rng.standard_normal((3, 4))
        return np.where(np.abs(a - v) < 0.05, v + 0.3, a)
    return make


def _probs(rng):
    p = np.abs(rng.standard_normal((3, 5))) + 0.1
    return p / p.sum(1, keepdims=True)


def _lu(L, A):
    return L.linalg.lu_factor(A)


def _n(*shape):
    return lambda r: r.standard_normal(shape)


def _unit(r):
    return r.uniform(0.05, 0.95, (3, 4))


def _with_specials(r):
    a = r.standard_normal((3, 4))
    a[0, 0], a[1, 1], a[2, 2] = np.nan, np.inf, -np.inf
    return a


def _away(r):  # no ties between the operands and no zeros (a tie's gradient is a convention)
    return r.standard_normal((3, 4)) + np.arange(12).reshape(3, 4) * 0.01


_TARGET = np.linspace(-1.0, 1.0, 12).reshape(3, 4)

# (id, fn(L, F, *tensors) -> output, [input makers], double backward checked)
CASES = [
    ("linalg.lstsq", lambda L, F, A, B: L.linalg.lstsq(A, B).solution, [_spd, lambda r: r.standard_normal((3, 2))], True),
    ("linalg.cross", lambda L, F, a, b: L.linalg.cross(a, b), [lambda r: r.standard_normal((4, 3))] * 2, True),
    ("cross", lambda L, F, a, b: L.cross(a, b, dim=1), [lambda r: r.standard_normal((4, 3))] * 2, True),
    ("linalg.solve", lambda L, F, A, B: L.linalg.solve(A, B), [_spd, lambda r: r.standard_normal((3, 2))], True),
    ("linalg.solve_ex", lambda L, F, A, B: L.linalg.solve_ex(A, B).result, [_spd, lambda r: r.standard_normal((3, 2))],
     True),
    ("linalg.solve_triangular", lambda L, F, A, B: L.linalg.solve_triangular(A.triu(), B, upper=True),
     [_spd, lambda r: r.standard_normal((3, 2))], True),
    ("linalg.lu_solve", lambda L, F, A, B: L.linalg.lu_solve(*_lu(L, A), B), [_spd, lambda r: r.standard_normal((3, 2))],
     True),
    ("linalg.lu", lambda L, F, A: L.linalg.lu(A).U, [_spd], True),
    ("lu_unpack", lambda L, F, A: L.lu_unpack(*_lu(L, A)).L, [_spd], True),
    ("linalg.pinv", lambda L, F, A: L.linalg.pinv(A), [_spd], True),
    ("pinverse", lambda L, F, A: L.pinverse(A), [_spd], True),
    ("glu", lambda L, F, x: F.glu(x, 1), [lambda r: r.standard_normal((2, 4, 3))], True),
    ("glu_last_dim", lambda L, F, x: F.glu(x), [lambda r: r.standard_normal((3, 6))], True),
    ("pixel_shuffle", lambda L, F, x: F.pixel_shuffle(x, 2), [lambda r: r.standard_normal((2, 8, 2, 3))], True),
    ("pixel_unshuffle", lambda L, F, x: F.pixel_unshuffle(x, 2), [lambda r: r.standard_normal((1, 2, 4, 6))], True),
    ("channel_shuffle", lambda L, F, x: F.channel_shuffle(x, 3), [lambda r: r.standard_normal((2, 6, 2))], True),
    ("multi_margin_loss", lambda L, F, x: F.multi_margin_loss(x, L.tensor([0, 2, 4])),
     [lambda r: r.standard_normal((3, 5))], False),
    ("multi_margin_loss_none", lambda L, F, x: F.multi_margin_loss(x, L.tensor([1, 0, 3]), p=2, reduction="none"),
     [lambda r: r.standard_normal((3, 5))], False),  # (no second derivative, as PyTorch: test_second_order_like_torch)
    # clamp's node is named by the op called and by its bounds' kind
    ("clamp_number", lambda L, F, x: L.clamp(x, min=0.0), [_away_from(0.0)], True),
    ("clamp_method_max", lambda L, F, x: x.clamp(max=0), [_away_from(0.0)], True),
    ("clamp_min_number", lambda L, F, x: x.clamp_min(0.1), [_away_from(0.1)], True),
    ("clamp_max_number", lambda L, F, x: L.clamp_max(x, -0.1), [_away_from(-0.1)], True),
    ("clamp_min_tensor", lambda L, F, x, t: L.clamp_min(x, t), [_away_from(0.0), lambda r: np.full((3, 4), 0.0)], True),
    ("clamp_max_tensor", lambda L, F, x, t: x.clamp_max(t), [_away_from(0.0), lambda r: np.full((3, 4), 0.0)], True),
    ("clamp_tensors", lambda L, F, x, lo, hi: x.clamp(lo, hi),
     [_away_from(0.0), lambda r: np.full((3, 4), -0.5), lambda r: np.full((3, 4), 0.5)], True),
    ("margin_ranking_loss", lambda L, F, a, b: F.margin_ranking_loss(a, b, L.tensor([1.0, -1.0, 1.0]), 0.1),
     [lambda r: np.array([0.3, 0.2, -1.0]), lambda r: np.array([0.9, -0.5, 0.4])], True),
    ("triplet_margin_loss", lambda L, F, a, p, n: F.triplet_margin_loss(a, p, n, reduction="none"),
     [lambda r: r.standard_normal((3, 4))] * 3, True),
    ("group_norm", lambda L, F, x, w, b: F.group_norm(x, 2, w, b),
     [lambda r: r.standard_normal((2, 4, 3, 3)), lambda r: r.standard_normal(4), lambda r: r.standard_normal(4)], True),
    ("group_norm_no_affine", lambda L, F, x: F.group_norm(x, 3, eps=1e-3), [lambda r: r.standard_normal((3, 6, 5))],
     True),
    ("adaptive_max_pool2d", lambda L, F, x: F.adaptive_max_pool2d(x, (3, 2)), [lambda r: r.standard_normal((2, 3, 7, 5))],
     True),
    ("adaptive_max_pool2d_indices", lambda L, F, x: F.adaptive_max_pool2d(x, 4, return_indices=True)[0],
     [lambda r: r.standard_normal((3, 6, 6))], True),
    ("adaptive_max_pool3d", lambda L, F, x: F.adaptive_max_pool3d(x, (2, 3, 2)),
     [lambda r: r.standard_normal((1, 2, 5, 4, 3))], True),
    ("adaptive_max_pool1d", lambda L, F, x: F.adaptive_max_pool1d(x, 3), [lambda r: r.standard_normal((2, 3, 7))], True),
    ("embedding_scale_grad_by_freq",
     lambda L, F, w: F.embedding(L.tensor([[0, 2, 2, 5], [2, 1, 0, 0]]), w, scale_grad_by_freq=True),
     [lambda r: r.standard_normal((6, 3))], False),
    ("embedding_scale_grad_by_freq_padding",
     lambda L, F, w: F.embedding(L.tensor([0, 2, 2, 5, 2]), w, padding_idx=2, scale_grad_by_freq=True),
     [lambda r: r.standard_normal((6, 3))], False),
    ("cross_entropy_probabilities", lambda L, F, x, p: F.cross_entropy(x, p),
     [lambda r: r.standard_normal((3, 5)), _probs],
     True),
    ("cross_entropy_probabilities_sum", lambda L, F, x, p: F.cross_entropy(x, p, reduction="sum"),
     [lambda r: r.standard_normal((3, 5)), _probs], True),
    ("cross_entropy_probabilities_smoothed", lambda L, F, x, p: F.cross_entropy(x, p, label_smoothing=0.2),
     [lambda r: r.standard_normal((3, 5)), _probs], True),
    ("group_norm_weight_only", lambda L, F, x, w: F.group_norm(x, 1, w),
     [lambda r: r.standard_normal((2, 3, 2, 2, 2)), lambda r: r.standard_normal(3)], True),
    # fused ops and rare composites (AddmmBackward0, LogitBackward0, TraceBackward0, ...)
    ("addmm", lambda L, F, i, a, b: L.addmm(i, a, b, beta=0.5, alpha=2.0), [_n(3, 5), _n(3, 4), _n(4, 5)], True),
    ("addmm_broadcast", lambda L, F, i, a, b: L.addmm(i, a, b), [_n(5), _n(3, 4), _n(4, 5)], True),
    ("addmm_beta0", lambda L, F, i, a, b: L.addmm(i, a, b, beta=0), [_n(3, 5), _n(3, 4), _n(4, 5)], True),
    ("addmv", lambda L, F, i, a, b: L.addmv(i, a, b, alpha=3), [_n(3), _n(3, 4), _n(4)], True),
    ("addbmm", lambda L, F, i, a, b: L.addbmm(i, a, b), [_n(3, 5), _n(2, 3, 4), _n(2, 4, 5)], True),
    ("baddbmm", lambda L, F, i, a, b: L.baddbmm(i, a, b, beta=2), [_n(2, 3, 5), _n(2, 3, 4), _n(2, 4, 5)], True),
    ("addr", lambda L, F, i, a, b: L.addr(i, a, b), [_n(3, 4), _n(3), _n(4)], True),
    ("addcmul", lambda L, F, i, a, b: L.addcmul(i, a, b, value=0.5), [_n(3, 4), _n(3, 4), _n(4)], True),
    ("addcdiv", lambda L, F, i, a, b: L.addcdiv(i, a, b, value=2), [_n(4), _n(3, 4), lambda r: r.uniform(1, 2, (3, 4))],
     True),
    ("nan_to_num", lambda L, F, x: L.nan_to_num(x, posinf=5.0), [_with_specials], True),
    ("logit", lambda L, F, x: L.logit(x), [_unit], True),
    ("logit_eps", lambda L, F, x: L.logit(x, 0.1), [_unit], True),
    ("sinc", lambda L, F, x: L.sinc(x), [_n(3, 4)], True),
    ("deg2rad", lambda L, F, x: L.deg2rad(x), [_n(3, 4)], True),
    ("rad2deg", lambda L, F, x: L.rad2deg(x), [_n(3, 4)], True),
    ("fmax", lambda L, F, a, b: L.fmax(a, b), [_away, _n(4)], True),
    ("fmin", lambda L, F, a, b: L.fmin(a, b), [_away, _n(3, 4)], True),
    ("ldexp_float", lambda L, F, a, b: L.ldexp(a, b), [_n(3, 4), _n(3, 4)], True),
    ("ldexp_int", lambda L, F, a: L.ldexp(a, L.tensor([1, 2, 0, 3])), [_n(3, 4)], True),
    ("rot90", lambda L, F, x: L.rot90(x, 1, (0, 2)), [_n(2, 3, 4)], True),
    ("rot90_k2", lambda L, F, x: L.rot90(x, 2), [_n(3, 4)], True),
    ("rot90_k3", lambda L, F, x: L.rot90(x, -1, (1, 0)), [_n(3, 4)], True),
    ("rot90_k0", lambda L, F, x: L.rot90(x, 4), [_n(3, 4)], True),
    ("std_mean", lambda L, F, x: L.std_mean(x, 1)[0] * 2 + L.std_mean(x, 1)[1], [_n(3, 4)], True),
    ("std_mean_std", lambda L, F, x: L.std_mean(x)[0], [_n(3, 4)], True),
    ("var_mean_mean", lambda L, F, x: L.var_mean(x, 0, keepdim=True)[1], [_n(3, 4)], True),
    ("var_mean", lambda L, F, x: L.var_mean(x, 1, correction=0)[0], [_n(3, 4)], True),
    ("huber_loss", lambda L, F, a, b: F.huber_loss(a, b, delta=0.5), [_n(3, 4), _n(3, 4)], True),
    ("huber_loss_none", lambda L, F, a, b: F.huber_loss(a, b, reduction="none"), [_n(3, 4), _n(3, 4)], True),
    ("huber_loss_target_fixed", lambda L, F, a: F.huber_loss(a, L.tensor(_TARGET), reduction="sum"), [_n(3, 4)], True),
    ("smooth_l1_loss", lambda L, F, a, b: F.smooth_l1_loss(a, b, beta=0.5), [_n(3, 4), _n(3, 4)], True),
    ("smooth_l1_loss_none", lambda L, F, a, b: F.smooth_l1_loss(a, b, reduction="none"), [_n(3, 4), _n(3, 4)], True),
    ("trace", lambda L, F, x: L.trace(x), [_n(3, 4)], True),
    ("take", lambda L, F, x: L.take(x, L.tensor([[0, 5], [11, 5]])), [_n(3, 4)], True),
    ("kthvalue", lambda L, F, x: L.kthvalue(x, 2, 1).values, [_n(3, 4)], True),
    ("mode", lambda L, F, x: L.mode(x, 0).values, [lambda r: np.round(r.standard_normal((5, 3)))], True),
    ("block_diag", lambda L, F, a, b: L.block_diag(a, b), [_n(2, 3), _n(3)], True),
    ("matrix_power_3", lambda L, F, x: L.matrix_power(x, 3), [_n(3, 3)], True),
    ("cholesky", lambda L, F, x: L.cholesky(x), [_spd], False),
    ("pdist", lambda L, F, x: F.pdist(x), [_n(4, 3)], False),  # (the same)
]


def _tensors(L, arrays):
    return [L.tensor(a.copy(), requires_grad=True) for a in arrays]


def _names(t):
    fn = t.grad_fn
    return type(fn).__name__, fn.name(), [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_grad_fn_name_values_and_gradients_match_torch(case):
    _, fn, makers, _ = case
    rng = np.random.default_rng(0)
    arrays = [m(rng) for m in makers]
    mine, theirs = _tensors(minigrad, arrays), _tensors(torch, arrays)
    out, ref = fn(minigrad, MF, *mine), fn(torch, TF, *theirs)
    assert _names(out) == _names(ref)
    assert out.dtype == minigrad.float64 and tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-7, atol=1e-9)
    g = rng.standard_normal(tuple(ref.shape))
    gm = minigrad.autograd.grad(out, mine, minigrad.tensor(g), allow_unused=True)
    gt = torch.autograd.grad(ref, theirs, torch.tensor(g), allow_unused=True)
    for a, b in zip(gm, gt):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("case", [c for c in CASES if c[3]], ids=[c[0] for c in CASES if c[3]])
def test_double_backward(case):
    _, fn, makers, _ = case
    rng = np.random.default_rng(1)
    mine = _tensors(minigrad, [m(rng) for m in makers])
    assert gradgradcheck(lambda *ts: fn(minigrad, MF, *ts), mine)


def test_adaptive_max_pool_indices_need_no_grad():
    x = minigrad.randn(2, 3, 5, 5, requires_grad=True)
    _, idx = MF.adaptive_max_pool2d(x, 2, return_indices=True)
    assert idx.dtype == minigrad.int64 and not idx.requires_grad and idx.grad_fn is None


def test_embedding_scale_grad_by_freq_double_backward_as_torch():
    # PyTorch's second derivative through the scaled gradient is the plain lookup of the incoming one
    ids, W, V = np.array([0, 2, 2, 5, 2]), np.random.default_rng(0).standard_normal((6, 3)), np.arange(18.0).reshape(6, 3)
    got = []
    for L, F in ((minigrad, MF), (torch, TF)):
        w = L.tensor(W, requires_grad=True)
        y = F.embedding(L.tensor(ids), w, scale_grad_by_freq=True)
        g = L.ones(y.shape, dtype=L.float64, requires_grad=True)
        gw, = L.autograd.grad(y, [w], g, create_graph=True)
        got.append(L.autograd.grad((gw * L.tensor(V)).sum(), [g])[0].numpy())
    np.testing.assert_allclose(got[0], got[1])


def test_composite_node_catches_an_input_edited_in_place():
    a, b = _tensors(minigrad, [np.ones((2, 3)), np.arange(6.0).reshape(2, 3)])
    x = a * 1
    out = minigrad.linalg.cross(x, b)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_fused_ops_keep_float32():
    x = minigrad.rand(3, 4, requires_grad=True)
    for out in (minigrad.logit(x), minigrad.addcmul(x, x, x), minigrad.nan_to_num(x), minigrad.rot90(x),
                minigrad.std_mean(x)[0], minigrad.fmax(x, x * 0.5), MF.huber_loss(x, x * 0.5)):
        assert out.dtype == minigrad.float32
        out.sum().backward()
        assert x.grad.dtype == minigrad.float32
