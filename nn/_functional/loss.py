"""cross_entropy as one NllLossBackward0 node (log_softmax and nll_loss in one) that saves a single (N, C) array (made in
place over the softmax probabilities; no copy of the logits), and mse_loss (one MseLossBackward0)."""
import functools
import warnings

import numpy as np

from minigrad import backends
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.autograd.recording import escape
from minigrad.backends.arrays import sum_of_squares
from minigrad.dtypes import bool_, from_numpy_dtype, result_type
from minigrad.ops.elementwise import BOOL_NEGATION, add_scalar, div_scalar, mul_scalar, refuse_bool_sub
from minigrad.ops._util import add_reduce, broadcast_shapes, cast, not_differentiable, sum_to, sum_to_array
from minigrad.ops.array_op import array_op
from minigrad.ops.composite import broadcast_shapes as broadcast_sizes
from minigrad.ops.reduction import softmax_dtype_error
from minigrad.typeinfo import can_cast, get_default_dtype

from ._common import (Function, Tensor, check_sized_pair, check_tensor, for_blocks, once_differentiable, row_sum,
                      rows_per_block, second_order, some_id_outside, xp_of)

_REDUCTIONS = ("mean", "sum", "none")


def _cross_entropy(xd, target, wd, ignore_index, reduction, ls, layout, need_grad):
    """CrossEntropy's forward on arrays: (the loss, D, the targets as double_backward reads them).
    nll_i = lse_i - x_i[t_i];  smooth_i = sum_c w_c (lse_i - x_ic);  lse_i = logsumexp_c x_ic
    loss_i = valid_i ((1 - ls) w[t_i] nll_i + ls/C smooth_i);  'mean' divides by sum_i valid_i w[t_i]
    D_ic = d loss_i / d x_ic = ((1 - ls) wv_i + ls/C W valid_i) p_ic - (1 - ls) wv_i [c == t_i] - ls/C valid_i w_c
           (p = softmax(x_i), wv_i = valid_i w[t_i], W = sum_c w_c)"""
    t = target if target.ndim == 1 else target.reshape(-1)
    target_shape = () if layout == 1 else target.shape  # (a (C,) input's one id may be (1,))
    xp = xp_of(xd)
    x2 = _rows(xd, layout)  # (M, C): a view for 2-D input
    M, C = x2.shape
    D = xp.empty_like(x2)
    fast = backends.find("cross_entropy", D, x2, t, wd, ignore_index, ls, None, need_grad)  # (inv: below)
    # the targets are checked here, not in cross_entropy: a replay of a captured step runs this too
    if fast is not None and wd is None:  # the kernel checks and counts the targets (it reads each anyway)
        denom = float(M) if reduction == "mean" else 1.0  # (as if no target is ignore_index: the usual)
        inv = 1.0 / denom if denom else 0.0
        loss, kept = fast.forward(D, x2, t, None, ignore_index, ls, inv, need_grad)
        if kept < 0:
            _check_targets(t, C, ignore_index)
        if reduction == "mean" and kept != M:  # some are: again, over the rows kept
            denom = float(kept)
            inv = 1.0 / denom if denom else 0.0
            loss, _ = fast.forward(D, x2, t, None, ignore_index, ls, inv, need_grad)
    else:
        loss, denom, inv = _cross_entropy_checked(D, x2, t, wd, ignore_index, reduction, ls, need_grad, fast)
    if reduction == "mean":
        out = xp.asarray(add_reduce(loss, (0,), False) / denom if denom else float("nan"), dtype=xd.dtype)
    elif reduction == "sum":
        out = xp.asarray(add_reduce(loss, (0,), False), dtype=xd.dtype)
    else:
        out = loss.reshape(target_shape)
    return out, D, (t, wd, ignore_index, ls, inv)  # (the targets: for a create_graph backward, double_backward)


def _cross_entropy_checked(D, x2, t, wd, ignore_index, reduction, ls, need_grad, fast):
    """_cross_entropy's forward with class weights or without a kernel: the targets checked and 'mean''s
    denominator found by array passes first -> (the per-row losses, the denominator, inv)."""
    xp = xp_of(x2)
    M, C = x2.shape
    outside = some_id_outside(t, C)
    if outside:  # then the ids that are not ignore_index
        _check_targets(t, C, ignore_index)
    every_row = not outside and not 0 <= ignore_index < C  # no target can equal ignore_index
    valid = None if every_row and fast is not None else t != ignore_index  # (None: all rows)
    t_safe = t if valid is None else xp.where(valid, t, 0) if wd is not None or fast is None else None
    denom = 1.0
    if reduction == "mean":  # sum_i valid_i w[t_i]
        if wd is None:
            denom = float(M if valid is None else xp.count_nonzero(valid))
        else:
            denom = float((wd[t_safe] if valid is None else valid * wd[t_safe]).sum())
    # D is saved already divided by 'mean''s denominator, inside the block loop: backward from a
    # loss of gradient 1 (loss.backward()) then hands D on as it is, with no pass over the logits
    inv = 1.0 / denom if denom else 0.0
    if fast is not None:
        loss, _ = fast.forward(D, x2, t, wd, ignore_index, ls, inv, need_grad)
    else:
        loss, block = _cross_entropy_passes(D, x2, t_safe, valid, wd, ls, inv, need_grad)
        for_blocks(M, block, rows_per_block(C), xp)
    return loss, denom, inv


def _cross_entropy_backward(D, g, reduction, layout, shape):  # gx = D * g (per row for 'none'; D holds 'mean''s 1 / sum)
    if reduction == "none":
        gx = D * g.reshape(-1, 1)
    elif float(g) == 1.0:
        gx = D  # read-only from here on: the next backward (a matmul) does not write its input
    else:
        gx = D * g
    return _unrows(gx, layout, shape)


