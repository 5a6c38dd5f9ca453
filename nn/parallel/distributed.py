"""DistributedDataParallel: the same model on every rank, gradients averaged as backward makes them.

At construction every rank's parameters and buffers become rank 0's (a broadcast), after a check
that all ranks built the same model. The parameters are cut into buckets of about
`bucket_cap_mb` (the first of 1 MiB), in reverse registration order (roughly the order backward produces their
gradients), the same buckets on every rank. A hook after each parameter's gradient accumulation
(`Tensor.register_post_accumulate_grad_hook`) marks it ready; a bucket whose gradients are all
ready is copied into one flat array and its allreduce (AVG) starts, non-blocking, while backward
computes the next ones. Buckets start strictly in order, so every rank issues the same sequence
of collectives. When the last bucket has started, the hook waits for all of them and writes the
averaged gradients back into `.grad`: `loss.backward()` returns with every rank's gradients equal.

`ddp.register_comm_hook(state, hook)` replaces a bucket's allreduce by `hook(state, bucket)`
(bucket: a dist.GradBucket of this rank's gradients, not divided by the world size), which returns a Future
of the bucket's new flat gradients: those are written back, as they are (no averaging).

Inside `with ddp.no_sync():` forwards' backwards only accumulate locally (gradient accumulation);
the first backward of a forward run outside it reduces the sum of everything accumulated.
"""
import contextlib
import inspect
import time

import numpy as np

import minigrad
import minigrad.distributed as dist
from minigrad.device import array_module
from minigrad.distributed.algorithms import Join, JoinHook
from minigrad.futures import Future

from ..module import Module

# as PyTorch: the first bucket (the last layers' gradients, ready first) is small, so that
# communication starts early in backward instead of after a quarter of it
FIRST_BUCKET_BYTES = 2 ** 20
UNUSED = ("Expected to have finished reduction in the prior iteration before starting a new one. This error "
          "indicates that your module has parameters that were not used in producing loss. You can enable unused "
          "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
          "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
          "participate in calculating loss. Parameter indices which did not receive grad for rank {rank}: {indices}")


class _Bucket:
    def __init__(self, index, params):
        self.index, self.params = index, params
        self.sizes = [p.array.size for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).tolist()
        xp = array_module(params[0].array)
        self.flat = xp.empty(self.offsets[-1], dtype=params[0].array.dtype)
        self.left = len(params)
        self.fut = None  # its communication in flight: a Future of the bucket's new flat gradients


