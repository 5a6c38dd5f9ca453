"""minigrad.memory: the saved-tensor report (checked against what releasing the graph frees),
scopes, and peak tracking."""
import gc
import threading
import tracemalloc
import types
import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.graph import scope
from minigrad.memory import module_scopes, saved_tensors_report, track_peak
from minigrad.utils.checkpoint import checkpoint

B, D = 128, 256


class Linear:
    """A duck-typed module: named_modules() and forward, no nn."""

    def __init__(self, n_in, n_out):
        self.w = (mg.randn(n_in, n_out) * n_in ** -0.5).requires_grad_()
        self.b = mg.zeros(n_out, requires_grad=True)

    def named_modules(self, prefix=""):
        yield prefix, self

    def forward(self, x):
        return x @ self.w + self.b

    def __call__(self, x):
        return self.forward(x)

    def parameters(self):
        return [self.w, self.b]


class MLP:
    def __init__(self, n_layers=3):
        self.layers = [Linear(D, D) for _ in range(n_layers)]
        self.head = Linear(D, 1)

    def named_modules(self):
        yield "", self
        for i, layer in enumerate(self.layers):
            yield from layer.named_modules(f"layers.{i}")
        yield from self.head.named_modules("head")

    def block(self, layer, h):
        a = layer(h)
        g = a * (a * 1.702).sigmoid()  # GELU-ish: saves several tensors
        mask = mg.rand(*g.shape) > 0.1  # dropout
        return g * mask / 0.9 + h.T.T  # a view of the input, saved by nobody new

    def forward(self, x, ck=False):
        h = x
        for layer in self.layers:
            h = checkpoint(self.block, layer, h, use_reentrant=False) if ck else self.block(layer, h)
        return self.head(h)

    def __call__(self, x, ck=False):
        return self.forward(x, ck)

    def parameters(self):
        return [p for m in self.layers + [self.head] for p in m.parameters()]


def loss_of(model, x, y, ck=False):
    out = model(x, ck)
    return ((out - y) ** 2).mean() + out[:, 0][mg.tensor([0, 3, 5])].sum() * 0.0  # an index array too


def reachable_arrays(root):
    """Every numpy array reachable from `root` through Python references (gc.get_referents),
    following closures but not modules, classes or function globals."""
    seen, arrays, stack = set(), [], [root]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            arrays.append(o)
            if o.base is not None:
                stack.append(o.base)
            continue
        if isinstance(o, (type, types.ModuleType)):
            continue
        if isinstance(o, types.FunctionType):
            stack.extend(c.cell_contents for c in (o.__closure__ or ()) if _cell_ok(c))
            stack.extend(o.__defaults__ or ())
            continue
        stack.extend(gc.get_referents(o))
    return arrays


def _cell_ok(c):
    try:
        return c.cell_contents is not c  # an empty cell raises ValueError
    except ValueError:
        return False


def freed_when_released(make):
    """Build a graph with `make()` -> (loss, keep); return (report, bytes of the array buffers that
    die when the graph goes, bytes tracemalloc saw released)."""
    tracemalloc.start()  # before the graph is built, so that its buffers are traced
    loss, keep = make()
    report = saved_tensors_report(loss)
    value = loss.array  # the loss value itself is not part of the graph's memory
    owners = [a for a in reachable_arrays(loss.grad_fn) if a.base is None]
    refs = [(weakref.ref(a), a.nbytes) for a in owners]
    del owners
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    del loss
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    freed = sum(n for r, n in refs if r() is None)
    assert value is not None and keep is not None
    return report, freed, before - after


@pytest.mark.parametrize("ck", [False, True], ids=["plain", "checkpoint"])
def test_report_total_is_what_releasing_the_graph_frees(ck):
    mg.manual_seed(0)
    model = MLP()
    y = mg.randn(B, 1)

    def make():
        x = mg.randn(B, D)  # dropped with the graph: counted
        return loss_of(model, x, y, ck), model

    report, freed, traced = freed_when_released(make)
    assert report.total_bytes > 0
    assert report.total_bytes == freed  # exactly: every buffer counted once, parameters apart
    # tracemalloc agrees, up to the Python objects of the graph (nodes, tensors, dicts)
    assert 0 <= traced - report.total_bytes < 0.02 * report.total_bytes + 64 * 1024
    assert sum(report.by_node_type.values()) == report.total_bytes
    assert sum(report.by_scope.values()) == report.total_bytes
    # the graph refers to weights (x @ w saves w when x requires grad) but does not own them;
    # inside checkpoints nothing is saved at all
    saved_weights = [model.head.w] if ck else [m.w for m in model.layers[1:]] + [model.head.w]
    assert report.leaf_bytes == sum(w.nbytes for w in saved_weights)


