"""torch.distributed scripts of the common kinds, written as PyTorch users write them, with only the
import lines pointed at minigrad. test_ddp_templates.py runs them (under mpiexec or alone).

    python -m minigrad.distributed.run tests/distributed/templates.py NAME OUT_DIR
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import numpy as np  # noqa: E402

import minigrad as torch  # noqa: E402
import minigrad.distributed as dist  # noqa: E402
import minigrad.nn as nn  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from minigrad.distributed.algorithms.join import Join  # noqa: E402
from minigrad.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from minigrad.utils.data import DataLoader, TensorDataset  # noqa: E402
from minigrad.utils.data.distributed import DistributedSampler  # noqa: E402


def data():
    g = np.random.default_rng(0)
    x = g.standard_normal((22, 4)).astype(np.float32)
    return x, (x ** 2).sum(1, keepdims=True).astype(np.float32)


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def template(out):
    """The torchrun template: environment, gloo, DDP, DistributedSampler, loss logging, rank-0 save."""
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="gloo")
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
    ddp_model = DDP(model(), device_ids=None)
    x, y = data()
    dataset = TensorDataset(torch.tensor(x), torch.tensor(y))
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler)
    opt = torch.optim.SGD(ddp_model.parameters(), lr=0.05)
    orders, losses = [], []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        orders.append(list(sampler))
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.mse_loss(ddp_model(xb), yb)
            loss.backward()
            opt.step()
            logged = loss.detach().clone()
            dist.all_reduce(logged, op=dist.ReduceOp.SUM)
            logged /= world_size
            losses.append(logged.item())
    with open(os.path.join(out, f"run_{rank}.json"), "w") as f:
        json.dump({"orders": orders, "losses": losses, "elastic": dist.is_torchelastic_launched()}, f)
    if rank == 0:
        np.savez(os.path.join(out, "model.npz"), **{k: v.numpy() for k, v in ddp_model.module.state_dict().items()})
    dist.barrier()
    dist.destroy_process_group()


def debug_alone(out):
    """The same run in one process, the launcher's variables set by hand (as people debug)."""
    os.environ.update(MASTER_ADDR="localhost", MASTER_PORT="29533", RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    template(out)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 1), nn.Linear(3, 1)

    def forward(self, x, head):
        h = self.body(x)
        return self.a(h) if head == "a" else self.b(h)


def features(out):
    """DDP's options and the collectives, under 2 ranks: each result as PyTorch's math has it."""
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    results = {}
    # find_unused_parameters: rank 0 uses head a, rank 1 head b; then both use a (b is used nowhere)
    torch.manual_seed(0)
    m = DDP(TwoHeads(), find_unused_parameters=True, static_graph=False)
    x = torch.full((1, 3), float(rank + 1))
    m(x, "a" if rank == 0 else "b").sum().backward()
    results["mixed"] = {n: p.grad.numpy().tolist() for n, p in m.module.named_parameters()}
    m.zero_grad(set_to_none=True)
    m(x, "a").sum().backward()
    results["b_unused"] = [m.module.b.weight.grad is None, m.module.a.weight.grad.numpy().tolist()]
    # no_sync gradient accumulation, then a synced step
    lin = DDP(nn.Linear(2, 1, bias=False))
    with lin.no_sync():
        lin(torch.full((1, 2), float(rank + 1))).sum().backward()
    results["no_sync"] = lin.module.weight.grad.numpy().tolist()
    lin(torch.full((1, 2), float(rank + 1))).sum().backward()
    results["synced"] = lin.module.weight.grad.numpy().tolist()
    # uneven inputs: rank 0 has 3 batches, rank 1 two; with Join both finish
    torch.manual_seed(0)
    j = DDP(nn.Linear(2, 1, bias=False))
    opt = torch.optim.SGD(j.parameters(), lr=0.1)
    with Join([j]):
        for step in range(3 - rank):
            opt.zero_grad()
            j(torch.full((1, 2), float(rank + 1 + step))).sum().backward()
            opt.step()
    results["join"] = j.module.weight.detach().numpy().tolist()
    # collectives
    t = torch.arange(4, dtype=torch.float32) + 10 * rank
    gathered = torch.empty(8)
    dist.all_gather_into_tensor(gathered, t)
    scattered = torch.empty(2)
    dist.reduce_scatter_tensor(scattered, t)
    r = t.clone()
    dist.reduce(r, dst=1, op=dist.ReduceOp.MAX)
    gl = [torch.empty(4) for _ in range(world)] if rank == 0 else None
    dist.gather(t, gl, dst=0)
    s = torch.empty(2)
    dist.scatter(s, [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])] if rank == 1 else None, src=1)
    a2a = torch.empty(4)
    dist.all_to_all_single(a2a, t)
    uneven = torch.empty(3 if rank == 0 else 5)
    dist.all_to_all_single(uneven, t, output_split_sizes=[1, 2] if rank == 0 else [3, 2],
                           input_split_sizes=[1, 3] if rank == 0 else [2, 2])
    objs = [None, None]
    dist.all_gather_object(objs, {"rank": rank})
    bl = [rank, "x"]
    dist.broadcast_object_list(bl, src=1)
    solo = dist.new_group([1])
    solo_sum = torch.ones(1)
    dist.all_reduce(solo_sum, group=solo)  # rank 0 is outside: nothing happens there
    dist.monitored_barrier()
    results.update(gathered=gathered.tolist(), scattered=scattered.tolist(), reduce=r.tolist(),
                   gather=[g.tolist() for g in gl] if gl else None, scatter=s.tolist(), a2a=a2a.tolist(),
                   uneven=uneven.tolist(), objs=objs, bl=bl, solo=[dist.get_rank(solo), dist.get_world_size(solo),
                                                                   solo_sum.item()])
    with open(os.path.join(out, f"features_{rank}.json"), "w") as f:
        json.dump(results, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    globals()[sys.argv[1]](*sys.argv[2:])
