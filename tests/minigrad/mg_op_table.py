"""The table of differentiable ops shared by test_gradcheck.py and test_vs_torch.py.

Each case is written once against a library module `L` (minigrad or torch: both offer the same
names), so the same lambda runs in both frameworks. Inputs are drawn per case from a domain that
keeps finite differences meaningful: positive bases for log/sqrt/pow, values away from the kinks
of abs/relu/clamp, and distinct values for max/min/topk.
"""
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Case:
    name: str
    fn: object  # fn(L, *inputs) -> tensor or tuple of tensors
    inputs: list  # [(shape, domain)] with domain in DOMAINS
    gradgrad: bool = True  # also run gradgradcheck
    layout: bool = True  # also compare the output's contiguity with PyTorch's
    torch_only: dict = field(default_factory=dict)


def _normal(rng, shape):
    return rng.standard_normal(shape)


def _positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def _away(rng, shape):
    # |x| in [0.3, 1.5], random sign: away from the kinks at 0
    return rng.uniform(0.3, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


def _clampable(rng, shape):
    # values on both sides of +-0.5 but never within 0.1 of them
    v = rng.uniform(-1.2, 1.2, shape)
    return np.where(np.abs(np.abs(v) - 0.5) < 0.1, v * 1.5 + 0.05, v)


def _distinct(rng, shape):
    # distinct values, spaced by at least 0.1, in random order
    n = int(np.prod(shape)) if shape else 1
    return (rng.permutation(n) * 0.25 - n * 0.1 + rng.uniform(0, 0.1, n)).reshape(shape)


DOMAINS = {"n": _normal, "p": _positive, "a": _away, "c": _clampable, "d": _distinct}


def make_inputs(case, seed=0):
    """numpy arrays (float64) for a case's inputs."""
    rng = np.random.default_rng(seed)
    return [np.asarray(DOMAINS[d](rng, tuple(s)), dtype=np.float64) for s, d in case.inputs]


def _i(L, x):
    """An int64 index tensor in either library."""
    return L.tensor(np.asarray(x, dtype=np.int64))


def _b(L, x):
    return L.tensor(np.asarray(x, dtype=bool))


CASES = []


def case(name, fn, *inputs, gradgrad=True, layout=True):
    CASES.append(Case(name, fn, list(inputs), gradgrad, layout))


# ---- binary arithmetic with broadcasting -------------------------------------------------------
BROADCAST_PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((2, 1, 3), (4, 1))]
for sa, sb in BROADCAST_PAIRS:
    tag = f"{sa}x{sb}".replace(" ", "")
    case(f"add{tag}", lambda L, a, b: a + b, (sa, "n"), (sb, "n"))
    case(f"sub{tag}", lambda L, a, b: a - b, (sa, "n"), (sb, "n"))
    case(f"mul{tag}", lambda L, a, b: a * b, (sa, "n"), (sb, "n"))
    case(f"div{tag}", lambda L, a, b: a / b, (sa, "n"), (sb, "a"))
    case(f"pow{tag}", lambda L, a, b: a**b, (sa, "p"), (sb, "n"))
    case(f"maximum{tag}", lambda L, a, b: L.maximum(a, b), (sa, "n"), (sb, "n"))
    case(f"minimum{tag}", lambda L, a, b: L.minimum(a, b), (sa, "n"), (sb, "n"))
case("rev_broadcast_sub", lambda L, a, b: b - a, ((2, 3), "n"), ((2, 1), "n"))
case("add_alpha", lambda L, a, b: L.add(a, b, alpha=2.5), ((2, 3), "n"), ((3,), "n"))
case("sub_alpha", lambda L, a, b: L.sub(a, b, alpha=-0.5), ((2, 3), "n"), ((3,), "n"))
case("same_tensor_twice", lambda L, a: a * a + a / (a * a + 1), ((2, 3), "n"))

