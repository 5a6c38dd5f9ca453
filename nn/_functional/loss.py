"""cross_entropy as one CrossEntropyLossBackward0 node that saves a single (N, C) array (made in
place over the softmax probabilities; no copy of the logits), and mse_loss (one MseLossBackward0)."""
import numpy as np

from minigrad import backends

from ._common import Function, Tensor, check_tensor, for_blocks, once_differentiable, row_sum, rows_per_block, sum_to, xp_of

_REDUCTIONS = ("mean", "sum", "none")


class CrossEntropy(Function):
    """One node for log_softmax + nll (+ label smoothing, class weights, ignore_index); the reference
    (primitive ops, autograd) is nn/_functional/reference.py's cross_entropy.

    Its only saved tensor is one (M, C) array D, made in place over the softmax probabilities:
    the gradient of the per-row loss w.r.t. the logits, so backward is gx = D * (upstream
    gradient [/ weight sum]): one pass, and no copy of the logits is kept.
    """

    node_name = "CrossEntropyLossBackward0"

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, ls, layout):
        # nll_i = lse_i - x_i[t_i];  smooth_i = sum_c w_c (lse_i - x_ic);  lse_i = logsumexp_c x_ic
        # loss_i = valid_i ((1 - ls) w[t_i] nll_i + ls/C smooth_i);  'mean' divides by sum_i valid_i w[t_i]
        # D_ic = d loss_i / d x_ic = ((1 - ls) wv_i + ls/C W valid_i) p_ic - (1 - ls) wv_i [c == t_i] - ls/C valid_i w_c
        #        (p = softmax(x_i), wv_i = valid_i w[t_i], W = sum_c w_c)
        xd, t = x.data, target.data.reshape(-1)
        xp = xp_of(xd)
        x2 = _rows(xd, layout)  # (M, C): a view for 2-D input
        M, C = x2.shape
        need_grad = ctx.needs_input_grad[0]
        wd = None if weight is None else weight.data
        fast = backends.lookup("cross_entropy", x2)
        valid = t != ignore_index
        t_safe = xp.where(valid, t, 0) if wd is not None or fast is None else None
        denom = 1.0
        if reduction == "mean":  # sum_i valid_i w[t_i]
            denom = float(xp.count_nonzero(valid)) if wd is None else float((valid * wd[t_safe]).sum())
        # D is saved already divided by 'mean''s denominator, inside the block loop: backward from a
        # loss of gradient 1 (loss.backward()) then hands D on as it is, with no pass over the logits
        inv = 1.0 / denom if denom else 0.0
        D = xp.empty_like(x2)
        if fast is not None:
            loss = fast.forward(D, x2, t, wd, ignore_index, ls, inv, need_grad)
        else:
            loss, block = _cross_entropy_passes(D, x2, t_safe, valid, wd, ls, inv, need_grad)
            for_blocks(M, block, rows_per_block(C), xp)
        if reduction == "mean":
            out = xp.asarray(loss.sum() / denom if denom else float("nan"), dtype=xd.dtype)
        elif reduction == "sum":
            out = xp.asarray(loss.sum(), dtype=xd.dtype)
        else:
            out = loss.reshape(target.data.shape)
        ctx.reduction, ctx.layout, ctx.shape = reduction, layout, xd.shape
        ctx.save(grad_logits=D)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = D * g (per row for 'none'; D holds the 1 / sum_i valid_i w[t_i] of 'mean')
        D = ctx._saved_grad_logits.data
        if ctx.reduction == "none":
            gx = D * g.data.reshape(-1, 1)
        elif float(g.data) == 1.0:
            gx = D  # read-only from here on: the next backward (a matmul) does not write its input
        else:
            gx = D * g.data
        return Tensor(_unrows(gx, ctx.layout, ctx.shape)), None, None, None, None, None, None


def _cross_entropy_passes(D, x2, t_safe, valid, wd, ls, inv, need_grad):
    """The forward as numpy (or cupy) passes over a block of rows: -> (loss (M,), block(lo, hi)) where
    block fills its rows of the per-row loss and, when need_grad, of D."""
    xp = xp_of(x2)
    M, C = x2.shape
    hit = valid.astype(x2.dtype)  # (1 - ls) wv_i: weight of the target column
    if wd is not None:
        hit *= wd[t_safe]
    hit *= 1.0 - ls
    if ls:
        vs = valid.astype(x2.dtype)  # ls/C valid_i: weight of the uniform part
        vs *= ls / C
        a = vs * (float(C) if wd is None else wd.sum())
        a += hit
    else:
        vs, a = None, hit
    loss = xp.empty(M, dtype=x2.dtype)
    rows = xp.arange(M)

    def block(lo, hi):
        db, xb = D[lo:hi], x2[lo:hi]
        lse = xb.max(axis=1, keepdims=True)
        xp.subtract(xb, lse, out=db)
        xp.exp(db, out=db)
        s = row_sum(db, xp)
        lse += xp.log(s)
        lse = lse[:, 0]
        lb = loss[lo:hi]
        xp.subtract(lse, xb[rows[: hi - lo], t_safe[lo:hi]], out=lb)  # nll
        lb *= hit[lo:hi]
        if ls:
            smooth = lse * float(C) - xb.sum(axis=1) if wd is None else lse * wd.sum() - xp.matmul(xb, wd)
            smooth *= vs[lo:hi]
            lb += smooth
        if not need_grad:
            return
        db *= (a[lo:hi] * inv / s[:, 0])[:, None]  # a_i p_ic
        db[rows[: hi - lo], t_safe[lo:hi]] -= hit[lo:hi] * inv
        if ls:
            db -= (vs[lo:hi] * inv)[:, None] if wd is None else (vs[lo:hi] * inv)[:, None] * wd

    return loss, block


