"""Evaluation metrics written as PyTorch users write them in plain torch (no metric library), run on minigrad
(`import minigrad as torch`) and on PyTorch from the same numpy predictions and targets: every value, dtype and
shape the same, and the same refusals. Several seeds, with ties, empty classes, one-class targets and NaN scores.
Where ties leave PyTorch's order unspecified (an unstable sort, topk) the scripts sort stably or read only
tie-free quantities, as a script that must be reproducible does."""
import math

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

# (0/0 in a metric: numpy's RuntimeWarning, which the package's own filter hides outside pytest)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for item in out for leaf in _leaves(item)]
    return [out]


def _same(script, *args):
    """script(torch-like module, *args) on minigrad and on PyTorch: the same outputs, or the same error."""
    try:
        theirs = _leaves(script(torch, *args))
    except Exception as e:  # noqa: BLE001 (the reference's refusal is what minigrad must say)
        with pytest.raises(type(e)) as ours:
            script(mg, *args)
        assert str(ours.value) == str(e)
        return
    ours = _leaves(script(mg, *args))
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if not isinstance(b, torch.Tensor):
            assert type(a) is type(b), i
            # (a .item() of a float32 reduction: the last bit follows the summation order)
            assert a == pytest.approx(b, rel=1e-6, nan_ok=True), i
            continue
        assert isinstance(a, mg.Tensor), i
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1], i
        assert tuple(a.shape) == tuple(b.shape), i
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=str(i))


# ---- the metrics, as a user's evaluation code has them ------------------------------------------------------

def accuracy(t, logits, target, ks=(1, 3)):
    pred_logits = t.from_numpy(logits)
    tgt = t.from_numpy(target)
    out = [(pred_logits.argmax(1) == tgt).float().mean(), (pred_logits.argmax(dim=1) == tgt).sum().item()]
    with t.no_grad():
        maxk = max(ks)
        _, pred = pred_logits.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(tgt.view(1, -1).expand_as(pred))
        for k in ks:
            ck = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            out.append(ck.mul_(100.0 / tgt.size(0)))
    return out

def confusion(t, pred, target, nc):
    p, y = t.from_numpy(pred), t.from_numpy(target)
    cm = t.bincount(nc * y + p, minlength=nc ** 2).reshape(nc, nc)
    cm2 = t.zeros(nc, nc, dtype=t.long)
    cm2.index_put_((y, p), t.ones_like(y), accumulate=True)
    cm3 = t.zeros((nc, nc), dtype=t.float32)
    cm3.index_put_((y, p), t.tensor(1.0), accumulate=True)
    return [cm, cm2, cm3, cm.diag(), cm.sum(0), cm.sum(dim=1), t.trace(cm)]

def prf(t, pred, target, nc):
    p, y = t.from_numpy(pred), t.from_numpy(target)
    cm = t.bincount(nc * y + p, minlength=nc ** 2).reshape(nc, nc).float()
    tp = cm.diag()
    fp = cm.sum(0) - tp
    fn = cm.sum(1) - tp
    precision = t.nan_to_num(tp / (tp + fp))
    recall = t.where(tp + fn > 0, tp / (tp + fn), t.zeros_like(tp))
    f1 = 2 * precision * recall / (precision + recall)
    f1 = t.nan_to_num(f1, nan=0.0)
    support = cm.sum(1)
    weighted = (f1 * support).sum() / support.sum()
    micro_p = tp.sum() / (tp.sum() + fp.sum())
    micro_r = tp.sum() / (tp.sum() + fn.sum())
    micro_f1 = 2 * micro_p * micro_r / (micro_p + micro_r)
    # one-hot route
    oh_p = t.nn.functional.one_hot(p, nc)
    oh_y = t.nn.functional.one_hot(y, num_classes=nc)
    tp2 = (oh_p * oh_y).sum(0)
    prec2 = tp2 / oh_p.sum(0).clamp(min=1)
    rec2 = tp2.float() / oh_y.sum(dim=0).clamp_min(1)
    f1b = t.where((prec2 + rec2) > 0, 2 * prec2 * rec2 / (prec2 + rec2), t.tensor(0.0))
    return [precision, recall, f1, precision.mean(), recall.mean(), f1.mean(), weighted, micro_p, micro_r,
            micro_f1, tp2, prec2, rec2, f1b, f1b.nanmean(), (tp / (tp + fp)).nanmean()]