# ---- scalars on either side ------------------------------------------------------------------------
case("add_scalar", lambda L, a: a + 2.5, ((2, 3), "n"))
case("radd_scalar", lambda L, a: 2.5 + a, ((2, 3), "n"))
case("sub_scalar", lambda L, a: a - 1.5, ((2, 3), "n"))
case("rsub_scalar", lambda L, a: 1.5 - a, ((2, 3), "n"))
case("mul_scalar", lambda L, a: a * 3, ((2, 3), "n"))
case("rmul_scalar", lambda L, a: 3 * a, ((2, 3), "n"))
case("div_scalar", lambda L, a: a / 4, ((2, 3), "n"))
case("rdiv_scalar", lambda L, a: 4 / a, ((2, 3), "a"))
case("pow_2", lambda L, a: a**2, ((2, 3), "n"))
case("pow_3", lambda L, a: a**3, ((2, 3), "n"))
case("pow_half", lambda L, a: a**0.5, ((2, 3), "p"))
case("pow_neg", lambda L, a: a**-1.5, ((2, 3), "p"))
case("pow_0", lambda L, a: a**0, ((2, 3), "n"))
case("pow_1", lambda L, a: L.pow(a, 1), ((2, 3), "n"))
case("rpow_2", lambda L, a: 2**a, ((2, 3), "n"))
case("rpow_half", lambda L, a: L.pow(0.5, a), ((2, 3), "n"))

# ---- unary ----------------------------------------------------------------------------------------
for shape in [(), (5,), (2, 3)]:
    tag = str(len(shape))
    case(f"neg{tag}", lambda L, a: -a, (shape, "n"))
    case(f"exp{tag}", lambda L, a: a.exp(), (shape, "n"))
    case(f"log{tag}", lambda L, a: a.log(), (shape, "p"))
    case(f"sqrt{tag}", lambda L, a: a.sqrt(), (shape, "p"))
    case(f"rsqrt{tag}", lambda L, a: a.rsqrt(), (shape, "p"))
    case(f"tanh{tag}", lambda L, a: a.tanh(), (shape, "n"))
    case(f"sigmoid{tag}", lambda L, a: a.sigmoid(), (shape, "n"))
    case(f"relu{tag}", lambda L, a: a.relu(), (shape, "a"))
    case(f"abs{tag}", lambda L, a: a.abs(), (shape, "a"))
    case(f"clamp{tag}", lambda L, a: a.clamp(-0.5, 0.5), (shape, "c"))
case("clamp_min", lambda L, a: a.clamp(min=0.5), ((2, 3), "c"))
case("clamp_max", lambda L, a: L.clamp(a, max=-0.5), ((2, 3), "c"))
case("sin", lambda L, a: a.sin(), ((2, 3), "n"))
case("cos", lambda L, a: L.cos(a), ((2, 3), "n"))
case("square", lambda L, a: a.square(), ((2, 3), "n"))
case("fn_forms", lambda L, a: L.exp(a) + L.tanh(a) + L.sigmoid(a) + L.relu(a) + L.abs(a) + L.neg(a), ((2, 3), "a"))
case("fn_forms_pos", lambda L, a: L.log(a) + L.sqrt(a) + L.rsqrt(a), ((2, 3), "p"))