class CrossEntropy(Function):
    """One node for log_softmax + nll (+ label smoothing, class weights, ignore_index); the reference
    (primitive ops, autograd) is nn/_functional/reference.py's cross_entropy.

    Its only saved tensor is one (M, C) array D, made in place over the softmax probabilities:
    the gradient of the per-row loss w.r.t. the logits, so backward is gx = D * (upstream
    gradient [/ weight sum]): one pass, and no copy of the logits is kept.
    """

    # PyTorch's cross_entropy is log_softmax then nll_loss, and a loss prints the last: `grad_fn=<NllLossBackward0>`.
    # This one node does both (its edge goes to the logits' node, where PyTorch's goes to LogSoftmaxBackward0).
    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, ls, layout):
        out, D, ctx.targets = _cross_entropy(x.array, target.array, None if weight is None else weight.array,
                                             ignore_index, reduction, ls, layout, ctx.needs_input_grad[0])
        ctx.reduction, ctx.layout, ctx.shape, ctx.target_shape = reduction, layout, x.array.shape, target.array.shape
        ctx.save(grad_logits=D)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        _refuse_one_id_as_1d(ctx.layout, ctx.shape, ctx.target_shape)
        return Tensor._wrap(_cross_entropy_backward(ctx._saved_grad_logits.array, g.array, ctx.reduction, ctx.layout,
                                              ctx.shape)), None, None, None, None, None, None

    @staticmethod
    def array_step(needs, x, target, weight, ignore_index, reduction, ls, layout):
        shape, others = x.array.shape, (None,) if weight is None else (None, None)  # (target's, weight's)
        target_shape = target.array.shape

        def forward(xd, t, wd=None):
            out, D, _ = _cross_entropy(xd, t, wd, ignore_index, reduction, ls, layout, needs[0])
            return out, D

        def backward(D, g):
            _refuse_one_id_as_1d(layout, shape, target_shape)
            return (_cross_entropy_backward(D, g, reduction, layout, shape), *others)
        return forward, backward

    @staticmethod
    def double_backward(ctx, g):  # create_graph: gx = D g, recorded as a function of x (through p) and g
        # D = A p - B by rows, p = softmax(x): A_i = ((1 - ls) wv_i + ls/C W valid_i) inv is a constant,
        # B too. x itself is not kept (D is the one (N, C) array saved): the node that takes the first
        # gradient on reaches x through this node's own edge to it, and p through D.
        _refuse_one_id_as_1d(ctx.layout, ctx.shape, ctx.target_shape)
        t, wd, ignore_index, ls, inv = ctx.targets
        D = ctx._saved_grad_logits.array
        M, C = D.shape
        xp = xp_of(D)
        valid = t != ignore_index
        t_safe = xp.where(valid, t, 0)
        wv = valid * (1.0 if wd is None else wd[t_safe])
        W = float(C) if wd is None else float(wd.sum())
        A = (((1 - ls) * wv + ls / C * W * valid) * inv).astype(D.dtype)
        B = xp.zeros((M, C), dtype=D.dtype)
        B[xp.arange(M), t_safe] = (1 - ls) * wv
        B += (ls / C) * valid[:, None] * (1.0 if wd is None else wd[None, :])
        B *= inv
        P = xp.zeros_like(D)  # p = (D + B) / A; a row with A_i = 0 (ignored) has no gradient anyway
        xp.divide(D + B, A[:, None], out=P, where=A[:, None] != 0)
        return (CrossEntropyGradient.apply(_in_graph_at(ctx.next_functions[0], ctx.shape, D.dtype), g, D, P, A, B,
                                           ctx.reduction == "none", ctx.layout, ctx.shape),) + (None,) * 6


class CrossEntropy2d(CrossEntropy):
    node_name = "NllLoss2DBackward0"  # PyTorch's name when the input has dims past the classes


class SmoothedCrossEntropy(CrossEntropy):
    node_name = "AddBackward0"  # PyTorch adds the smoothing term to the nll term last


def _cross_entropy_node(layout, label_smoothing):
    return SmoothedCrossEntropy if label_smoothing > 0 else CrossEntropy2d if layout == 3 else CrossEntropy


def _viewed_back(out, input, layout, reduction):
    """PyTorch takes spatial inputs other than (N, C, H, W) through its 4-D kernel and views the per-element
    losses back: their node is a ViewBackward0."""
    return out.view(out.shape) if layout == 3 and input.ndim != 4 and reduction == "none" else out


class CrossEntropyGradient(Function):
    """d cross_entropy / d x as a node of its own (what create_graph records): gx = D g by rows, D = A p - B,
    p = softmax(x). Its backward: to x, A g p (u - sum_c u p) (softmax's Jacobian); to g, sum u D."""

    node_name = "CrossEntropyLossBackwardBackward0"

    @staticmethod
    def forward(ctx, x, g, D, P, A, B, per_row, layout, shape):
        ctx.save(grad=g)
        ctx.arrays, ctx.per_row, ctx.layout, ctx.shape = (D, P, A, B), per_row, layout, shape
        gd = g.array.reshape(-1, 1) if per_row else g.array
        return _unrows(D * gd, layout, shape)

    @staticmethod
    @once_differentiable
    def backward(ctx, u):
        D, P, A, _ = ctx.arrays
        g = ctx._saved_grad.array
        gd = g.reshape(-1, 1) if ctx.per_row else g
        u2 = _rows(u.array, ctx.layout)
        gx = gg = None
        if ctx.needs_input_grad[0]:
            gx = Tensor._wrap(_unrows(P * (u2 - (u2 * P).sum(axis=1, keepdims=True)) * (A[:, None] * gd), ctx.layout,
                                      ctx.shape))
        if ctx.needs_input_grad[1]:
            ud = (u2 * D).sum(axis=1)
            gg = Tensor._wrap(ud.reshape(g.shape) if ctx.per_row else xp_of(D).asarray(ud.sum(), dtype=D.dtype))
        return gx, gg, None, None, None, None, None, None, None

    @staticmethod
    def double_backward(ctx, u):  # create_graph: backward's formulas as recorded ops, p a recorded softmax of x
        D, P, A, B = ctx.arrays
        xp = xp_of(D)
        M, C = D.shape
        layout, shape = ctx.layout, ctx.shape
        cd = 0 if layout == 1 else 1  # the class dim
        # x's values are not kept, but softmax ignores a shift per row: log p stands in for x, on x's edge,
        # so its softmax is p with softmax's derivatives at x, to every order. (An ignored row, p unknown
        # there and its A_i = 0: uniform, to keep the log finite.)
        known = A[:, None] != 0
        with np.errstate(divide="ignore"):
            log_p = xp.log(xp.where(known, P, 1.0 / C))
        p = _in_graph_at(ctx.next_functions[0], shape, D.dtype, _unrows(log_p, layout, shape)).softmax(cd)
        a = Tensor._wrap(_unrows(xp.broadcast_to(A[:, None], (M, C)).copy(), layout, shape))
        g = ctx.saved_tensors[0]
        gd = g.unsqueeze(cd) if ctx.per_row and layout != 1 else g
        gx = gg = None
        if ctx.needs_input_grad[0]:
            gx = a * gd * p * (u - (u * p).sum(cd, keepdim=True))
        if ctx.needs_input_grad[1]:
            ud = u * (a * p - Tensor._wrap(_unrows(B, layout, shape)))
            gg = ud.sum(cd).reshape(g.shape) if ctx.per_row else ud.sum()
        return gx, gg, None, None, None, None, None, None, None