def roc_auc(t, scores, labels):
    s, y = t.from_numpy(scores), t.from_numpy(labels)
    order = t.argsort(s, descending=True, stable=True)
    s_sorted, y_sorted = s[order], y[order]
    tps = t.cumsum(y_sorted, dim=0)
    fps = t.cumsum(1 - y_sorted, 0)
    # collapse ties
    distinct = t.where(t.diff(s_sorted) != 0)[0]
    thr_idx = t.cat([distinct, t.tensor([y_sorted.numel() - 1])])
    tps_t, fps_t = tps[thr_idx], fps[thr_idx]
    tpr = t.cat([t.zeros(1), tps_t / tps[-1]])
    fpr = t.cat([t.zeros(1), fps_t / fps[-1]])
    auc = t.trapezoid(tpr, fpr)
    auc2 = t.trapz(tpr, x=fpr)
    vals, counts = t.unique_consecutive(s_sorted, return_counts=True)
    ends = t.cumsum(counts, 0) - 1
    auc3 = t.trapezoid(t.cat([t.zeros(1, dtype=tps.dtype), tps[ends]]).double() / tps[-1],
                       t.cat([t.zeros(1, dtype=fps.dtype), fps[ends]]).double() / fps[-1])
    # average precision
    precision = tps_t / (tps_t + fps_t)
    recall = tps_t / tps[-1]
    rec_prev = t.cat([t.zeros(1, dtype=recall.dtype), recall[:-1]])
    ap = ((recall - rec_prev) * precision).sum()
    # rank-based AUC (Mann-Whitney)
    ranks = s.argsort(stable=True).argsort().float() + 1
    npos = y.sum()
    nneg = y.numel() - npos
    mw = (ranks[y == 1].sum() - npos * (npos + 1) / 2) / (npos * nneg)
    label_changes = t.diff(y_sorted.bool()).sum()
    distinct_scores, score_counts = t.unique(s, return_counts=True)
    return [tps, fps, distinct, tpr, fpr, auc, auc2, vals, counts, auc3, precision, ap, mw, label_changes,
            distinct_scores, score_counts]

def ece(t, probs, labels, nbins=10):
    p, y = t.from_numpy(probs), t.from_numpy(labels)
    conf, pred = p.max(dim=1)
    acc = pred.eq(y).float()
    bins = t.linspace(0, 1, nbins + 1)
    idx = t.bucketize(conf, bins[1:-1])
    idx2 = t.bucketize(conf, bins, right=True) - 1
    cnt = t.zeros(nbins).scatter_add_(0, idx, t.ones_like(conf))
    sconf = t.zeros(nbins).scatter_add_(0, idx, conf)
    sacc = t.zeros(nbins).scatter_add_(0, idx, acc)
    gap = t.where(cnt > 0, (sconf - sacc).abs() / cnt.clamp(min=1), t.zeros_like(cnt))
    e = (gap * cnt).sum() / conf.numel()
    hist = t.histc(conf, bins=nbins, min=0, max=1)
    # loop form
    e2 = t.zeros(1)
    for lo, hi in zip(bins[:-1], bins[1:]):
        inb = conf.gt(lo.item()) * conf.le(hi.item())
        prop = inb.float().mean()
        if prop.item() > 0:
            e2 += t.abs(conf[inb].mean() - acc[inb].mean()) * prop
    return [bins, idx, idx2, cnt, sconf, sacc, gap, e, hist, e2]