# ---- reductions -------------------------------------------------------------------------------------
R2, R3 = ((2, 3), "n"), ((2, 2, 3), "n")
case("sum_all", lambda L, a: a.sum(), R3)
case("sum_dim0", lambda L, a: a.sum(0), R2)
case("sum_keepdim", lambda L, a: a.sum(1, keepdim=True), R2)
case("sum_dims", lambda L, a: a.sum((0, 2)), R3)
case("sum_neg_dim", lambda L, a: L.sum(a, -1), R3)
case("mean_all", lambda L, a: a.mean(), R3)
case("mean_dim", lambda L, a: a.mean(1), R2)
case("mean_dims_keepdim", lambda L, a: L.mean(a, (0, 1), keepdim=True), R3)
case("var_all", lambda L, a: a.var(), R3)
case("var_dim", lambda L, a: a.var(1), R2)
case("var_biased", lambda L, a: a.var(0, correction=0), R2)
case("var_dims_keepdim", lambda L, a: L.var(a, (0, 2), keepdim=True), R3)
case("std_all", lambda L, a: a.std(), R3)
case("std_dim", lambda L, a: a.std(1), R2)
case("std_unbiased_false", lambda L, a: a.std(0, unbiased=False, keepdim=True), R2)
case("max_all", lambda L, a: a.max(), ((2, 2, 3), "d"))
case("max_dim", lambda L, a: a.max(1)[0], ((2, 3), "d"))
case("max_dim_keepdim", lambda L, a: a.max(0, keepdim=True).values, ((2, 3), "d"))
case("min_all", lambda L, a: L.min(a), ((2, 3), "d"))
case("min_dim", lambda L, a: a.min(-1).values, ((2, 2, 3), "d"))
case("amax_dim", lambda L, a: a.amax(1), ((2, 3), "d"))
case("amax_dims", lambda L, a: L.amax(a, (0, 2)), ((2, 2, 3), "d"))
case("amin_keepdim", lambda L, a: a.amin(-1, keepdim=True), ((2, 3), "d"))
case("amax_ties", lambda L, a: L.cat([a, a], 1).amax(1), ((2, 3), "d"))
case("max_all_ties", lambda L, a: L.cat([a, a]).max(), ((2, 3), "d"))
case("logsumexp_dim", lambda L, a: a.logsumexp(1), R2)
case("logsumexp_dims", lambda L, a: L.logsumexp(a, (0, 1)), R3)
case("logsumexp_keepdim", lambda L, a: a.logsumexp(0, keepdim=True), R2)

# ---- shapes and views ---------------------------------------------------------------------------------
case("reshape", lambda L, a: a.reshape(3, 2) * 1.5, R2)
case("reshape_infer", lambda L, a: L.reshape(a, (-1,)), R3)
case("reshape_noncontig", lambda L, a: a.transpose(0, 1).reshape(6), R2)
case("view", lambda L, a: a.view(6), R2)
case("view_infer", lambda L, a: a.view(3, -1), R3)
case("transpose", lambda L, a: a.transpose(0, 1), R2)
case("transpose_3d", lambda L, a: L.transpose(a, 0, 2), R3)
case("permute", lambda L, a: a.permute(2, 0, 1), R3)
case("T", lambda L, a: a.T, R2)
case("mT", lambda L, a: a.mT, R3)
case("t", lambda L, a: a.t(), R2)
case("squeeze_all", lambda L, a: a.squeeze(), ((2, 1, 3), "n"))
case("squeeze_dim", lambda L, a: a.squeeze(1), ((2, 1, 3), "n"))
case("unsqueeze", lambda L, a: a.unsqueeze(0), R2)
case("unsqueeze_neg", lambda L, a: L.unsqueeze(a, -1), R2)
case("expand", lambda L, a: a.expand(2, 2, 3), ((1, 3), "n"))
case("expand_keep", lambda L, a: a.expand(-1, 3), ((2, 1), "n"))
case("expand_as", lambda L, a, b: a.expand_as(b) * b, ((2, 1), "n"), ((2, 3), "n"))
case("flatten", lambda L, a: a.flatten(), R3)
case("flatten_from1", lambda L, a: L.flatten(a, 1), R3)
case("contiguous", lambda L, a: a.transpose(0, 1).contiguous(), R2)
case("clone", lambda L, a: a.clone() * a, R2)
case("split_1", lambda L, a: a.split(1), R2)
case("split_sizes", lambda L, a: a.split([1, 2], dim=1), R2)
case("split_uneven", lambda L, a: L.split(a, 2, 1), R2)
case("split_one_used", lambda L, a: a.split(1)[1] * 2, R2)
case("chunk", lambda L, a: a.chunk(2, 1), R2)
case("chunk_fn", lambda L, a: L.chunk(a, 2, 0), R3)
case("cat0", lambda L, a, b: L.cat([a, b]), ((2, 3), "n"), ((1, 3), "n"))
case("cat1", lambda L, a, b: L.cat([a, b, a], 1), ((2, 3), "n"), ((2, 1), "n"))
case("stack0", lambda L, a, b: L.stack([a, b]), ((2, 3), "n"), ((2, 3), "n"))
case("stack_last", lambda L, a, b: L.stack([a, b, a], -1), ((2, 3), "n"), ((2, 3), "n"))
case("unbind", lambda L, a: a.unbind(1), R2)

