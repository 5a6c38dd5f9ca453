"""Connectionist temporal classification (CTC): the negative log likelihood of a label sequence summed over
every alignment of it to the T frames, with a blank class between labels (speech and handwriting models).

The labels l_1 .. l_L are extended with blanks around each one, l' = (b, l_1, b, l_2, ..., l_L, b), S' = 2L + 1.
An alignment walks l' left to right, one step per frame: at each frame it stays on s, moves to s + 1, or jumps
over a blank to s + 2 when l'_{s+2} differs from l'_s. In log space (y_t(c) the frame's log-probabilities):

    alpha_t(s) = y_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if it may jump)
    beta_t(s)  = y_t(l'_s) + logsumexp(beta_{t+1}(s), beta_{t+1}(s+1), beta_{t+1}(s+2) if it may jump)
    loss = -logsumexp(alpha_{T-1}(S'-1), alpha_{T-1}(S'-2))

The gradient is PyTorch's: the one w.r.t. the logits of a log_softmax that made log_probs,
    d loss / d y_t(c) = exp(y_t(c)) - exp(loss - y_t(c)) sum_{s: l'_s = c} exp(alpha_t(s) + beta_t(s)),
which is the true gradient w.r.t. log_probs after log_softmax's backward (whose rows it leaves unchanged,
as they sum to 0). Frames past a sample's input length get 0.
"""
import numpy as np

from ._common import Function, Tensor, check_tensor, once_differentiable, second_order, xp_of
from .loss import _not_implemented, _legacy_reduction, _mg

_ALLOCATE = "(while checking arguments for ctc_loss_allocate_outputs)"


