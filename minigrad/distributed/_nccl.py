"""NCCL through cupy.cuda.nccl: the collectives on CUDA arrays, one GPU per process.

Rank 0 makes NCCL's unique id and MPI broadcasts it; every rank then builds its communicator
from (world size, id, rank). NCCL runs on a stream of its own that first waits for the work
queued so far on the current stream (the gradient being reduced is computed there), and the
current stream waits for NCCL's result when the Work is waited on. A wait polls an event, so
the group's timeout holds here too; on a timeout the communicator is aborted.
"""
import time

from . import DistBackendError, ReduceOp, Work


def _module():
    try:
        import cupy
        from cupy.cuda import nccl
    except Exception:  # no cupy, or one without NCCL (pip install -e '.[cuda12,mpi]'): PyTorch's words
        raise RuntimeError("Distributed package doesn't have NCCL built in") from None
    return cupy, nccl


def nccl_op(nccl, op):
    """NCCL's reduction for a ReduceOp (AVG is NCCL's own ncclAvg, NCCL >= 2.10)."""
    return {ReduceOp.SUM: nccl.NCCL_SUM, ReduceOp.PRODUCT: nccl.NCCL_PROD, ReduceOp.MIN: nccl.NCCL_MIN,
            ReduceOp.MAX: nccl.NCCL_MAX, ReduceOp.AVG: getattr(nccl, "NCCL_AVG", 4)}[op]


def nccl_dtype(nccl, dtype):
    """NCCL's data type for a numpy/cupy dtype; a TypeError names one it has not."""
    table = {"float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64", "float16": "NCCL_FLOAT16",
             "int32": "NCCL_INT32", "int64": "NCCL_INT64", "uint8": "NCCL_UINT8", "int8": "NCCL_INT8",
             "uint32": "NCCL_UINT32", "uint64": "NCCL_UINT64"}
    name = table.get(str(dtype))
    if name is None:
        raise TypeError(f"NCCL has no data type for {dtype}")
    return getattr(nccl, name)


class NcclComm:
    def __init__(self, group, device_id=None):
        cupy, nccl = _module()
        self.cupy, self.nccl, self.group = cupy, nccl, group
        if device_id is not None:
            cupy.cuda.Device(getattr(device_id, "index", device_id)).use()
        uid = [list(nccl.get_unique_id())] if group.rank == 0 else [None]
        uid = group.exchange(uid[0], "init_process_group (NCCL's unique id)")[0]  # MPI carries rank 0's id
        self.comm = nccl.NcclCommunicator(group.size, tuple(uid), group.rank)
        self.stream = cupy.cuda.Stream(non_blocking=True)

    def _launch(self, what, call):
        cp = self.cupy
        current = cp.cuda.get_current_stream()
        ready = cp.cuda.Event(disable_timing=True)
        ready.record(current)
        self.stream.wait_event(ready)
        call(self.stream.ptr)
        done = cp.cuda.Event(disable_timing=True)
        done.record(self.stream)
        work = Work(self.group, [], what, finish=lambda: current.wait_event(done), poll=done.query)
        work.event = done
        return work

    def all_reduce(self, a, op):
        dt, count, op_ = nccl_dtype(self.nccl, a.dtype), a.size, nccl_op(self.nccl, op)
        return self._launch("all_reduce", lambda s: self.comm.allReduce(a.data.ptr, a.data.ptr, count, dt, op_, s))

    def broadcast(self, a, src):
        dt = nccl_dtype(self.nccl, a.dtype)
        return self._launch("broadcast", lambda s: self.comm.bcast(a.data.ptr, a.size, dt, src, s))

    def all_gather(self, outs, a):
        cp = self.cupy
        dt = nccl_dtype(self.nccl, a.dtype)
        src = cp.ascontiguousarray(a)
        recv = cp.empty((len(outs),) + a.shape, dtype=a.dtype)
        work = self._launch("all_gather", lambda s: self.comm.allGather(src.data.ptr, recv.data.ptr, a.size, dt, s))
        inner = work.finish

        def finish():
            inner()
            for o, part in zip(outs, recv):
                o[...] = part

        work.finish = finish
        return work

    def wait(self, work, timeout=None):
        g = self.group
        limit = g.timeout if timeout is None else timeout
        start = time.monotonic()
        while not work.event.query():
            now = time.monotonic()
            g.check_peers(now)
            if now - start > limit:
                self.comm.abort()
                g.broken = DistBackendError(
                    f"rank {g.rank}: {work.what} (NCCL) timed out after {limit:g} s waiting for the other ranks")
                raise g.broken
            time.sleep(1e-4)

    def destroy(self):
        self.comm.destroy()