def _in_graph_at(edge, shape, dtype, values=None):
    """A stand-in Tensor for the input that `edge` (a node's (grad_fn, output_nr) to it) leads to: an op
    given it records that same edge, so gradients reach the input's own history. Its values: `values`
    where an op reads them, else a zero."""
    stand_in = Tensor._wrap(np.zeros((), dtype=dtype) if values is None else values)
    if edge[0] is not None:
        stand_in.grad_fn, stand_in._output_nr, stand_in._requires_grad = edge[0], edge[1], True
    return stand_in


def _check_targets(t, C, ignore_index):
    """PyTorch's IndexError, its text, for a target id outside [0, C) that is not ignore_index, naming the first."""
    bad = (t != ignore_index) & ((t < 0) | (t >= C))
    if bool(bad.any()):
        i = int(xp_of(t).argmax(bad.reshape(-1)))
        raise IndexError(f"Target {int(t.reshape(-1)[i])} is out of bounds.")


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
    if _usual_rows(input, target, weight, size_average, reduce, reduction) and type(label_smoothing) is float \
            and 0.0 <= label_smoothing <= 1.0:
        return _cross_entropy_node(2, label_smoothing).apply(input, target, None, int(ignore_index), reduction,
                                                             label_smoothing, 2)
    # (PyTorch's words name its kernel, cross_entropy_loss, and nll_loss's nll_loss_nd)
    check_tensor(input, "input", "cross_entropy_loss")
    check_tensor(target, "target", "cross_entropy_loss")
    if weight is not None:
        check_tensor(weight, "weight", "cross_entropy_loss", 3)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    xs, ts = tuple(input.array.shape), tuple(target.array.shape)
    if ts == xs and target.array.dtype.kind != "f":  # class probabilities, not ids (decided by the shape alone)
        raise RuntimeError("Expected floating point type for target with class probabilities, got "
                           f"{target.dtype._legacy[:-6]}")
    if input.array.dtype.kind != "f":  # (PyTorch's log_softmax over the class dim refuses it, before the ids)
        raise softmax_dtype_error(input, 1 if len(xs) > 1 else 0, "log_softmax")
    if ts == xs:
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:  # (PyTorch's RuntimeError; it takes a negative one, refused here)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    layout = _check_class_target(input, target, weight, "cross_entropy")
    if layout == 1 and len(ts) == 1 and label_smoothing > 0:  # (the smoothing term's shape is the input's)
        raise RuntimeError("output with shape [] doesn't match the broadcast shape [1]")
    C = xs[0 if layout == 1 else 1]
    if weight is not None and tuple(weight.array.shape) != (C,):
        raise RuntimeError(f"cross_entropy: weight should be a 1D tensor of size C={C}, got shape {list(weight.shape)}")
    not_differentiable(weight, "weight", "nll_loss2d_forward" if layout == 3 else "nll_loss_forward")
    out = _cross_entropy_node(layout, label_smoothing).apply(input, target, weight, int(ignore_index), reduction,
                                                             float(label_smoothing), layout)
    return out if label_smoothing > 0 else _viewed_back(out, input, layout, reduction)


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing):
    """cross_entropy with class probabilities as the target (a float tensor of input's shape), as PyTorch:
    each sample's loss is -sum_c w_c t_c log_softmax(input)_c, label smoothing makes the target
    t (1 - ls) + ls / C, and 'mean' divides by the number of samples (N, or N d1 ... for (N, C, d1, ...))
    whatever the weights. Made of recorded ops (log_softmax, mul, sum), so autograd gives the target a
    gradient as well as the input; the dtype is input's and target's (and weight's) promoted."""
    xs = tuple(input.array.shape)
    if not xs:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    if ignore_index != -100:  # there is no class index to ignore
        raise RuntimeError("ignore_index is not supported for floating point target")
    if not 0.0 <= label_smoothing <= 1.0:  # (as on the class-index path)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 0 if len(xs) == 1 else 1
    C = xs[cdim]
    if weight is not None and tuple(weight.array.shape) != (C,):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {C} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    logp = _mg().log_softmax(input, cdim)
    if label_smoothing > 0.0:
        target = add_scalar(mul_scalar(target, 1.0 - label_smoothing), label_smoothing / C)
    terms = logp * target
    if weight is not None:  # w_c along the class dim: (C,) then 1s for the dims after it
        terms = terms * weight.reshape((C,) + (1,) * (len(xs) - cdim - 1))
    if reduction == "none":
        return -terms.sum(cdim)  # one loss per sample: (N, d1, ...), or () for an unbatched (C,) input
    total = -terms.sum()
    if reduction == "sum":
        return total
    with np.errstate(invalid="ignore"):  # the mean over samples (NaN for none, as PyTorch)
        return div_scalar(total, input.numel() // C)


def _mse(x, y, reduction):  # (x - y)^2, reduced -> (the loss, x - y)
    d = x - y
    if reduction == "none":
        return d * d, d
    s = sum_of_squares(d)
    if reduction == "sum":
        return s, d
    return s / float(d.size), d  # (an empty input's mean: 0 / 0, nan as PyTorch's)


def _mse_backward(d, g, reduction, xs, ys, needs):  # gx = 2 (x - y) g [/ n],  gy = -gx, each summed to its shape
    k = 2.0 / max(d.size, 1) if reduction == "mean" else 2.0  # (an empty input: an empty gradient, any k)
    gx = d * k
    gx *= g
    return sum_to_array(gx, xs) if needs[0] else None, -sum_to_array(gx, ys) if needs[1] else None


class MseLoss(Function):
    node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, x, y, reduction):  # loss = (x - y)^2, reduced
        out, d = _mse(x.array, y.array, reduction)
        ctx.save(diff=d, self=x, target=y)  # (x and y for a create_graph backward: double_backward)
        ctx.reduction, ctx.shapes = reduction, (x.array.shape, y.array.shape)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = 2 (x - y) g [/ n],  gy = -gx
        gx, gy = _mse_backward(ctx._saved_diff.array, g.array, ctx.reduction, *ctx.shapes, ctx.needs_input_grad)
        return None if gx is None else Tensor._wrap(gx), None if gy is None else Tensor._wrap(gy), None

    @staticmethod
    def array_step(needs, x, y, reduction):
        shapes = x.array.shape, y.array.shape

        return (lambda xd, yd: _mse(xd, yd, reduction)), (lambda d, g: _mse_backward(d, g, reduction, *shapes, needs))


    @staticmethod
    def double_backward(ctx, g):  # create_graph: gx = 2 (x - y) g [/ n], gy = -gx, as recorded ops
        x, y = ctx._saved_self, ctx._saved_target
        d = x - y
        gx = d * ((2.0 / max(d.numel(), 1) if ctx.reduction == "mean" else 2.0) * g)
        xs, ys = ctx.shapes
        needs = ctx.needs_input_grad
        return gx.sum_to_size(xs) if needs[0] else None, -gx.sum_to_size(ys) if needs[1] else None, None


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    check_sized_pair(input, target, "mse_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.array.shape != input.array.shape:  # (only then: the usual call pays one tuple comparison)
        _warn_broadcast(input, target, stacklevel=4)  # (F.mse_loss is nn/functional.py's, which calls this)
        broadcast_shapes(input.array.shape, target.array.shape)  # PyTorch's error, not numpy's
    if target.array.dtype != input.array.dtype or input.array.dtype.kind != "f":
        input, target = _promoted_pair(input, target, "mse_loss")
    if weight is None:
        return MseLoss.apply(input, target, reduction)
    sq = MseLoss.apply(input, target, "none") * weight  # weighted: a few nodes (rare path)
    if reduction == "none":
        return sq
    if reduction == "sum":
        return sq.sum()
    return sq.sum() / weight.expand(*sq.shape).sum()


def _legacy_reduction(size_average, reduce, reduction, invalid="{} is not a valid value for reduction"):
    if size_average is not None or reduce is not None:  # PyTorch's deprecated arguments
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
                      "instead.", stacklevel=2)
    elif reduction == "elementwise_mean":  # PyTorch's older name of 'mean'
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=2)
        reduction = "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(invalid.format(reduction))
    return reduction