def _extended(targets, target_lengths, blank):
    """(l' (N, S'), may_jump (N, S')): the targets with blanks between, padded with blanks past each sample's."""
    N, S = targets.shape
    xp = xp_of(targets)
    labels = xp.where(xp.arange(S)[None, :] < target_lengths[:, None], targets, blank)
    ext = xp.full((N, 2 * S + 1), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    jump = xp.zeros(ext.shape, dtype=bool)
    jump[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, jump


def _alpha(lpe, jump):
    """alpha (T, N, S') from lpe[t, n, s] = y_t(l'_s) (see the module's docstring)."""
    xp = xp_of(lpe)
    alpha = xp.full(lpe.shape, -np.inf, dtype=lpe.dtype)
    alpha[0, :, :2] = lpe[0, :, :2]  # start on the first blank or the first label
    for t in range(1, lpe.shape[0]):
        a = alpha[t - 1]
        acc = a.copy()
        acc[:, 1:] = xp.logaddexp(acc[:, 1:], a[:, :-1])
        acc[:, 2:] = xp.where(jump[:, 2:], xp.logaddexp(acc[:, 2:], a[:, :-2]), acc[:, 2:])
        alpha[t] = acc + lpe[t]
    return alpha


def _beta(lpe, jump, last, end):
    """beta (T, N, S'), started at each sample's last frame `last` (N,) on its last two positions end, end - 1."""
    xp = xp_of(lpe)
    beta = xp.full(lpe.shape, -np.inf, dtype=lpe.dtype)
    rows = xp.arange(lpe.shape[1])
    for t in range(lpe.shape[0] - 1, -1, -1):
        if t + 1 < lpe.shape[0]:
            b = beta[t + 1]
            acc = b.copy()
            acc[:, :-1] = xp.logaddexp(acc[:, :-1], b[:, 1:])
            acc[:, :-2] = xp.where(jump[:, 2:], xp.logaddexp(acc[:, :-2], b[:, 2:]), acc[:, :-2])
            beta[t] = acc + lpe[t]
        n = rows[last == t]  # the samples whose last frame this is (beta after it is -inf)
        beta[t, n, end[n]] = lpe[t, n, end[n]]
        n = n[end[n] > 0]
        beta[t, n, end[n] - 1] = lpe[t, n, end[n] - 1]
    return beta


class CtcLoss(Function):
    node_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, ext, jump, input_lengths, target_lengths, zero_infinity):
        lp = log_probs.array  # (T, N, C)
        xp = xp_of(lp)
        N = lp.shape[1]
        rows = xp.arange(N)
        lpe = lp[:, rows[:, None], ext]  # (T, N, S'): y_t(l'_s)
        alpha = _alpha(lpe, jump)
        last, end = input_lengths - 1, 2 * target_lengths
        ends = alpha[last, rows, end]
        before_end = xp.where(end > 0, alpha[last, rows, xp.maximum(end - 1, 0)], -np.inf)
        nll = -xp.logaddexp(ends, before_end)
        ctx.save(log_probs=log_probs)
        ctx.lpe, ctx.alpha, ctx.nll = lpe, alpha, nll
        ctx.ext, ctx.jump, ctx.last, ctx.end, ctx.zero_infinity = ext, jump, last, end, zero_infinity
        return nll

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        lp = ctx._saved_log_probs.array
        xp = xp_of(lp)
        beta = _beta(ctx.lpe, ctx.jump, ctx.last, ctx.end)
        # exp(alpha + beta + loss - y) per position s, then summed into its class l'_s (within one s the
        # samples' classes are distinct cells, so a plain += adds each once); an impossible sample's infinite
        # loss meets alpha's -inf there: its nan gradient is PyTorch's too (or zeroed below), without numpy's warning
        with np.errstate(invalid="ignore"):
            occupancy = xp.exp(ctx.alpha + beta + ctx.nll[None, :, None] - ctx.lpe)
        grad = xp.exp(lp)
        rows = xp.arange(lp.shape[1])
        for s in range(ctx.ext.shape[1]):
            grad[:, rows, ctx.ext[:, s]] -= occupancy[:, :, s]
        grad[xp.arange(lp.shape[0])[:, None] > ctx.last[None, :]] = 0.0  # frames past each sample's input length
        grad *= g.array.astype(lp.dtype, copy=False)[None, :, None]
        if ctx.zero_infinity:
            grad[:, xp.isinf(ctx.nll)] = 0.0
        return Tensor._wrap(grad), None, None, None, None, None

    @staticmethod
    def double_backward(ctx, g):  # create_graph: PyTorch has no derivative of this backward, and says so when asked
        gx = second_order(ctx, CtcLoss.backward.fn(ctx, g)[0], _not_implemented("_ctc_loss"),
                          *[g] if g.requires_grad else [], name="NotImplemented")
        return (gx,) + (None,) * 5


def _lengths(lengths, name, N, xp):
    if isinstance(lengths, Tensor):
        if lengths.array.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        lengths = lengths.array.reshape(-1)
    lengths = xp.asarray(lengths, dtype=np.int64).reshape(-1)
    if lengths.shape[0] != N:
        raise RuntimeError(f"{name} must be of size batch_size")
    return lengths


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """CTC loss (see the module's docstring). Shapes: log_probs (T, N, C) (log_softmax's output) or (T, C);
    targets (N, S) padded or 1-D, every sample's labels one after another; input_lengths and target_lengths
    (N,) tensors or sequences of ints -> () or (N,) with reduction='none'. 'mean' divides each sample's
    loss by its target length (at least 1) before the mean. zero_infinity: impossible alignments (an infinite
    loss) give 0 and no gradient. One `CtcLossBackward0` node, then the reduction's."""
    check_tensor(log_probs, "log_probs", "ctc_loss")
    check_tensor(targets, "targets", "ctc_loss")
    reduction = _legacy_reduction(None, None, reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.reshape(1, -1)
    T, N, C = log_probs.shape
    xp = xp_of(log_probs.array)
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, "input_lengths", N, xp)
    tl = _lengths(target_lengths, "target_lengths", N, xp)
    for i in range(N):
        if il[i] > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {int(il[i])} "
                               + _ALLOCATE)
    t = targets.array.astype(np.int64, copy=False)
    if t.ndim == 1:  # concatenated: sample n's labels start after the previous samples'
        starts = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
        if int(tl.sum()) != t.shape[0]:  # (PyTorch's check: exactly the labels of all samples)
            raise RuntimeError(f"Expected tensor to have size {int(tl.sum())} at dimension 0, but got size "
                               f"{t.shape[0]} for argument #2 'targets' " + _ALLOCATE)
        S = int(tl.max()) if N else 0
        cols = np.minimum(starts[:, None] + np.arange(S)[None, :], max(t.shape[0] - 1, 0))
        t = t[cols] if t.shape[0] else np.zeros((N, S), dtype=np.int64)
    elif N and int(tl.max()) > t.shape[1]:
        raise RuntimeError(f"Expected tensor to have size at least {int(tl.max())} at dimension 1, but got size "
                           f"{t.shape[1]} for argument #2 'targets' " + _ALLOCATE)
    ext, jump = _extended(t, tl, blank)
    loss = CtcLoss.apply(log_probs, ext, jump, il, tl, bool(zero_infinity))
    if zero_infinity:
        loss = _mg().where(loss == float("inf"), 0.0, loss)
    if reduction == "mean":
        lengths = Tensor._wrap(xp.maximum(tl, 1).astype(log_probs.array.dtype))
        return (loss / lengths).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(()) if unbatched else loss