# ---- indexing ----------------------------------------------------------------------------------------
X = ((3, 4), "n")
case("index_int", lambda L, a: a[1], X)
case("index_neg_int", lambda L, a: a[-1], X)
case("index_col", lambda L, a: a[:, 1], X)
case("index_two_ints", lambda L, a: a[2, 1], X)
case("index_slices", lambda L, a: a[1:, ::2], X)
case("index_none", lambda L, a: a[None], X)
case("index_none_mid", lambda L, a: a[:, None, 1:], X)
case("index_ellipsis", lambda L, a: a[..., 1], ((2, 2, 3), "n"))
case("index_ellipsis_none", lambda L, a: a[..., None], X)
case("index_tensor_repeats", lambda L, a: a[_i(L, [0, 0, 2, 0])], X)
case("index_tensor_col_repeats", lambda L, a: a[:, _i(L, [2, 2, 0, 1])], X)
case("index_tensor_2d", lambda L, a: a[_i(L, [[0, 1], [1, 1]])], X)
case("index_pairs", lambda L, a: a[_i(L, [0, 1, 0]), _i(L, [2, 2, 2])], X)
case("index_int_and_tensor", lambda L, a: a[1, _i(L, [3, 0, 3])], X)
case("index_bool_mask", lambda L, a: a[_b(L, [[True, False, True, True], [False] * 4, [True, True, False, False]])], X)
case("index_bool_rows", lambda L, a: a[_b(L, [True, False, True])], X)
case("index_select", lambda L, a: a.index_select(1, _i(L, [0, 3, 3])), X)

# ---- selection ------------------------------------------------------------------------------------------
MASK = [[True, False, True], [False, False, True]]
case("where", lambda L, a, b: L.where(_b(L, MASK), a, b), ((2, 3), "n"), ((2, 3), "n"))
case("where_broadcast", lambda L, a, b: L.where(_b(L, MASK), a, b), ((3,), "n"), ((2, 1), "n"))
case("where_scalar", lambda L, a: L.where(_b(L, MASK), a, 0.0), ((2, 3), "n"))
case("where_method", lambda L, a, b: a.where(_b(L, MASK), b), ((2, 3), "n"), ((2, 3), "n"))
case("masked_fill", lambda L, a: a.masked_fill(_b(L, MASK), 0.5), ((2, 3), "n"))
case("masked_fill_broadcast", lambda L, a: L.masked_fill(a, _b(L, [[True, False, True]]), -1.0), ((2, 3), "n"))
case("masked_fill_inf_softmax", lambda L, a: a.masked_fill(_b(L, np.triu(np.ones((3, 3), bool), 1)), float("-inf")).softmax(-1),
     ((3, 3), "n"))
case("tril", lambda L, a: a.tril(), ((3, 3), "n"))
case("tril_neg", lambda L, a: L.tril(a, -1), ((3, 4), "n"))
case("triu", lambda L, a: a.triu(1), ((3, 3), "n"))
case("triu_batched", lambda L, a: L.triu(a), ((2, 3, 3), "n"))
case("gather_dim1", lambda L, a: a.gather(1, _i(L, [[0, 0], [2, 1], [3, 3]])), X)
case("gather_dim0", lambda L, a: L.gather(a, 0, _i(L, [[0, 1, 2, 2], [2, 2, 0, 0]])), X)
case("softmax_last", lambda L, a: a.softmax(-1), ((2, 3), "n"))
case("softmax_dim0", lambda L, a: L.softmax(a, 0), ((2, 2, 3), "n"))
case("log_softmax_last", lambda L, a: a.log_softmax(1), ((2, 3), "n"))
case("log_softmax_dim0", lambda L, a: L.log_softmax(a, 0), ((2, 2, 3), "n"))
case("topk", lambda L, a: a.topk(2)[0], ((2, 4), "d"))
case("topk_dim0_smallest", lambda L, a: a.topk(2, dim=0, largest=False).values, ((3, 2), "d"))
case("topk_all", lambda L, a: L.topk(a, 4)[0], ((4,), "d"))
case("sort", lambda L, a: a.sort(1)[0], ((2, 3), "d"))
case("sort_desc", lambda L, a: a.sort(0, descending=True).values, ((3, 2), "d"))

