"""SyncBatchNorm's cases for test_sync_batch_norm.py, all in one run: `mpiexec -n 2 python THIS OUT_DIR`.
Each rank feeds its part of a batch that data() makes the same on every rank (and in the test), and
writes what it saw to OUT_DIR/rank_R.npz; the test compares that with one process on the full batch."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import numpy as np  # noqa: E402

STEPS = 2  # training steps per case: the second sees the running statistics (and momentum=None's average) move
# (name, input shape of the full batch, affine, track_running_stats, momentum, rows on rank 0 (the rest: rank 1))
CASES = [
    ("1d_nc", (8, 3), True, True, 0.1, 4),
    ("1d_ncl", (6, 3, 5), False, True, None, 3),
    ("2d", (4, 3, 4, 3), True, False, 0.1, 2),
    ("3d", (4, 2, 2, 3, 2), True, True, None, 2),
    ("uneven", (7, 3, 4), True, True, 0.3, 5),
    ("empty_rank", (5, 3), True, True, 0.1, 5),
]


def data(shape, step, seed=0):
    """The full batch and the loss's weights R (loss = sum(y * R)) of one step, the same everywhere."""
    g = np.random.default_rng([seed, step, *shape])
    x = (g.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    return x, g.standard_normal(shape).astype(np.float32)


def conv_model(nn):
    """The small conv model that DDP wraps (BatchNorm2d converted to SyncBatchNorm); `nn` is minigrad's or torch's."""
    return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.Conv2d(3, 2, 1),
                         nn.BatchNorm2d(2, affine=False))


def _grad(t):
    """t.grad as an array; an empty input gives no gradient (None, as PyTorch's): zeros, its share of the sum."""
    return t.grad.numpy() if t.grad is not None else np.zeros(t.shape, np.float32)


def main(out):
    import minigrad
    import minigrad.distributed as dist
    from minigrad import nn
    from minigrad.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group()
    rank = dist.get_rank()
    got = {}

    for name, shape, affine, track, momentum, rows in CASES:
        m = nn.SyncBatchNorm(shape[1], affine=affine, track_running_stats=track, momentum=momentum)
        if affine:  # weights other than the initial ones, so that their gradients show
            m.weight.data = minigrad.tensor(np.linspace(0.5, 1.5, shape[1], dtype=np.float32))
            m.bias.data = minigrad.tensor(np.linspace(-0.2, 0.3, shape[1], dtype=np.float32))
        part = slice(0, rows) if rank == 0 else slice(rows, shape[0])
        for step in range(STEPS):
            x, r = data(shape, step)
            x = minigrad.tensor(x[part], requires_grad=True)
            y = m(x)
            (y * minigrad.tensor(r[part])).sum().backward()
            got[f"{name}/{step}/y"] = y.detach().numpy()
            got[f"{name}/{step}/gx"] = _grad(x)
            if affine:  # this rank's share of the gradient: the ranks' shares sum to the full batch's
                got[f"{name}/{step}/gw"], got[f"{name}/{step}/gb"] = _grad(m.weight), _grad(m.bias)
                m.weight.grad = m.bias.grad = None
            if track:
                got[f"{name}/{step}/running_mean"] = m.running_mean.numpy().copy()
                got[f"{name}/{step}/running_var"] = m.running_var.numpy().copy()
                got[f"{name}/{step}/tracked"] = m.num_batches_tracked.numpy().copy()
        got[f"{name}/grad_fn"] = np.array(type(y.grad_fn).__name__)
        m.eval()  # the running statistics (or the batch's own without them), no collective
        x, _ = data(shape, 0)
        got[f"{name}/eval"] = m(minigrad.tensor(x[part])).detach().numpy()

    # DDP around a conv model with its BatchNorms converted: two SGD steps
    minigrad.manual_seed(0)
    model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(conv_model(nn)))
    opt = minigrad.optim.SGD(model.parameters(), lr=0.1)
    half = slice(0, 3) if rank == 0 else slice(3, 6)
    for step in range(STEPS):
        x, r = data((6, 2, 4, 4), step, seed=1)
        r = r[:, :2]
        x = minigrad.tensor(x[half], requires_grad=True)
        opt.zero_grad()
        y = model(x)
        (y * minigrad.tensor(r[half])).sum().backward()
        got[f"ddp/{step}/y"], got[f"ddp/{step}/gx"] = y.detach().numpy(), x.grad.numpy()
        for k, p in model.module.named_parameters():
            got[f"ddp/{step}/grad/{k}"] = p.grad.numpy().copy()
        opt.step()
    for k, v in model.module.state_dict().items():
        got[f"ddp/state/{k}"] = v.numpy()
    model.eval()
    got["ddp/eval"] = model(minigrad.tensor(data((6, 2, 4, 4), 0, seed=1)[0][half])).detach().numpy()

    # process_group: each rank alone in its own group normalizes by its own half (every rank makes every group)
    groups = [dist.new_group([0]), dist.new_group([1])]
    both = dist.new_group([0, 1])
    x, _ = data((8, 3), 0)
    for key, group in (("own_group", groups[rank]), ("both_group", both)):
        m = nn.SyncBatchNorm(3, process_group=group)
        got[f"{key}/y"] = m(minigrad.tensor(x[4 * rank:4 * rank + 4])).detach().numpy()
        got[f"{key}/running_var"] = m.running_var.numpy()

    np.savez(os.path.join(out, f"rank_{rank}.npz"), **got)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