# ---- more losses (PyTorch's names): forward on arrays, backward in Tensor ops (twice differentiable), or
# composed of minigrad ops where PyTorch composes them too (l1_loss, kl_div)
def _mg():  # minigrad's Tensor ops (nn imports minigrad; imported late to keep module loading flat)
    import minigrad

    return minigrad


def _reduce(t, reduction):
    """A loss of per-element terms, reduced: 'mean', 'sum' or 'none' (already checked)."""
    return t if reduction == "none" else t.sum() if reduction == "sum" else t.mean()


def _reduce_array(a, reduction):
    if reduction == "none":
        return a
    if reduction == "mean" and a.size:  # (numpy's float scalar divided as its 0-d array would be: no array made)
        return a.sum() / float(a.size)
    s = xp_of(a).asarray(a.sum(), dtype=a.dtype)
    if reduction == "sum":
        return s
    return s / float(a.size) if a.size else s * float("nan")  # the mean of nothing is NaN, as in PyTorch


def _upstream(g, reduction, n):
    """The gradient each element's term gets from a reduced loss's upstream gradient g."""
    return g / float(n or 1) if reduction == "mean" else g  # (n = 0: no terms to give it to, no 1/0 to warn of)


def _float_pair(input, target, name):
    """The target in the input's dtype: the losses PyTorch computes in the input's dtype."""
    check_tensor(input, "input", name)
    check_tensor(target, "target", name)
    if input.array.dtype.kind != "f":
        _refuse_integers(input, name, target)
    if target.array.dtype != input.array.dtype:
        target = target.to(input.dtype)
    return target


# the losses whose PyTorch kernel has no integer (or bool) version: its name, in PyTorch's refusal
_FLOAT_KERNELS = {"mse_loss": "mse_cpu", "smooth_l1_loss": "smooth_l1_cpu", "huber_loss": "huber_cpu",
                  "binary_cross_entropy": "binary_cross_entropy", "binary_cross_entropy_with_logits": "log_sigmoid_cpu"}


def _refuse_integers(input, name, target=None):
    """PyTorch's refusal of an integer or bool input, in its words for each loss."""
    dt = input.dtype
    if name == "soft_margin_loss":  # PyTorch's -input, times target, then exp_, each into the input's dtype
        if dt == bool_:
            raise RuntimeError(BOOL_NEGATION)
        _refuse_cast(from_numpy_dtype(result_type(input, target)), dt)
        _refuse_cast(get_default_dtype(), dt)
    if name == "huber_loss":  # its output takes the input's dtype: the pair's common one must cast into it
        dt = from_numpy_dtype(result_type(input, target))
        _refuse_cast(dt, input.dtype)
    if name in _FLOAT_KERNELS:
        raise NotImplementedError(f"\"{_FLOAT_KERNELS[name]}\" not implemented for '{dt._legacy[:-6]}'")
    raise RuntimeError(f"{name}: expected a floating point input, got {input.dtype}")


def _refuse_cast(result, out):
    """PyTorch's refusal of an op whose result dtype cannot be written into its output's (float into int, into bool)."""
    if not can_cast(result, out):
        raise RuntimeError(f"result type {result._legacy[:-6]} can't be cast to the desired output type {out._legacy[:-6]}")


def _promoted_pair(input, target, name):
    """(input, target) in their promoted dtype, as PyTorch computes the regression losses: a float32
    model's output against float64 targets (numpy's default) gives a float64 loss, whose gradient
    reaches the input as float32; an integer input against float targets is computed in floats."""
    check_tensor(input, "input", name)
    check_tensor(target, "target", name)
    if target.array.dtype != input.array.dtype:
        dt = result_type(input, target)
        input, target = cast(input, dt), cast(target, dt)
    if input.array.dtype.kind != "f" and name != "l1_loss":  # (l1_loss computes integers: only its 'mean' refuses)
        _refuse_integers(input, name)
    return input, target