def segmentation(t, pred, target, nc):
    p, y = t.from_numpy(pred), t.from_numpy(target)
    ious, dices = [], []
    for c in range(nc):
        pc, yc = p == c, y == c
        inter = t.logical_and(pc, yc).sum(dim=(1, 2))
        union = t.logical_or(pc, yc).sum(dim=(1, 2))
        ious.append(inter.float() / union.float())
        dices.append(2 * inter / (pc.sum((1, 2)) + yc.sum((1, 2))))
    iou = t.stack(ious, 1)
    dice = t.stack(dices, dim=1)
    miou = t.nanmean(iou)
    inter_h = t.histc(p[p == y].float(), bins=nc, min=0, max=nc - 1)
    area_p = t.histc(p.float(), bins=nc, min=0, max=nc - 1)
    area_y = t.histc(y.float(), bins=nc, min=0, max=nc - 1)
    iou_h = inter_h / (area_p + area_y - inter_h)
    return [iou, dice, miou, dice.nanmean(dim=0), inter_h, area_p, iou_h, t.nanmean(iou_h)]

def multilabel(t, scores, target, thr=0.5):
    s, y = t.from_numpy(scores), t.from_numpy(target)
    pred = (t.sigmoid(s) > thr).long()
    exact = (pred == y).all(dim=1).float().mean()
    hamming = (pred != y).float().mean()
    tp = (pred * y).sum(0)
    fp = (pred * (1 - y)).sum(0)
    fn = ((1 - pred) * y).sum(0)
    f1 = t.nan_to_num(2 * tp / (2 * tp + fp + fn))
    micro = 2 * tp.sum() / (2 * tp.sum() + fp.sum() + fn.sum())
    ex_f1 = (2 * (pred * y).sum(1) / (pred.sum(1) + y.sum(1))).nan_to_num(1.0).mean()
    bce = t.nn.functional.binary_cross_entropy_with_logits(s, y.float())
    return [pred, exact, hamming, tp, f1, micro, ex_f1, bce]

def bleu(t, cand, ref, N=4):
    c, r = t.tensor(cand), t.tensor(ref)
    precs = []
    for n in range(1, N + 1):
        if c.numel() < n:
            precs.append(t.tensor(0.0))
            continue
        cg = c.unfold(0, n, 1)
        uc, cc = t.unique(cg, dim=0, return_counts=True)
        if r.numel() >= n:
            rg = r.unfold(0, n, 1)
            ur, rc = t.unique(rg, dim=0, return_counts=True)
            match = (uc[:, None, :] == ur[None, :, :]).all(-1)
            rc_for_c = (match.long() * rc[None, :]).sum(1)
        else:
            rc_for_c = t.zeros_like(cc)
        clipped = t.minimum(cc, rc_for_c)
        precs.append(clipped.sum() / cg.size(0))
    p = t.stack(precs)
    geo = t.exp(t.log(p).mean())
    bp = t.exp(t.tensor(min(0.0, 1 - len(ref) / max(len(cand), 1))))
    return [p, geo, bp * geo]

def perplexity(t, logits, target):
    lg, y = t.from_numpy(logits), t.from_numpy(target)
    nll_sum = t.nn.functional.cross_entropy(lg, y, reduction="sum")
    ntok = y.numel()
    ppl = t.exp(nll_sum / ntok)
    lp = t.log_softmax(lg, dim=-1).gather(1, y.unsqueeze(1)).squeeze(1)
    ppl2 = (-lp.sum() / ntok).exp()
    ignore = y.clone()
    ignore[::3] = -100
    nll_i = t.nn.functional.cross_entropy(lg, ignore, ignore_index=-100, reduction="sum")
    n_i = (ignore != -100).sum()
    return [nll_sum, ppl, ppl2, nll_i, n_i, t.exp(nll_i / n_i), math.exp(nll_sum.item() / ntok)]