class DistributedDataParallel(Module):
    """Wrap `module` for data-parallel training over the default process group.

    module: any nn.Module, built the same way on every rank. bucket_cap_mb: the size of a
    gradient bucket (one allreduce each). broadcast_buffers: rank 0's buffers are copied to
    every rank before each forward. `.module` is the wrapped model; `state_dict()` and
    `load_state_dict()` are the module's, with no "module." prefix, so a checkpoint loads with or
    without the wrapper."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, process_group=None,
                 bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False, gradient_as_bucket_view=False,
                 static_graph=False, **kwargs):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps an nn.Module, got {type(module).__name__}")
        devices = {p.device for p in module.parameters()}
        if device_ids and all(d.type == "cpu" for d in devices):
            raise ValueError(f"DistributedDataParallel device_ids and output_device arguments only work with "
                             f"single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{list(device_ids)}, output_device {output_device}, and module parameters {devices}.")
        if process_group is not None:
            raise NotImplementedError("DistributedDataParallel over a new_group: minigrad's runs over the whole world")
        if not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb!r}")
        self.module = module
        self.world_size = dist.get_world_size()  # ValueError before init_process_group
        self.broadcast_buffers = broadcast_buffers
        self.bucket_cap_mb = bucket_cap_mb
        self.require_backward_grad_sync = True
        # (static_graph and gradient_as_bucket_view are PyTorch's memory and speed options: the results are the same)
        self.find_unused_parameters, self.static_graph = find_unused_parameters, static_graph
        _check_same_model(module)
        self._sync_module_states()
        params = [p for p in module.parameters() if p.requires_grad]
        self._index = {id(p): i for i, p in enumerate(params)}
        self._used = None  # find_unused_parameters: this step's used-anywhere mask, being all-reduced
        self._buckets = self._make_buckets(list(reversed(params)), int(bucket_cap_mb * 2 ** 20),
                                           min(FIRST_BUCKET_BYTES, int(bucket_cap_mb * 2 ** 20)))
        self._where = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._where[id(p)] = (b, i)
        self._handles = [p.register_post_accumulate_grad_hook(self._on_grad) for p in params]
        self._syncing = False  # set by forward: whether the coming backward reduces
        self._marked = set()
        self._next = 0  # the next bucket to start: they start in order on every rank
        self._comm_hook = None  # (hook, state): register_comm_hook's
        self.last_sync = {"launch_s": 0.0, "wait_s": 0.0}  # time spent starting and waiting, last step

    @staticmethod
    def _make_buckets(params, cap_bytes, first_cap):
        buckets, current, size = [], [], 0
        for p in params:
            nbytes = p.array.size * p.array.dtype.itemsize
            cap = first_cap if not buckets else cap_bytes
            if current and (size + nbytes > cap or p.array.dtype != current[0].array.dtype
                            or array_module(p.array) is not array_module(current[0].array)):
                buckets.append(_Bucket(len(buckets), current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(len(buckets), current))
        return buckets

    def _sync_module_states(self):
        works = [dist.broadcast(t, 0, async_op=True) for t in self.module.parameters()]
        works += [dist.broadcast(b, 0, async_op=True) for b in self.module.buffers()]
        for w in works:
            w.wait()

    # ---- forward and backward -----------------------------------------------------------
    def forward(self, *args, **kwargs):
        if self._marked:
            left = sorted(i for p, i in self._index.items() if p not in self._marked)
            raise RuntimeError(UNUSED.format(rank=dist.get_rank(), indices=" ".join(map(str, left))))
        Join.notify_join_context(self)
        if self.broadcast_buffers and self.world_size > 1:
            buffers = list(self.module.buffers())
            if buffers:
                with minigrad.no_grad():
                    for w in [dist.broadcast(b, 0, async_op=True) for b in buffers]:
                        w.wait()
        self._syncing = self.require_backward_grad_sync and minigrad.is_grad_enabled()
        self.last_sync = {"launch_s": 0.0, "wait_s": 0.0}
        if Join._active is not None and self.world_size > 1:
            dist.all_reduce(minigrad.tensor([float(self._syncing)]))  # the joined ranks shadow a synced backward
        out = self.module(*args, **kwargs)
        if self._syncing and self.find_unused_parameters:
            self._mark_unused(out)
        return out

    def _mark_unused(self, out):
        """The parameters `out`'s graph does not reach count as ready now, with zero gradients; the ranks
        all-reduce which were used anywhere: those used nowhere keep their .grad (PyTorch's way)."""
        params = {id(p): p for b in self._buckets for p in b.params}
        seen, stack, used = set(), [t.grad_fn for t in _tensors(out) if t.grad_fn is not None], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if variable is not None:
                used.add(id(variable))
            stack.extend(nxt for nxt, _ in node.next_functions)
        mask = np.zeros(len(self._index), dtype=np.int32)
        mask[[self._index[k] for k in used if k in self._index]] = 1
        self._used = (mask, dist.all_reduce(minigrad.Tensor._wrap(mask), op=dist.ReduceOp.MAX, async_op=True))
        for key in params.keys() - used:
            self._marked.add(key)
            self._where[key][0].left -= 1

    @contextlib.contextmanager
    def no_sync(self):
        """Backwards of forwards run inside only accumulate into .grad (no communication)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _on_grad(self, param):
        if not self._syncing:
            return
        key = id(param)
        if key in self._marked:
            raise RuntimeError("Expected to mark a variable ready only once: a parameter's gradient was "
                               "accumulated twice in one backward (a reentrant backward, or the parameter "
                               "used by two checkpointed segments)")
        self._marked.add(key)
        bucket, _ = self._where[key]
        bucket.left -= 1
        t0 = time.perf_counter()
        try:
            while self._next < len(self._buckets) and self._buckets[self._next].left == 0:
                self._launch(self._buckets[self._next])
                self._next += 1
        except BaseException:  # (a comm hook that raised: the next step starts afresh)
            self._reset()
            raise
        t1 = time.perf_counter()
        self.last_sync["launch_s"] += t1 - t0
        if self._next == len(self._buckets):
            self._finish()
            self.last_sync["wait_s"] += time.perf_counter() - t1
        else:
            dist.progress()  # MPI moves the started buckets only inside its calls

    def _launch(self, b):
        for p, lo, hi in zip(b.params, b.offsets, b.offsets[1:]):
            if p.grad is None or (self._used is not None and not self._used[0][self._index[id(p)]]):
                b.flat[lo:hi] = 0  # (unused here: another rank's gradient, averaged, or nothing)
            else:
                b.flat[lo:hi] = p.grad.array.reshape(-1)
        b.fut = self._communicate(b)

    def _communicate(self, b):
        """Start bucket b's communication: the comm hook's Future, or the mean over the ranks."""
        buffer = minigrad.Tensor._wrap(b.flat)
        if self._comm_hook is None:
            work = dist.all_reduce(buffer, op=dist.ReduceOp.AVG, async_op=True)
            # (the collective's own Future, of [buffer]: a callback's Future would wrap a failed rank's
            # DistBackendError in a RuntimeError, and the trainer names the failed rank from that error)
            return work.get_future()
        hook, state = self._comm_hook
        fut = hook(state, dist.GradBucket(b.index, buffer, b.params, b.offsets, b.index == len(self._buckets) - 1))
        if not isinstance(fut, Future):
            kind = type(fut)
            raise RuntimeError(f"DDP communication hook's callback must return a torch.futures.Future object, "
                               f"but got {kind.__module__}.{kind.__qualname__}")
        return fut

    def register_comm_hook(self, state, hook):
        """Communicate each bucket with `hook(state, bucket)` instead of the allreduce: it gets a
        dist.GradBucket of this rank's gradients (not divided by the world size) and returns a Future
        whose value, one flat tensor of the bucket's size, becomes the parameters' .grad as it is."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        bucket = sig.parameters.get("bucket")
        if bucket is not None and bucket.annotation not in (inspect.Parameter.empty, dist.GradBucket):
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if sig.return_annotation not in (inspect.Signature.empty, Future[minigrad.Tensor]):
            raise ValueError("Communication hook: return annotation should be torch.futures.Future[torch.Tensor].")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hook = (hook, state)

    def _finish(self):
        try:
            used = None
            if self._used is not None:
                self._used[1].wait()
                used = self._used[0]
            for b in self._buckets:
                value = b.fut.wait()
                flat = _flat_result(value[0] if self._comm_hook is None else value, b)
                for p, lo, hi in zip(b.params, b.offsets, b.offsets[1:]):
                    if used is not None and not used[self._index[id(p)]]:
                        continue  # used on no rank: .grad is left as it was
                    avg = flat[lo:hi].reshape(p.array.shape)
                    if p.grad is None:
                        p.grad = minigrad.Tensor._wrap(avg.copy())
                        continue
                    g = p.grad.array
                    if g.flags.writeable and g.base is None:
                        g[...] = avg
                    else:
                        p.grad.array = avg.copy()
        finally:
            self._reset()

    def _reset(self):
        for b in self._buckets:
            b.left, b.fut = len(b.params), None
        self._marked.clear()
        self._next = 0
        self._syncing = False
        self._used = None

    # ---- uneven inputs --------------------------------------------------------------------
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """`with ddp.join():` around the training loop: a rank whose data runs out first shadows the
        others' collectives until all have finished (gradients stay averaged over the initial world)."""
        if not divide_by_initial_world_size:
            raise NotImplementedError("join(divide_by_initial_world_size=False)")
        return Join([self], enable, throw_on_early_termination)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self)

    @property
    def join_device(self):
        return next(self.module.parameters()).device

    @property
    def join_process_group(self):
        return None

    # ---- the wrapped module's state, without a prefix -------------------------------------
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        return self.module.state_dict(destination=destination, prefix=prefix, keep_vars=keep_vars)

    def load_state_dict(self, state_dict, strict=True):
        return self.module.load_state_dict(state_dict, strict)

    def extra_repr(self):
        return f"world_size={self.world_size}, buckets={len(self._buckets)}, bucket_cap_mb={self.bucket_cap_mb}"


