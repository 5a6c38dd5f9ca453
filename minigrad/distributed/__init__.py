"""Collectives between processes, with PyTorch's names: `torch.distributed` for minigrad.

    mpiexec -n 2 python script.py          # every process runs the same script

    import minigrad.distributed as dist
    dist.init_process_group()              # MPI's world: rank and size come from the launcher
    t = minigrad.ones(3) * dist.get_rank()
    dist.all_reduce(t)                     # t is now the sum over the ranks, on every rank

Two engines carry the data, neither of them ours: MPI (through mpi4py) for CPU arrays, on one
machine or many, and NCCL (through cupy.cuda.nccl) for GPU arrays, one GPU per process; NCCL's
communicator is set up with a unique id that rank 0 makes and MPI broadcasts. `backend=None`
takes MPI for CPU tensors and NCCL for CUDA ones; `backend="mpi"` carries CUDA tensors over MPI
through host memory.

Every collective is non-blocking underneath: `async_op=True` returns a `Work` whose `.wait()`
finishes it; otherwise the call waits itself. A wait never hangs for ever: it gives up after the
group's timeout (`init_process_group(timeout=...)`) with a DistBackendError, and it ends at once
when a process on this machine that belongs to the group has died, or when another rank has
called `abort(reason)`, naming that rank. The waits poll (MPI moves data only inside its calls):
`progress()` lets the pending ones move while the caller computes.
"""
import json
import os
import socket
import sys
import time
import warnings
from datetime import timedelta
from enum import Enum

import numpy as np

from ..autograd import recording
from ..futures import Future

__all__ = [
    "ReduceOp", "Work", "DistError", "DistBackendError", "init_process_group", "destroy_process_group",
    "is_available", "is_initialized", "is_mpi_available", "is_nccl_available", "get_backend", "get_rank",
    "get_world_size", "get_node_local_rank", "all_reduce", "broadcast", "all_gather", "barrier",
    "all_gather_object", "broadcast_object_list", "abort", "progress", "dead_local_peers", "all_gather_into_tensor",
    "reduce_scatter_tensor", "reduce", "gather", "scatter", "all_to_all_single", "monitored_barrier", "new_group",
    "ProcessGroup", "GroupMember", "group", "is_torchelastic_launched", "is_gloo_available", "GradBucket",
]

INSTALL_HINT = "minigrad.distributed needs mpi4py and an MPI library: pip install -e '.[mpi]'"
NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
DEFAULT_TIMEOUT = timedelta(minutes=30)  # PyTorch's default for its CPU backends
_FAULT_TAG = 7  # on the control communicator: "this rank failed", with the reason as text
_ACK_TAG = 8  # the answer: "seen", so that the failed rank may end (the launcher then ends the rest)


class DistError(RuntimeError):
    """A collective failed (PyTorch's torch.distributed.DistError)."""


class DistBackendError(DistError):
    """The engine under a collective failed: a timeout, a rank that died or aborted."""