def correlation(t, x, y):
    a, b = t.from_numpy(x), t.from_numpy(y)
    ra = a.argsort(stable=True).argsort().float()
    rb = t.argsort(b, stable=True).argsort().to(t.float64)
    sp = t.corrcoef(t.stack([ra.double(), rb]))[0, 1]
    am, bm = a - a.mean(), b - b.mean()
    pe = (am * bm).sum() / (am.norm() * bm.norm())
    pe2 = t.corrcoef(t.stack((a, b)))
    cov = t.cov(t.stack((a, b)))
    long_ranks = t.stack([a.argsort(stable=True).argsort(), b.argsort(stable=True).argsort()])
    sp_long = t.corrcoef(long_ranks)[0, 1]  # (integer ranks straight in: a float result)
    return [ra, sp, pe, pe2, cov, long_ranks, sp_long, t.median(a), t.quantile(b, t.tensor([0.25, 0.75], dtype=b.dtype))]

def regression(t, pred, target):
    p, y = t.from_numpy(pred), t.from_numpy(target)
    ss_res = ((y - p) ** 2).sum()
    ss_tot = ((y - y.mean()) ** 2).sum()
    r2 = 1 - ss_res / ss_tot
    mae = (p - y).abs().mean()
    rmse = t.sqrt(t.mean((p - y) ** 2))
    rmse2 = t.nn.functional.mse_loss(p, y).sqrt()
    mae2 = t.nn.functional.l1_loss(p, y)
    mape = ((p - y).abs() / y.abs().clamp(min=1e-8)).mean() * 100
    evs = 1 - (y - p).var() / y.var()
    return [r2, mae, rmse, rmse2, mae2, mape, evs, r2.item()]

