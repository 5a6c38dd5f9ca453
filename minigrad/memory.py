"""Where training memory goes: the arrays a backward graph keeps, and peak array memory.

`saved_tensors_report(loss)` walks the graph behind `loss` (before backward) and adds up the
arrays its nodes keep for backward: saved tensors and the arrays ops stash on their node (index
arrays, masks). Each underlying buffer is counted once, however many nodes or views refer to it.
Buffers of leaves that require grad (parameters) are listed apart (`leaf_bytes`): the graph
refers to them, but they outlive it. So `total_bytes` is what releasing the graph frees (backward
does that, unless retain_graph=True), provided nothing else holds those arrays.

`with module_scopes(model):` names every node after the module whose forward made it
("transformer.h.0.attn"), so the report can say which layer holds what (`by_scope`); it works
with any object whose `named_modules()` yields (name, module) pairs with a `forward` method.

`with track_peak() as m:` measures the peak of array memory over a block: numpy's through
tracemalloc (numpy reports its buffers to it), cupy's through a memory-pool hook.
"""
import contextlib
import functools
import sys
import tracemalloc

import numpy as np

from .autograd.function import AccumulateGrad, SavedTensor
from .autograd.graph import scope
from .tensor import Tensor

__all__ = ["saved_tensors_report", "SavedTensorsReport", "module_scopes", "track_peak", "format_bytes"]

NO_SCOPE = "(no scope)"


def format_bytes(n):
    """`1536` -> '1.50 KiB'."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} GiB"


class SavedTensorsReport:
    """What a backward graph holds: `total_bytes`, `by_node_type`, `by_scope` ({name: bytes},
    largest first), `leaf_bytes` (parameters' buffers it refers to but does not own), and
    `n_arrays` / `n_nodes`. `str(report)` is a table."""

    def __init__(self, total_bytes, by_node_type, by_scope, leaf_bytes, n_arrays, n_nodes):
        self.total_bytes = total_bytes
        self.by_node_type = by_node_type
        self.by_scope = by_scope
        self.leaf_bytes = leaf_bytes
        self.n_arrays = n_arrays
        self.n_nodes = n_nodes

    def __repr__(self):
        return (f"SavedTensorsReport(total_bytes={self.total_bytes}, n_arrays={self.n_arrays}, "
                f"n_nodes={self.n_nodes}, leaf_bytes={self.leaf_bytes})")

    def __str__(self):
        lines = [f"saved for backward: {self.total_bytes:,} bytes ({format_bytes(self.total_bytes)}) in "
                 f"{self.n_arrays} arrays, {self.n_nodes} nodes"]
        if self.leaf_bytes:
            lines.append(f"the graph also refers to {self.leaf_bytes:,} bytes of parameters (not counted)")
        for title, table in (("node type", self.by_node_type), ("scope", self.by_scope)):
            if not table or (title == "scope" and list(table) == [NO_SCOPE]):
                continue
            width = max(len(title), *(len(k) for k in table))
            lines.append(f"{title:<{width}}  {'bytes':>12}  {'share':>6}")
            for k, v in table.items():
                share = 100.0 * v / self.total_bytes if self.total_bytes else 0.0
                lines.append(f"{k:<{width}}  {v:>12,}  {share:5.1f}%")
        return "\n".join(lines)


def saved_tensors_report(*tensors):
    """The memory kept for backward by the graph behind `tensors` (call it before backward).

    A tensor with no graph (made under no_grad, or a leaf) gives an empty report.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    stack = [t.grad_fn for t in tensors if isinstance(t, Tensor) and t.grad_fn is not None]
    seen = set()
    nodes = []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        for nxt, _ in getattr(node, "next_functions", ()):
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)

    leaf_roots = {}
    owner = {}  # id(root buffer) -> (seq, node type, scope, nbytes)
    for node in nodes:
        if isinstance(node, AccumulateGrad):
            root = _root(node.variable.array)
            leaf_roots[id(root)] = root.nbytes
            continue
        seq = getattr(node, "_seq", 0)
        scope_name = getattr(node, "_scope", None)
        scope_name = NO_SCOPE if scope_name is None else scope_name
        for label, arr in _node_arrays(node):
            root = _root(arr)
            key = id(root)
            if key not in owner or seq < owner[key][0]:
                owner[key] = (seq, label or node.name(), scope_name, int(root.nbytes))

    by_type, by_scope = {}, {}
    total = leaf = n = 0
    for key, (_, kind, scope_name, nbytes) in owner.items():
        if key in leaf_roots:
            leaf += nbytes
            continue
        n += 1
        total += nbytes
        by_type[kind] = by_type.get(kind, 0) + nbytes
        by_scope[scope_name] = by_scope.get(scope_name, 0) + nbytes
    order = lambda d: dict(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))
    return SavedTensorsReport(total, order(by_type), order(by_scope), leaf, n, len(nodes))


def _is_array(x):
    return isinstance(x, np.ndarray) or (type(x).__module__.startswith("cupy") and hasattr(x, "nbytes"))


def _root(a):
    """The array that owns `a`'s buffer (a view's base)."""
    while True:
        b = getattr(a, "base", None)
        if b is None or not _is_array(b):
            return a
        a = b


def _node_arrays(node):
    """(label, array) for every array `node` keeps: saved tensors and arrays in its attributes."""
    out = []
    for key, value in vars(node).items():
        if key in ("next_functions", "_output_meta", "_pre_hooks", "_post_hooks"):
            continue
        _collect(value, None, out, 0)
    return out


