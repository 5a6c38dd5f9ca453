"""cross_entropy's forward on the GPU: logsumexp, nll, label smoothing, ignore_index, class weights
and the gradient in one kernel (one thread block per row)."""
from . import kernels


def supports(D, x, t, w, ignore_index, ls, inv, need_grad):
    """float32 and float64 cupy logits."""
    return x.dtype.char in "fd"


def forward(D, x, t, w, ignore_index, ls, inv, need_grad):
    """As minigrad/backends/cpu/cross_entropy.py's forward: (the rows' losses, kept); D gets inv times their
    gradient. The targets' check and count are array reductions here (a sync each)."""
    cp = kernels._cp()
    C = x.shape[1]
    kept_ids = t != ignore_index
    if bool((kept_ids & ((t < 0) | (t >= C))).any()):
        return None, -1
    kept = int(kept_ids.sum())
    loss, _, grad = kernels.cross_entropy_rows(x, t, w, ignore_index, ls, need_grad)
    if need_grad:
        cp.multiply(grad, inv, out=D)
    return loss, kept