# ---- matmul ------------------------------------------------------------------------------------------
for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((2, 2, 3), (2, 3, 2)),
               ((2, 2, 3), (3, 2)), ((3, 2), (2, 2, 3)), ((3,), (2, 3, 2)), ((2, 2, 3), (3,)),
               ((2, 1, 2, 3), (3, 3, 2)), ((1, 2, 3), (2, 3, 2))]:
    tag = f"{sa}x{sb}".replace(" ", "")
    case(f"matmul{tag}", lambda L, a, b: a @ b, (sa, "n"), (sb, "n"))
case("mm", lambda L, a, b: L.mm(a, b), ((2, 3), "n"), ((3, 2), "n"))
case("bmm", lambda L, a, b: L.bmm(a, b), ((2, 2, 3), "n"), ((2, 3, 2), "n"))
case("matmul_fn", lambda L, a, b: L.matmul(a, b.T), ((2, 3), "n"), ((2, 3), "n"))
case("matmul_self", lambda L, a: a @ a.T, ((2, 3), "n"))

# ---- issue 16: more elementwise ops --------------------------------------------------------------------
def _unit(rng, shape):
    return rng.uniform(-0.8, 0.8, shape)


def _above1(rng, shape):
    return rng.uniform(1.3, 3.0, shape)


def _offgrid(rng, shape):
    # away from the integers and half-integers, where rounding and fmod jump
    return rng.integers(-3, 4, shape) + rng.uniform(0.1, 0.4, shape) * rng.choice([-1.0, 1.0], shape)


DOMAINS.update(u=_unit, g=_above1, o=_offgrid)
for shape in [(), (2, 3)]:
    tag = str(len(shape))
    case(f"tan{tag}", lambda L, a: a.tan(), (shape, "u"))
    case(f"asin{tag}", lambda L, a: a.asin(), (shape, "u"))
    case(f"acos{tag}", lambda L, a: L.acos(a), (shape, "u"))
    case(f"atan{tag}", lambda L, a: a.atan(), (shape, "n"))
    case(f"sinh{tag}", lambda L, a: a.sinh(), (shape, "n"))
    case(f"cosh{tag}", lambda L, a: L.cosh(a), (shape, "n"))
    case(f"asinh{tag}", lambda L, a: a.asinh(), (shape, "n"))
    case(f"acosh{tag}", lambda L, a: a.acosh(), (shape, "g"))
    case(f"atanh{tag}", lambda L, a: L.atanh(a), (shape, "u"))
    case(f"exp2_{tag}", lambda L, a: a.exp2(), (shape, "n"))
    case(f"log2{tag}", lambda L, a: a.log2(), (shape, "p"))
    case(f"log10{tag}", lambda L, a: L.log10(a), (shape, "p"))
    case(f"expm1{tag}", lambda L, a: a.expm1(), (shape, "n"))
    case(f"log1p{tag}", lambda L, a: a.log1p(), (shape, "p"))
    case(f"erf{tag}", lambda L, a: a.erf(), (shape, "n"))
    case(f"erfc{tag}", lambda L, a: L.erfc(a), (shape, "n"))
    case(f"rounding{tag}", lambda L, a: a.floor() + a.ceil() * a + L.trunc(a) + a.round() + a.frac() * a, (shape, "o"))