class AverageMeter:
    """The running average every training script keeps (losses as .item() floats, accuracies as tensors)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def meter(t, logits, target):
    m, m2 = AverageMeter(), AverageMeter()
    lg, y = t.from_numpy(logits), t.from_numpy(target)
    for i in range(0, len(y), 7):
        xb, yb = lg[i:i+7], y[i:i+7]
        loss = t.nn.functional.cross_entropy(xb, yb)
        m.update(loss.item(), xb.size(0))
        acc = (xb.argmax(-1) == yb).float().mean()
        m2.update(acc, yb.shape[0])  # tensor updates
    return [m.avg, m.sum, m.count, m.val, m2.avg, m2.sum]

def box_iou(t, a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = t.max(a[:, None, :2], b[:, :2])
    rb = t.min(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b - inter)

def det_map(t, dets, scores, dlabels, gts, glabels, nc, thr=0.5):
    D, S, DL = t.from_numpy(dets), t.from_numpy(scores), t.from_numpy(dlabels)
    G, GL = t.from_numpy(gts), t.from_numpy(glabels)
    aps, outs = [], []
    for c in range(nc):
        dm, gm = DL == c, GL == c
        d, s, g = D[dm], S[dm], G[gm]
        ngt = g.shape[0]
        if ngt == 0:
            continue
        s_sorted, order = t.sort(s, descending=True, stable=True)
        d = d[order]
        iou = box_iou(t, d, g)
        outs.append(iou)
        matched = t.zeros(ngt, dtype=t.bool)
        tp = t.zeros(d.shape[0])
        for i in range(d.shape[0]):
            cand = t.nonzero((iou[i] >= thr) & ~matched)
            if cand.numel() > 0:
                j = cand[iou[i][cand[:, 0]].argmax()][0]
                matched[j] = True
                tp[i] = 1
        ctp = tp.cumsum(0)
        cfp = (1 - tp).cumsum(0)
        rec = ctp / ngt
        prec = ctp / (ctp + cfp).clamp(min=1e-9)
        mrec = t.cat([t.tensor([0.0]), rec, t.tensor([1.0])])
        mpre = t.cat([t.tensor([1.0]), prec, t.tensor([0.0])])
        mpre = t.flip(t.cummax(t.flip(mpre, [0]), 0).values, [0])
        idx = t.nonzero(mrec[1:] != mrec[:-1], as_tuple=True)[0]
        ap = ((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1]).sum()
        aps.append(ap)
        outs += [tp, rec, prec, ap]
    m = t.stack(aps).mean() if aps else t.tensor(float("nan"))
    return outs + [m]


# ---- refusals a metric script runs into ---------------------------------------------------------------------
REFUSALS = {
    "bincount_neg": lambda t: t.bincount(t.tensor([0, -1, 2])),
    "bincount_float": lambda t: t.bincount(t.tensor([0., 1.])),
    "bincount_2d": lambda t: t.bincount(t.tensor([[0, 1]])),
    "bincount_weights_len": lambda t: t.bincount(t.tensor([0, 1]), weights=t.tensor([1.0])),
    "bincount_minlength_neg": lambda t: t.bincount(t.tensor([0, 1]), minlength=-1),
    "topk_big": lambda t: t.tensor([1., 2.]).topk(3),
    "onehot_oob": lambda t: t.nn.functional.one_hot(t.tensor([0, 5]), 3),
    "onehot_float": lambda t: t.nn.functional.one_hot(t.tensor([0., 1.]), 3),
    "onehot_neg": lambda t: t.nn.functional.one_hot(t.tensor([0, -1]), 3),
    "index_put_oob": lambda t: t.zeros(2, 2).index_put_((t.tensor([0, 2]), t.tensor([0, 1])), t.tensor(1.0), accumulate=True),
    "index_put_dtype": lambda t: t.zeros(2, 2, dtype=t.long).index_put_((t.tensor([0, 1]), t.tensor([0, 1])), t.tensor([1.0, 2.0]), accumulate=True),
    "histc_int": lambda t: t.histc(t.tensor([1, 2, 3]), bins=3),
    "histc_bins0": lambda t: t.histc(t.tensor([1., 2.]), bins=0),
    "histc_minmax": lambda t: t.histc(t.tensor([1., 2.]), bins=3, min=2, max=1),
    "trapz_len": lambda t: t.trapezoid(t.tensor([1., 2.]), t.tensor([1., 2., 3.])),
    "bucketize_2d_bounds": lambda t: t.bucketize(t.tensor([0.5]), t.tensor([[0., 1.]])),
    "unfold_big": lambda t: t.arange(3).unfold(0, 4, 1),
    "unfold_step0": lambda t: t.arange(3).unfold(0, 2, 0),
    "unique_dim_oob": lambda t: t.unique(t.arange(3), dim=1, return_counts=True),
    "corrcoef_3d": lambda t: t.corrcoef(t.ones(2, 2, 2)),
    "scatter_add_oob": lambda t: t.zeros(3).scatter_add_(0, t.tensor([3]), t.ones(1)),
    "scatter_add_dtype": lambda t: t.zeros(3).scatter_add_(0, t.tensor([1]), t.ones(1, dtype=t.float64)),
    "ce_oob": lambda t: t.nn.functional.cross_entropy(t.zeros(2, 3), t.tensor([0, 3])),
    "item_multi": lambda t: t.tensor([1., 2.]).item(),
    "logical_and_shape": lambda t: t.logical_and(t.ones(2, 3, dtype=t.bool), t.ones(2, dtype=t.bool)),
    "minimum_dtype": lambda t: t.minimum(t.tensor([1, 2]), t.tensor([1.5, 0.5])),
    "nonzero_scalar": lambda t: t.nonzero(t.tensor(1.0), as_tuple=True),
    "argmax_empty": lambda t: t.tensor([]).argmax(),
    "max_empty": lambda t: t.tensor([]).max(),
    "diff_0d": lambda t: t.diff(t.tensor(1.0)),
    "linspace_steps_neg": lambda t: t.linspace(0, 1, -1),
    "mean_long": lambda t: t.tensor([1, 2]).mean(),
    "nanmean_long": lambda t: t.tensor([1, 2]).nanmean(),
    "unique_consecutive_dim": lambda t: t.unique_consecutive(t.tensor([[1, 1], [1, 1]]), return_counts=True, dim=2),
    "kthvalue": lambda t: t.tensor([1., 2.]).kthvalue(3),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_a_metric_scripts_mistake_is_refused_as_pytorch_refuses_it(name):
    _same(REFUSALS[name])


# ---- the data: several seeds, each with its awkward case ----------------------------------------------------

def _classification(seed, n=40, nc=5):
    """logits (n, nc) float32, targets: seed 1 rounds the logits (tied scores), seed 2 empties class 3,
    seed 3 makes every target class 2."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((n, nc)).astype(np.float32)
    if seed == 1:
        logits = np.round(logits)
    target = rng.integers(0, nc, n)
    if seed == 2:
        target[target == 3] = 0
    if seed == 3:
        target[:] = 2
    return logits, target


