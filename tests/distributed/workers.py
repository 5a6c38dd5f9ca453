"""Programs the distributed tests run under `mpiexec -n N python tests/distributed/workers.py NAME ...`.

Each writes what the test compares (weights as .npz) into the folder it is given."""
import os
import warnings
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import minigrad  # noqa: E402 (after the path: the worktree's minigrad)
import numpy as np  # noqa: E402

import minigrad.distributed as dist  # noqa: E402
import nn  # noqa: E402
from gpt.model import GPT, GPTConfig  # noqa: E402
from nn.parallel import DistributedDataParallel  # noqa: E402

B, T, VOCAB, STEPS = 4, 16, 48, int(os.environ.get("STEPS", 20))  # B: the per-rank batch under 2 ranks


def tiny_gpt():
    minigrad.manual_seed(1234 + dist.get_rank())  # a different init on each rank: DDP must make them rank 0's
    return GPT(GPTConfig(block_size=T, vocab_size=VOCAB, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=False))


def equivalence(out):
    """20 AdamW steps on fixed batches: 1 rank takes the whole batch of 2B, each of 2 ranks its half;
    without and with gradient accumulation, in float32 and float64."""
    dist.init_process_group(timeout=60)
    for accum, dtype in ((1, "float32"), (2, "float32"), (2, "float64")):
        train_tiny(out, accum, dtype)
    dist.destroy_process_group()


def train_tiny(out, accum, dtype):
    rank, world = dist.get_rank(), dist.get_world_size()
    model = tiny_gpt()
    if world == 1:
        minigrad.manual_seed(1234)  # rank 0's initialisation, which DDP gives every rank
        model = GPT(model.config)
    if dtype == "float64":
        model.double()
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.01) if world > 1 else model  # several buckets
    if world == 1:
        np.savez(os.path.join(out, f"init_{accum}_{dtype}.npz"), **{k: v.numpy() for k, v in model.state_dict().items()})
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
    data = np.random.default_rng(0).integers(0, VOCAB, size=(STEPS, accum, 2 * B, T + 1))
    per = 2 * B // world
    for step in range(STEPS):
        for micro in range(accum):
            xy = data[step, micro, rank * per:(rank + 1) * per]
            x, y = minigrad.tensor(xy[:, :-1]), minigrad.tensor(xy[:, 1:])
            last = micro == accum - 1
            if world > 1:
                ddp.require_backward_grad_sync = last  # nanoGPT's way of saying no_sync()
            _, loss = ddp(x, y)
            (loss / accum).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    weights = {k: v.numpy() for k, v in model.state_dict().items()}
    if world > 1:  # both ranks hold the same weights
        other = [None] * world
        dist.all_gather_object(other, float(sum(np.abs(w).sum() for w in weights.values())))
        assert other[0] == other[1], other
    if rank == 0:
        np.savez(os.path.join(out, f"weights_{world}_{accum}_{dtype}.npz"), **weights)


def check(cond, what):
    if not cond:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")