class _DDPJoinHook(JoinHook):
    def __init__(self, ddp):
        self.ddp = ddp

    def main_hook(self):
        """One step of the ranks still training: their buffer broadcast, then (if they sync) their
        backward's collectives, with zero gradients."""
        ddp = self.ddp
        if ddp.broadcast_buffers:
            with minigrad.no_grad():
                for w in [dist.broadcast(b, 0, async_op=True) for b in ddp.module.buffers()]:
                    w.wait()
        sync = minigrad.zeros(1)
        dist.all_reduce(sync)
        if sync.item() == 0:
            return
        if ddp.find_unused_parameters:
            dist.all_reduce(minigrad.Tensor._wrap(np.zeros(len(ddp._index), dtype=np.int32)), op=dist.ReduceOp.MAX)
        for b in ddp._buckets:
            b.flat[...] = 0
            ddp._communicate(b).wait()

    def post_hook(self, is_last_joiner):
        """Every rank takes the model of the highest rank among the last to join (it took every step)."""
        src = minigrad.tensor([dist.get_rank() if is_last_joiner else -1])
        dist.all_reduce(src, op=dist.ReduceOp.MAX)
        with minigrad.no_grad():
            for w in [dist.broadcast(p, int(src.item()), async_op=True) for p in self.ddp.module.parameters()]:
                w.wait()