def _binary(seed, n=40):
    rng = np.random.default_rng(100 + seed)
    scores = rng.random(n).astype(np.float32)
    labels = (rng.random(n) < 0.4).astype(np.int64)
    if seed == 1:
        scores = np.round(scores * 4) / 4  # a handful of distinct thresholds
    if seed == 2:
        scores = scores.astype(np.float64)
    if seed == 3:
        labels[:] = 1  # no negatives: the FPR is 0/0
    return scores, labels


SEEDS = [0, 1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS)
def test_accuracy_and_top_k_accuracy(seed):
    logits, target = _classification(seed)
    if seed == 1:  # (topk's order among tied logits is unspecified in PyTorch: argmax only)
        _same(lambda t: [(t.from_numpy(logits).argmax(1) == t.from_numpy(target)).float().mean()])
        return
    _same(accuracy, logits, target)


@pytest.mark.parametrize("seed", SEEDS)
def test_confusion_matrix_by_bincount_and_by_index_put(seed):
    logits, target = _classification(seed)
    _same(confusion, logits.argmax(1), target, 5)


@pytest.mark.parametrize("seed", SEEDS)
def test_precision_recall_f1_macro_micro_weighted(seed):
    logits, target = _classification(seed)
    _same(prf, logits.argmax(1), target, 5)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("label_dtype", [np.int64, np.float32])
def test_roc_auc_and_average_precision(seed, label_dtype):
    scores, labels = _binary(seed)
    _same(roc_auc, scores, labels.astype(label_dtype))


def test_roc_auc_with_nan_scores():
    scores, labels = _binary(0)
    scores[[2, 5]] = np.nan
    _same(roc_auc, scores, labels)


@pytest.mark.parametrize("seed", SEEDS)
def test_expected_calibration_error(seed):
    logits, target = _classification(seed)
    probs = (np.exp(logits) / np.exp(logits).sum(1, keepdims=True)).astype(np.float32)
    if seed == 2:
        probs[3, 1] = np.nan
    _same(ece, probs, target)


@pytest.mark.parametrize("seed", SEEDS)
def test_segmentation_iou_and_dice(seed):
    rng = np.random.default_rng(200 + seed)
    pred, target = rng.integers(0, 4, (2, 8, 8)), rng.integers(0, 4, (2, 8, 8))
    if seed == 2:  # class 1 in neither: 0/0
        pred[pred == 1] = 0
        target[target == 1] = 0
    if seed == 3:
        pred[:] = target[:] = 0
    _same(segmentation, pred, target, 4)


@pytest.mark.parametrize("seed", SEEDS)
def test_multilabel_metrics(seed):
    rng = np.random.default_rng(300 + seed)
    scores = rng.standard_normal((40, 4)).astype(np.float32)
    target = (rng.random((40, 4)) < 0.3).astype(np.int64)
    if seed == 3:
        target[:, 1] = 0
        scores[:5] = -5
        target[:5] = 0  # rows with nothing predicted nor true: 0/0
    _same(multilabel, scores, target)