def _warn_broadcast(input, target, stacklevel=3):  # (stacklevel: the frames up to the user's call)
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=stacklevel)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error |input - target|, averaged ('mean'), summed ('sum') or not ('none').

    Shapes: input (*), target broadcastable to it -> scalar, or (*) for 'none'. With `weight` (input's shape),
    each term is multiplied by it and 'mean' divides by the weights' sum. Composed of minigrad ops, as in
    PyTorch (a MeanBackward0 / SumBackward0 / AbsBackward0 node last)."""
    check_sized_pair(input, target, "l1_loss")
    refuse_bool_sub(input, target)  # (PyTorch's l1_loss subtracts them as they are)
    input, target = _promoted_pair(input, target, "l1_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_broadcast(input, target)
    d = (input - target).abs()
    if weight is None:
        return _reduce(d, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError(f"Weights and input must have the same size (weight {list(weight.shape)}, input "
                         f"{list(input.shape)}).")
    d = d * weight
    return d if reduction == "none" else d.sum() if reduction == "sum" else d.sum() / weight.sum()


class SmoothL1Loss(Function):
    node_name = "SmoothL1LossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction, beta):  # d = input - target: 0.5 d^2 / beta where |d| < beta, |d| - beta/2 beyond
        ctx.save(self=input, target=target)
        dd = input.array - target.array
        ctx.reduction, ctx.beta, ctx.diff = reduction, beta, dd
        xp = xp_of(dd)
        ad = xp.abs(dd)
        inside = 0.5 * dd * dd if beta == 1.0 else 0.5 * dd * dd / beta  # (a division by 1 changes no bit)
        return _reduce_array(xp.where(ad < beta, inside, ad - 0.5 * beta), reduction)

    @staticmethod
    def backward(ctx, g):  # d / beta where |d| < beta, sign(d) beyond
        d = _difference(ctx)
        inside = Tensor._wrap((xp_of(d.array).abs(d.array) < ctx.beta).astype(d.array.dtype))
        outside = Tensor._wrap(xp_of(d.array).sign(d.array) * (1 - inside.array))
        return _difference_grads(ctx, _upstream(g, ctx.reduction, d.array.size) * (inside * d / ctx.beta + outside))


def _difference(ctx):
    """input - target as forward made it; recorded from the saved inputs when the backward's graph is wanted."""
    if is_grad_enabled():
        return ctx._saved_self - ctx._saved_target
    _ = ctx.saved_tensors  # (the version check: an input edited in place since forward is refused)
    return Tensor._wrap(ctx.diff)


def _difference_grads(ctx, gd):
    """(input's, target's, None, None): a loss of d = input - target, given its gradient gd in d."""
    need = ctx.needs_input_grad
    return (sum_to(gd, ctx._saved_self.shape) if need[0] else None,
            sum_to(-gd, ctx._saved_target.shape) if need[1] else None, None, None)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Huber-like loss: 0.5 (x - y)^2 / beta where |x - y| < beta, else |x - y| - beta / 2; beta = 0 is l1_loss.

    Shapes: input (*), target broadcastable to it -> scalar, or (*) for 'none'. One `SmoothL1LossBackward0`
    node, its edges the input's and the target's."""
    check_sized_pair(input, target, "smooth_l1_loss")
    input, target = _promoted_pair(input, target, "smooth_l1_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    if input.array.shape != target.array.shape:
        _warn_broadcast(input, target)
        broadcast_shapes(input.array.shape, target.array.shape)  # PyTorch's error, not numpy's
    return SmoothL1Loss.apply(input, target, reduction, float(beta))


class HuberLoss(Function):
    node_name = "HuberLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction, delta):  # d = input - target: 0.5 d^2 where |d| < delta, delta (|d| - delta/2) beyond
        ctx.save(self=input, target=target)
        dd = input.array - target.array
        ctx.reduction, ctx.delta, ctx.diff = reduction, delta, dd
        xp = xp_of(dd)
        ad = xp.abs(dd)
        return _reduce_array(xp.where(ad < delta, 0.5 * dd * dd, delta * (ad - 0.5 * delta)), reduction)

    @staticmethod
    def backward(ctx, g):  # d, clipped to [-delta, delta]
        d = _difference(ctx)
        return _difference_grads(ctx, _upstream(g, ctx.reduction, d.array.size) * d.clamp(-ctx.delta, ctx.delta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - delta / 2), d = input - target; `weight` scales each term
    before the reduction. Shapes: (*), (*) -> () or (*). One `HuberLossBackward0` node, its edges the
    input's and the target's (with a weight, PyTorch's product and reduction after it)."""
    check_sized_pair(input, target, "huber_loss")
    target = _float_pair(input, target, "huber_loss")  # (PyTorch computes it in the input's dtype)
    reduction = _legacy_reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if input.array.shape != target.array.shape:
        _warn_broadcast(input, target)
        broadcast_shapes(input.array.shape, target.array.shape)  # PyTorch's error, not numpy's
    if weight is None:
        return HuberLoss.apply(input, target, reduction, float(delta))
    return _reduce(HuberLoss.apply(input, target, "none", float(delta)) * weight, reduction)


def _class_rows(shape):
    """How a (C,), (N, C) or (N, C, d1, ...) input lays out: (layout, C, the target's shape)."""
    if len(shape) == 1:
        return 1, shape[0], ()
    return (2 if len(shape) == 2 else 3), shape[1], (shape[0],) + tuple(shape[2:])


def _nll_every_target_kept(xd, x2, t, target_shape, reduction, need_grad):
    """_nll where no id is ignore_index and there are no weights (the usual): the general path's
    arithmetic, each weight 1 and the mean's divisor N, without the masks (the same bits)."""
    xp = xp_of(xd)
    if t.size == 1 and reduction != "none" and xp is np:  # one sample's loss: its value read alone
        return np.asarray(-x2[0, t[0]], dtype=xd.dtype), ((_FIRST_ROW, t, _minus_one(xd.dtype)) if need_grad else None)
    rows = xp.arange(t.size)
    loss = -x2[rows, t]
    denom = float(t.size) if reduction == "mean" else 1.0
    picks = None
    if need_grad:
        coef = xp.full(t.shape, -1.0, dtype=xd.dtype)
        if denom:
            coef /= denom
        else:  # (no targets: a mean of nothing)
            coef.fill(float("nan"))
        picks = (rows, t, coef)
    if reduction == "none":
        return loss.reshape(target_shape), picks
    s = loss[0] if t.size == 1 else loss.sum()  # (a sum of one value is that value)
    return (xp.asarray(s / denom if denom else float("nan"), dtype=xd.dtype) if reduction == "mean" else
            xp.asarray(s, dtype=xd.dtype)), picks


_FIRST_ROW = np.zeros(1, dtype=np.intp)  # the row index of a single target (read only, as the next)
_FIRST_ROW.flags.writeable = False


@functools.cache
def _minus_one(dtype):
    """[-1.0] of `dtype`, read only: the gradient coefficient of a single kept target (a mean over one)."""
    a = np.full(1, -1.0, dtype=dtype)
    a.flags.writeable = False
    return a


def _nll(xd, target, wd, ignore_index, reduction, layout, need_grad):
    """NllLoss's forward on arrays: (the loss, picks). loss_i = -w[t_i] x_i[t_i] (0 where t_i == ignore_index);
    'mean' divides by sum_i w[t_i] over the kept. picks: d loss / d x, -w[t_i] (/ denom) at each row's target
    column, 0 elsewhere, kept as (rows, columns, values): the dense (N, C) matrix is made in backward, once,
    as PyTorch's nll_loss_backward does."""
    xp = xp_of(xd)
    x2 = _rows(xd, layout)
    t = target.reshape(-1)
    C = x2.shape[1]
    if some_id_outside(t, C):  # (here, not in nll_loss: a replayed step checks each call's ids)
        _check_targets(t, C, ignore_index)
    elif wd is None and not 0 <= ignore_index < C:
        return _nll_every_target_kept(xd, x2, t, () if layout == 1 else target.shape, reduction, need_grad)
    valid = t != ignore_index
    t_safe = xp.where(valid, t, 0)
    wt = valid.astype(xd.dtype) if wd is None else valid * wd[t_safe].astype(xd.dtype)
    rows = xp.arange(t.size)
    loss = xp.where(valid, -wt * x2[rows, t_safe], 0)  # (an ignored target's loss is +0, not -0 * x: PyTorch's)
    denom = float(wt.sum()) if reduction == "mean" else 1.0
    # with nothing weighed ('mean' of 0 / 0) the kept rows' gradient is nan, the ignored rows' 0, as PyTorch's
    picks = (rows, t_safe, -wt / denom if denom else xp.where(valid, float("nan"), 0.0).astype(xd.dtype)) \
        if need_grad else None
    if reduction == "none":
        return loss.reshape(() if layout == 1 else target.shape), picks
    s = loss.sum()
    return (xp.asarray(s / denom if denom else float("nan"), dtype=xd.dtype) if reduction == "mean" else
            xp.asarray(s, dtype=xd.dtype)), picks


def _dense(picks, rows_shape, values):
    """(M, C): `values` at each row's target column (picks' rows and columns), 0 elsewhere."""
    rows, cols, coef = picks
    out = xp_of(coef).zeros(rows_shape, dtype=coef.dtype)
    out[rows, cols] = values
    return out


def _nll_backward(picks, rows_shape, g, reduction, layout, shape):
    """gx from forward's picks: their values times g (per row for 'none') at each row's target column."""
    return _unrows(_dense(picks, rows_shape, picks[2] * (g.reshape(-1) if reduction == "none" else g)), layout, shape)


class NllLoss(Function):
    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, layout):
        out, ctx.picks = _nll(x.array, target.array, None if weight is None else weight.array, ignore_index,
                              reduction, layout, ctx.needs_input_grad[0])
        ctx.reduction, ctx.layout, ctx.shape, ctx.rows_shape = reduction, layout, x.array.shape, _rows_shape(x, layout)
        ctx.target_shape = target.array.shape
        return out

    @staticmethod
    def backward(ctx, g):
        _refuse_one_id_as_1d(ctx.layout, ctx.shape, ctx.target_shape)
        if not g.requires_grad:
            gx = Tensor._wrap(_nll_backward(ctx.picks, ctx.rows_shape, g.array, ctx.reduction, ctx.layout, ctx.shape))
            # create_graph: x's edge as PyTorch's (the picks do not move with x: a zero slope)
            return second_order(ctx, gx) if is_grad_enabled() else gx, None, None, None, None, None
        # a graph of the backward: nll is linear in x, so gx = C g as a Tensor op
        gx2 = Tensor._wrap(_dense(ctx.picks, ctx.rows_shape, ctx.picks[2])) * (g.reshape(-1, 1) if ctx.reduction == "none"
                                                                       else g)
        shape = ctx.shape
        if ctx.layout == 1:
            gx = gx2.reshape(shape)
        elif ctx.layout == 2:
            gx = gx2
        else:  # rows were (N, d1, ..., C): put the classes back on dim 1
            n = len(shape)
            gx = gx2.reshape((shape[0],) + tuple(shape[2:]) + (shape[1],)).permute(0, n - 1, *range(1, n - 1))
        return second_order(ctx, gx) if is_grad_enabled() else gx, None, None, None, None, None

    @staticmethod
    def array_step(needs, x, target, weight, ignore_index, reduction, layout):
        shape, rows_shape, target_shape = x.array.shape, _rows_shape(x, layout), target.array.shape
        others = (None,) if weight is None else (None, None)  # (target's, weight's)

        def forward(xd, t, wd=None):
            return _nll(xd, t, wd, ignore_index, reduction, layout, needs[0])

        def backward(picks, g):
            _refuse_one_id_as_1d(layout, shape, target_shape)
            return (_nll_backward(picks, rows_shape, g, reduction, layout, shape), *others)
        return forward, backward