def test_checkpoint_report_is_smaller():
    mg.manual_seed(0)
    model = MLP(4)
    x, y = mg.randn(B, D), mg.randn(B, 1)
    plain = saved_tensors_report(loss_of(model, x, y))
    ck = saved_tensors_report(loss_of(model, x, y, ck=True))
    assert ck.total_bytes < plain.total_bytes / 2
    assert "CheckpointInputs" in ck.by_node_type


def test_counted_once_when_several_nodes_save_it():
    x = mg.randn(256, 256, requires_grad=True)
    h = x * 2.0
    y = (h * h).sum() + (h @ h.T).sum() + h.exp().sum()  # h is saved by 3 nodes, once as a view
    r = saved_tensors_report(y)
    h_bytes = 256 * 256 * 4
    assert r.total_bytes == h_bytes * 2  # h and exp(h): the first mul keeps its 2.0 as a number, no tensor
    assert r.by_node_type["MulBackward0"] == h_bytes


def test_nothing_saved_under_no_grad_and_after_backward():
    mg.manual_seed(0)
    model = MLP()
    x, y = mg.randn(B, D), mg.randn(B, 1)
    with mg.no_grad():
        loss = loss_of(model, x, y)
    r = saved_tensors_report(loss)
    assert (r.total_bytes, r.n_nodes, r.by_node_type) == (0, 0, {})
    loss = ((model(x) - y) ** 2).mean()
    assert saved_tensors_report(loss).total_bytes > 0
    loss.backward()  # releases what the graph saved
    assert saved_tensors_report(loss).total_bytes == 0


def test_module_scopes_by_layer():
    mg.manual_seed(0)
    model = MLP()
    x, y = mg.randn(B, D), mg.randn(B, 1)
    plain_forward = MLP.forward
    with module_scopes(model):
        assert "forward" in vars(model.layers[0])
        loss = loss_of(model, x, y)
    assert "forward" not in vars(model.layers[0]) and model.forward.__func__ is plain_forward
    r = saved_tensors_report(loss)
    # layers.i's own forward (x @ w + b) saves its input; the activation ops run in MLP.block,
    # which is the root module's code: named after its class
    assert set(r.by_scope) == {"MLP", "layers.0", "layers.1", "layers.2", "head", "(no scope)"}
    assert r.by_scope["layers.0"] == B * D * 4  # the input x (x @ w saves x)
    text = str(r)
    assert "layers.1" in text and f"{r.total_bytes:,}" in text and "MmBackward0" in text


def test_scope_is_stamped_thread_local_and_nests():
    x = mg.randn(3, requires_grad=True)
    assert x.exp().grad_fn._scope is None
    with scope("a"):
        y = x.exp()
        with scope("a.b"):
            z = x.exp()
        w = x.exp()
        seen = []
        t = threading.Thread(target=lambda: seen.append(x.exp().grad_fn._scope))
        t.start()
        t.join()
    assert (y.grad_fn._scope, z.grad_fn._scope, w.grad_fn._scope, seen) == ("a", "a.b", "a", [None])


def test_track_peak():
    n = 4_000_000
    with track_peak() as outer:
        a = np.ones(n // 8)  # 0.5 MB
        with track_peak() as m:
            b = np.ones(n // 8)  # 4 MB in float64 ... peak: 4 MB above the start
            b = b.repeat(8)
            del b
        del a
    assert n * 8 <= m.peak_bytes < n * 8 * 1.2 + 200_000
    assert m.cuda_peak_bytes is None
    # the outer block saw the inner peak plus its own 0.5 MB
    assert outer.peak_bytes >= m.peak_bytes + n


def test_tensor_training_step_peak():
    mg.manual_seed(0)
    model = MLP()
    x, y = mg.randn(B, D), mg.randn(B, 1)
    with track_peak() as m:
        loss = loss_of(model, x, y)
        saved = saved_tensors_report(loss).total_bytes
        loss.backward()
    assert m.peak_bytes >= saved