@pytest.mark.parametrize("seed", SEEDS)
def test_bleu_like_ngram_precision(seed):
    rng = np.random.default_rng(400 + seed)
    cand, ref = rng.integers(0, 6, 12).tolist(), rng.integers(0, 6, 14).tolist()
    _same(bleu, cand, ref)
    _same(bleu, cand[:2], ref)
    _same(bleu, [1, 2, 3], [4, 5, 6])


@pytest.mark.parametrize("seed", SEEDS)
def test_perplexity_and_a_running_average_meter(seed):
    logits, target = _classification(seed)
    _same(perplexity, logits, target)
    _same(meter, logits, target)


@pytest.mark.parametrize("seed", SEEDS)
def test_spearman_pearson_and_regression_metrics(seed):
    rng = np.random.default_rng(500 + seed)
    x = rng.standard_normal(30)
    y = x + rng.standard_normal(30)
    if seed == 1:
        x = np.round(x)  # tied ranks
    if seed == 3:
        x[:] = 1.0  # a constant variable: 0/0 correlation
    for a, b in ((x, y), (x.astype(np.float32), y.astype(np.float32))):
        _same(correlation, a, b)
        _same(regression, a, b)


@pytest.mark.parametrize("seed", SEEDS)
def test_detection_map(seed):
    rng = np.random.default_rng(600 + seed)
    nd, ng = 12, 6
    xy, wh = rng.random((nd, 2)) * 10, rng.random((nd, 2)) * 5 + 0.5
    dets = np.concatenate([xy, xy + wh], 1).astype(np.float32)
    gxy, gwh = rng.random((ng, 2)) * 10, rng.random((ng, 2)) * 5 + 0.5
    gts = np.concatenate([gxy, gxy + gwh], 1).astype(np.float32)
    dets[:ng] = gts + rng.standard_normal((ng, 4)).astype(np.float32) * 0.3
    scores = rng.random(nd).astype(np.float32)
    if seed == 1:
        scores = np.round(scores * 2) / 2  # tied scores: the stable sort keeps their order
    _same(det_map, dets, scores, rng.integers(0, 3, nd), gts, rng.integers(0, 3, ng), 3)


def test_metrics_of_an_empty_batch_or_no_detections():
    _same(accuracy, np.zeros((0, 5), np.float32), np.zeros(0, np.int64), (1,))
    _same(confusion, np.zeros(0, np.int64), np.zeros(0, np.int64), 3)
    _same(prf, np.zeros(0, np.int64), np.zeros(0, np.int64), 3)
    _same(det_map, np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64),
          np.array([[0, 0, 1, 1.]], np.float32), np.array([0]), 1)


# ---- focused: what these scripts found ----------------------------------------------------------------------

@pytest.mark.parametrize("accumulate", [True, False])
@pytest.mark.parametrize("dst, src", [("long", "float32"), ("float32", "float64"), ("float32", "long")])
def test_index_put_refuses_values_of_another_dtype(accumulate, dst, src):
    # (a float count added into a long confusion matrix: PyTorch refuses, it does not cast)
    def script(t):
        cm = t.zeros(3, 3, dtype=getattr(t, dst))
        idx = (t.tensor([0, 1, 1]), t.tensor([2, 1, 1]))
        return [cm.index_put_(idx, t.ones(3, dtype=getattr(t, src)), accumulate=accumulate),
                cm.index_put(idx, t.tensor(2, dtype=getattr(t, src)), accumulate)]

    _same(script)


def test_as_strided_scatter_casts_src_to_the_inputs_dtype():
    _same(lambda t: t.as_strided_scatter(t.zeros(6), t.arange(1, 4, dtype=t.float64), (3,), (2,), 1))


def test_bucketize_takes_one_dimensional_boundaries_only():
    _same(lambda t: t.bucketize(t.tensor([0.5, 1.5]), t.tensor([[0.0, 1.0]])))
    _same(lambda t: t.bucketize(t.tensor(0.5), t.tensor(1.0)))
    _same(lambda t: t.bucketize(t.tensor([[0.5, 1.5]]), t.tensor([0.0, 1.0]), right=True))