def _rows(xd, layout):
    """Logits as (M, C) rows: a view for (N, C); a moved copy for (N, C, d1, ...); (1, C) for (C,)."""
    if layout == 2:
        return xd
    if layout == 1:
        return xd.reshape(1, -1)
    xp = xp_of(xd)
    return xp.ascontiguousarray(xp.moveaxis(xd, 1, -1)).reshape(-1, xd.shape[1])


def _unrows(g2, layout, shape):
    if layout == 2:
        return g2
    if layout == 1:
        return g2.reshape(shape)
    moved = (shape[0],) + tuple(shape[2:]) + (shape[1],)
    return xp_of(g2).moveaxis(g2.reshape(moved), -1, 1)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    check_tensor(input, "input", "cross_entropy")
    check_tensor(target, "target", "cross_entropy")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    xs, ts = tuple(input.data.shape), tuple(target.data.shape)
    if input.data.dtype.kind != "f":
        raise RuntimeError(f"cross_entropy: expected floating point logits, got {input.dtype}")
    if target.data.dtype.kind not in "iu":
        if target.data.dtype.kind == "f" and ts == xs:
            raise NotImplementedError("cross_entropy: class-probability targets are not supported; "
                                      "pass int64 class indices of shape (N, d1, ...)")
        raise RuntimeError(f"cross_entropy: expected target of int64 class indices, got {target.dtype}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if len(xs) == 0:
        raise ValueError("cross_entropy: input must have a class dimension, got a 0-d tensor")
    if len(xs) == 1:
        layout, C, want = 1, xs[0], ()
    else:
        layout, C, want = 2 if len(xs) == 2 else 3, xs[1], (xs[0],) + xs[2:]
        if ts[:1] != xs[:1]:
            raise ValueError(f"Expected input batch_size ({xs[0]}) to match target batch_size "
                             f"({ts[0] if ts else 'a 0-d target'}) (input {list(xs)}, target {list(ts)})")
    if ts != want:
        raise RuntimeError(f"cross_entropy: expected target of shape {list(want)} for input of shape {list(xs)} "
                           f"(C={C} classes on dim {0 if len(xs) == 1 else 1}), got target of shape {list(ts)}")
    if weight is not None and tuple(weight.data.shape) != (C,):
        raise RuntimeError(f"cross_entropy: weight should be a 1D tensor of size C={C}, got shape {list(weight.shape)}")
    t = target.data
    if t.size:
        bad = (t != ignore_index) & ((t < 0) | (t >= C))
        if bool(bad.any()):
            i = int(xp_of(t).argmax(bad.reshape(-1)))
            raise IndexError(f"Target {int(t.reshape(-1)[i])} is out of bounds: class ids must be in [0, {C}) "
                             f"for input with C={C} classes (or equal ignore_index={ignore_index}); "
                             f"found at flat target position {i}")
    return CrossEntropy.apply(input, target, weight, int(ignore_index), reduction, float(label_smoothing), layout)


class MseLoss(Function):
    node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, x, y, reduction):  # loss = (x - y)^2, reduced
        d = x.data - y.data
        ctx.save(diff=d)
        ctx.reduction, ctx.shapes = reduction, (x.data.shape, y.data.shape)
        xp = xp_of(d)
        if reduction == "none":
            return d * d
        s = xp.asarray(xp.vdot(d.reshape(-1), d.reshape(-1)) if xp is np else (d * d).sum(), dtype=d.dtype)
        return s / float(d.size) if reduction == "mean" else s

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = 2 (x - y) g [/ n],  gy = -gx
        d = ctx._saved_diff.data
        k = 2.0 / d.size if ctx.reduction == "mean" else 2.0
        gx = d * k
        gx *= g.data
        xs, ys = ctx.shapes
        needs = ctx.needs_input_grad
        return (Tensor(sum_to(gx, xs)) if needs[0] else None,
                Tensor(-sum_to(gx, ys)) if needs[1] else None, None)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    check_tensor(input, "input", "mse_loss")
    check_tensor(target, "target", "mse_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.data.dtype != input.data.dtype:
        target = target.to(input.dtype)
    if weight is None:
        return MseLoss.apply(input, target, reduction)
    sq = MseLoss.apply(input, target, "none") * weight  # weighted: a few nodes (rare path)
    if reduction == "none":
        return sq
    if reduction == "sum":
        return sq.sum()
    return sq.sum() / weight.expand(*sq.shape).sum()


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:  # PyTorch's deprecated arguments
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