def collectives(out):
    """Every collective and op, sync and async, against what numpy says it must give."""
    dist.init_process_group(timeout=20)
    rank, world = dist.get_rank(), dist.get_world_size()
    check(dist.is_initialized() and dist.get_backend() == "mpi" and dist.get_node_local_rank() == rank, "group")
    base = np.array([[1.0, -2.0], [3.0, 0.5]], dtype=np.float32)
    every = [base * (r + 1) for r in range(world)]
    expect = {dist.ReduceOp.SUM: sum(every), dist.ReduceOp.AVG: sum(every) / world,
              dist.ReduceOp.MAX: np.maximum.reduce(every), dist.ReduceOp.MIN: np.minimum.reduce(every),
              dist.ReduceOp.PRODUCT: np.multiply.reduce(every)}
    for op, want in expect.items():
        for async_op in (False, True):
            t = minigrad.tensor(every[rank])
            w = dist.all_reduce(t, op=op, async_op=async_op)
            if async_op:
                check(w.wait() is True and w.is_completed(), "Work.wait")
            check(np.array_equal(t.numpy(), want), f"all_reduce {op}: {t.numpy()} != {want}")
    t = minigrad.tensor(np.arange(6, dtype=np.int64).reshape(2, 3)[:, ::2] * (rank + 1))  # not contiguous
    dist.all_reduce(t)
    check(np.array_equal(t.numpy(), np.arange(6).reshape(2, 3)[:, ::2] * sum(range(1, world + 1))), "strided")
    t = minigrad.full((3,), float(rank))
    dist.broadcast(t, src=world - 1)
    check(np.array_equal(t.numpy(), np.full(3, world - 1.0)), "broadcast")
    outs = [minigrad.zeros(2, 2) for _ in range(world)]
    dist.all_gather(outs, minigrad.tensor(every[rank]), async_op=True).wait()
    check(all(np.array_equal(o.numpy(), e) for o, e in zip(outs, every)), "all_gather")
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "name": "r" * rank})
    check(objs == [{"rank": r, "name": "r" * r} for r in range(world)], f"all_gather_object {objs}")
    lst = [rank, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(lst, src=0)
    check(lst == [0, "x"], "broadcast_object_list")
    dist.barrier()
    # a timeout: rank 1 skips the barrier rank 0 waits at
    if rank == 0:
        try:
            dist.barrier(async_op=True).wait(timeout=1.0)
            check(False, "a barrier without the other rank returned")
        except dist.DistBackendError as e:
            check("barrier timed out after 1 s" in str(e), str(e))
    with open(os.path.join(out, f"ok_{rank}"), "w") as f:
        f.write("ok")


def aborting(out):
    """Rank 1 aborts with a reason; rank 0, waiting in an all_reduce, must name it."""
    dist.init_process_group(timeout=30)
    if dist.get_rank() == 1:
        dist.abort("ValueError: bad batch")
        os._exit(1)
    try:
        dist.all_reduce(minigrad.ones(3))
    except dist.DistBackendError as e:
        print(f"rank 0 saw: {e}", flush=True)
        os._exit(3)


class HalfUsed(nn.Module):
    def __init__(self):
        super().__init__()
        self.used, self.unused = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        return self.used(x)


def ddp_errors(out):
    """Different models on two ranks, and a parameter left out of the loss, are errors that say so."""
    dist.init_process_group(timeout=20)
    rank = dist.get_rank()
    width = 8 if rank == 0 else 6
    try:
        DistributedDataParallel(nn.Linear(4, width))
        check(False, "different models were accepted")
    except RuntimeError as e:
        check("rank 0 has weight of shape (8, 4) float32, while rank 1 has weight of shape (6, 4)" in str(e), str(e))
    model = HalfUsed()
    ddp = DistributedDataParallel(model)
    check(list(ddp.state_dict()) == list(model.state_dict()) == ["used.weight", "used.bias", "unused.weight",
                                                                 "unused.bias"], "state_dict keys have no prefix")
    check(ddp.module is model, ".module")
    x = minigrad.ones(2, 4)
    ddp(x).sum().backward()  # the second Linear gets no gradient: its bucket never starts
    try:
        ddp(x)
        check(False, "an unused parameter went unnoticed")
    except RuntimeError as e:
        check("parameters that were not used in producing loss" in str(e), str(e))
    # no_sync: no communication, local gradients; the next synced backward averages the sum
    model2 = nn.Linear(3, 1, bias=False)
    ddp2 = DistributedDataParallel(model2)
    xs = minigrad.tensor(np.full((1, 3), rank + 1.0, dtype=np.float32))
    with ddp2.no_sync():
        ddp2(xs).sum().backward()
    check(np.array_equal(model2.weight.grad.numpy(), np.full((1, 3), rank + 1.0)), "no_sync reduced")
    ddp2(xs).sum().backward()
    check(np.array_equal(model2.weight.grad.numpy(), np.full((1, 3), 3.0)), f"sync: {model2.weight.grad.numpy()}")
    with open(os.path.join(out, f"ok_{rank}"), "w") as f:
        f.write("ok")


def single(out):
    """Without mpiexec: a world of one; errors before init and for a missing NCCL."""
    try:
        dist.get_rank()
        check(False, "get_rank before init")
    except ValueError as e:
        assert "Default process group has not been initialized" in str(e)
    try:
        dist.init_process_group(backend="bogus")
        check(False, "an unknown backend")
    except AssertionError as e:  # (PyTorch's type and words)
        assert str(e) == "Unknown backend type bogus", str(e)
    dist.init_process_group(timeout=5)
    assert dist.get_world_size() == 1 and dist.get_rank() == 0
    t = minigrad.ones(3)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert np.array_equal(t.numpy(), np.ones(3))
    # a collective inside a compiled function runs it eagerly, said once (a replay would not communicate)
    averaged = minigrad.compile(lambda x: dist.all_reduce(x, op=dist.ReduceOp.SUM) or x * 2)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        for _ in range(3):
            assert np.array_equal(averaged(minigrad.ones(3)).numpy(), np.full(3, 2.0))
    assert averaged.stats.replays == 0 and any("a collective (all_reduce)" in str(w.message) for w in said)
    model = nn.Linear(2, 2)
    ddp = DistributedDataParallel(model)
    ddp(minigrad.ones(1, 2)).sum().backward()
    assert np.array_equal(model.weight.grad.numpy(), np.ones((2, 2)))
    dist.destroy_process_group()
    assert not dist.is_initialized()
    if not dist.is_nccl_available():
        try:
            dist.init_process_group(backend="nccl")
            check(False, "nccl without cupy")
        except RuntimeError as e:
            assert str(e) == "Distributed package doesn't have NCCL built in", str(e)
        assert not dist.is_initialized()
    with open(os.path.join(out, "ok_0"), "w") as f:
        f.write("ok")


def load_into_ddp(out, ckpt_path):
    """A checkpoint's model (from any number of ranks) loads into a DDP-wrapped GPT on every rank."""
    dist.init_process_group(timeout=30)
    ckpt = nn.load(ckpt_path)
    args = {k: v for k, v in ckpt["model_args"].items()}
    ddp = DistributedDataParallel(GPT(GPTConfig(**args)))
    ddp.load_state_dict(ckpt["model"])
    for k, v in ddp.module.state_dict().items():
        check(np.array_equal(v.numpy(), ckpt["model"][k].numpy()), k)
    with open(os.path.join(out, f"ok_{dist.get_rank()}"), "w") as f:
        f.write("ok")


def fake_nccl(out):
    """backend="nccl" without a GPU: a stand-in for cupy.cuda.nccl records what the backend asks of
    it: rank 0's unique id must reach every rank over MPI, and each rank build its communicator
    with (world size, that id, its rank)."""
    import types

    from minigrad.distributed import _nccl

    made = []
    nccl = types.SimpleNamespace(
        get_unique_id=lambda: tuple(range(100 + dist.get_rank(), 228 + dist.get_rank())),  # differs per rank
        NcclCommunicator=lambda n, uid, rank: made.append((n, uid, rank)) or types.SimpleNamespace(destroy=lambda: None),
        NCCL_SUM=0, NCCL_PROD=1, NCCL_MAX=2, NCCL_MIN=3, NCCL_AVG=4, NCCL_FLOAT32=7, NCCL_FLOAT64=8, NCCL_INT64=5)
    cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(Stream=lambda non_blocking: None))
    _nccl._module = lambda: (cupy, nccl)
    dist.init_process_group(backend="nccl", timeout=20)
    rank, world = dist.get_rank(), dist.get_world_size()
    check(made == [(world, tuple(range(100, 228)), rank)], f"communicator built with {made}")
    check(dist.get_backend() == "nccl", "backend")
    check([_nccl.nccl_op(nccl, op) for op in dist.ReduceOp] == [0, 4, 1, 3, 2], "ops")
    check(_nccl.nccl_dtype(nccl, np.dtype("float32")) == 7, "dtype")
    try:
        _nccl.nccl_dtype(nccl, np.dtype("complex64"))
        check(False, "complex64")
    except TypeError as e:
        check("NCCL has no data type for complex64" in str(e), str(e))
    t = minigrad.ones(2)  # CPU tensors still travel over MPI
    dist.all_reduce(t)
    check(np.array_equal(t.numpy(), np.full(2, float(world))), "cpu tensor under nccl")
    dist.destroy_process_group()
    with open(os.path.join(out, f"ok_{rank}"), "w") as f:
        f.write("ok")


def train_differing(out, *argv):
    """train.py where rank 1 was given another n_layer."""
    from gpt import trainer

    rank = int(os.environ.get("PMI_RANK", 0))
    sys.exit(trainer.main(list(argv) + (["--n_layer=3"] if rank == 1 else [])))


def train_raising(out, *argv):
    """train.py where rank 1's fourth training step raises."""
    from gpt import trainer

    step = trainer.Trainer.train_step

    def failing(self, lr):
        if self.dist.rank == 1 and self.iter_num == 3:
            raise trainer.TrainError("injected fault at iteration 3")
        return step(self, lr)

    trainer.Trainer.train_step = failing
    sys.exit(trainer.main(list(argv)))


def raising_while_another_waits(out):
    """A user's own script: rank 1 raises while rank 0 waits in all_reduce (the default timeout,
    30 minutes, is far away: only the uncaught exception can end the job)."""
    dist.init_process_group()
    if dist.get_rank() == 1:
        raise ValueError("a bug in rank 1's own code")
    dist.all_reduce(minigrad.ones(3))
    open(os.path.join(out, "rank0_went_on"), "w").close()


if __name__ == "__main__":
    globals()[sys.argv[1]](*sys.argv[2:])