class ReduceOp(Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


def is_mpi_available():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_nccl_available():
    try:
        from cupy.cuda import nccl  # noqa: F401
    except Exception:  # no cupy, or a cupy built without NCCL
        return False
    return True


is_available = is_mpi_available


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError:
        raise RuntimeError(INSTALL_HINT) from None
    return MPI


class _Group:
    """The default process group: MPI's world, its control channel, and NCCL's communicator once made."""

    def __init__(self, backend, timeout):
        MPI = _mpi()
        self.MPI = MPI
        self.backend = backend
        self.timeout = timeout
        self.comm = MPI.COMM_WORLD.Dup()  # our own: a user's MPI traffic never mixes with ours
        self.ctl = MPI.COMM_WORLD.Dup()  # fault notices travel here, outside the collectives' order
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank, self.local_size = node.Get_rank(), node.Get_size()
        node.Free()
        self.broken = None  # the error every later call raises, once a peer failed
        self.pending = []  # outstanding Work, for progress()
        self.nccl = None
        self.next_check = self.next_pid_check = 0.0
        self.local_peers = []
        host = socket.gethostname()
        self.peers = self.exchange((host, os.getpid()), "init_process_group")
        self.local_peers = [(r, pid) for r, (h, pid) in enumerate(self.peers) if h == host and r != self.rank]

    # ---- waiting ----
    def wait(self, reqs, what, timeout=None):
        """Complete MPI requests, watching the timeout, dead local peers and fault notices."""
        Testall = self.MPI.Request.Testall
        limit = self.timeout if timeout is None else timeout
        start = time.monotonic()
        pause = 0.0
        while True:
            if Testall(reqs):
                return
            now = time.monotonic()
            try:
                self.check_peers(now)
            except DistBackendError:
                # a peer that did its part of this operation may have ended on purpose meanwhile (an
                # error every rank met): what it sent is here, so the operation still completes
                deadline = now + 1.0
                while time.monotonic() < deadline:
                    if Testall(reqs):
                        return  # the group stays broken: the next operation raises
                    time.sleep(0.001)
                raise
            if now - start > limit:
                for r in reqs:
                    try:
                        r.Cancel()
                    except Exception:  # collectives cannot be cancelled in every MPI: the process ends anyway
                        pass
                self.broken = DistBackendError(
                    f"rank {self.rank}: {what} timed out after {limit:g} s waiting for the other ranks "
                    f"(one stopped, hangs or took another path; init_process_group(timeout=...) sets the limit)")
                raise self.broken
            # poll (yielding the core) through short waits, as MPI's own blocking wait spins: a sleep
            # costs the collective a scheduler tick each time; past 50 ms, sleep a little
            if now - start < 0.05:
                _yield()
            else:
                pause = min(0.001, pause * 2 or 5e-5)
                time.sleep(pause)

    def check_peers(self, now=None, force=False):
        """Raise if a rank on this machine has ended (checked every 5 ms: soon enough to see the
        death before MPI meets the dead peer, which may end this process) or another rank has
        aborted (checked every 0.2 s)."""
        if self.broken is not None:
            raise self.broken
        now = time.monotonic() if now is None else now
        if now >= self.next_pid_check or force:
            self.next_pid_check = now + 0.005
            for r, pid in self.local_peers:
                if not _alive(pid):
                    self.broken = DistBackendError(f"rank {r} (pid {pid}) died")
                    raise self.broken
        if now < self.next_check and not force:
            return
        self.next_check = now + 0.2
        status = self.MPI.Status()
        if self.ctl.Iprobe(source=self.MPI.ANY_SOURCE, tag=_FAULT_TAG, status=status):
            buf = bytearray(status.Get_count(self.MPI.BYTE))
            self.ctl.Recv([buf, self.MPI.BYTE], source=status.Get_source(), tag=_FAULT_TAG)
            self.ctl.Isend([bytearray(1), self.MPI.BYTE], dest=status.Get_source(), tag=_ACK_TAG)
            self.broken = DistBackendError(f"rank {status.Get_source()} failed: {buf.decode(errors='replace')}")
            raise self.broken

    def exchange(self, obj, what, comm=None):
        """Every rank's JSON-serialisable `obj`, in rank order (all_gather_object's engine)."""
        comm = self.comm if comm is None else comm
        data = np.frombuffer(json.dumps(obj).encode(), dtype=np.uint8)
        mine, sizes = np.array([data.size], dtype=np.int64), np.zeros(comm.Get_size(), dtype=np.int64)
        self.wait([comm.Iallgather(mine, sizes)], what)
        out = np.empty(int(sizes.sum()), dtype=np.uint8)
        self.wait([comm.Iallgatherv(data, [out, sizes.tolist()])], what)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        return [json.loads(out[offsets[i]:offsets[i + 1]].tobytes()) for i in range(len(sizes))]


_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def _alive(pid):
    """Whether process `pid` still runs (a zombie has ended: its parent has not reaped it yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:  # no /proc (not Linux)
        return True


_group = None


def _default():
    if _group is None:
        raise ValueError(NOT_INITIALIZED)
    if _group.broken is not None:
        raise _group.broken
    return _group


def _seconds(timeout):
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    if not seconds > 0:  # float("inf"): no limit
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return seconds


_BACKENDS = (None, "mpi", "gloo", "nccl")  # gloo: PyTorch's CPU backend; MPI carries CPU tensors here
_INIT_METHODS = ("env://", "tcp://", "file://", "mpi://")  # the address is not used: MPI's launcher joins the ranks


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the processes that the launcher (mpiexec) started into the default group.

    backend: None (MPI for CPU tensors, NCCL for CUDA ones), "mpi" or "gloo" (MPI), or "nccl" (NCCL
    made now, on `device_id` or cupy's current device). timeout: a timedelta or seconds: how long
    any collective waits for the others. world_size and rank (the arguments, else the environment's
    WORLD_SIZE and RANK that torchrun-style scripts set), when given, must agree with the launcher's."""
    global _group
    if _group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if isinstance(backend, str):
        backend = backend.lower()
    if backend not in _BACKENDS:
        raise AssertionError(f"Unknown backend type {backend}")  # (PyTorch's type and words)
    if init_method is not None and not init_method.startswith(_INIT_METHODS):
        raise ValueError(f"init_method {init_method!r}: the processes find each other through MPI's launcher (mpiexec)")
    seconds = _seconds(timeout)
    group = _Group(backend, seconds)
    for name, given, actual in (("world_size", world_size, group.size), ("rank", rank, group.rank)):
        source = "given"
        if given in (-1, None) and os.environ.get(name.upper(), "") != "":
            given, source = int(os.environ[name.upper()]), f"{name.upper()} in the environment"
        if given not in (-1, None) and given != actual:
            group.comm.Free()
            group.ctl.Free()
            raise ValueError(f"{name}={given} ({source}) differs from the launcher's {actual} (mpiexec -n sets "
                             "the world; python -m minigrad.distributed.run sets RANK and WORLD_SIZE from it)")
    _group = group
    _abort_on_uncaught_exceptions()
    if backend == "nccl":
        try:
            _nccl_comm(group, device_id)
        except BaseException:
            _group = None
            raise


def _abort_on_uncaught_exceptions():
    """While the group is up, an exception nothing caught ends the whole job (as `python -m mpi4py`
    does): its traceback, the other ranks told, then MPI_Abort. Without it a rank that raised
    leaves the others waiting in a collective until their timeout (30 minutes by default)."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        g = _group
        if g is None or g.size == 1:
            return
        if not isinstance(value, DistBackendError):  # (a rank that failed because another did tells nobody)
            abort(f"{kind.__name__}: {value}".splitlines()[0], grace=2.0)
        sys.stderr.flush()
        g.MPI.COMM_WORLD.Abort(1)

    hook.previous = previous
    sys.excepthook = hook


def destroy_process_group():
    """Leave the default group (MPI itself stays up until the process ends)."""
    global _group
    g, _group = _group, None
    if g is None:
        return
    previous = getattr(sys.excepthook, "previous", None)
    if previous is not None:
        sys.excepthook = previous
    if g.nccl is not None:
        g.nccl.destroy()
    if g.broken is None:  # a broken group's communicators may have operations that never end
        g.comm.Free()
        g.ctl.Free()


def is_initialized():
    return _group is not None


def get_backend(group=None):
    g = _default()
    return (g.backend or "mpi") if group is None else group.backend  # (gloo and mpi: the same engine, MPI)


def get_rank(group=None):
    """This process's rank in `group` (None: the world); -1 when it is not in the group."""
    g = _default()
    return g.rank if group is None else group.rank


def get_world_size(group=None):
    g = _default()
    return g.size if group is None else group.size


def is_torchelastic_launched():
    """Whether torchrun (here: python -m minigrad.distributed.run) started this process."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_gloo_available():
    return is_mpi_available()  # "gloo" is carried by MPI here


class ProcessGroup:
    """Some of the world's ranks (new_group): an MPI communicator of their own. `ranks` are global ranks."""

    def __init__(self, comm, ranks, backend):
        self.comm, self.ranks, self.backend = comm, ranks, backend or "mpi"
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    def __repr__(self):
        return f"ProcessGroup(ranks={self.ranks})"


class _NonMember:
    """What new_group returns on a rank outside the group (PyTorch's GroupMember.NON_GROUP_MEMBER)."""
    rank = size = -1
    backend = None


_NON_MEMBER = _NonMember()


class GroupMember:
    WORLD = None  # the default group: None stands for it in every call
    NON_GROUP_MEMBER = _NON_MEMBER


group = GroupMember  # dist.group.WORLD


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of `ranks` (global ranks; None: all). Every rank of the world calls it, members or not."""
    g = _default()
    ranks = sorted(range(g.size) if ranks is None else set(ranks))
    for r in ranks:
        if not 0 <= r < g.size:
            raise ValueError(f"Invalid rank {r}, rank should be in the interval [0, {g.size - 1}]")
    comm = g.comm.Split(0 if g.rank in ranks else g.MPI.UNDEFINED, key=g.rank)
    if comm == g.MPI.COMM_NULL:
        return _NON_MEMBER
    return ProcessGroup(comm, ranks, backend)


def _comm(group, name):
    """(the default group, the communicator of `group`, this rank in it, its size, its global ranks);
    None when this rank is outside `group` (PyTorch then warns and does nothing)."""
    g = _default()
    if group is None:
        return g, g.comm, g.rank, g.size, range(g.size)
    if group is _NON_MEMBER:
        warnings.warn(f"Running {name} on global rank {g.rank} which does not belong to the given group.", stacklevel=3)
        return None
    return g, group.comm, group.rank, group.size, group.ranks


def _collective(group, name):
    """_comm for a collective on tensors, which a minigrad.compile capture cannot record."""
    _not_in_a_capture(name)
    return _comm(group, name)


def _group_rank(ranks, r, what):
    """The rank in the group of global rank `r` (src and dst are global ranks, as PyTorch's)."""
    if r not in ranks:
        raise ValueError(f"Invalid {what} rank {r}: the group has ranks {list(ranks)}")
    return list(ranks).index(r)


def get_node_local_rank():
    """This process's rank among the group's processes on this machine (e.g. its GPU index)."""
    return _default().local_rank


class Work:
    """A collective in flight: `.wait()` finishes it (and writes the result into the tensor)."""

    def __init__(self, group, reqs, what, finish=None, poll=None):
        self.group, self.reqs, self.what, self.finish, self.poll = group, reqs, what, finish, poll
        self.done = False
        self.outputs = []
        group.pending.append(self)

    def is_completed(self):
        if self.done:
            return True
        if self.poll is not None:
            return self.poll()
        return self.group.MPI.Request.Testall(self.reqs)

    def wait(self, timeout=None):
        """Block until done (at most the group's timeout, or `timeout` seconds); returns True."""
        if self.done:
            return True
        g = self.group
        try:
            if self.poll is not None:
                g.nccl.wait(self, timeout)
            else:
                g.wait(self.reqs, self.what, None if timeout is None else _seconds(timeout))
        finally:
            if self in g.pending:
                g.pending.remove(self)
        self.done = True
        if self.finish is not None:
            self.finish()
        return True

    def get_future(self):
        """A Future completed with the collective's output tensors (a list: [tensor] for all_reduce),
        as PyTorch's; waiting on it (or on a Future chained to it by then()) finishes the collective."""
        fut = Future()

        def finish():
            if fut._completed():
                return
            try:
                self.wait()
            except Exception as e:
                fut.set_exception(e)
                return
            fut.set_result(self.outputs)

        fut._drive = (self.is_completed, finish)
        if self.done:
            finish()
        return fut


class GradBucket:
    """What a DistributedDataParallel communication hook receives (`hook(state, bucket)`): one bucket of
    gradients, flattened into one 1-D buffer in the order of `parameters()`."""

    def __init__(self, index, buffer, parameters, offsets, is_last):
        self._index, self._buffer, self._parameters = index, buffer, parameters
        self._offsets, self._is_last = offsets, is_last

    def index(self):
        return self._index

    def buffer(self):
        """The flat gradients (a hook may change it in place, or replace it with set_buffer)."""
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def gradients(self):
        """Each parameter's gradient: views of the buffer, in the parameters' shapes."""
        return [self._buffer[lo:hi].view(p.shape) for p, lo, hi in
                zip(self._parameters, self._offsets, self._offsets[1:])]

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        """Whether this is the last bucket of the backward (the first parameters' gradients)."""
        return self._is_last


def progress():
    """Let pending collectives move on (MPI progresses only inside its calls); raises if a peer failed."""
    g = _group
    if g is None or not g.pending:
        return
    g.check_peers()
    for w in g.pending:
        w.is_completed()


def dead_local_peers():
    """[(rank, pid)] of the group's processes on this machine that have ended (no MPI call: safe
    from any thread, and before touching MPI, which may take this process down with a dead peer)."""
    g = _default()
    return [(r, pid) for r, pid in g.local_peers if not _alive(pid)]


def _nccl_comm(group, device_id=None):
    if group.nccl is None:
        from ._nccl import NcclComm

        group.nccl = NcclComm(group, device_id)
    return group.nccl


def _array(tensor, what):
    from ..tensor import Tensor

    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(tensor).__name__}")
    return tensor.array


def _is_cuda(a):
    return type(a).__module__.startswith("cupy")


def _use_nccl(group, a):
    return _is_cuda(a) and group.backend != "mpi"


def _host(a):
    """(a contiguous host array for MPI, a function that writes it back into `a` if it is a copy)."""
    if _is_cuda(a):
        h = a.get()
        return h, lambda: a.set(h)
    if a.flags.c_contiguous and a.flags.writeable:
        return a, None
    h = np.ascontiguousarray(a)
    return h, lambda: np.copyto(a, h)


def _then(*steps):
    steps = [s for s in steps if s is not None]
    return (lambda: [s() for s in steps]) if steps else None


def _handle(work, async_op, outputs=()):
    work.outputs = list(outputs)  # what its Future holds (get_future)
    if async_op:
        return work
    work.wait()
    return None


def _mpi_op(MPI, op):
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}[op]


