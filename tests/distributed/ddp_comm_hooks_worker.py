"""DistributedDataParallel's communication hooks for test_ddp_comm_hooks.py, all in one run:
`mpiexec -n 2 python THIS OUT_DIR`. Each rank trains a small model on its half of a batch that data()
makes the same everywhere, once per hook, and writes the gradients to OUT_DIR/rank_R.npz and what it
saw (bucket metadata, error texts) to OUT_DIR/rank_R.json."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import numpy as np  # noqa: E402

ROWS = 4  # per rank


def data():
    g = np.random.default_rng(7)
    return (g.standard_normal((2 * ROWS, 6)).astype(np.float32),
            g.standard_normal((2 * ROWS, 3)).astype(np.float32))


def model(nn, lib):
    """The same weights everywhere (and in torch: lib is minigrad or torch)."""
    m = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
    g = np.random.default_rng(3)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(g.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


def grads(m):
    return [p.grad.numpy().copy() for p in m.parameters()]


def main(out):
    import minigrad
    import minigrad.distributed as dist
    import nn
    from minigrad.distributed.algorithms.ddp_comm_hooks import default_hooks
    from nn.parallel import DistributedDataParallel

    dist.init_process_group(timeout=60)
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = data()
    x, y = minigrad.tensor(x[rank * ROWS:(rank + 1) * ROWS]), minigrad.tensor(y[rank * ROWS:(rank + 1) * ROWS])
    saved, seen = {}, {}

    def step(ddp):
        ddp.zero_grad(set_to_none=True)
        nn.functional.mse_loss(ddp(x), y).backward()
        return grads(ddp.module)

    def new_ddp():
        return DistributedDataParallel(model(nn, minigrad), bucket_cap_mb=60 / 2 ** 20)  # 60 bytes: 4 buckets

    local = new_ddp()
    nn.functional.mse_loss(local.module(x), y).backward()  # the module alone: this rank's own gradients
    saved["local"] = grads(local.module)

    def doubled(state, bucket):  # the mean, doubled, by a collective's Future and then()
        fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0] / world).then(lambda f: f.value() * 2)

    buckets = []

    def inspecting(state, bucket):
        buckets.append({"state": state, "index": bucket.index(), "is_last": bucket.is_last(),
                        "numel": bucket.buffer().numel(), "shapes": [list(p.shape) for p in bucket.parameters()],
                        "grad_shapes": [list(g.shape) for g in bucket.gradients()],
                        "views_equal": all(np.array_equal(g.numpy().ravel(), p.grad.numpy().ravel())
                                           for g, p in zip(bucket.gradients(), bucket.parameters()))})
        return default_hooks.allreduce_hook(None, bucket)

    cases = {"allreduce": default_hooks.allreduce_hook, "fp16": default_hooks.fp16_compress_hook,
             "bf16": default_hooks.bf16_compress_hook, "doubled": doubled, "inspecting": inspecting,
             "fp16_wrapper": default_hooks.fp16_compress_wrapper(default_hooks.allreduce_hook)}
    for name, hook in cases.items():
        ddp = new_ddp()
        ddp.register_comm_hook("the state" if name == "inspecting" else None, hook)
        saved[name] = step(ddp)
        saved[name + "_2"] = step(ddp)  # a second step: the buckets are reused
    seen["buckets"] = buckets
    ddp = new_ddp()
    saved["default"] = step(ddp)
    ddp.register_comm_hook(None, doubled)  # after a backward: PyTorch allows it
    saved["doubled_later"] = step(ddp)

    def error(register, run=False):
        ddp = new_ddp()
        try:
            register(ddp)
            if run:
                step(ddp)
        except Exception as e:
            return [type(e).__name__, str(e)]
        return None

    def completed(value):
        def hook(state, bucket):
            fut = minigrad.futures.Future()
            fut.set_result(value(bucket))
            return fut
        return hook

    def annotated(state, bucket: int):
        return None

    def returns(state, bucket) -> int:
        return None

    seen["twice"] = error(lambda d: [d.register_comm_hook(None, doubled) for _ in range(2)])
    seen["not_callable"] = error(lambda d: d.register_comm_hook(None, 3))
    seen["bucket_annotation"] = error(lambda d: d.register_comm_hook(None, annotated))
    seen["return_annotation"] = error(lambda d: d.register_comm_hook(None, returns))
    seen["not_a_future"] = error(lambda d: d.register_comm_hook(None, lambda state, bucket: 5), run=True)
    seen["a_list"] = error(lambda d: d.register_comm_hook(None, completed(lambda b: [b.buffer()])), run=True)
    seen["short"] = error(lambda d: d.register_comm_hook(None, completed(lambda b: b.buffer()[:1])), run=True)
    # after those errors the same model still trains (every rank met them alike)
    ddp = new_ddp()
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    saved["after_errors"] = step(ddp)

    # Work.get_future: a Future of the output tensors, completed by waiting on it
    t = minigrad.tensor([1.0, 2.0]) * (rank + 1)
    fut = dist.all_reduce(t, async_op=True).get_future()
    chained = fut.then(lambda f: f.value()[0] + 1)
    value = fut.wait()
    seen["get_future"] = [len(value), value[0] is t, t.tolist(), chained.done(), chained.value().tolist()]

    np.savez(os.path.join(out, f"rank_{rank}.npz"),
             **{f"{k}/{i}": g for k, gs in saved.items() for i, g in enumerate(gs)})
    with open(os.path.join(out, f"rank_{rank}.json"), "w") as f:
        json.dump(seen, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