def _refuse_one_id_as_1d(layout, shape, target_shape):
    """PyTorch's backward error for the (1,) target of a (C,) input, which its forward takes."""
    if layout == 1 and len(target_shape) == 1:
        raise RuntimeError(f"size mismatch (got input: {list(shape)}, target: {list(target_shape)})")


def _rows_shape(x, layout):
    """The (M, C) shape the rows of `x` take (`_rows`)."""
    s = x.array.shape
    if layout == 1:
        return (1, s[0])
    if layout == 2:
        return s
    return (x.array.size // s[1], s[1])


class NllLoss2d(NllLoss):
    node_name = "NllLoss2DBackward0"  # PyTorch's name when the input has dims past the classes


_ID_DTYPES = (np.dtype(np.int64), np.dtype(np.uint8))  # the class ids PyTorch's nll_loss kernels take


def _usual_rows(input, target, weight, size_average, reduce, reduction):
    """Whether a class-index loss's call is the usual one, float rows (N, C) against N integer ids with
    no weights nor legacy arguments: all that _check_class_target and the fronts' checks would pass,
    known in one test."""
    if weight is None and size_average is None and reduce is None and type(input) is Tensor and type(target) is Tensor:
        x, t = input.array, target.array
        return x.ndim == 2 and t.shape == x.shape[:1] and x.dtype.kind == "f" and t.dtype in _ID_DTYPES \
            and reduction in _REDUCTIONS
    return False


def _check_class_target(input, target, weight, name):
    """PyTorch's checks of (log-)probabilities over classes against class-index targets, in its order:
    the batch size, the target's shape, then its dtype."""
    xs, ts = tuple(input.shape), tuple(target.shape)
    if len(xs) == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    layout, C, want = _class_rows(xs)
    if len(xs) > 1 and (not ts or ts[0] != xs[0]):
        raise ValueError(f"Expected input batch_size ({xs[0]}) to match target batch_size "
                         f"({ts[0] if ts else 0}).")
    if layout < 3 and len(ts) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if layout == 1 and len(ts) == 1:  # PyTorch's forward takes a (C,) input's id as (1,) too (its backward refuses)
        if ts[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {ts[0]}")
        want = ts
    if len(xs) == 4 and len(ts) != 3:  # (PyTorch's 2-d spatial kernel, an image's pixels: its own checks and words)
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{len(ts)}")
    if len(xs) == 4 and ts != want:
        raise RuntimeError(f"size mismatch (got input: {list(xs)} , target: {list(ts)}")
    if ts != want:
        raise RuntimeError(f"Expected target size {list(want)}, got {list(ts)}")
    if target.array.dtype not in _ID_DTYPES:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype._legacy[:-6]}")
    if weight is not None and tuple(weight.shape) != (C,):
        if len(xs) > 2:  # (PyTorch's spatial kernel words it without the numbers)
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got weight "
                           f"tensor of shape: {list(weight.shape)}")
    if weight is not None and weight.array.dtype != input.array.dtype:  # (PyTorch does not promote them)
        raise RuntimeError(f"expected scalar type {input.dtype._legacy[:-6]} but found {weight.dtype._legacy[:-6]}")
    return layout


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of class-index targets: -input[target] (input holds log-probabilities).

    Shapes: input (N, C), (N, C, d1, ...) or (C,); target (N), (N, d1, ...) or () of int64 ids in [0, C)
    or ignore_index; weight (C,). 'mean' is the weighted mean over the kept targets. One
    `NllLossBackward0` node."""
    if _usual_rows(input, target, weight, size_average, reduce, reduction):
        return NllLoss.apply(input, target, None, int(ignore_index), reduction, 2)
    check_tensor(input, "input", "nll_loss_nd")
    check_tensor(target, "target", "nll_loss_nd")
    if weight is not None:
        check_tensor(weight, "weight", "nll_loss_nd", 3)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    layout = _check_class_target(input, target, weight, "nll_loss")
    if input.array.dtype.kind != "f":
        kernel = "nll_loss2d_forward_out_frame" if layout == 3 else "nll_loss_out_frame"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy[:-6]}'")
    not_differentiable(weight, "weight", "nll_loss2d_forward" if layout == 3 else "nll_loss_forward")
    out = (NllLoss2d if layout == 3 else NllLoss).apply(input, target, weight, int(ignore_index), reduction, layout)
    return _viewed_back(out, input, layout, reduction)


class BinaryCrossEntropy(Function):
    node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, t, w, reduction):  # -w (t log x + (1 - t) log(1 - x)), each log at least -100 (PyTorch)
        xd, td = x.array, t.array
        xp = xp_of(xd)
        # (here: a replayed step checks each call's input). NaN fails too; the first bad element names its side
        ok_x = (xd >= 0) & (xd <= 1)
        ok = ok_x & (td >= 0) & (td <= 1)
        if not ok.all():
            side = "input" if not ok_x.reshape(-1)[xp.argmin(ok.reshape(-1))] else "target"
            raise RuntimeError(f"all elements of {side} should be between 0 and 1")
        with np.errstate(divide="ignore"):
            lx, l1x = xp.maximum(xp.log(xd), -100.0), xp.maximum(xp.log1p(-xd), -100.0)
        loss = -(td * lx + (1.0 - td) * l1x)
        if w is not None:
            loss = loss * w.array
        ctx.save(self=x, target=t, weight=w)
        ctx.reduction = reduction
        return _reduce_array(loss.astype(xd.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):  # d/dx = w (x - t) / max(x (1 - x), 1e-12);  d/dt = w (log(1 - x) - log x)
        x, t, w = ctx.saved_tensors
        mg = _mg()
        gl = _upstream(g, ctx.reduction, x.array.size)
        if w is not None:
            gl = gl * w
        needs = ctx.needs_input_grad
        gx = gl * (x - t) / mg.clamp(x * (1.0 - x), min=1e-12) if needs[0] else None
        gt = gl * (mg.clamp(mg.log(1.0 - x), min=-100.0) - mg.clamp(mg.log(x), min=-100.0)) if needs[1] else None
        return gx, gt, None, None


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-w (t log x + (1 - t) log(1 - x)) for probabilities x in [0, 1] (logs clamped at -100, as PyTorch).

    Shapes: input (*), target (*) the same, weight broadcastable -> scalar, or (*) for 'none'. One
    `BinaryCrossEntropyBackward0` node (gradients for input and target)."""
    check_sized_pair(input, target, "binary_cross_entropy")
    if target.array.dtype != input.array.dtype:  # PyTorch computes nothing here, rather than promote
        raise RuntimeError(f"Found dtype {target.dtype._legacy[:-6]} but expected {input.dtype._legacy[:-6]}")
    target = _float_pair(input, target, "binary_cross_entropy")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
                         "deprecated. Please ensure they have the same size.")
    if isinstance(weight, Tensor):  # (PyTorch's words: its Python side broadcasts the target's and weight's Sizes)
        broadcast_sizes(target.shape, weight.shape)
    if weight is not None:
        weight = _broadcast_weight(weight, input, "weight")
    not_differentiable(weight, "weight", "binary_cross_entropy")
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