def _collect(obj, label, out, depth):
    if depth > 8 or obj is None:
        return
    if isinstance(obj, Tensor):
        out.append((label, obj.array))
    elif _is_array(obj):
        out.append((label, obj))
    elif isinstance(obj, SavedTensor):
        if obj.counter is None:  # released by backward
            return
        _collect(obj.tensor if obj.tensor is not None else obj.packed, label, out, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _collect(x, label, out, depth + 1)
    elif isinstance(obj, dict):
        for x in obj.values():
            _collect(x, label, out, depth + 1)
    elif hasattr(obj, "_memory_parts"):  # e.g. a checkpoint handle
        for lab, x in obj._memory_parts():
            _collect(x, lab or label, out, depth + 1)


# ---- scopes ------------------------------------------------------------------------------------
@contextlib.contextmanager
def module_scopes(model):
    """Within the block, each module's forward runs inside `autograd.graph.scope(name)`, with
    the names of `model.named_modules()` (the model itself is named after its class). The
    modules are restored on exit; nothing about them needs to know."""
    patched = []
    done = set()
    try:
        for name, module in model.named_modules():
            if id(module) in done or not callable(getattr(module, "forward", None)):
                continue
            done.add(id(module))
            d = getattr(module, "__dict__", None)
            if d is None:
                continue
            had, old = "forward" in d, d.get("forward")
            d["forward"] = _scoped(module.forward, name or type(module).__name__)
            patched.append((d, had, old))
        yield model
    finally:
        for d, had, old in reversed(patched):
            if had:
                d["forward"] = old
            else:
                d.pop("forward", None)


def _scoped(forward, name):
    @functools.wraps(forward)
    def scoped_forward(*args, **kwargs):
        with scope(name):
            return forward(*args, **kwargs)

    return scoped_forward


# ---- peak memory -------------------------------------------------------------------------------
class PeakMemory:
    """Result of `track_peak`: peaks above the memory in use when the block started.

    `cpu_peak_bytes` (numpy, via tracemalloc; it also counts Python objects, a small part for
    array-heavy code), `cuda_peak_bytes` (cupy's memory pool, None when not tracked) and
    `peak_bytes`: the CUDA one when tracked, else the CPU one.
    """

    def __init__(self):
        self.cpu_peak_bytes = 0
        self.cuda_peak_bytes = None

    @property
    def peak_bytes(self):
        return self.cuda_peak_bytes if self.cuda_peak_bytes is not None else self.cpu_peak_bytes

    def __repr__(self):
        cuda = "" if self.cuda_peak_bytes is None else f", cuda_peak_bytes={self.cuda_peak_bytes}"
        return f"PeakMemory(cpu_peak_bytes={self.cpu_peak_bytes}{cuda})"


_active = []  # open track_peak blocks of this process (tracemalloc is process-wide)


@contextlib.contextmanager
def track_peak(device=None):
    """`with track_peak() as m: ...` then `m.peak_bytes`: the most array memory in use at once
    during the block, above what was in use when it began.

    `device`: "cpu", "cuda", or None for both when cupy is loaded (else the CPU only). Blocks
    may nest. tracemalloc slows Python allocations down: time code outside this block.
    """
    result = PeakMemory()
    cuda = device == "cuda" or (device is None and _cupy() is not None)
    if device == "cuda" and _cupy() is None:
        sys.modules["minigrad.device"]._import_cupy()
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    # tracemalloc has one peak: remember the enclosing blocks' before this one resets it
    cur, peak = tracemalloc.get_traced_memory()
    for outer in _active:
        outer["peak"] = max(outer["peak"], peak)
    tracemalloc.reset_peak()
    mine = {"start": cur, "peak": cur}
    _active.append(mine)
    hook = _CupyPeak(_cupy()) if cuda else None
    try:
        if hook is not None:
            with hook:
                yield result
        else:
            yield result
    finally:
        _active.remove(mine)
        peak = max(mine["peak"], tracemalloc.get_traced_memory()[1])
        for outer in _active:
            outer["peak"] = max(outer["peak"], peak)
        result.cpu_peak_bytes = max(0, peak - mine["start"])
        if hook is not None:
            result.cuda_peak_bytes = max(0, hook.peak - hook.start)
        if started:
            tracemalloc.stop()


def _cupy():
    return sys.modules["minigrad.device"]._cupy


class _CupyPeak:
    """Follows cupy's default memory pool: bytes in use now and at most, during the block."""

    def __init__(self, cp):
        from cupy.cuda import memory_hook

        pool = cp.get_default_memory_pool()
        tracker = self

        class Hook(memory_hook.MemoryHook):
            name = f"minigrad_track_peak_{id(self)}"  # unique: cupy refuses two hooks of one name

            def malloc_postprocess(self, **kw):  # device_id, size, mem_size, mem_ptr, pmem_id
                tracker.now += kw["mem_size"]
                if tracker.now > tracker.peak:
                    tracker.peak = tracker.now

            def free_postprocess(self, **kw):  # device_id, mem_size, mem_ptr, pmem_id
                tracker.now -= kw["mem_size"]

        self.cp, self.pool, self.hook = cp, pool, Hook()
        self.start = self.now = self.peak = pool.used_bytes()

    def __enter__(self):
        self.cp.cuda.Device().synchronize()
        self.start = self.now = self.peak = self.pool.used_bytes()
        self.hook.__enter__()
        return self

    def __exit__(self, *exc):
        self.cp.cuda.Device().synchronize()
        self.hook.__exit__(*exc)
