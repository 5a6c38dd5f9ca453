"""torch.profiler's everyday form: how long each op took, and how often it ran.

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            model(inputs)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

While a profile is on, it wraps the engine's two dispatch points: `Function.apply` (every op's forward)
and `BackwardNode.apply` (every op's backward, named as PyTorch names the engine's step,
"autograd::engine::evaluate_function: MulBackward0"). With no profile on, ops pay nothing for it.
The names are minigrad's own ops (`Linear`, `Convolution`), not PyTorch's aten ones; an op run inside
another (a composite's parts) counts in its parent's total and not in its self time. Times are wall
clock on the host (CUDA kernels, memory, stacks and schedules are not recorded).
"""
import contextlib
import enum
import json
import os
import threading
import time

from .autograd.function import BackwardNode, Function
from .tensor import Tensor

__all__ = ["ProfilerActivity", "profile", "record_function"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1  # (accepted: only the host's time is recorded)


class FunctionEvent:
    """One call: its name, start and end (microseconds), and the time of the events run inside it."""

    def __init__(self, name, start, input_shapes):
        self.name, self.start, self.end, self.input_shapes = name, start, start, input_shapes
        self.children_time = 0.0
        self.thread = threading.get_ident()

    key = property(lambda self: self.name)
    count = 1
    cpu_time = property(lambda self: self.cpu_time_total)

    @property
    def cpu_time_total(self):
        return self.end - self.start

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - self.children_time


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), summed."""

    def __init__(self, key, input_shapes):
        self.key, self.input_shapes = key, input_shapes
        self.count, self.cpu_time_total, self.self_cpu_time_total = 0, 0.0, 0.0

    def add(self, event):
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total

    @property
    def cpu_time(self):  # the average per call
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, max_shapes_column_width=80, **unused):
        """PyTorch's table of these events: one row each, by `sort_by` (an attribute: cpu_time_total,
        self_cpu_time_total, cpu_time, count) descending, at most `row_limit` rows (-1: all)."""
        rows = sorted(self, key=lambda e: getattr(e, sort_by), reverse=True) if sort_by else list(self)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total = sum(e.self_cpu_time_total for e in self)
        shapes = any(e.input_shapes is not None for e in self)
        name_width = min(max([len(e.key) for e in self] + [4]) + 4, max_name_column_width)
        widths = [name_width] + [12] * 6
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        if shapes:
            widths.append(min(max([len(str(e.input_shapes)) for e in self] + [12]) + 4, max_shapes_column_width))
            headers.append("Input Shapes")

        def line(cells):
            return "".join(f"{c:>{w}}  " for c, w in zip(cells, widths))

        def percent(t):
            return f"{100.0 * t / total:.2f}%" if total else "0.00%"

        divider = line(["-" * w for w in widths])
        out = [divider, line(headers), divider]
        for e in rows:
            name = e.key if len(e.key) < max_name_column_width - 3 else e.key[:max_name_column_width - 3] + "..."
            cells = [name, percent(e.self_cpu_time_total), _format_time(e.self_cpu_time_total),
                     percent(e.cpu_time_total), _format_time(e.cpu_time_total), _format_time(e.cpu_time), str(e.count)]
            if shapes:
                cells.append(str(e.input_shapes)[:widths[-1]])
            out.append(line(cells))
        out += [divider, f"Self CPU time total: {_format_time(total)}", ""]
        return "\n".join(out)

    def __str__(self):
        return self.table()


_active = None  # the profile recording now: one at a time, as the wrappers are the classes'


def _now():
    return time.perf_counter_ns() / 1000.0


class profile:
    """Record the ops run inside `with profile(...) as prof:` (or between start() and stop()). Also
    torch.autograd.profiler.profile, whose first argument is `enabled` (a bool) and which reads back its
    `function_events` and `table()`."""

    def __init__(self, activities=None, *, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False, **unused):
        self.enabled = unused.get("enabled", activities) is not False
        if isinstance(activities, bool):
            activities = None
        if schedule is not None:
            raise NotImplementedError("minigrad.profiler.profile: schedule= is not supported; profile the steps "
                                      "wanted inside the `with` block")
        self.activities = set(activities) if activities else {ProfilerActivity.CPU}
        self.on_trace_ready, self.record_shapes = on_trace_ready, record_shapes
        self._events, self._stack = [], []
        self._saved = None

    def start(self):
        global _active
        if not self.enabled:
            return
        if _active is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        _active = self
        self._saved = Function.__dict__["apply"], BackwardNode.__dict__["apply"]
        forward, backward = self._saved[0].__func__, self._saved[1]

        def apply(cls, *args):
            event = self._open(cls.__name__, args)
            try:
                return forward(cls, *args)
            finally:
                self._close(event)

        def backward_apply(node, *grads):
            event = self._open(f"autograd::engine::evaluate_function: {node.name()}", grads)
            try:
                return backward(node, *grads)
            finally:
                self._close(event)

        Function.apply = classmethod(apply)
        BackwardNode.apply = backward_apply

    def stop(self):
        global _active
        if _active is not self:
            return
        Function.apply, BackwardNode.apply = self._saved
        _active = None
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def step(self):
        """The end of a training step (PyTorch's schedules count them): nothing to do without one."""

    def _open(self, name, args):
        shapes = None
        if self.record_shapes:
            shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args]
        event = FunctionEvent(name, _now(), shapes)
        self._stack.append(event)
        return event

    def _close(self, event):
        event.end = _now()
        self._stack.remove(event)  # (the last one, unless another thread's op ran meanwhile)
        parent = next((e for e in reversed(self._stack) if e.thread == event.thread), None)
        if parent is not None:
            parent.children_time += event.cpu_time_total
        self._events.append(event)

    def events(self):
        return EventList(sorted(self._events, key=lambda e: e.start))

    function_events = property(events)

    def table(self, sort_by=None, row_limit=100, **kwargs):
        """One row per event (torch.autograd.profiler's table; key_averages().table() sums them per name)."""
        return self.events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The events summed per name (and per input shapes with `group_by_input_shape`), in the order
        the names first ran."""
        groups = {}
        for e in self.events():
            shapes = e.input_shapes if self.record_shapes else None
            key = (e.name, str(shapes) if group_by_input_shape else None)
            if key not in groups:
                groups[key] = FunctionEventAvg(e.name, shapes if group_by_input_shape else None)
            groups[key].add(e)
        return EventList(groups.values())

    def export_chrome_trace(self, path):
        """The events as a Chrome trace (chrome://tracing, Perfetto): one complete event per call."""
        pid = os.getpid()
        trace = [{"ph": "X", "cat": "cpu_op", "name": e.name, "pid": pid, "tid": e.thread, "ts": e.start,
                  "dur": e.cpu_time_total, "args": {} if e.input_shapes is None else {"Input Dims": e.input_shapes}}
                 for e in self.events()]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


class record_function(contextlib.ContextDecorator):
    """A named range (a row of its own in the table) around a block, or a function it decorates."""

    def __init__(self, name, args=None):
        self.name, self._event, self._profile = name, None, None

    def __enter__(self):
        self._profile = _active
        if self._profile is not None:
            self._event = self._profile._open(self.name, ())
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            self._profile._close(self._event)
            self._event = self._profile = None
        return False