def _broadcast_weight(weight, input, name):
    check_tensor(weight, name, "binary_cross_entropy")
    if broadcast_shapes(tuple(weight.shape), tuple(input.shape)) != tuple(input.shape):
        raise RuntimeError(f"binary_cross_entropy: {name} of shape {list(weight.shape)} does not broadcast to the "
                           f"input's shape {list(input.shape)}")
    return weight if weight.array.dtype == input.array.dtype else weight.to(input.dtype)


class BinaryCrossEntropyWithLogits(Function):
    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, x, t, w, pw, reduction):
        # (1 - t) x + (1 + (pw - 1) t) softplus(-x), times w: -w (pw t log s(x) + (1 - t) log(1 - s(x))), s = sigmoid
        xd, td = x.array, t.array
        sp = xp_of(xd).logaddexp(0.0, -xd)  # softplus(-x) = -log sigmoid(x), without overflow
        lw = 1.0 if pw is None else 1.0 + (pw.array - 1.0) * td
        loss = (1.0 - td) * xd + lw * sp
        if w is not None:
            loss = loss * w.array
        ctx.save(self=x, target=t, weight=w, pos_weight=pw)
        ctx.reduction = reduction
        return _reduce_array(loss.astype(xd.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):  # d/dx = w ((1 - t) - lw sigmoid(-x));  d/dt = w (-x + (pw - 1) softplus(-x))
        x, t, w, pw = ctx.saved_tensors
        mg = _mg()
        gl = _upstream(g, ctx.reduction, x.array.size)
        if w is not None:
            gl = gl * w
        needs = ctx.needs_input_grad
        gx = gt = None
        if needs[0]:
            lw = 1.0 if pw is None else (pw - 1.0) * t + 1.0
            gx = gl * ((1.0 - t) - lw * mg.sigmoid(-x))
        if needs[1]:
            from .activation import LogSigmoid

            gt = gl * (-x if pw is None else -x - (pw - 1.0) * LogSigmoid.apply(x))
        return gx, gt, None, None, None


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) computed from the logits without overflow; pos_weight
    (broadcast along the last dim, the classes) weighs the positive term.

    Shapes: input (*), target (*) the same, weight and pos_weight broadcastable -> scalar, or (*) for 'none'.
    One `BinaryCrossEntropyWithLogitsBackward0` node."""
    check_sized_pair(input, target, "binary_cross_entropy_with_logits")
    if input.array.dtype.kind == "f":
        kind = target.array.dtype.kind
        if kind == "b":
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
                               "or `logical_xor()` operator instead.")
        _refuse_cast(input.dtype, target.dtype)  # PyTorch writes the loss into a tensor of the target's dtype
        input = cast(input, target.array.dtype)  # PyTorch computes in the target's dtype
    target = _float_pair(input, target, "binary_cross_entropy_with_logits")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if weight is not None:
        weight = _broadcast_weight(weight, input, "weight")
    if pos_weight is not None:
        pos_weight = _broadcast_weight(pos_weight, input, "pos_weight")
    not_differentiable(weight, "weight", "binary_cross_entropy_with_logits")
    not_differentiable(pos_weight, "pos_weight", "binary_cross_entropy_with_logits")
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || exp(input)) pointwise: target (log target - input), input holding log-probabilities.

    log_target=True: target holds log-probabilities too (exp(target) (target - input)). reduction
    'batchmean' divides the sum by the batch size (input.size(0)): the true KL divergence; 'mean' divides
    by every element (and warns, as PyTorch). Composed of minigrad ops, as PyTorch. Shapes: input (*),
    target broadcastable."""
    check_tensor(input, "input", "kl_div")
    check_tensor(target, "target", "kl_div")
    if input.array.dtype.kind != "f" or target.array.dtype.kind != "f":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    input, target = _promoted_pair(input, target, "kl_div")
    if size_average is not None or reduce is not None:  # (PyTorch: these decide, and no 'mean' warning)
        legacy = _legacy_reduction(size_average, reduce, "mean")
    else:
        legacy = _legacy_reduction(None, None, "sum" if reduction == "batchmean" else reduction)
        if legacy == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
    mg = _mg()
    if log_target:
        terms = mg.exp(target) * (target - input)
    else:  # xlogy(t, t) - t x, with 0 log 0 = 0 (and no NaN gradient at t = 0); a negative t's log is nan, as
        zero = target == 0  # PyTorch's (it was taken as 0 log 0)
        terms = mg.where(zero, 0.0, target * mg.log(mg.where(zero, 1.0, target))) - target * input
    out = _reduce(terms, legacy)
    return out / input.shape[0] if reduction == "batchmean" and input.ndim else out  # (the legacy args' too)