case("erfinv", lambda L, a: a.erfinv(), ((2, 3), "u"))
case("lgamma", lambda L, a: a.lgamma(), ((2, 3), "p"))
case("lgamma_negative", lambda L, a: L.lgamma(a - 3.0), ((2, 3), "o"))
case("round_decimals", lambda L, a: a.round(decimals=1) * a, ((2, 3), "o"))
case("sign", lambda L, a: a.sign() * a, ((2, 3), "a"))
for sa, sb in [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3))]:
    tag = f"{sa}x{sb}".replace(" ", "")
    case(f"fmod{tag}", lambda L, a, b: L.fmod(a, b), (sa, "o"), (sb, "g"))
    case(f"remainder{tag}", lambda L, a, b: L.remainder(a, b), (sa, "o"), (sb, "g"))
    case(f"copysign{tag}", lambda L, a, b: L.copysign(a, b), (sa, "a"), (sb, "a"))
    case(f"atan2{tag}", lambda L, a, b: L.atan2(a, b), (sa, "a"), (sb, "a"))
    case(f"logaddexp{tag}", lambda L, a, b: L.logaddexp(a, b), (sa, "n"), (sb, "n"))
    case(f"lerp{tag}", lambda L, a, b: L.lerp(a, b, 0.3), (sa, "n"), (sb, "n"))
    case(f"lerp_tensor{tag}", lambda L, a, b, w: L.lerp(a, b, w), (sa, "n"), (sb, "n"), (sb, "n"))
case("fmod_scalar", lambda L, a: a.fmod(1.5), ((2, 3), "o"))
case("remainder_scalar", lambda L, a: a % 1.5, ((2, 3), "o"))
case("copysign_scalar", lambda L, a: a.copysign(-1.0), ((2, 3), "a"))

# ---- issue 16: scans --------------------------------------------------------------------------------------
for dim in (0, -1):
    case(f"cumsum{dim}", lambda L, a, d=dim: a.cumsum(d), ((3, 4), "n"))
    case(f"cumprod{dim}", lambda L, a, d=dim: a.cumprod(d), ((3, 4), "a"))
    case(f"cummax{dim}", lambda L, a, d=dim: a.cummax(d)[0], ((3, 4), "d"))
    case(f"cummin{dim}", lambda L, a, d=dim: L.cummin(a, d).values, ((3, 4), "d"))
    case(f"logcumsumexp{dim}", lambda L, a, d=dim: a.logcumsumexp(d), ((3, 4), "n"))
case("cumsum_0d", lambda L, a: a.cumsum(0), ((), "n"))
case("cumprod_with_zero", lambda L, a: (a * L.tensor(np.array([1.0, 0.0, 1.0, 1.0]), dtype=a.dtype)).cumprod(0),
     ((4,), "a"), gradgrad=False)

# ---- issue 16: moving and picking ---------------------------------------------------------------------------
R34 = ((3, 4), "n")
case("flip", lambda L, a: a.flip(0), R34)
case("flip_dims", lambda L, a: L.flip(a, (0, -1)), R34)
case("roll", lambda L, a: a.roll(1, 1), R34)
case("roll_dims", lambda L, a: L.roll(a, (1, -2), (0, 1)), R34)
case("roll_flat", lambda L, a: a.roll(5), R34)
case("repeat", lambda L, a: a.repeat(2, 1, 3), R34)
case("tile", lambda L, a: L.tile(a, (2,)), R34)
case("repeat_interleave", lambda L, a: a.repeat_interleave(2, dim=1), R34)
case("repeat_interleave_flat", lambda L, a: L.repeat_interleave(a, 2), R34)
case("repeat_interleave_counts", lambda L, a: a.repeat_interleave(_i(L, [1, 0, 2]), dim=0), R34)
case("diagonal", lambda L, a: a.diagonal(), R34)
case("diagonal_offset", lambda L, a: L.diagonal(a, 1), R34)
case("diagonal_3d", lambda L, a: a.diagonal(-1, 0, 2), ((3, 2, 4), "n"))
case("diag_vector", lambda L, a: L.diag(a, 1), ((3,), "n"))
case("diag_matrix", lambda L, a: L.diag(a, -1), R34)
case("diag_embed", lambda L, a: L.diag_embed(a), R34)
case("unfold", lambda L, a: a.unfold(1, 2, 1), R34)
case("unfold_step", lambda L, a: a.unfold(0, 2, 2), ((5, 2), "n"))
case("masked_select", lambda L, a: a.masked_select(_b(L, [[True, False, True, True]])), R34)
case("einsum_mm", lambda L, a, b: L.einsum("ij,jk->ik", a, b), ((2, 3), "n"), ((3, 4), "n"))
case("einsum_trace", lambda L, a: L.einsum("ii", a), ((3, 3), "n"))
case("einsum_diag", lambda L, a: L.einsum("ii->i", a), ((3, 3), "n"))
case("einsum_outer", lambda L, a, b: L.einsum("i,j->ij", a, b), ((3,), "n"), ((2,), "n"))
case("einsum_batch", lambda L, a, b: L.einsum("bij,bjk->bik", a, b), ((2, 2, 3), "n"), ((2, 3, 2), "n"))
case("einsum_sum_one", lambda L, a, b: L.einsum("ij,k->i", a, b), ((2, 3), "n"), ((2,), "n"))
case("einsum_ellipsis", lambda L, a, b: L.einsum("...ij,...jk", a, b), ((2, 2, 3), "n"), ((2, 3, 2), "n"))
case("einsum_implicit", lambda L, a, b: L.einsum("ij,jk", a, b), ((2, 3), "n"), ((3, 2), "n"))

