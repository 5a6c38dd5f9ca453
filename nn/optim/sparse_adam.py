"""SparseAdam, as `torch.optim.SparseAdam`: its constructor, checks and state, for scripts that name it."""
from .optimizer import Optimizer, check_betas


class SparseAdam(Optimizer):
    """Adam for the sparse gradients of `Embedding(sparse=True)`. minigrad's gradients are always dense
    (`sparse=True` raises NotImplementedError), so a step that meets a gradient refuses it with
    PyTorch's error, which names Adam, the optimizer for dense gradients; parameters without a
    gradient are skipped, as in every optimizer."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _step_group(self, group):
        if any(p.grad is not None for p in group["params"]):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