@pytest.mark.parametrize("op", ["cov", "corrcoef"])
def test_cov_and_corrcoef_refuse_more_than_two_dimensions(op):
    _same(lambda t: getattr(t, op)(t.ones(2, 2, 3)))
    _same(lambda t: getattr(t, op)(t.arange(12.0).reshape(3, 4) ** 2))


def test_diff_of_a_zero_dimensional_tensor_is_refused():
    _same(lambda t: t.diff(t.tensor(1.0)))
    _same(lambda t: t.diff(t.tensor(3), n=2))


def test_linspace_negative_steps_says_pytorchs_words():
    _same(lambda t: t.linspace(0, 1, -2))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_unique_consecutive_along_a_dim_compares_whole_slices(dim):
    a = np.random.default_rng(0).integers(0, 2, (5, 3, 2))
    a[1] = a[0]
    a[:, 2] = a[:, 1]
    a[..., 1] = a[..., 0]

    def script(t):
        x = t.from_numpy(a)
        return [x.unique_consecutive(dim=dim), t.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim)]

    _same(script)


def test_unique_consecutive_along_a_dim_of_empty_or_zero_dim_tensors():
    _same(lambda t: t.unique_consecutive(t.zeros(0, 2), return_inverse=True, return_counts=True, dim=0))
    _same(lambda t: t.unique_consecutive(t.zeros(2, 0), dim=0))
    _same(lambda t: t.unique_consecutive(t.tensor(3), return_counts=True, dim=0))
    _same(lambda t: t.unique_consecutive(t.tensor([[1, 1], [1, 1]]), dim=2))


def test_cov_and_corrcoef_of_integer_observations_are_float():
    def script(t):
        ranks = t.tensor([[0, 2, 1, 3], [1, 0, 3, 2]])
        return [t.corrcoef(ranks), t.cov(ranks), t.cov(ranks.int(), aweights=t.tensor([1.0, 2, 1, 1], dtype=t.float64)),
                t.cov(ranks, fweights=t.tensor([1, 2, 1, 1])), t.cov(t.tensor([1, 2, 4]))]

    _same(script)
    _same(lambda t: t.cov(t.tensor([[True, False, True]])))


def test_cov_and_corrcoef_of_one_row_are_zero_dimensional():
    _same(lambda t: [t.cov(t.tensor([[1.0, 2.0, 4.0]])), t.corrcoef(t.tensor([[1.0, 2.0, 4.0]], dtype=t.float64))])


def test_diff_of_bools_marks_changes():
    _same(lambda t: [t.diff(t.tensor([True, False, False, True])), t.diff(t.tensor([[True, False, True]]), n=2),
                     t.diff(t.tensor([False, True]), prepend=t.tensor([True]), append=t.tensor([True]))])
    _same(lambda t: t.diff(t.tensor([1, 2]), n=-1))


def test_unique_keeps_each_nan_apart():
    nan = float("nan")
    _same(lambda t: [t.unique(t.tensor([nan, 2.0, nan, 1.0]), return_inverse=True, return_counts=True),
                     t.tensor([nan, nan], dtype=t.float64).unique(return_counts=True)])


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_median_of_an_empty_tensor(op, dtype):
    # (an empty batch's median error: NaN, as PyTorch's; an integer type's least value)
    _same(lambda t: getattr(t.tensor([], dtype=getattr(t, dtype)), op)())


def test_median_of_an_empty_tensor_backward():
    def script(t):
        x = t.zeros(0, requires_grad=True)
        x.median().backward()
        return [x.grad]

    _same(script)


@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile_of_integers_is_refused(op):
    _same(lambda t: getattr(t, op)(t.tensor([1, 2, 3]), 0.5))


@pytest.mark.parametrize("op", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid_of_bools_is_refused(op):
    _same(lambda t: getattr(t, op)(t.tensor([True, False, True])))
    _same(lambda t: getattr(t, op)(t.tensor([1.0, 0.0]), t.tensor([False, True])))