# ---- issue 16: scatter -----------------------------------------------------------------------------------------
IDX = [[0, 1, 2, 0], [2, 0, 0, 1]]
case("scatter", lambda L, a, b: a.scatter(0, _i(L, [[0, 1, 2, 1], [2, 0, 1, 0]]), b), R34, ((2, 4), "n"))
case("scatter_value", lambda L, a: a.scatter(1, _i(L, [[0], [3], [1]]), 2.5), R34)
case("scatter_add", lambda L, a, b: a.scatter_add(0, _i(L, IDX), b), R34, ((2, 4), "n"))
for reduce in ("sum", "prod", "mean", "amax", "amin"):
    for inc in (True, False):
        dom = "d" if reduce in ("amax", "amin") else ("a" if reduce == "prod" else "n")
        case(f"scatter_reduce_{reduce}_{inc}",
             lambda L, a, b, r=reduce, i=inc: a.scatter_reduce(0, _i(L, IDX), b, r, include_self=i),
             ((3, 4), dom), ((2, 4), dom))
case("index_add", lambda L, a, b: a.index_add(0, _i(L, [2, 0, 2]), b), R34, ((3, 4), "n"))
case("index_add_alpha", lambda L, a, b: L.index_add(a, 1, _i(L, [1, 1]), b, alpha=-2.0), R34, ((3, 2), "n"))

# ---- issue 16: linear algebra ------------------------------------------------------------------------------------
def _wellconditioned(rng, shape):
    return rng.standard_normal(shape) * 0.5 + 2.0 * np.eye(shape[-1])


DOMAINS.update(w=_wellconditioned)
case("inverse", lambda L, a: a.inverse(), ((3, 3), "w"))
case("inverse_batched", lambda L, a: L.linalg.inv(a), ((2, 3, 3), "w"))
case("det", lambda L, a: a.det(), ((3, 3), "w"))
case("det_batched", lambda L, a: L.linalg.det(a), ((2, 3, 3), "w"))
case("slogdet", lambda L, a: L.linalg.slogdet(a)[1], ((2, 3, 3), "w"))
case("logdet", lambda L, a: a.logdet(), ((3, 3), "w"))
# (solve is inverse(A) @ B here: a row-major result where LAPACK's is column-major)
case("solve", lambda L, a, b: L.linalg.solve(a, b), ((3, 3), "w"), ((3, 2), "n"), layout=False)
case("solve_vector", lambda L, a, b: L.linalg.solve(a, b), ((2, 3, 3), "w"), ((2, 3), "n"), layout=False)
case("matrix_power", lambda L, a: a.matrix_power(3), ((3, 3), "w"))
case("matrix_power_neg", lambda L, a: L.matrix_power(a, -2), ((3, 3), "w"))
case("vector_norm", lambda L, a: L.linalg.vector_norm(a, 3, dim=-1), ((2, 3), "a"))
case("matrix_norm_1", lambda L, a: L.linalg.matrix_norm(a, 1), ((2, 3, 3), "d"), gradgrad=False)

CASE_BY_NAME = {c.name: c for c in CASES}
assert len(CASE_BY_NAME) == len(CASES), "duplicate case names"