def _check_op(op, a):
    if not isinstance(op, ReduceOp):
        raise ValueError(f"op must be a ReduceOp, got {op!r}")
    if op is ReduceOp.AVG and a.dtype.kind not in "fc":
        raise ValueError(f"ReduceOp.AVG needs a floating-point tensor, got {a.dtype}")


def _not_in_a_capture(name):
    """A collective writes its tensors' arrays, outside any op: a minigrad.compile replay would skip it."""
    recording.escape(f"a collective ({name})", "a replay would not communicate; call it outside the compiled "
                     "function (DistributedDataParallel does, in its backward hooks)")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` over the ranks, in place, on every rank (AVG: the sum / world size)."""
    c = _collective(group, "all_reduce")
    if c is None:
        return None
    g, comm, _, size, _ = c
    a = _array(tensor, "all_reduce")
    _check_op(op, a)
    tensor._bump_version()
    if group is None and _use_nccl(g, a):
        return _handle(_nccl_comm(g).all_reduce(a, op), async_op, [tensor])
    h, back = _host(a)
    req = comm.Iallreduce(g.MPI.IN_PLACE, h, op=_mpi_op(g.MPI, op))
    average = (lambda: np.divide(h, size, out=h)) if op is ReduceOp.AVG else None
    return _handle(Work(g, [req], "all_reduce", _then(average, back)), async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank `src`'s `tensor` into every other rank's, in place."""
    c = _collective(group, "broadcast")
    if c is None:
        return None
    g, comm, _, size, ranks = c
    a = _array(tensor, "broadcast")
    if src is None or not 0 <= src < g.size:
        raise ValueError(f"Invalid src rank {src}: the world has ranks 0 to {g.size - 1}")
    root = _group_rank(ranks, src, "src") if group_src is None else group_src
    tensor._bump_version()
    if group is None and _use_nccl(g, a):
        return _handle(_nccl_comm(g).broadcast(a, src), async_op, [tensor])
    h, back = _host(a)
    req = comm.Ibcast(h, root=root)
    return _handle(Work(g, [req], "broadcast", back), async_op, [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill `tensor_list[r]` with rank r's `tensor`, on every rank."""
    c = _collective(group, "all_gather")
    if c is None:
        return None
    g, comm, _, size, _ = c
    a = _array(tensor, "all_gather")
    if len(tensor_list) != size:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors for a world of {size}")
    for i, t in enumerate(tensor_list):
        _same(t, a, f"all_gather: tensor_list[{i}]")
    for t in tensor_list:
        t._bump_version()
    if group is None and _use_nccl(g, a):
        return _handle(_nccl_comm(g).all_gather([t.array for t in tensor_list], a), async_op, [tensor_list])
    send = _sendable(a)
    recv = np.empty((size,) + send.shape, dtype=send.dtype)
    req = comm.Iallgather(send, recv)

    def finish():
        for t, part in zip(tensor_list, recv):
            t.array[...] = _to_like(t.array, part)

    return _handle(Work(g, [req], "all_gather", finish), async_op, [tensor_list])


def _same(t, a, what, shape=None):
    b = _array(t, what)
    shape = a.shape if shape is None else shape
    if b.shape != shape or b.dtype != a.dtype:
        raise ValueError(f"{what} is {tuple(b.shape)} {b.dtype}, the input is {tuple(shape)} {a.dtype}")
    return b


def _sendable(a):
    return np.ascontiguousarray(a.get() if _is_cuda(a) else a)


def _into(tensor, result):
    """Write the host array `result` into `tensor` (a step of a Work's finish)."""
    def write():
        tensor.array[...] = _to_like(tensor.array, result.reshape(tensor.array.shape))
    tensor._bump_version()
    return write


def _mpi_only(g, group, a, name):
    if _is_cuda(a) and g.backend == "nccl":
        raise NotImplementedError(f"{name} of CUDA tensors: NCCL here has all_reduce, broadcast and all_gather")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """`output_tensor` = every rank's `input_tensor`, in rank order: concatenated along dim 0, or stacked."""
    c = _collective(group, "all_gather_into_tensor")
    if c is None:
        return None
    g, comm, _, size, _ = c
    a, out = _array(input_tensor, "all_gather_into_tensor"), _array(output_tensor, "all_gather_into_tensor")
    _mpi_only(g, group, a, "all_gather_into_tensor")
    if out.dtype != a.dtype:
        raise ValueError(f"all_gather_into_tensor: the output is {out.dtype}, the input {a.dtype}")
    if out.size != size * a.size:
        raise ValueError(f"output tensor size must be equal to world_size times input tensor size "
                         f"({tuple(out.shape)} for {size} ranks of {tuple(a.shape)})")
    recv = np.empty(out.size, dtype=out.dtype)
    req = comm.Iallgather(_sendable(a), recv)
    return _handle(Work(g, [req], "all_gather_into_tensor", _into(output_tensor, recv)), async_op, [output_tensor])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `input` over the ranks and give rank r the r-th of its world-size equal parts along dim 0."""
    c = _collective(group, "reduce_scatter_tensor")
    if c is None:
        return None
    g, comm, _, size, _ = c
    a, out = _array(input, "reduce_scatter_tensor"), _array(output, "reduce_scatter_tensor")
    _check_op(op, a)
    _mpi_only(g, group, a, "reduce_scatter_tensor")
    if out.dtype != a.dtype:
        raise ValueError(f"reduce_scatter_tensor: the output is {out.dtype}, the input {a.dtype}")
    if a.size != size * out.size:
        raise ValueError(f"input tensor must be the same size as output size times world size "
                         f"({tuple(a.shape)} for {size} ranks of {tuple(out.shape)})")
    recv = np.empty(out.size, dtype=out.dtype)
    req = comm.Ireduce_scatter_block(_sendable(a), recv, op=_mpi_op(g.MPI, op))
    average = (lambda: np.divide(recv, size, out=recv)) if op is ReduceOp.AVG else None
    return _handle(Work(g, [req], "reduce_scatter_tensor", _then(average, _into(output, recv))), async_op, [output])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` over the ranks into rank `dst`'s (the others' are left as they are)."""
    c = _collective(group, "reduce")
    if c is None:
        return None
    g, comm, rank, size, ranks = c
    a = _array(tensor, "reduce")
    _check_op(op, a)
    _mpi_only(g, group, a, "reduce")
    root = _group_rank(ranks, dst, "dst") if group_dst is None else group_dst
    send = _sendable(a)
    recv = np.empty_like(send) if rank == root else None
    req = comm.Ireduce(send, recv, op=_mpi_op(g.MPI, op), root=root)
    finish = None
    if rank == root:
        average = (lambda: np.divide(recv, size, out=recv)) if op is ReduceOp.AVG else None
        finish = _then(average, _into(tensor, recv))
    return _handle(Work(g, [req], "reduce", finish), async_op, [tensor])


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False, group_dst=None):
    """Rank `dst`'s `gather_list[r]` = rank r's `tensor` (the other ranks pass no list)."""
    c = _collective(group, "gather")
    if c is None:
        return None
    g, comm, rank, size, ranks = c
    a = _array(tensor, "gather")
    _mpi_only(g, group, a, "gather")
    root = _group_rank(ranks, dst, "dst") if group_dst is None else group_dst
    if rank == root:
        if gather_list is None or len(gather_list) != size:
            raise ValueError(f"Argument ``gather_list`` must be specified on destination rank ({size} tensors)")
        for i, t in enumerate(gather_list):
            _same(t, a, f"gather: gather_list[{i}]")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    recv = np.empty((size,) + a.shape, dtype=a.dtype) if rank == root else None
    req = comm.Igather(_sendable(a), recv, root=root)
    finish = _then(*(_into(t, part) for t, part in zip(gather_list, recv))) if rank == root else None
    return _handle(Work(g, [req], "gather", finish), async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False, group_src=None):
    """`tensor` = rank `src`'s `scatter_list[r]` on rank r (the other ranks pass no list)."""
    c = _collective(group, "scatter")
    if c is None:
        return None
    g, comm, rank, size, ranks = c
    a = _array(tensor, "scatter")
    _mpi_only(g, group, a, "scatter")
    root = _group_rank(ranks, src, "src") if group_src is None else group_src
    send = None
    if rank == root:
        if scatter_list is None or len(scatter_list) != size:
            raise ValueError(f"Argument ``scatter_list`` must be specified on source rank ({size} tensors)")
        send = np.stack([_sendable(_same(t, a, f"scatter: scatter_list[{i}]")) for i, t in enumerate(scatter_list)])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    recv = np.empty(a.shape, dtype=a.dtype)
    req = comm.Iscatter(send, recv, root=root)
    return _handle(Work(g, [req], "scatter", _into(tensor, recv)), async_op, [tensor])


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """Rank r's `input` is cut along dim 0 (equal parts, or `input_split_sizes` rows each); part j goes to
    rank j, whose `output` holds, in rank order, the parts it was sent."""
    c = _collective(group, "all_to_all_single")
    if c is None:
        return None
    g, comm, _, size, _ = c
    a, out = _array(input, "all_to_all_single"), _array(output, "all_to_all_single")
    _mpi_only(g, group, a, "all_to_all_single")
    if out.dtype != a.dtype:
        raise ValueError(f"all_to_all_single: the output is {out.dtype}, the input {a.dtype}")

    def counts(arr, splits, what):
        row = arr.size // arr.shape[0] if arr.ndim and arr.shape[0] else 0
        if not splits:
            if arr.ndim == 0 or arr.shape[0] % size:
                raise ValueError(f"all_to_all_single: the {what}'s dim 0 ({arr.shape[0] if arr.ndim else 0}) "
                                 f"does not split into {size} equal parts")
            splits = [arr.shape[0] // size] * size
        if len(splits) != size or sum(splits) != (arr.shape[0] if arr.ndim else 0):
            raise ValueError(f"all_to_all_single: {what} split sizes {list(splits)} do not cut dim 0 "
                             f"({arr.shape[0] if arr.ndim else 0}) into {size} parts")
        return [int(s) * row for s in splits]

    send_counts, recv_counts = counts(a, input_split_sizes, "input"), counts(out, output_split_sizes, "output")
    send, recv = _sendable(a).reshape(-1), np.empty(out.size, dtype=out.dtype)
    displ = (lambda cs: np.concatenate([[0], np.cumsum(cs)[:-1]]).astype(int).tolist())
    req = comm.Ialltoallv([send, (send_counts, displ(send_counts))], [recv, (recv_counts, displ(recv_counts))])
    return _handle(Work(g, [req], "all_to_all_single", _into(output, recv)), async_op, [output])


def _to_like(dst, part):
    if _is_cuda(dst):
        import cupy

        return cupy.asarray(part)
    return part


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank has reached its barrier."""
    c = _comm(group, "barrier")
    if c is None:
        return None
    g, comm = c[:2]
    return _handle(Work(g, [comm.Ibarrier()], "barrier"), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that gives up after `timeout` (default: the group's) with a DistBackendError."""
    c = _comm(group, "monitored_barrier")
    if c is None:
        return None
    g, comm = c[:2]
    g.wait([comm.Ibarrier()], "monitored_barrier", None if timeout is None else _seconds(timeout))


def all_gather_object(object_list, obj, group=None):
    """`object_list[r] = rank r's obj`. Objects travel as JSON (never pickle): dicts, lists, str, numbers."""
    c = _comm(group, "all_gather_object")
    if c is None:
        return None
    g, comm, _, size, _ = c
    if len(object_list) != size:
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries for a world of {size}")
    object_list[:] = g.exchange(obj, "all_gather_object", comm)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace every rank's `object_list` entries with rank `src`'s (JSON-serialisable objects)."""
    c = _comm(group, "broadcast_object_list")
    if c is None:
        return None
    g, comm, rank, _, ranks = c
    root = _group_rank(ranks, 0 if src is None else src, "src") if group_src is None else group_src
    gathered = g.exchange(list(object_list) if rank == root else None, "broadcast_object_list", comm)
    object_list[:] = gathered[root]


def abort(reason, grace=5.0):
    """Tell every other rank that this one failed: their current or next collective raises
    DistBackendError("rank R failed: reason"). Returns once each has answered and those on this
    machine have ended (at most `grace` seconds): the caller then ends its own process, and the
    launcher, seeing a failed process, may end the others before they could say why."""
    g = _group
    if g is None or g.size == 1:
        return
    MPI = g.MPI
    data = bytearray(str(reason).encode())
    others = [r for r in range(g.size) if r != g.rank]
    reqs = [g.ctl.Isend([data, MPI.BYTE], dest=r, tag=_FAULT_TAG) for r in others]
    deadline = time.monotonic() + grace
    answered, status = set(), MPI.Status()
    while time.monotonic() < deadline:
        MPI.Request.Testall(reqs)
        while g.ctl.Iprobe(source=MPI.ANY_SOURCE, tag=_ACK_TAG, status=status):
            src = status.Get_source()
            g.ctl.Recv([bytearray(1), MPI.BYTE], source=src, tag=_ACK_TAG)
            answered.add(src)
        local_left = any(_alive(pid) for _, pid in g.local_peers)
        if len(answered) == len(others) and not local_left:
            break
        time.sleep(0.005)
    g.broken = DistBackendError(f"rank {g.rank} aborted: {reason}")
