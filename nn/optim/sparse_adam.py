"""SparseAdam, as `torch.optim.SparseAdam`: Adam for the sparse gradients of `Embedding(sparse=True)`."""
import math

from minigrad.device import array_module

from .optimizer import Optimizer, check_betas


class SparseAdam(Optimizer):
    """Adam that updates only the rows a sparse gradient holds. Per parameter p with gradient g
    (repeated rows summed first), at step t (one count per parameter, as PyTorch's), on g's rows:

        m = m + (1 - beta1) (g - m)
        v = v + (1 - beta2) (g^2 - v)
        p = p - lr sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps)

    Rows the gradient does not hold keep their moments and values. State, PyTorch's names: `step`
    (a Python int), `exp_avg` and `exp_avg_sq` (the shape of p). A dense gradient is refused with
    PyTorch's error, which names Adam, the optimizer for those.
    """

    scalar_state = ()  # (its step a Python int, as PyTorch's)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        # the parameters themselves must be dense and real: PyTorch's checks, by [group, index]
        places = [(i, j, p) for i, group in enumerate(self.param_groups) for j, p in enumerate(group["params"])]
        sparse = [[i, j] for i, j, p in places if p.is_sparse]
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        complex_ = [[i, j] for i, j, p in places if p.is_complex()]
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not support complex parameters")

    def _step_group(self, group):
        lr, eps, maximize = float(group["lr"]), float(group["eps"]), group["maximize"]
        beta1, beta2 = float(group["betas"][0]), float(group["betas"][1])
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:  # (all checked before any changes, as PyTorch's)
            if not p.grad.is_sparse:
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        for p in params:
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = p.new_zeros(p.shape)
                state["exp_avg_sq"] = p.new_zeros(p.shape)
            state["step"] += 1
            g = (-p.grad if maximize else p.grad).coalesce()
            if not g._nnz():
                continue
            rows, values = tuple(g.indices().array), g.values().array
            m, v = state["exp_avg"].array, state["exp_avg_sq"].array
            old_m, old_v = m[rows], v[rows]
            m_step = (values - old_m) * (1 - beta1)
            v_step = (values * values - old_v) * (1 - beta2)
            m[rows] += m_step
            v[rows] += v_step
            numer = m_step + old_m  # (the new moments, summed again rather than read back: PyTorch's rounding)
            denom = array_module(v).sqrt(v_step + old_v) + eps
            t = state["step"]
            step_size = lr * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
            p.array[rows] += (numer / denom) * -step_size
            state["exp_avg"]._bump_version()
            state["exp_avg_sq"]._bump_version()
            p._bump_version()