def one_hot(tensor, num_classes=-1):
    """(*) int64 class ids -> (*, num_classes) int64 with a 1 at each id; num_classes -1: max id + 1."""
    check_tensor(tensor, "input", "one_hot")
    if tensor.array.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")  # (PyTorch's texts)
    if num_classes <= 0 and tensor.numel() == 0:  # (PyTorch's text for 0 and below too)
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if num_classes == -1:
        t = tensor.array
        escape("one_hot without num_classes, whose result's shape depends on the data,")
        num_classes = int(t.max()) + 1
    if num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    # an op (array_op): inside a minigrad.compile capture a result made outside one would replay frozen
    return array_op(functools.partial(_one_hot, num_classes=num_classes), tensor)


def _one_hot(t, num_classes):  # the ids are checked here, inside the op: a replay checks each call's
    if some_id_outside(t, num_classes):  # (one reduction; which bound, only for the error)
        if int(t.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        raise RuntimeError("Class values must be smaller than num_classes.")
    xp = xp_of(t)
    out = xp.zeros(t.shape + (num_classes,), dtype=np.int64)  # zeros, then a 1 at each id: one write of the
    out.reshape(-1, num_classes)[xp.arange(t.size), t.reshape(-1)] = 1  # ids where a comparison wrote every entry
    return out


class MultilabelMarginLoss(Function):
    node_name = "MultilabelMarginLossBackward0"

    @staticmethod
    def forward(ctx, input, t, reduction, batched):
        """input (N, C), t (N, C) the target ids of each row up to its first -1:
        loss_n = sum_{j target} sum_{i not target} max(0, 1 - x_j + x_i) / C."""
        x = input.array
        xp = xp_of(x)
        N, C = x.shape
        rows = xp.arange(N)
        valid = xp.cumprod(t != -1, axis=1).astype(bool)
        if bool(((t < -1) | (t >= C))[valid].any()):
            raise RuntimeError("argument #2 'target' is out of range")
        ids = xp.where(valid, t, 0)
        is_target = xp.zeros((N, C + 1), dtype=bool)  # (column C: where the invalid slots point)
        is_target[rows[:, None], xp.where(valid, t, C)] = True
        others = ~is_target[:, :C]
        x_target = xp.take_along_axis(x, ids, axis=1)
        loss = xp.zeros(N, dtype=x.dtype)
        D = xp.zeros_like(x)  # d loss_n / d x, built slot by slot: O(N C) memory whatever the number of targets
        for k in range(C):
            if not valid[:, k].any():
                break
            h = 1 - x_target[:, k:k + 1] + x
            active = (h > 0) & others & valid[:, k:k + 1]
            loss += xp.where(active, h, 0).sum(1)
            D += active
            D[rows, ids[:, k]] -= active.sum(1)
        ctx.D, ctx.reduction = D / C, reduction
        return _reduce_array(loss / C if batched else loss.reshape(()) / C, reduction)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        D = ctx.D
        scale = g.array.reshape(-1, 1) if ctx.reduction == "none" else _upstream(g.array, ctx.reduction, D.shape[0])
        return Tensor._wrap((D * scale).astype(D.dtype, copy=False)), None, None, None

    @staticmethod
    def double_backward(ctx, g):  # create_graph: PyTorch has no derivative of this backward, and says so when asked
        gx = second_order(ctx, MultilabelMarginLoss.backward.fn(ctx, g)[0], _not_implemented("multilabel_margin_loss"),
                          *[g] if g.requires_grad else [], name="NotImplemented")
        return gx, None, None, None


def _not_implemented(op):
    """PyTorch's error for an op whose backward it cannot differentiate."""
    return RuntimeError(f"derivative for aten::{op}_backward is not implemented")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: each row's target ids (int64, up to the first -1) should score at least 1 above
    every other class; sum over target j, other class i of max(0, 1 - x_j + x_i) / C. Shapes: input (C,) or
    (N, C), target the same -> () or (N,) with 'none' (() for a 1-D input). One MultilabelMarginLossBackward0."""
    check_tensor(input, "input", "multilabel_margin_loss")
    check_tensor(target, "target", "multilabel_margin_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    if target.array.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._legacy[:-6]}")
    batched = input.ndim == 2
    x, t = (input, target) if batched else (input.reshape(1, -1), target.reshape(1, -1))
    return MultilabelMarginLoss.apply(x, t.array, reduction, batched)