def _flat_result(value, b):
    """The flat array of a bucket's Future value (one tensor of the bucket's size), in the bucket's dtype."""
    if not isinstance(value, minigrad.Tensor):
        raise RuntimeError(f"Unable to cast {value!r} to Tensor")
    if value.numel() != b.flat.size:
        raise RuntimeError(f"DDP communication hook: the Future's tensor has numel {value.numel()}, bucket "
                           f"{b.index}'s gradients have numel {b.flat.size}")
    return value.array.reshape(-1).astype(b.flat.dtype, copy=False)


def _tensors(out):
    """The tensors in a forward's output (nested in tuples, lists and dicts)."""
    if isinstance(out, minigrad.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o)]
    return []


def _check_same_model(module):
    """Every rank built the same model: the same parameter and buffer names, shapes and dtypes."""
    mine = [[n, list(t.shape), str(t.array.dtype)] for n, t in
            list(module.named_parameters()) + list(module.named_buffers())]
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    ref = every[0]
    for r, theirs in enumerate(every[1:], 1):
        if theirs == ref:
            continue
        if len(theirs) != len(ref):
            raise RuntimeError(f"DDP expects the same model on every rank, but rank 0 has {len(ref)} parameters "
                               f"and buffers, while rank {r} has {len(theirs)}")
        for a, b in zip(ref, theirs):
            if a != b:
                raise RuntimeError(f"DDP expects the same model on every rank, but rank 0 has {a[0]} of shape "
                                   f"{tuple(a[1])} {a[2]}, while rank {r} has {b[0]} of shape {tuple(b[1])} {b[2]}")
