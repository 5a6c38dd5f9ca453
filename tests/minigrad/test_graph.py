"""The recorded graph, as PyTorch builds it: nodes, edges, leaves, hooks, grad modes, versions."""
import gc
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function

FREED = "Trying to backward through the graph a second time"


def leaf(*shape, dtype=mg.float64, seed=0):
    rng = np.random.default_rng(seed)
    return mg.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)


def edge_names(t):
    return [(None if n is None else type(n).__name__, i) for n, i in t.grad_fn.next_functions]


def node_name(node):
    """`node.name()` without PyTorch's C++ namespace (`torch::autograd::CopySlices` -> `CopySlices`)."""
    return node.name().rsplit("::", 1)[-1]


# ---- the tutorial example -------------------------------------------------------------------
def test_tutorial_example_graph_and_gradient():
    x = mg.tensor(3.0, requires_grad=True)
    a = x * 2
    b = a + 1
    loss = b**2
    assert loss.item() == 49.0
    pow_node = loss.grad_fn
    assert type(pow_node).__name__ == "PowBackward0" and pow_node.name() == "PowBackward0"
    assert len(pow_node.next_functions) == 1
    add_node, nr = pow_node.next_functions[0]
    assert nr == 0 and add_node is b.grad_fn and add_node.name() == "AddBackward0"
    assert len(add_node.next_functions) == 2 and add_node.next_functions[1] == (None, 0)
    mul_node, nr = add_node.next_functions[0]
    assert nr == 0 and mul_node is a.grad_fn and mul_node.name() == "MulBackward0"
    assert mul_node.next_functions[1] == (None, 0)
    acc, nr = mul_node.next_functions[0]
    assert nr == 0 and type(acc).__name__ == "AccumulateGrad"
    assert acc.variable is x
    assert acc.next_functions == ()
    # one AccumulateGrad per leaf
    assert (x * 3).grad_fn.next_functions[0][0] is acc
    assert pow_node._saved_self is b
    loss.backward()
    assert x.grad is not None and x.grad.item() == 28.0
    assert repr(x.grad) == "tensor(28.)"
    with pytest.raises(RuntimeError, match=FREED):
        loss.backward()


def test_tutorial_matches_torch(torch):
    def run(lib):
        x = lib.tensor(3.0, requires_grad=True)
        loss = (x * 2 + 1) ** 2
        names, node = [], loss.grad_fn
        while node is not None:
            names.append(type(node).__name__)
            node = node.next_functions[0][0] if node.next_functions else None
        loss.backward()
        return names, x.grad.item()

    assert run(mg) == run(torch)


# ---- node names against PyTorch ---------------------------------------------------------------
A, B = (3, 4), (3, 4)
NAMED_OPS = {
    "add": lambda L, a, b: a + b, "add_scalar": lambda L, a, b: a + 2, "radd": lambda L, a, b: 2 + a,
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=2), "sub": lambda L, a, b: a - b,
    "sub_scalar": lambda L, a, b: a - 1, "rsub": lambda L, a, b: 2 - a, "sub_alpha": lambda L, a, b: L.sub(a, b, alpha=3),
    "mul": lambda L, a, b: a * b, "mul_scalar": lambda L, a, b: a * 2, "rmul": lambda L, a, b: 2 * a,
    "mul_bool": lambda L, a, b: a * True, "mul_0dim": lambda L, a, b: a * L.tensor(2.0, dtype=a.dtype),
    "div": lambda L, a, b: a / b, "div_scalar": lambda L, a, b: a / 2, "rdiv": lambda L, a, b: 2 / a,
    "pow_scalar": lambda L, a, b: a**2, "pow_float": lambda L, a, b: a.abs() ** 2.5,
    "pow_tensor": lambda L, a, b: a.abs() ** b, "rpow": lambda L, a, b: 2**a, "pow_fn": lambda L, a, b: L.pow(2, a),
    "square": lambda L, a, b: a.square(), "neg": lambda L, a, b: -a, "exp": lambda L, a, b: a.exp(),
    "log": lambda L, a, b: a.abs().log(), "sqrt": lambda L, a, b: a.abs().sqrt(), "rsqrt": lambda L, a, b: a.abs().rsqrt(),
    "tanh": lambda L, a, b: a.tanh(), "sigmoid": lambda L, a, b: a.sigmoid(), "relu": lambda L, a, b: a.relu(),
    "abs": lambda L, a, b: a.abs(), "clamp": lambda L, a, b: a.clamp(-0.5, 0.5), "clamp_max": lambda L, a, b: a.clamp(max=1),
    "maximum": lambda L, a, b: L.maximum(a, b), "minimum": lambda L, a, b: L.minimum(a, b),
    "max_binary": lambda L, a, b: L.max(a, b), "sin": lambda L, a, b: a.sin(), "cos": lambda L, a, b: a.cos(),
    "sum": lambda L, a, b: a.sum(), "sum_dim": lambda L, a, b: a.sum(1), "sum_dims": lambda L, a, b: a.sum((0, 1)),
    "sum_keepdim": lambda L, a, b: a.sum(0, keepdim=True), "mean": lambda L, a, b: a.mean(),
    "mean_dim": lambda L, a, b: a.mean(0, keepdim=True), "var": lambda L, a, b: a.var(), "var_dim": lambda L, a, b: a.var(1),
    "std": lambda L, a, b: a.std(), "std_dim": lambda L, a, b: a.std(0, keepdim=True), "max": lambda L, a, b: a.max(),
    "max_dim": lambda L, a, b: a.max(1)[0], "min": lambda L, a, b: a.min(), "min_dim": lambda L, a, b: a.min(0).values,
    "amax": lambda L, a, b: a.amax(1), "amin": lambda L, a, b: a.amin((0, 1)), "logsumexp": lambda L, a, b: a.logsumexp(1),
    "reshape": lambda L, a, b: a.reshape(4, 3), "reshape_copy": lambda L, a, b: a.t().reshape(12),
    "view": lambda L, a, b: a.view(12), "view_infer": lambda L, a, b: a.view(-1, 2),
    "transpose": lambda L, a, b: a.transpose(0, 1), "permute": lambda L, a, b: a.permute(1, 0), "T": lambda L, a, b: a.T,
    "mT": lambda L, a, b: a.mT, "t": lambda L, a, b: a.t(), "squeeze": lambda L, a, b: a.unsqueeze(0).squeeze(),
    "squeeze_dim": lambda L, a, b: a.unsqueeze(0).squeeze(0), "unsqueeze": lambda L, a, b: a.unsqueeze(1),
    "expand": lambda L, a, b: a.unsqueeze(0).expand(5, 3, 4), "flatten": lambda L, a, b: a.flatten(),
    "contiguous": lambda L, a, b: a.T.contiguous(), "clone": lambda L, a, b: a.clone(),
    "split": lambda L, a, b: a.split(2)[1], "split_sizes": lambda L, a, b: a.split([1, 2])[1],
    "chunk": lambda L, a, b: a.chunk(2, 1)[0], "unbind": lambda L, a, b: a.unbind(1)[2],
    "cat": lambda L, a, b: L.cat([a, b]), "stack": lambda L, a, b: L.stack([a, b], 1),
    "index_int": lambda L, a, b: a[0], "index_neg": lambda L, a, b: a[-1], "index_slice": lambda L, a, b: a[1:],
    "index_full_slice": lambda L, a, b: a[:], "index_step": lambda L, a, b: a[::2], "index_col": lambda L, a, b: a[:, -1],
    "index_none": lambda L, a, b: a[None], "index_none2": lambda L, a, b: a[:, None], "index_ellipsis": lambda L, a, b: a[..., 1],
    "index_two_ints": lambda L, a, b: a[0, 1], "index_int_slice": lambda L, a, b: a[0, 1:], "index_slice_int": lambda L, a, b: a[1:, 2],
    "index_none_int": lambda L, a, b: a[None, 0], "index_0dim_tensor": lambda L, a, b: a[L.tensor(1)],
    "index_tensor": lambda L, a, b: a[L.tensor([0, 0, 2])], "index_list": lambda L, a, b: a[:, [1, 1, 2]],
    "index_mask": lambda L, a, b: a[a > 0], "index_pairs": lambda L, a, b: a[[0, 1], [1, 2]],
    "where": lambda L, a, b: L.where(a > 0, a, b), "where_scalar": lambda L, a, b: L.where(a > 0, a, 0.0),
    "where_scalar_first": lambda L, a, b: L.where(a > 0, 1.0, a),
    "masked_fill": lambda L, a, b: a.masked_fill(a > 0, 0.0),
    "masked_fill_tensor": lambda L, a, b: a.masked_fill(a > 0, L.tensor(1.0, dtype=a.dtype)),
    "tril": lambda L, a, b: a.tril(), "triu": lambda L, a, b: L.triu(a, 1),
    "gather": lambda L, a, b: a.gather(1, L.tensor([[0, 1], [2, 2], [3, 0]])),
    "index_select": lambda L, a, b: a.index_select(0, L.tensor([0, 2])),
    "softmax": lambda L, a, b: a.softmax(-1), "log_softmax": lambda L, a, b: L.log_softmax(a, 0),
    "topk": lambda L, a, b: a.topk(2)[0], "topk_smallest": lambda L, a, b: a.topk(2, largest=False)[0],
    "sort": lambda L, a, b: a.sort(1)[0], "to_double": lambda L, a, b: a.float(),
    "mm": lambda L, a, b: a @ b.T, "mm_fn": lambda L, a, b: L.mm(a, b.t()), "mv": lambda L, a, b: a @ b[0],
    "dot": lambda L, a, b: a[0] @ b[0], "bmm_fn": lambda L, a, b: L.bmm(a[None], b.T[None]),
    "matmul_fn": lambda L, a, b: L.matmul(a, b.T), "inplace_sub": lambda L, a, b: a.exp().sub_(b, alpha=2),
    "inplace_add": lambda L, a, b: a.exp().add_(b), "inplace_mul_scalar": lambda L, a, b: a.exp().mul_(2),
    "setitem": lambda L, a, b: _setitem(a.exp(), b),
}


def _setitem(t, v):
    t[0] = v[1]
    return t


@pytest.mark.parametrize("name", sorted(NAMED_OPS))
def test_node_names_and_edges_match_torch(torch, name):
    fn = NAMED_OPS[name]
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(A), rng.standard_normal(B)
    got = fn(mg, mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True))
    want = fn(torch, torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True))
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    assert got.grad_fn.name() == node_name(want.grad_fn)
    assert edge_names(got) == edge_names(want)
    # one level deeper: the chain PyTorch builds (decomposed indexing, ...)
    for (gn, _), (wn, _) in zip(got.grad_fn.next_functions, want.grad_fn.next_functions):
        if gn is not None and wn is not None and type(wn).__name__ != "AccumulateGrad":
            assert [(None if n is None else type(n).__name__, i) for n, i in gn.next_functions] == [
                (None if n is None else type(n).__name__, i) for n, i in wn.next_functions
            ]


@pytest.mark.parametrize(
    "sa, sb, name",
    [
        ((2, 3, 4), (2, 4, 5), "BmmBackward0"),
        ((2, 3, 4), (4, 5), "MatmulBackward0"),
        ((4,), (2, 4, 5), "MatmulBackward0"),
        ((4,), (4, 5), "MatmulBackward0"),
        ((5, 2, 3, 4), (2, 4, 5), "MatmulBackward0"),
    ],
)
def test_batched_matmul_is_one_node(sa, sb, name):
    # Deliberately one node where PyTorch decomposes into view/mm/unsafe_view (see ops/matmul.py).
    a, b = leaf(*sa), leaf(*sb)
    out = a @ b
    assert out.grad_fn.name() == name
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad", "AccumulateGrad"]


@pytest.mark.parametrize("sa", [(6, 4, 5), (3, 2, 4, 5), "strided"])
def test_rows_times_a_matrix_backward_is_one_product_as_torchs(torch, sa):
    # `x @ W` of a (B, T, C) x: W's gradient is one product over all B*T rows, as PyTorch folds it (not a
    # product per batch entry summed after: the same bits as the 2-D product of the rows, a fraction of
    # the time); x's is g @ W^T; both as PyTorch's; a compiled step replays the same products
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((4, 6, 5) if sa == "strided" else sa).astype(np.float32)
    w0, g0 = rng.standard_normal((5, 3)).astype(np.float32), None
    grads = []
    for lib in (mg, torch):
        x, w = lib.tensor(x0, requires_grad=True), lib.tensor(w0, requires_grad=True)
        xs = x.transpose(0, 1) if sa == "strided" else x
        out = xs @ w
        g0 = rng.standard_normal(tuple(out.shape)).astype(np.float32) if g0 is None else g0
        out.backward(lib.tensor(g0))
        grads.append((x.grad.numpy(), w.grad.numpy()))
    (gx, gw), (tx, tw) = grads
    np.testing.assert_allclose(gx, tx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gw, tw, rtol=1e-5, atol=1e-5)
    rows = (x0.transpose(1, 0, 2) if sa == "strided" else x0).reshape(-1, 5)
    assert np.array_equal(gw, rows.T @ g0.reshape(-1, 3))
    # the recorded backward (create_graph) agrees, and differentiates again
    x, w = mg.tensor(rows.reshape(-1, 2, 5), requires_grad=True), mg.tensor(w0, requires_grad=True)
    (gw2,) = mg.autograd.grad((x @ w).pow(2).sum(), w, create_graph=True)
    np.testing.assert_allclose(gw2.detach().numpy(), (rows.T @ (2 * rows @ w0)), rtol=1e-5, atol=1e-5)
    gw2.sum().backward()
    assert x.grad is not None and w.grad is not None
    # compiled: the step's array products, the eager step's bits
    xc, wc = mg.tensor(x0, requires_grad=True), mg.tensor(w0, requires_grad=True)

    def step():
        wc.grad = xc.grad = None
        ((xc.transpose(0, 1) if sa == "strided" else xc) @ wc).backward(mg.tensor(g0))
        return wc.grad, xc.grad

    compiled = mg.compile(step)
    for _ in range(3):
        cw, cx = compiled()
        assert np.array_equal(cw.numpy(), gw) and np.array_equal(cx.numpy(), gx)


def test_next_functions_shapes():
    x, w = leaf(3), leaf(3, seed=1)
    y = x * w
    assert len(y.grad_fn.next_functions) == 2
    assert all(type(n).__name__ == "AccumulateGrad" for n, _ in y.grad_fn.next_functions)
    assert y.grad_fn.next_functions[0][0].variable is x and y.grad_fn.next_functions[1][0].variable is w
    # a scalar or a tensor that does not require grad is (None, 0)
    assert (x + 1).grad_fn.next_functions[1] == (None, 0)
    assert (mg.ones(3, dtype=mg.float64) * x).grad_fn.next_functions[0] == (None, 0)
    # multi-output nodes: the output index is the second element
    parts = x.split(1)
    s = parts[2] * parts[0]
    assert s.grad_fn.next_functions[0] == (parts[0].grad_fn, 2)
    assert s.grad_fn.next_functions[1] == (parts[0].grad_fn, 0)
    # cat: one edge per input tensor
    c = mg.cat([x, w, x])
    assert [n.variable for n, _ in c.grad_fn.next_functions] == [x, w, x]


def test_leaf_flags():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    c = mg.tensor([1.0, 2.0])
    assert x.is_leaf and x.requires_grad and x.grad_fn is None and x.grad is None
    assert c.is_leaf and not c.requires_grad
    y = x * c
    assert not y.is_leaf and y.requires_grad and y.grad_fn is not None
    z = c * 2
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None
    with mg.no_grad():
        n = x * 2
    assert n.is_leaf and not n.requires_grad
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    assert y.requires_grad_(True) is y
    assert c.requires_grad_() is c and c.requires_grad
    c.requires_grad_(False)
    assert not c.requires_grad
    # comparisons and argmax never require grad
    assert not (x > 1).requires_grad and (x > 1).grad_fn is None
    assert not x.argmax().requires_grad
    # non-leaf .grad is None (with no retain_grad)
    y.sum().backward()
    assert y.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0])


def test_retain_grad():
    x = leaf(3)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    z = (y * y).sum()
    z.backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * y.detach().numpy())
    assert not y.grad.requires_grad
    # the retained grad must not alias the leaf's grad
    x.grad.array[...] = 0
    assert np.all(y.grad.numpy() != 0)
    # retain_grad on a leaf is a no-op; on a tensor without grad it is an error
    x.retain_grad()
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        mg.zeros(2).retain_grad()


def test_retain_grad_accumulates_across_backwards():
    x = leaf(3)
    y = x * 2
    y.retain_grad()
    (y.sum() * 3).backward(retain_graph=True)
    (y.sum() * 3).backward()
    np.testing.assert_allclose(y.grad.numpy(), 6.0)


def test_hooks_replace_gradient_on_leaf_and_non_leaf():
    x = leaf(3)
    seen = []
    h = x.register_hook(lambda g: g * 10)
    y = x * 2
    y.register_hook(lambda g: seen.append(g.detach().numpy().copy()))
    y.register_hook(lambda g: g + 1)
    y.retain_grad()
    y.sum().backward()
    np.testing.assert_allclose(seen[0], 1.0)
    # y's grad was replaced by 1 + 1 = 2; retain_grad sees the hooked value, then x gets 2*2*10
    np.testing.assert_allclose(y.grad.numpy(), 2.0)
    np.testing.assert_allclose(x.grad.numpy(), 40.0)
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0)


def test_hook_on_tensor_without_grad_is_an_error():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        mg.zeros(2).register_hook(lambda g: g)


def test_hooks_match_torch(torch):
    def run(L):
        x = L.tensor([1.0, -2.0, 3.0], dtype=L.float64, requires_grad=True)
        x.register_hook(lambda g: g * 2)
        y = x.exp()
        y.register_hook(lambda g: g - 1)
        y.retain_grad()
        (y * x).sum().backward()
        return x.grad.numpy(), y.grad.numpy()

    for g, w in zip(run(mg), run(torch)):
        np.testing.assert_allclose(g, w, atol=1e-12)


@pytest.mark.parametrize("inputs", [False, True])
def test_stashed_hook_gradient_is_not_stolen(inputs):
    x = leaf(3)
    stash = []
    x.register_hook(lambda g: stash.append(g))
    (x * 1.0).sum().backward(inputs=[x] if inputs else None)
    before = stash[0].numpy().copy()
    x.grad.array[...] = 123.0
    np.testing.assert_array_equal(stash[0].numpy(), before)
    (x * 1.0).sum().backward()
    np.testing.assert_array_equal(stash[0].numpy(), before)


def test_detach_shares_data_and_version():
    x = leaf(3)
    y = x * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    assert np.shares_memory(d.array, y.array)
    d.add_(1)
    assert y._version == 1
    np.testing.assert_allclose(y.detach().numpy(), d.numpy())


def test_detach_inplace():
    x = leaf(3)
    y = x * 2
    z = y.detach_()
    assert z is y and y.is_leaf and not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        y.sum().backward()


def test_clone_records_and_copies():
    x = leaf(3)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0" and not np.shares_memory(c.array, x.array)
    (c * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3.0)
    d = mg.ones(2).clone()
    assert d.grad_fn is None and not d.requires_grad


def test_requires_grad_toggles_recording():
    x = mg.tensor([1.0, 2.0])
    assert (x * 2).grad_fn is None
    x.requires_grad_()
    assert (x * 2).grad_fn is not None


def test_retain_graph():
    x = leaf(3)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1)
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn.next_functions[0][0]._saved_self  # noqa: B018


def test_second_backward_without_saved_tensors_succeeds():
    # as in PyTorch: nodes that saved nothing can run again
    x = leaf(3)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0)


def test_saved_tensors_visible_by_name():
    x, w = leaf(3), leaf(3, seed=1)
    y = x * w
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is w
    e = x.exp()
    # as in PyTorch: a saved output comes back as a new tensor on the same memory, with the node as grad_fn
    r = e.grad_fn._saved_result
    assert r is not e and r.grad_fn is e.grad_fn and np.shares_memory(r.array, e.array)
    p = x**3
    assert p.grad_fn._saved_self is x
    with pytest.raises(AttributeError):
        e.grad_fn._saved_nothing  # noqa: B018


def test_saved_names_read_again_and_on_other_nodes():
    # a name saved once is a class attribute of every node: each node still answers for itself
    x, w = leaf(3), leaf(3, seed=1)
    for _ in range(2):
        m, e = x * w, x.exp()
        assert m.grad_fn._saved_self is x and m.grad_fn._saved_other is w
        assert e.grad_fn._saved_result.grad_fn is e.grad_fn
        assert m.grad_fn._saved_output_nr is None  # (the engine's, not a name)
        for node, name in ((e.grad_fn, "_saved_self"), (m.grad_fn, "_saved_result"), (e.grad_fn, "_saved_nothing")):
            assert not hasattr(node, name)
            with pytest.raises(AttributeError, match=f"'{node.name()}' object has no attribute '{name}'"):
                getattr(node, name)

    class Keeps(Function):  # a ctx attribute of a saved name set by forward wins
        @staticmethod
        def forward(ctx, a):
            ctx._saved_self = "mine"
            return a.array * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    assert Keeps.apply(x).grad_fn._saved_self == "mine"
    m = x * w
    (m.sum()).backward()
    with pytest.raises(RuntimeError, match=FREED):
        m.grad_fn._saved_self  # noqa: B018


def test_long_chain_backward_without_recursion():
    n = 100_000
    x = mg.tensor(1.0, dtype=mg.float64, requires_grad=True)
    y = x
    for _ in range(n):
        y = y + 1.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        y.backward()
    finally:
        sys.setrecursionlimit(limit)
    assert y.item() == n + 1 and x.grad.item() == 1.0
    del y
    gc.collect()


def test_long_chain_graph_is_freed_without_recursion():
    # dropping the last reference to a deep graph must not overflow the C stack either
    x = mg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    del y
    gc.collect()


def _tracked_objects_kept(op):
    """The objects the garbage collector still tracks after a collection, per call of `op` whose result is kept:
    what each full collection walks while a step's graph is alive."""
    op()
    gc.collect()
    before = len(gc.get_objects())
    kept = [op() for _ in range(100)]
    for _ in range(3):  # (each collection stops tracking tuples of atoms: shapes, flags, names, one level of
        gc.collect()    # nesting a collection)
    return round((len(gc.get_objects()) - before - 1) / len(kept))  # (- 1: the list `kept`)


def test_a_recorded_op_keeps_only_its_graph_tracked():
    # A small model's step keeps about a thousand recorded ops alive, and a full collection walks every tracked
    # object: a recorded op keeps its node, an edge per input and their tuple (next_functions), its saved
    # tensors and their list, and its output with the output's version counter; nothing else it keeps (output
    # metadata, flags, positions, names) holds an object the collector must keep tracking
    a, b = leaf(16, 8, seed=1), leaf(16, 8, seed=2)
    assert _tracked_objects_kept(lambda: a * b) <= 1 + 3 + 3 + 2
    assert _tracked_objects_kept(lambda: a.tanh()) <= 1 + 2 + 2 + 2
    # the flags kept once per pattern are bools, whatever equal tuples of ints exist
    x, y = leaf(1, 1), mg.ones(1, 1, dtype=mg.float64)
    flags = (y * x).grad_fn.needs_input_grad
    assert flags == (False, True) and all(type(f) is bool for f in flags)


def test_backward_order_is_reverse_topological():
    x = leaf(2)
    order = []
    a = x * 2
    b = a.exp()
    c = a * b  # a is used twice: its node runs once, after both consumers
    a.grad_fn.register_hook(lambda gi, go: order.append("a"))
    b.grad_fn.register_hook(lambda gi, go: order.append("b"))
    c.grad_fn.register_hook(lambda gi, go: order.append("c"))
    c.sum().backward()
    assert order == ["c", "b", "a"]


def test_node_hook_returning_wrong_number_of_grads_raises_as_torch():
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (torch, mg):
        a = lib.ones(3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        c = a * b
        c.grad_fn.register_hook(lambda gi, go: (gi[0],))  # one gradient for MulBackward0's two inputs
        with pytest.raises(RuntimeError) as e:
            c.sum().backward()
        messages.append(str(e.value))
        assert b.grad is None
    assert messages[1] == messages[0]


def _prehook_story(lib):
    """What node pre-hooks (grad_fn.register_prehook) see and make of a node's gradients, and their refusals."""
    def show(go):
        return [None if g is None else g.tolist() for g in go]
    out = []
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda go: out.append(("pre", show(go))) or (go[0] * 10,))
    y.register_hook(lambda g: out.append(("tensor hook", g.tolist())) or g + 1)  # (tensor hooks run first)
    y.sum().backward()
    out.append(("grad", x.grad.tolist()))
    x.grad = None
    pieces = lib.split(x, 2)  # a node of two outputs, one of which gets no gradient: the hook sees None there
    pieces[0].grad_fn.register_prehook(lambda go: out.append(("split", show(go))) or (go[0] * 3, None))
    pieces[0].sum().backward()
    out.append(("grad", x.grad.tolist()))
    x.grad = None
    handle = (x * 1).grad_fn.next_functions[0][0].register_prehook(lambda go: (go[0] * 2,))  # a leaf's AccumulateGrad
    (x * 1).sum().backward()
    out.append(("grad", x.grad.tolist()))
    handle.remove()
    for bad in (lambda go: [go[0]], lambda go: (go[0], go[0])):
        y = x * 2
        y.grad_fn.register_prehook(bad)
        try:
            y.sum().backward()
        except (TypeError, RuntimeError) as e:
            out.append((type(e).__name__, str(e)))
    c = x * x
    c.grad_fn.register_hook(lambda gi, go: list(gi))  # a node post-hook's result must be a tuple too
    try:
        c.sum().backward()
    except TypeError as e:
        out.append(("post", str(e)))
    return out


def test_node_pre_hooks_as_torch():
    # Node.register_prehook was missing (AttributeError); a node hook returning a list was taken
    torch = pytest.importorskip("torch")
    assert _prehook_story(mg) == _prehook_story(torch)


# ---- grad modes -----------------------------------------------------------------------------
def test_no_grad_context_and_decorator():
    x = leaf(2)
    with mg.no_grad():
        assert not mg.is_grad_enabled()
        y = x * 2
        with mg.enable_grad():
            assert mg.is_grad_enabled()
            z = x * 2
    assert mg.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    assert z.grad_fn is not None

    @mg.no_grad()
    def f(t):
        return t * 2, mg.is_grad_enabled()

    out, enabled = f(x)
    assert not enabled and out.grad_fn is None and mg.is_grad_enabled()

    @mg.enable_grad()
    def g(t):
        return t * 2

    with mg.no_grad():
        assert g(x).grad_fn is not None
        assert not mg.is_grad_enabled()


def test_no_grad_restores_on_exception():
    with pytest.raises(ValueError):
        with mg.no_grad():
            raise ValueError
    assert mg.is_grad_enabled()


def test_set_grad_enabled():
    x = leaf(2)
    with mg.set_grad_enabled(False):
        assert (x * 2).grad_fn is None
    assert mg.is_grad_enabled()
    with mg.set_grad_enabled(True):
        assert (x * 2).grad_fn is not None
    mg.set_grad_enabled(False)  # as a function call, it sets the mode at once
    try:
        assert not mg.is_grad_enabled()
    finally:
        mg.set_grad_enabled(True)
    assert mg.is_grad_enabled()

    @mg.set_grad_enabled(False)
    def f():
        return mg.is_grad_enabled()

    assert f() is False and mg.is_grad_enabled()


def test_inference_mode():
    x = leaf(2)
    with mg.inference_mode():
        assert not mg.is_grad_enabled()
        assert mg.autograd.grad_mode.is_inference_mode_enabled()
        assert (x * 2).grad_fn is None
    assert mg.is_grad_enabled()
    with mg.inference_mode(False):
        assert (x * 2).grad_fn is not None

    @mg.inference_mode()
    def f(t):
        return t * 2

    assert f(x).grad_fn is None and mg.is_grad_enabled()


def test_grad_mode_turned_on_under_inference_mode_records_nothing():
    # an @enable_grad() helper (a closure, a metric) called from an evaluation under inference_mode: PyTorch's
    # grad mode says True there, yet inference mode keeps autograd out; inference_mode(False) records again
    torch = pytest.importorskip("torch")

    def seen(lib):
        x = lib.ones(2, requires_grad=True)
        out = []

        @lib.enable_grad()
        def helper():
            return lib.is_grad_enabled(), (x * 3).requires_grad

        with lib.inference_mode():
            with lib.enable_grad():
                out.append((lib.is_grad_enabled(), (x * 2).requires_grad))
                with lib.no_grad():
                    out.append(lib.is_grad_enabled())
                with lib.inference_mode(False):
                    y = x * 2
                    out.append((lib.is_grad_enabled(), y.requires_grad, y.is_inference()))
                out.append(lib.is_grad_enabled())
            with lib.set_grad_enabled(True):
                out.append((lib.is_grad_enabled(), (x * 2).requires_grad))
            out.append((lib.is_grad_enabled(), helper()))
        out.append((lib.is_grad_enabled(), (x * 2).requires_grad))
        return out

    assert seen(mg) == seen(torch) == [(True, False), False, (True, True, False), True, (True, False),
                                       (False, (True, False)), (True, True)]


def test_inference_tensor_refuses_requires_grad_outside_inference_mode():
    # a model's output made under inference_mode, then marked for a loss: PyTorch refuses it there
    torch = pytest.importorskip("torch")
    for lib in (mg, torch):
        with lib.inference_mode():
            out = lib.ones(2)
            inside = lib.ones(2).requires_grad_()  # allowed while inference mode is on
        assert inside.requires_grad
        assert out.requires_grad_(False).requires_grad is False
        with pytest.raises(RuntimeError, match="^Setting requires_grad=True on inference tensor outside "
                                               "InferenceMode is not allowed.$"):
            out.requires_grad_()


def test_inference_tensor_refuses_inplace_writes_outside_inference_mode():
    # evaluation features kept from inference_mode, then normalised in place: PyTorch refuses every in-place
    # write (ufunc ops, setitem, fills, copies, views of it) outside the mode, under no_grad too, and allows
    # them inside it
    torch = pytest.importorskip("torch")
    for lib in (mg, torch):
        with lib.inference_mode():
            feats = lib.ones(3)
            feats.add_(1.0)
            feats[0] = 5.0
            feats.zero_()
        writes = (lambda f, lib: f.add_(1.0), lambda f, lib: f.mul_(f), lambda f, lib: f.__setitem__(0, 2.0),
                  lambda f, lib: f.zero_(), lambda f, lib: f.fill_(1), lambda f, lib: f.copy_(lib.zeros(3)),
                  lambda f, lib: f.uniform_(), lambda f, lib: f.view(3).sub_(1.0), lambda f, lib: f.clamp_(min=0))
        for write in writes:
            for mode in (lib.enable_grad, lib.no_grad):
                with mode(), pytest.raises(RuntimeError, match="^Inplace update to inference tensor outside "
                                                                 "InferenceMode is not allowed.You can make a clone"):
                    write(feats, lib)
        assert feats.tolist() == [0.0, 0.0, 0.0]
        normal = lib.ones(3)
        normal.add_(1.0)
        normal.zero_()  # (a normal tensor's writes are untouched)
        assert normal.tolist() == [0.0, 0.0, 0.0]


def test_inference_tensor_cannot_be_saved_for_backward():
    # features computed under inference_mode, then fed to a trained layer: PyTorch refuses at the forward
    # wherever the op would save the inference tensor, and lets ops that save nothing (an add) through
    torch = pytest.importorskip("torch")
    texts = []
    for lib in (mg, torch):
        w = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            feats = lib.ones(4, 3) * 2
        (feats + w).sum().backward()
        assert w.grad.tolist() == [4.0, 4.0, 4.0]
        for op, args in ((lib.mul, (feats, w)), (lib.nn.functional.linear, (feats, w[None]))):
            with pytest.raises(RuntimeError) as err:
                op(*args)
            texts.append(str(err.value).replace("minigrad.", "torch."))
        (feats.clone() * w).sum().backward()  # the documented way round it
    assert texts[:2] == texts[2:] and texts[0].startswith("Inference tensors cannot be saved for backward.")


def test_grad_mode_is_thread_local():
    x = leaf(2)
    inside, release, results = threading.Event(), threading.Event(), {}

    def worker():
        with mg.no_grad():
            results["worker_enabled"] = mg.is_grad_enabled()
            inside.set()
            release.wait(5)

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(5)
    try:
        assert mg.is_grad_enabled()
        assert (x * 2).grad_fn is not None
    finally:
        release.set()
        t.join()
    assert results["worker_enabled"] is False

    def fresh():
        results["fresh"] = mg.is_grad_enabled()

    with mg.no_grad():
        t = threading.Thread(target=fresh)
        t.start()
        t.join()
    assert results["fresh"] is True


def _modes_seen_in_backward(lib, change, create_graph, where):
    """Grad mode as each later hook sees it, after `change` ran where `where` says and left the mode changed."""
    seen = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)

    class Leaves(lib.autograd.Function):  # a user Function whose backward may change the mode
        @staticmethod
        def forward(ctx, t):
            return t * 1

        @staticmethod
        def backward(ctx, g):
            if where == "function":
                change()
            return g

    a = x * 2
    b = Leaves.apply(a.exp())
    if where == "tensor_hook":
        b.register_hook(lambda g: change())
    elif where == "node_hook":
        b.grad_fn.register_hook(lambda gi, go: change())
    a.register_hook(lambda g: seen.append(("a", lib.is_grad_enabled())))
    a.grad_fn.register_hook(lambda gi, go: seen.append(("a_post", lib.is_grad_enabled(), gi[0].requires_grad)))
    x.register_hook(lambda g: seen.append(("x", lib.is_grad_enabled())))
    b.sum().backward(create_graph=create_graph)
    seen.append(("after", lib.is_grad_enabled()))
    lib.set_grad_enabled(True)
    return seen


@pytest.mark.parametrize("where", ["tensor_hook", "node_hook", "function"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("change", ["set_grad_enabled", "enter"])
def test_each_node_runs_in_the_backwards_grad_mode_as_torch(torch, where, create_graph, change):
    # a hook or a Function's backward that flips grad mode and leaves it flipped: PyTorch runs every later
    # node (its hooks included) in the mode the backward started with, and restores the caller's after
    def changer(lib):
        flip = not create_graph

        def flip_mode():
            if change == "enter":
                (lib.enable_grad() if flip else lib.no_grad()).__enter__()
            else:
                lib.set_grad_enabled(flip)
        return flip_mode

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's warning on backward(create_graph=True))
        expected = _modes_seen_in_backward(torch, changer(torch), create_graph, where)
    assert _modes_seen_in_backward(mg, changer(mg), create_graph, where) == expected


# ---- versions and in-place ops -----------------------------------------------------------------
INPLACE = {
    "add_": lambda t: t.add_(1.0), "add_tensor": lambda t: t.add_(mg.ones(3)), "sub_": lambda t: t.sub_(1.0),
    "mul_": lambda t: t.mul_(2.0), "div_": lambda t: t.div_(2.0), "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(3.0), "copy_": lambda t: t.copy_(mg.ones(3)),
    "masked_fill_": lambda t: t.masked_fill_(mg.tensor([True, False, True]), 0.0),
    "clamp_": lambda t: t.clamp_(0.0, 0.5), "iadd": lambda t: t.__iadd__(1.0), "isub": lambda t: t.__isub__(1.0),
    "imul": lambda t: t.__imul__(2.0), "itruediv": lambda t: t.__itruediv__(2.0),
    "setitem": lambda t: t.__setitem__(0, 5.0), "setitem_slice": lambda t: t.__setitem__(slice(1, None), mg.zeros(2)),
    "setitem_mask": lambda t: t.__setitem__(mg.tensor([True, False, False]), 1.0),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_ops_bump_version(name):
    t = mg.tensor([0.25, 0.5, 2.0])
    before = t.numpy().copy()
    assert t._version == 0
    out = INPLACE[name](t)
    assert t._version == 1
    assert out is None or out is t
    assert not np.array_equal(t.numpy(), before) or name == "clamp_"


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_ops_match_torch(torch, name):
    m = mg.tensor([0.25, 0.5, 2.0])
    w = torch.tensor([0.25, 0.5, 2.0])
    INPLACE[name](m)
    TORCH_INPLACE = {
        "add_tensor": lambda t: t.add_(torch.ones(3)), "copy_": lambda t: t.copy_(torch.ones(3)),
        "masked_fill_": lambda t: t.masked_fill_(torch.tensor([True, False, True]), 0.0),
        "setitem_slice": lambda t: t.__setitem__(slice(1, None), torch.zeros(2)),
        "setitem_mask": lambda t: t.__setitem__(torch.tensor([True, False, False]), 1.0),
    }
    TORCH_INPLACE.get(name, INPLACE[name])(w)
    np.testing.assert_allclose(m.numpy(), w.numpy())
    assert m._version == w._version


def test_augmented_assignment_keeps_identity():
    t = mg.tensor([1.0, 2.0])
    ref = t
    t += 1
    t -= 0.5
    t *= 2
    t /= 3
    assert t is ref and t._version == 4
    np.testing.assert_allclose(t.numpy(), [1.0, 5.0 / 3.0])


def test_views_share_version_counter():
    base = mg.zeros(3, 4)
    views = [base[0], base[:, 1:], base.view(12), base.reshape(4, 3), base.T, base.transpose(0, 1),
             base.permute(1, 0), base.unsqueeze(0), base[None], base.expand(2, 3, 4), base.split(1)[0],
             base.chunk(2, dim=1)[1], base.flatten(), base.unsqueeze(0).squeeze(0), base.detach()]
    base.add_(1)
    for v in views:
        assert v._version == 1
    views[1].mul_(2)  # in-place through a view is seen by the base and the other views
    assert base._version == 2 and views[0]._version == 2
    np.testing.assert_allclose(base.numpy()[0], [1, 2, 2, 2])
    # a copy does not share it
    c = base.clone()
    base.zero_()
    assert c._version == 0
    idx = base[mg.tensor([0, 1])]
    base.zero_()
    assert idx._version == 0


def test_saved_tensor_modified_through_view_is_caught():
    x = leaf(3)
    y = x.exp()
    z = y.sum()
    with mg.no_grad():
        y[0:2].mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        z.backward()


def test_inplace_on_non_leaf_records_and_rebases():
    x = leaf(3)
    y = x * 2
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0" and y._version == 1
    c = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64)
    y.mul_(c)
    assert y.grad_fn.name() == "MulBackward0" and y._version == 2
    (y.sum()).backward()
    # d/dx [(2x + 1) * c] = 2c
    np.testing.assert_allclose(x.grad.numpy(), 2 * c.numpy())


@pytest.mark.parametrize("op", ["add", "sub"])
def test_a_running_sum_in_place_records_as_torch_does(torch, op):
    # `total += part` (a running loss): its node is the out-of-place op's, its values in total's memory
    parts = [np.arange(3.0) + i for i in range(3)]
    results = []
    for lib in (mg, torch):
        leaves = [lib.tensor(p, requires_grad=True) for p in parts]
        total = lib.zeros(3, dtype=lib.float64)
        memory = total.numpy() if lib is mg else None
        for i, p in enumerate(leaves):
            if op == "add":
                total += p * (i + 1)
            else:
                total -= p[1:2] * (i + 1)  # (a shape that broadcasts to total's)
        (total * total).sum().backward()
        results.append((total.grad_fn.name(), total._version, total.detach().numpy().copy(),
                        [p.grad.numpy().copy() for p in leaves]))
        if lib is mg:
            assert np.shares_memory(total.array, memory)
    assert results[0][:2] == results[1][:2]
    np.testing.assert_array_equal(results[0][2], results[1][2])
    for ours, theirs in zip(results[0][3], results[1][3]):
        np.testing.assert_array_equal(ours, theirs)


def test_a_running_sum_in_place_keeps_the_general_checks():
    y = leaf(3) * 2
    z = y * y  # saves y: an in-place sum into y after it is caught at backward
    y += leaf(3)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        z.sum().backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        leaf(3).add_(leaf(3))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        (leaf(1) * 2).add_(leaf(3))
    base = leaf(4) * 1
    base[1:3] += leaf(2)  # a view: the base's history rewritten (CopySlices)
    assert base.grad_fn.name() == "CopySlices"


def test_gathers_backward_sums_repeats_and_refuses_an_index_written_since(torch):
    x = np.arange(12.0).reshape(3, 4)
    index = [[0, 0, 3], [2, 2, 2], [1, 0, 1]]
    grads = []
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        (t.gather(1, lib.tensor(index)) * lib.tensor([[1.0, 2.0, 3.0]])).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    t, i = leaf(3, 4), mg.tensor(index)
    y = t.gather(1, i)
    i.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_inplace_under_no_grad_on_leaf_is_allowed():
    x = leaf(3)
    with mg.no_grad():
        x.mul_(2)
        x -= 1
    assert x.is_leaf and x._version == 2 and x.grad_fn is None


def test_setitem_with_grad_matches_torch(torch):
    def run(L):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64, requires_grad=True)
        v = L.tensor([5.0, 7.0], dtype=L.float64, requires_grad=True)
        y = x * 3
        y[1:3] = v * v
        (y * L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64)).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), v.grad.numpy(), node_name(y.grad_fn)

    got, want = run(mg), run(torch)
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_allclose(g, w)
    assert got[3] == want[3]


def _views_written_in_place(L):
    """In-place ops on views while gradients are recorded, and views used after their base was written
    in place: each case's values and gradients."""
    out = []
    W = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = L.zeros(2, 3)
    d[0] += W * 2  # a plain tensor's row: the base gets a history (CopySlices)
    (d * L.tensor([[1.0, 2, 3], [4, 5, 6]])).sum().backward()
    out += [d.detach().numpy(), W.grad.numpy(), d.requires_grad]
    C = L.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)  # makemore's manual backprop of an embedding
    ix = L.tensor([[0, 1], [1, 3]])
    demb = C[ix] * 2
    dC = L.zeros_like(C)
    for k in range(2):
        for j in range(2):
            dC[ix[k, j]] += demb[k, j]
    (dC ** 2).sum().backward()
    out += [dC.detach().numpy(), C.grad.numpy()]
    x = L.tensor(np.arange(6.0).reshape(2, 3) - 2, requires_grad=True)
    h = x * 1.0
    col = h[:, 0]
    col.add_(-10)  # through one view ...
    h.view(-1).relu_()  # ... then through another: col, taken before, is read as it is now
    ((h * h).sum() + (col * 3).sum()).backward()
    out += [h.detach().numpy(), col.detach().numpy(), x.grad.numpy()]
    y = L.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    g = y * 1.0
    row = g[1]
    g.mul_(3).clamp_(max=1.0)  # the base itself written after the view was taken
    row.sum().backward()
    out += [row.detach().numpy(), y.grad.numpy()]
    return out


def test_inplace_ops_on_views_rewrite_the_base_history(torch):
    got, want = _views_written_in_place(mg), _views_written_in_place(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def test_inplace_ops_on_views_give_the_gradients_of_the_written_values():
    W = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = mg.zeros(2, 3)
    d[1] *= 0
    d[1] += W * W  # d[1] = W^2
    d.sum().backward()
    assert d.tolist() == [[0, 0, 0], [1, 4, 9]] and W.grad.tolist() == [2, 4, 6]
    assert d.grad_fn.name() == "CopySlices"
    x = mg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 1.0
    first = h[:2]
    h.relu_()
    (first * 5).sum().backward()  # first is h[:2] after relu: [1, 0]
    assert first.tolist() == [1.0, 0.0] and x.grad.tolist() == [5.0, 0.0, 0.0]


def test_inplace_on_a_view_of_a_leaf_that_requires_grad_is_refused(torch):
    for L in (mg, torch):
        x = L.ones(3, 2, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                               "in-place operation"):
            x[0].mul_(2)


# ---- autograd.grad and higher order ------------------------------------------------------------
def test_autograd_grad_returns_without_accumulating():
    x = leaf(3)
    y = (x**3).sum()
    (g,) = mg.autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(g.numpy(), 3 * x.detach().numpy() ** 2)
    assert x.grad is None and not g.requires_grad
    (g2,) = mg.autograd.grad([y], [x], grad_outputs=[mg.tensor(2.0, dtype=mg.float64)], retain_graph=True)
    np.testing.assert_allclose(g2.numpy(), 6 * x.detach().numpy() ** 2)


def test_autograd_grad_with_intermediate_input():
    x = leaf(3)
    h = x.exp()
    y = (h * h).sum()
    (gh,) = mg.autograd.grad(y, h)
    np.testing.assert_allclose(gh.numpy(), 2 * h.detach().numpy())
    assert x.grad is None


def test_hessian_vector_product():
    x = leaf(4)
    v = mg.tensor(np.arange(4.0), dtype=mg.float64)
    y = (x**3).sum() + (x[0] * x[1])
    (g,) = mg.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    (hv,) = mg.autograd.grad((g * v).sum(), x)
    xv = x.detach().numpy()
    H = np.diag(6 * xv)
    H[0, 1] = H[1, 0] = 1.0
    np.testing.assert_allclose(hv.numpy(), H @ np.arange(4.0))


def test_gradient_penalty_matches_torch(torch):
    rng = np.random.default_rng(3)
    W, X = rng.standard_normal((3, 4)), rng.standard_normal((5, 3))

    def run(L):
        w = L.tensor(W, requires_grad=True)
        x = L.tensor(X, requires_grad=True)
        out = (x @ w).tanh().sum()
        (gx,) = L.autograd.grad(out, x, create_graph=True)
        penalty = ((gx * gx).sum(1).sqrt() - 1) ** 2
        penalty.mean().backward()
        return w.grad.numpy(), x.grad.numpy()

    for g, w in zip(run(mg), run(torch)):
        np.testing.assert_allclose(g, w, atol=1e-10)


def test_backward_create_graph_then_double_backward():
    x = leaf(3)
    y = (x**3).sum()
    y.backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy())


def test_allow_unused():
    x, w = leaf(3), leaf(3, seed=1)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        mg.autograd.grad(y, [x, w], retain_graph=True)
    gx, gw = mg.autograd.grad(y, [x, w], allow_unused=True)
    assert gw is None
    np.testing.assert_allclose(gx.numpy(), 2.0)


def test_grad_of_input_without_grad_is_an_error():
    x = leaf(3)
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.autograd.grad((x * 2).sum(), mg.ones(3))


def test_backward_inputs_restricts_accumulation():
    x, w = leaf(3), leaf(3, seed=1)
    y = (x * w).sum()
    y.backward(inputs=[x], retain_graph=True)
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy())
    y.backward(inputs=w)
    np.testing.assert_allclose(w.grad.numpy(), x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy())


def test_backward_inputs_non_leaf():
    x = leaf(3)
    h = x * 2
    (h * h).sum().backward(inputs=[h])
    assert x.grad is None
    np.testing.assert_allclose(h.grad.numpy(), 2 * h.detach().numpy())


def test_backward_inputs_non_leaf_retains_its_grad_as_torch(torch):
    # a non-leaf named in inputs= keeps its .grad from then on (retains_grad True; reading it does not
    # warn); before, retains_grad stayed False, a later backward() left its .grad as it was
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        h = x * 2
        y = (h * w).sum()
        y.backward(inputs=[h], retain_graph=True)
        flags = [h.retains_grad]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            grads = [h.grad.numpy().copy()]
        y.backward(inputs=[h], retain_graph=True)  # (its retain hook adds the gradient: once, not twice)
        grads.append(h.grad.numpy().copy())
        y.backward()
        return flags, grads + [h.grad.numpy(), x.grad.numpy()]
    (f1, g1), (f2, g2) = run(mg), run(torch)
    assert f1 == f2 == [True]
    for a, b in zip(g1, g2):
        np.testing.assert_array_equal(a, b)


def test_backward_inputs_empty_is_an_error():
    x = leaf(3)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        x.sum().backward(inputs=[])


def test_empty_inputs_of_grad_and_backward_are_pytorchs_errors(torch):
    # autograd.grad(out, []) returned (); PyTorch refuses it, before looking at the outputs
    texts = []
    for L in (mg, torch):
        x = L.randn(2, requires_grad=True)
        for call in (lambda L, x: L.autograd.grad((x * 2).sum(), []), lambda L, x: L.autograd.grad(L.ones(2).sum(), ()),
                     lambda L, x: L.autograd.backward((x * 2).sum(), inputs=[]),
                     lambda L, x: (x * 2).sum().backward(inputs=[])):
            with pytest.raises(RuntimeError) as e:
                call(L, x)
            texts.append(str(e.value))
    assert texts[:4] == texts[4:]


def test_backward_with_gradient_argument():
    x = leaf(3)
    y = x * 2
    y.backward(mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_autograd_backward_multiple_roots():
    x = leaf(3)
    a, b = (x * 2).sum(), (x * 3).sum()
    mg.autograd.backward([a, b])
    np.testing.assert_allclose(x.grad.numpy(), 5.0)


def test_multi_output_partial_use():
    # only one output of a multi-output node used: the other's gradient is materialized as zeros
    x = leaf(4)
    a, b = x.split(2)
    (a * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3, 3, 0, 0])
    x.grad = None
    v, i = x.max(0)
    v.backward()
    expect = np.zeros(4)
    expect[int(i.item())] = 1
    np.testing.assert_allclose(x.grad.numpy(), expect)


# ---- custom Function -------------------------------------------------------------------------
class Cube(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        ctx.seen_needs = Cube.last_needs = tuple(ctx.needs_input_grad)
        return x * x * x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.k, None


class MulAdd(Function):
    @staticmethod
    def forward(ctx, a, b, c):
        ctx.save_for_backward(a, b)
        return a * b + c

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g * b if ctx.needs_input_grad[0] else None
        gb = g * a if ctx.needs_input_grad[1] else None
        gc = g if ctx.needs_input_grad[2] else None
        return ga, gb, gc


class ExpInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.array[...] = np.exp(x.array)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r


def test_custom_function_forward_backward_and_names():
    x = leaf(3)
    y = Cube.apply(x, 2.0)
    assert type(y.grad_fn).__name__ == "CubeBackward" and y.grad_fn.name() == "CubeBackward"
    assert edge_names(y) == [("AccumulateGrad", 0)]
    assert y.grad_fn.needs_input_grad == (True, False)
    assert y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy() ** 2)


def test_custom_function_needs_input_grad_without_recording_matches_torch(torch):
    # no input requires grad: nothing is recorded, and the ctx says False per argument, as PyTorch's
    class TorchCube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            seen.append(tuple(ctx.needs_input_grad))
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, None

    seen = []
    TorchCube.apply(torch.ones(3), 2.0)
    y = Cube.apply(mg.ones(3), 2.0)
    assert y.grad_fn is None and [Cube.last_needs] == seen == [(False, False)]


def test_custom_function_name_matches_torch(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, None

    t = Cube.apply(torch.ones(2, requires_grad=True), 2.0)
    m = globals()["Cube"].apply(mg.ones(2, requires_grad=True), 2.0)
    assert type(m.grad_fn).__name__ == type(t.grad_fn).__name__ and m.grad_fn.name() == t.grad_fn.name()


def test_custom_function_needs_input_grad_and_edges(torch):
    a, b, c = leaf(3), mg.ones(3, dtype=mg.float64), leaf(3, seed=2)
    y = MulAdd.apply(a, b, c)
    assert y.grad_fn.needs_input_grad == (True, False, True)
    assert edge_names(y) == [("AccumulateGrad", 0), (None, 0), ("AccumulateGrad", 0)]
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 1.0)
    np.testing.assert_allclose(c.grad.numpy(), 1.0)
    # PyTorch gives a custom Function an edge for every tensor argument, integer ones too
    t = torch.ones(2, requires_grad=True)

    class TF(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, i):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    class MF(Function):
        @staticmethod
        def forward(ctx, x, i):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    tw = TF.apply(t, torch.tensor([1]))
    mw = MF.apply(mg.ones(2, requires_grad=True), mg.tensor([1]))
    assert edge_names(mw) == [(None if n is None else type(n).__name__, i) for n, i in tw.grad_fn.next_functions]


def test_custom_function_forward_runs_without_grad_and_output_is_new_node():
    x = leaf(3)
    y = Cube.apply(x, 1.0)
    assert y.grad_fn.seen_needs == (True, False)
    # the forward's inner ops were not recorded
    assert y.grad_fn.next_functions[0][0].variable is x


def test_custom_function_without_grad():
    x = mg.ones(3)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn is None and not y.requires_grad
    with mg.no_grad():
        assert Cube.apply(leaf(3), 1.0).grad_fn is None


def test_custom_function_mark_dirty():
    x = leaf(3)
    h = x * 1.0
    out = ExpInplace.apply(h)
    assert out is h and h._version == 1 and h.grad_fn.name() == "ExpInplaceBackward"
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))


def test_custom_function_saved_tensor_version_check():
    x = leaf(3)
    h = x * 1.0
    y = Cube.apply(h, 1.0)
    with mg.no_grad():
        h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_custom_function_wrong_number_of_grads():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    y = Bad.apply(leaf(2), leaf(2, seed=1))
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        y.sum().backward()


def test_custom_function_may_return_none_past_its_inputs(torch):
    # PyTorch's custom-Function tutorial: forward(ctx, input, weight, bias=None) returns three gradients,
    # the last None when called without a bias; PyTorch drops the trailing Nones
    grads = []
    for lib in (mg, torch):
        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, w, b=None):
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g * w, g * x, None

        x = lib.ones(2, requires_grad=True)
        w = lib.full((2,), 3.0, requires_grad=True)
        Mul.apply(x, w).sum().backward()
        grads.append((x.grad.tolist(), w.grad.tolist()))
    assert grads[0] == grads[1] == ([3.0, 3.0], [1.0, 1.0])


def test_custom_function_double_backward():
    x = leaf(3)
    y = Cube.apply(x, 1.0).sum()
    (g,) = mg.autograd.grad(y, x, create_graph=True)
    (gg,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * x.detach().numpy())


def test_custom_function_matches_torch(torch):
    def define(L):
        class Gelu(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * (x * 1.702).sigmoid()

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                s = (x * 1.702).sigmoid()
                return g * (s + x * 1.702 * s * (1 - s))

        return Gelu

    X = np.linspace(-2, 2, 7)
    out = []
    for L in (mg, torch):
        x = L.tensor(X, requires_grad=True)
        y = define(L).apply(x)
        (y * y).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    np.testing.assert_allclose(out[0][0], out[1][0], atol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], atol=1e-12)
    assert out[0][2] == out[1][2]


# ---- accumulation and aliasing ---------------------------------------------------------------------
def test_gradient_accumulates_across_backward_calls():
    x = leaf(3)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g  # accumulated in place, as PyTorch does
    np.testing.assert_allclose(x.grad.numpy(), 5.0)
    x.grad = None
    (x * 4).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4.0)
    x.grad.zero_()
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1.0)


def test_leaf_used_twice_sums():
    x = leaf(3)
    (x * x + x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() + 1)


SHARING_GRAPHS = {
    "add": lambda x, w: x + w,
    "add_sum": lambda x, w: (x + w).sum(),
    "add_broadcast_same": lambda x, w: x + w + 0.0,
    "sub": lambda x, w: x - w,
    "x_plus_x": lambda x, w: x + x + w,
    "cat": lambda x, w: mg.cat([x, w]),
    "stack": lambda x, w: mg.stack([x, w]),
    "where": lambda x, w: mg.where(mg.tensor([True, False, True]), x, w),
    "reshape": lambda x, w: x.reshape(3, 1) + w.reshape(3, 1),
    "clone": lambda x, w: x.clone() + w.clone(),
    "maximum_tie": lambda x, w: mg.maximum(x * 0, w * 0),
    "expand": lambda x, w: (x + w).expand(2, 3),
    "view_chain": lambda x, w: (x.view(3) + w.view(3)).view(1, 3),
}


@pytest.mark.parametrize("via", ["backward", "inputs", "autograd_grad"])
@pytest.mark.parametrize("name", sorted(SHARING_GRAPHS))
def test_leaf_grads_never_alias(name, via):
    x, w = leaf(3), leaf(3, seed=1)

    def run():
        out = SHARING_GRAPHS[name](x, w)
        g = mg.ones(out.shape, dtype=out.dtype)
        if via == "backward":
            out.backward(g)
        elif via == "inputs":
            out.backward(g, inputs=[x, w])
        else:
            # (the returned gradients may share memory, as PyTorch's may; .grad is the caller's choice)
            gx, gw = mg.autograd.grad(out, [x, w], g)
            x.grad, w.grad = gx.clone(), gw.clone()

    run()
    gw = w.grad.numpy().copy()
    assert not np.shares_memory(x.grad.array, w.grad.array)
    x.grad.array += 100.0
    np.testing.assert_array_equal(w.grad.numpy(), gw)
    # and accumulating again (the in-place path) keeps them apart
    run()
    assert not np.shares_memory(x.grad.array, w.grad.array)


def test_leaf_grad_does_not_alias_user_gradient():
    x = leaf(3)
    g = mg.ones(3, dtype=mg.float64)
    (x * 1).backward(g)
    x.grad.array += 1
    np.testing.assert_array_equal(g.numpy(), 1.0)
    y = leaf(3)
    g = mg.ones(3, dtype=mg.float64)
    y.backward(g)  # the leaf itself is the root: its grad is the user's tensor
    y.grad.array += 1
    np.testing.assert_array_equal(g.numpy(), 1.0)


def test_leaf_grad_does_not_alias_retained_or_captured_grads():
    x, w = leaf(3), leaf(3, seed=1)
    h = x + w
    h.retain_grad()
    (h * 1.0).sum().backward()
    x.grad.array += 5
    np.testing.assert_array_equal(h.grad.numpy(), 1.0)
    np.testing.assert_array_equal(w.grad.numpy(), 1.0)


def test_leaf_grad_does_not_alias_hook_output_held_elsewhere():
    x, w = leaf(3), leaf(3, seed=1)
    keep = mg.ones(3, dtype=mg.float64)
    x.register_hook(lambda g: keep)
    (x + w).sum().backward()
    x.grad.array += 1
    np.testing.assert_array_equal(keep.numpy(), 1.0)
    np.testing.assert_array_equal(w.grad.numpy(), 1.0)


def _spy_in_place(monkeypatch):
    """Record whether each sum of two branches' gradients in the engine's buffers was made in place."""
    from minigrad.autograd import engine

    seen, real = [], engine._add_in_place

    def spy(buf, nr, g, *siblings):
        seen.append(real(buf, nr, g, *siblings))
        return seen[-1]

    monkeypatch.setattr(engine, "_add_in_place", spy)
    return seen


def test_branch_gradients_are_summed_in_place_when_nothing_else_holds_them(monkeypatch):
    seen = _spy_in_place(monkeypatch)
    x = leaf(4, 5)
    h = x * 2.0
    (h.exp() + h.sin()).sum().backward()  # h's two uses: their gradients meet in h's node's buffer
    xd = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (np.exp(2 * xd) + np.cos(2 * xd)))
    assert seen == [True]
    seen.clear()
    x.grad = None
    h = x * 2.0
    (h.exp() + h.sin()).sum().backward(create_graph=True)  # create_graph: the sum is recorded, never in place
    assert seen == [] and x.grad.grad_fn is not None


def test_branch_gradient_held_elsewhere_is_not_summed_into(monkeypatch):
    # a hook hands down a tensor the user keeps: the other branch's gradient must not be added into it
    seen = _spy_in_place(monkeypatch)
    for keep_first in (True, False):  # the node made last runs first: its gradient reaches u's buffer first
        x = leaf(3)
        keep = mg.ones(3, dtype=mg.float64)
        u = x * 1.0
        if keep_first:
            w = u * 3.0
        v = u + 0.0  # passes its gradient on unchanged: u's node is handed `keep` itself
        v.register_hook(lambda g, keep=keep: keep)
        if not keep_first:
            w = u * 3.0
        (v.sum() + w.sum()).backward()
        np.testing.assert_array_equal(keep.numpy(), 1.0)
        np.testing.assert_allclose(x.grad.numpy(), 4.0)
    assert seen == [False, True]  # into `keep`: never; into the product's own gradient: in place


def test_saved_array_handed_out_as_a_gradient_is_not_summed_into(monkeypatch):
    # a Function may return a saved array as its gradient (cross_entropy does): with retain_graph,
    # summing another branch into it would change what the next backward reads
    class Scale(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save(d=np.full(x.array.shape, 2.0))
            return x.array * 2.0

        @staticmethod
        def backward(ctx, g):
            return ctx._saved_d  # the saved tensor itself (valid for an upstream gradient of ones)

    seen = _spy_in_place(monkeypatch)
    x = leaf(3)
    u = x * 1.0
    w = u * 5.0
    s = Scale.apply(u)  # made last, so run first: the saved array is the first gradient in u's buffer
    out = s.sum() + w.sum()
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(s.grad_fn._saved_d.numpy(), 2.0)
    first = x.grad.numpy().copy()
    x.grad = None
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), first)
    np.testing.assert_allclose(first, 7.0)
    # retained: never summed into; on the last backward the node has released it first, so nothing
    # else holds it any more and the sum may reuse it
    assert seen == [False, True]


def test_leaf_grad_of_view_gradient_is_contiguous_and_owned():
    x = leaf(3, 4)
    x.T.sum(0).sum().backward()
    assert x.grad.array.flags.c_contiguous and x.grad.array.flags.writeable
    x = leaf(3, 4)
    x.expand(2, 3, 4).sum().backward()
    assert x.grad.array.flags.writeable
    x.grad.array += 1
    np.testing.assert_allclose(x.grad.numpy(), 3.0)


def test_grad_dtype_follows_leaf():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x.double() * 2).sum().backward()
    assert x.grad.dtype == mg.float32
    np.testing.assert_allclose(x.grad.numpy(), 2.0)


def test_grad_can_be_set_and_cleared():
    x = leaf(2)
    x.grad = mg.ones(2, dtype=mg.float64)
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3.0)


def test_freed_graph_releases_saved_memory():
    x = leaf(100)
    y = x.exp()
    z = (y * y).sum()
    assert z.grad_fn.next_functions[0][0].saved_nbytes() > 0
    z.backward()
    assert z.grad_fn.next_functions[0][0].saved_nbytes() == 0


def test_fresh_leaf_gradient_is_adopted_without_copy():
    # the engine steals a gradient nothing else holds (as PyTorch does), instead of copying it
    import weakref

    x = leaf(4)
    y = x * 3
    seen = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(weakref.ref(grad_inputs[0].array)))
    y.sum().backward()
    assert seen[0]() is x.grad.array


def test_adopted_leaf_gradient_is_detached_as_torchs(torch):
    # a fresh gradient nothing else holds is stolen; one that carries a graph of its own (here a user backward's
    # new leaf that requires grad) becomes a .grad without it, as PyTorch detaches what it steals
    got = []
    for L in (mg, torch):
        class Twice(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return (g.detach() * 0 + 2).requires_grad_()  # (a new leaf that requires grad)

        x = L.ones(3, requires_grad=True)
        Twice.apply(x).sum().backward()
        got.append((x.grad.requires_grad, x.grad.grad_fn is None, x.grad.is_leaf, x.grad.tolist()))
    assert got[0] == got[1]


def test_inplace_on_view_of_leaf_message():
    x = leaf(3, 2)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place operation."):
        x[0].add_(1)
    with mg.no_grad():
        x[0].add_(1)  # allowed without recording, as in PyTorch
    assert x._version == 1


def test_setitem_into_buffer_without_grad_records_copyslices():
    w = leaf(3)
    buf = mg.zeros(2, 3, dtype=mg.float64)
    buf[1] = w * 2
    assert buf.requires_grad and buf.grad_fn.name() == "CopySlices" and buf._version == 1
    (buf * buf).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 8 * w.detach().numpy())


def test_hook_on_multi_output_node():
    x = leaf(4)
    a, b = x.split(2)
    b.register_hook(lambda g: g * 10)
    (a.sum() + b.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 10, 10])


def test_autograd_grad_takes_pytorchs_keywords(torch):
    got = []
    for L in (mg, torch):
        x, y = L.ones(3, requires_grad=True), L.ones(2, requires_grad=True)
        gx, gy = L.autograd.grad((x * 2).sum(), [x, y], only_inputs=True, materialize_grads=True)
        got.append((gx.tolist(), gy.tolist()))
    assert got[0] == got[1] == ([2.0, 2.0, 2.0], [0.0, 0.0])


# ---- anomaly mode ---------------------------------------------------------------------------------------------
def test_detect_anomaly_names_the_node_that_made_nan(torch):
    msgs = []
    for lib in (torch, mg):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            ctx = lib.autograd.detect_anomaly()
        with ctx, pytest.raises(RuntimeError) as e:
            (x.sqrt() * 0).sum().backward()
        msgs.append(str(e.value).splitlines()[0])
        assert not lib.is_anomaly_enabled()
    assert msgs[1] == msgs[0] == "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_set_detect_anomaly_sets_at_once_and_restores():
    assert not mg.autograd.is_anomaly_enabled()
    with mg.autograd.set_detect_anomaly(True):
        assert mg.autograd.is_anomaly_enabled() and mg.is_anomaly_check_nan_enabled()
        with mg.autograd.set_detect_anomaly(True, check_nan=False):
            x = mg.tensor([0.0], requires_grad=True)
            (x.sqrt() * 0).sum().backward()  # no check: the NaN reaches .grad
            assert np.isnan(x.grad.numpy()).all()
    assert not mg.autograd.is_anomaly_enabled()
    mg.autograd.set_detect_anomaly(True)
    try:
        assert mg.is_anomaly_enabled()
    finally:
        mg.autograd.set_detect_anomaly(False)
    assert not mg.is_anomaly_enabled()


def test_anomaly_mode_leaves_finite_gradients_alone():
    x = leaf(3)
    with mg.autograd.set_detect_anomaly(True):
        (x.sin() * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()) * x.detach().numpy()
                               + np.sin(x.detach().numpy()))


@pytest.mark.parametrize("k", [1, 2, 4])
def test_topk_indices_written_in_place_leave_the_gradient_alone(k):
    # the indices topk returns are the caller's own array: its backward scatters at the ones it kept
    x = mg.tensor([[1.0, 5.0, 3.0, 4.0], [0.5, -1.0, 2.0, 9.0]], requires_grad=True)
    v, i = x.topk(k)
    expected = np.zeros((2, 4))
    np.put_along_axis(expected, i.numpy(), 2.0, axis=1)
    i += 1
    (v * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize("value", [
    "L.ones(3)", "L.ones(2, 1)", "L.ones(2, dtype=L.float64)", "L.ones(2, dtype=L.float16)", "L.ones(2, dtype=L.long)",
    "L.ones(2, dtype=L.bool)", "L.ones(2, dtype=L.uint8)", "5", "[1.0, 2.0]", "L.ones(3, dtype=L.float64)", "L.zeros(2)",
    "None",
])
def test_assigning_grad_checks_as_pytorch(value):
    # p.grad = something of the wrong size or dtype (a hand-written optimizer's slip): PyTorch refuses it there
    torch = pytest.importorskip("torch")
    seen = []
    for L in (mg, torch):
        x = L.ones(2, requires_grad=True)
        try:
            x.grad = eval(value, {"L": L})
            seen.append(None if x.grad is None else x.grad.tolist())
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            seen.append((type(e).__name__, str(e)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("case", ["(a.sum(), a)", "(b.sum(), a)", "(a.sum(), b)", "([b.sum(), a.sum()], b)",
                                  "([b.sum(), a.sum()], a)"])
def test_autograd_grad_checks_outputs_before_inputs(case):
    # autograd.grad of a loss built under no_grad: PyTorch names the output, whatever the inputs
    torch = pytest.importorskip("torch")
    seen = []
    for L in (mg, torch):
        a, b = L.ones(1), L.ones(1, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            L.autograd.grad(*eval(case, {"a": a, "b": b}))
        seen.append(str(e.value))
    assert seen[0] == seen[1]


def _user_functions(lib):
    class Scale(lib.autograd.Function):  # backward hands back a (1, n) gradient for an (n,) input, in float64
        @staticmethod
        def forward(ctx, a, b, k):
            ctx.k = k
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return (g * ctx.k).unsqueeze(0), (g * 2).double(), None

    class Wrong(lib.autograd.Function):  # a scalar where the input is (2,)
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum()

    return Scale, Wrong


def test_user_function_gradients_checked_against_inputs():
    # PyTorch sums a gradient of a shape the input broadcasts to, casts its dtype, and names the Function
    # (not AccumulateGrad) when the shape cannot be the input's
    torch = pytest.importorskip("torch")
    seen = []
    for L in (mg, torch):
        Scale, Wrong = _user_functions(L)
        a, b = L.ones(3, requires_grad=True), L.ones(1, 3, requires_grad=True)
        Scale.apply(a, b, 2.0).sum().backward()
        with pytest.raises(RuntimeError) as e:
            Wrong.apply(L.ones(2, requires_grad=True)).sum().backward()
        seen.append((a.grad.tolist(), b.grad.tolist(), str(b.grad.dtype).split(".")[1], str(e.value)))
    assert seen[0] == seen[1]


def _graph_names(t, depth=3):
    """The names of t's grad_fn and its next_functions, `depth` levels down (None where no node)."""
    fn = t.grad_fn if hasattr(t, "grad_fn") else t
    if fn is None or depth == 0:
        return None
    return (type(fn).__name__, tuple((_graph_names(n, depth - 1), nr) for n, nr in fn.next_functions))


NUMBER_OPS = {"add": lambda x, c: x + c, "radd": lambda x, c: c + x, "sub": lambda x, c: x - c,
              "rsub": lambda x, c: c - x, "mul": lambda x, c: x * c, "rmul": lambda x, c: c * x,
              "div": lambda x, c: x / c, "pow": lambda x, c: x ** c}


class _Float(float):  # a number the short paths (which take exact Python floats and ints) leave to the general one
    pass


class _Int(int):
    pass


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(NUMBER_OPS))
def test_recorded_arithmetic_with_a_python_number_as_the_general_path_and_torch(torch, op, dtype):
    # `x * 0.5`, `1 - g`, `g ** 2` recorded take a short path (the number as a 0-d tensor of x's dtype, no
    # promotion, no bool check): the general path's values, node, edges and gradients, and PyTorch's
    fn = NUMBER_OPS[op]
    data = np.random.default_rng(0).standard_normal((4, 5)).astype(dtype)

    def run(lib, c):
        x = lib.tensor(data, requires_grad=True)
        out = fn(x * 1.0, c)
        out.backward(lib.ones_like(out))
        return out.detach().numpy(), str(out.dtype), _graph_names(out), x.grad.numpy()

    for c in (0.1, 3, -7.5):
        fast = run(mg, c)
        slow = run(mg, _Float(c) if type(c) is float else _Int(c))
        want = run(torch, c)
        assert fast[0].tobytes() == slow[0].tobytes() and fast[3].tobytes() == slow[3].tobytes()
        assert fast[1:3] == slow[1:3]
        assert fast[1].replace("minigrad", "torch") == want[1] and fast[2] == want[2]
        np.testing.assert_allclose(fast[0], want[0], rtol=1e-6)
        np.testing.assert_allclose(fast[3], want[3], rtol=1e-6)


@pytest.mark.parametrize("index", [np.s_[:2], np.s_[1:], np.s_[:], np.s_[:100], np.s_[::2], np.s_[:, 1:3],
                                   np.s_[:, :], np.s_[1:, -2:], np.s_[:, :, ::2], np.s_[2:2], np.s_[-100:2, :]],
                         ids=str)
def test_recorded_plain_slices_as_the_general_path_and_torch(torch, monkeypatch, index):
    # `yh[:T, :]` recorded skips the general index conversion: the same nodes (a lone `:` kept, full slices in a
    # tuple skipped, one node per slice taken), the same values, view and gradient as that path and PyTorch's
    from minigrad.ops import indexing

    data = np.arange(60.0, dtype=np.float32).reshape(3, 4, 5)

    def run(lib):
        x = lib.tensor(data, requires_grad=True)
        y = x * 2.0
        out = y[index]
        weights = lib.tensor(np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape)))
        (out * weights).sum().backward()
        return out.detach().numpy(), _graph_names(out), x.grad.numpy(), out._version == y._version

    fast = run(mg)
    with monkeypatch.context() as m:
        m.setattr(indexing, "_slice_steps", lambda index, shape: None)
        slow = run(mg)
    want = run(torch)
    for got in (fast, slow):
        assert np.array_equal(got[0], want[0]) and got[1] == want[1] and np.array_equal(got[2], want[2]) and got[3]
    assert fast[1] == slow[1]


def test_recorded_slicing_outside_the_plain_cases_keeps_torchs_errors(torch):
    for lib in (mg, torch):
        x = lib.zeros(3, 4, requires_grad=True) * 1.0
        with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
            x[:, :, :]
        with pytest.raises(ValueError, match="step must be greater than zero"):
            x[::-1]
        with pytest.raises(ValueError, match="slice step cannot be zero"):
            x[:, ::0]
        with pytest.raises(ValueError, match="slice step cannot be zero"):
            x.detach()[::0]
        s = lib.tensor(1.0, requires_grad=True) * 1.0
        with pytest.raises(IndexError, match=r"slice\(\) cannot be applied to a 0-dim tensor"):
            s[:1]


@pytest.mark.parametrize("exponent", [np.float64(0.1), np.float32(-1.5), np.int64(3), _Float(2.5), _Int(2)], ids=repr)
def test_pow_of_a_numpy_scalar_exponent_keeps_the_tensor_dtype_as_torch(torch, exponent):
    # `x ** np.float64(0.5)` (an exponent read from numpy): float32 as in PyTorch, not numpy's float64
    data = np.array([0.5, 1.5, 2.0], dtype=np.float32)
    got, want = [], []
    for lib, out in ((mg, got), (torch, want)):
        x = lib.tensor(data, requires_grad=True)
        y = x ** exponent
        y.backward(lib.ones_like(y))
        out += [str(y.dtype).split(".")[1], y.detach().numpy(), x.grad.numpy()]
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def _slots(t):
    from minigrad.tensor import Tensor

    return {name: getattr(t, name, "<unset>") for name in Tensor.__slots__ if name != "__weakref__"}


@pytest.mark.parametrize("make", [
    lambda x: x * 2.0,  # an op's output, recorded
    lambda x: x.tanh(),  # one whose node saves its output
    lambda x: x.detach() + 1.0,  # nothing recorded
    lambda x: x.sum(),  # a full reduction (numpy gives a scalar)
])
def test_an_op_output_has_every_slot_a_new_tensor_has(make):
    # Function.apply builds its outputs without Tensor.__init__: each slot must read as Tensor(array)'s
    # would (with the graph's own grad_fn and requires_grad), and the node's saved output likewise
    x = mg.randn(3, 4, requires_grad=True)
    out = make(x)
    fresh = _slots(mg.Tensor(out.array))
    got = _slots(out)
    for name in ("grad_fn", "_requires_grad", "_version_counter", "array"):
        fresh.pop(name), got.pop(name)
    assert got == fresh
    assert out.requires_grad == (out.grad_fn is not None)
    assert out._version_counter == [0]
    if out.grad_fn is not None and "result" in (out.grad_fn._names or ()):
        saved = out.grad_fn._saved_result
        assert saved.grad_fn is out.grad_fn and saved.requires_grad
        assert saved._version_counter is out._version_counter
        assert {k: v for k, v in _slots(saved).items() if k not in ("grad_fn", "_requires_grad", "_version_counter",
                                                                      "array")} == fresh


def test_an_op_output_made_in_inference_mode_is_an_inference_tensor():
    x = mg.randn(3, 4, requires_grad=True)
    with mg.inference_mode():
        y = x * 2.0
    assert y.is_inference() and not (x * 2.0).is_inference()


_FIRST_USE = """
import threading
import minigrad as mg
from minigrad.autograd.graph import saved_tensors_hooks, scope

x = mg.randn(3, requires_grad=True)
(x * 2.0).sum().backward()  # the eager path has run before any of the features below
seen = []

def in_thread():  # each feature's first use in this process, on a thread of its own
    with scope("block"):
        y = x * 2.0
    with saved_tensors_hooks(lambda t: seen.append("pack") or t, lambda t: t):
        z = x.exp()
    with mg.inference_mode():
        w = x * 2.0
    print(y.grad_fn._scope, seen, w.is_inference())

t = threading.Thread(target=in_thread)
t.start()
t.join()

@mg.compile
def f(a):
    return (a * 3.0).sum()

outs = [f(x) for _ in range(4)]
x.grad = None
f(x).backward()
same = all(float(o) == float((x * 3.0).sum()) for o in outs) and x.grad.tolist() == [3.0] * 3
print(f.stats.captures, f.stats.replays, same)
"""


def test_each_per_thread_feature_works_from_its_first_use():
    # Function.apply reads the thread-locals of scopes, saved-tensor hooks, inference mode and compile's
    # recorder only once a module flag says some thread used them: the first use must set it
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(mg.__file__))
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", _FIRST_USE], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[-2:]
    assert first == "block ['pack'] True"
    captures, replays, same = second.split()
    assert int(captures) == 1 and int(replays) >= 1 and same == "True"  # captured once, then replayed


@pytest.mark.parametrize("split", [lambda t: t.unbind(1), lambda t: t.split(2), lambda t: t.chunk(3, 2), list])
def test_an_ops_several_outputs_are_its_nodes_outputs_as_torchs(torch, split):
    # (several new arrays are wrapped in a loop of their own: each must be the node's output at its index)
    a = np.random.default_rng(2).standard_normal((5, 3, 4))
    got, want = split(mg.tensor(a, requires_grad=True)), split(torch.tensor(a, requires_grad=True))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.grad_fn.name(), g._output_nr, g.requires_grad, g.is_leaf, g.dtype.is_floating_point, g.shape) == \
            (node_name(w.grad_fn), w.output_nr, w.requires_grad, w.is_leaf, w.dtype.is_floating_point, w.shape)
        assert g.grad_fn is got[0].grad_fn
    grads = []
    for outs in (got, want):
        x = outs[0].grad_fn.next_functions[0][0].variable
        (outs[-1] * 2 + outs[0]).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv"])
def test_arithmetic_with_a_parameter_operand_as_torch(torch, op, grad):
    # `x * self.weight`, `self.weight * x`: a Parameter operand takes the plain tensors' short path
    import operator

    fn = getattr(operator, op)
    rng = np.random.default_rng(0)
    xd, wd = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32) + 3

    def run(lib):
        x, w = lib.tensor(xd, requires_grad=True), lib.nn.Parameter(lib.tensor(wd))
        with lib.set_grad_enabled(grad):
            outs = [fn(x * 1.0, w), fn(w, x * 1.0)]
        res = [(o.detach().numpy().tobytes(), type(o).__name__, str(o.dtype).split(".")[-1], _graph_names(o))
               for o in outs]
        if grad:
            sum(o.sum() for o in outs).backward()
            res.append((x.grad.numpy(), w.grad.numpy()))
        return res

    got, want = run(mg), run(torch)
    assert got[:2] == want[:2]
    if grad:
        np.testing.assert_allclose(got[2][0], want[2][0], rtol=1e-6)
        np.testing.assert_allclose(got[2][1], want[2][1], rtol=1e-6)


def test_gradient_sums_of_inf_and_minus_inf_are_nan_without_a_warning_shown_as_torch():
    # PyTorch's sums say nothing; minigrad's are numpy's, whose warning the package's own filter hides in a
    # user's script (a user's `-W error` decides first: minigrad/__init__.py). A script, as a user runs it: the
    # test runner's own warning filters would decide otherwise.
    torch = pytest.importorskip("torch")
    script = """
import minigrad as lib
inf = float("inf")
grads = []
for where in ("leaf", "buffer", "inputs"):
    x = lib.ones(2, requires_grad=True)
    if where == "leaf":  # the new gradient summed into .grad
        x.grad = lib.tensor([inf, 1.0])
        (x * lib.tensor([-inf, 1.0])).sum().backward()
    elif where == "buffer":  # two edges' gradients summed into one node's input
        y = x * 1
        lib.autograd.backward([(y * lib.tensor([inf, 1.0])).sum(), (y * lib.tensor([-inf, 1.0])).sum()])
    else:
        x.grad = lib.tensor([inf, 1.0])
        (x * lib.tensor([-inf, 1.0])).sum().backward(inputs=[x])
    grads.append([str(v) for v in x.grad.tolist()])
print(grads)
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    want = []
    for where in ("leaf", "buffer", "inputs"):
        inf = float("inf")
        x = torch.ones(2, requires_grad=True)
        if where == "buffer":
            y = x * 1
            torch.autograd.backward([(y * torch.tensor([inf, 1.0])).sum(), (y * torch.tensor([-inf, 1.0])).sum()])
        else:
            x.grad = torch.tensor([inf, 1.0])
            (x * torch.tensor([-inf, 1.0])).sum().backward(**({"inputs": [x]} if where == "inputs" else {}))
        want.append([str(v) for v in x.grad.tolist()])
    assert run.stdout.strip() == str(want)


def test_grad_only_inputs_false_warns_as_torch():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (torch, mg):
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.autograd.grad((x * 2).sum(), x, only_inputs=True)
            assert not caught
            g, = lib.autograd.grad((x * 2).sum(), x, only_inputs=False)
        assert g.tolist() == [2.0, 2.0]
        seen.append([(w.category, str(w.message), w.filename) for w in caught])
    assert seen[1] == seen[0] and len(seen[0]) == 1 and seen[0][0][2] == __file__


def test_what_a_node_keeps_besides_its_graph_stops_being_tracked_at_the_first_collection():
    # what a node keeps besides its edges and saved tensors (operand shapes, flags, output meta) is no object the
    # collector keeps tracking past its first pass: a step's graph would otherwise be walked again by later ones
    a, b, m = leaf(16, 8, seed=1), leaf(8, seed=2), leaf(8, 3, seed=3)
    ops = (lambda: a * b, lambda: b * a, lambda: a * a, lambda: a @ m, lambda: a.tanh())
    for op in ops:  # (a previous step's: the copies kept once are made)
        op()
    for _ in range(3):
        gc.collect()
    for op in ops:
        out = op()
        gc.collect()
        kept = {k: v for k, v in vars(out.grad_fn).items() if k not in ("next_functions", "_saved")}
        assert [k for k, v in kept.items() if gc.is_tracked(v)] == []
    assert (a * b).grad_fn._shapes == ((16, 8), (8,)) and (b * a).grad_fn._shapes == ((8,), (16, 8))
    assert (a * a).grad_fn._shapes == ((16, 8), (16, 8)) and (a @ m).grad_fn._shapes == ((16, 8), (8, 3))


_PIECES = {"unbind": lambda t: t.unbind(0)[0], "split": lambda t: t.split(1)[1][0], "chunk": lambda t: t.chunk(2)[0],
           "view_of_piece": lambda t: t.unbind(0)[0][:]}
_INPLACE = {
    "uniform_": lambda L, v: v.uniform_(), "normal_": lambda L, v: v.normal_(), "bernoulli_": lambda L, v: v.bernoulli_(),
    "random_": lambda L, v: v.random_(), "exponential_": lambda L, v: v.exponential_(), "fill_": lambda L, v: v.fill_(1.0),
    "zero_": lambda L, v: v.zero_(), "copy_": lambda L, v: v.copy_(L.ones(v.shape)), "t_": lambda L, v: v.t_(),
    "squeeze_": lambda L, v: v.squeeze_(), "unsqueeze_": lambda L, v: v.unsqueeze_(0),
    "transpose_": lambda L, v: v.transpose_(0, -1), "swapdims_": lambda L, v: v.swapdims_(0, 0),
    "clamp_": lambda L, v: v.clamp_(0, 1), "masked_fill_": lambda L, v: v.masked_fill_(v > 0, 0.0),
    "index_fill_": lambda L, v: v.index_fill_(0, L.tensor([0]), 0.0), "scatter_": lambda L, v: v.scatter_(0, L.tensor([0]), 0.0),
    "add_": lambda L, v: v.add_(1), "requires_grad_": lambda L, v: v.requires_grad_(False), "detach_": lambda L, v: v.detach_(),
    "setitem_int": lambda L, v: v.__setitem__(0, 5.0), "setitem_slice": lambda L, v: v.__setitem__(slice(1, None), 5.0),
    "setitem_none": lambda L, v: v.__setitem__(None, 5.0), "setitem_all": lambda L, v: v.__setitem__(Ellipsis, 5.0),
    "setitem_list": lambda L, v: v.__setitem__([0], 5.0),
}


@pytest.mark.parametrize("piece", list(_PIECES))
@pytest.mark.parametrize("op", list(_INPLACE))
def test_inplace_ops_on_a_piece_of_a_multi_view_op_are_refused_as_torchs(torch, piece, op):
    # every in-place op, random fills and shape ones too, refuses a piece of unbind/split with PyTorch's text
    # (a setitem names the op of the index's view of the piece, as PyTorch writes through that view)
    def run(L):
        v = _PIECES[piece](L.randn(2, 3, requires_grad=True) * 1)
        try:
            _INPLACE[op](L, v)
        except RuntimeError as e:
            return str(e)
        return None

    assert run(mg) == run(torch)


@pytest.mark.parametrize("op", ["uniform_", "normal_", "bernoulli_", "t_", "unsqueeze_"])
@pytest.mark.parametrize("target", ["leaf", "view_of_leaf", "no_grad_view"])
def test_random_and_shape_inplace_ops_refuse_leaves_and_views_as_torchs(torch, op, target):
    def run(L):
        x = L.randn(2, 3, requires_grad=True)
        if target == "view_of_leaf":
            x = x[0:1]
        elif target == "no_grad_view":
            y = x * 1
            with L.no_grad():
                x = y[0:1]
        try:
            _INPLACE[op](L, x)
        except RuntimeError as e:
            return str(e)
        return None

    assert run(mg) == run(torch)


@pytest.mark.parametrize("op", ["uniform_", "normal_", "bernoulli_", "exponential_"])
def test_a_random_fill_cuts_the_gradient_to_the_old_values_as_torchs(torch, op):
    grads = []
    for L in (mg, torch):
        x = L.ones(2, 3, requires_grad=True)
        y = x * 2
        _INPLACE[op](L, y[0])
        (y * 3).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


_AFTER_SAVED_OUTPUT = {
    "relu_then_relu_": lambda L, x: (lambda y: (y.sigmoid(), y.relu_())[0])((x * 1).relu_()),
    "relu_then_add_": lambda L, x: (lambda y: (y * 1, y.add_(1))[1])((x * 1).relu_()),
    "sigmoid_then_mul_": lambda L, x: (lambda y: (y * 1, y.mul_(2))[1])((x * 1).sigmoid_()),
    "relu_on_view_then_base": lambda L, x: (lambda y: (y[1:].relu_(), y.add_(1))[1])(x * 1),
    "relu_alone": lambda L, x: (x * 1).relu_() * 2,
}


@pytest.mark.parametrize("case", list(_AFTER_SAVED_OUTPUT))
def test_an_inplace_ops_saved_output_is_checked_against_later_inplace_ops_as_torchs(torch, case):
    # relu_ saves its result, the tensor itself: a later in-place op on it makes backward fail (PyTorch's text)
    res = []
    for L in (mg, torch):
        x = L.tensor([-1.0, 2.0, 3.0], requires_grad=True)
        try:
            _AFTER_SAVED_OUTPUT[case](L, x).sum().backward()
            res.append(x.grad.numpy().tolist())
        except RuntimeError as e:
            res.append(str(e).replace("minigrad.", "torch.").split(" Hint")[0])
    assert res[0] == res[1]



def _node_and_grad(L, op, weight):
    w = L.ones(3, 4, requires_grad=True)
    y = op(w * 2)
    (y * weight).sum().backward()
    return y.grad_fn.name(), [f.name() for f, _ in y.grad_fn.next_functions if f is not None], w.grad.tolist()


@pytest.mark.parametrize("fill", [
    lambda y: y.uniform_(), lambda y: y.normal_(), lambda y: y.bernoulli_(0.5), lambda y: y.exponential_(),
    lambda y: y.random_(0, 5), lambda y: y.random_(5), lambda y: y.random_(), lambda y: y.geometric_(0.5),
    lambda y: y.cauchy_(), lambda y: y.log_normal_(), lambda y: y.zero_(), lambda y: y.fill_(2.0),
])
def test_a_fill_of_a_nonleaf_has_pytorchs_node_and_zero_gradient(torch, fill):
    # (zeros reach the overwritten values even where the incoming gradient is inf)
    assert _node_and_grad(mg, fill, float("inf")) == _node_and_grad(torch, fill, float("inf"))


@pytest.mark.parametrize("op", [
    lambda y: y.t_(), lambda y: y.transpose_(0, 1), lambda y: y.swapdims_(0, 1), lambda y: y.unsqueeze_(0),
    lambda y: y.squeeze_(), lambda y: y[:1].squeeze_(0), lambda y: y[:1, :1].squeeze_((0, 1)),
    lambda y: y[:1].squeeze(0), lambda y: y[:1, :1].squeeze((0, 1)), lambda y: y[:1].squeeze([0]),
])
def test_a_shape_inplace_op_on_a_nonleaf_has_pytorchs_node(torch, op):
    assert _node_and_grad(mg, op, 3.0) == _node_and_grad(torch, op, 3.0)


@pytest.mark.parametrize("src", [lambda L: L.full((3,), 2.0, requires_grad=True) * 3, lambda L: L.zeros(3, dtype=L.float64),
                                 lambda L: L.tensor(5.0, requires_grad=True) * 1])
def test_copy_into_a_nonleaf_has_pytorchs_node_and_gradients(torch, src):
    res = []
    for L in (mg, torch):
        w = L.ones(2, 3, requires_grad=True)
        s = src(L)
        y = w * 2
        y.copy_(s)
        (y * L.tensor([float("inf"), 1.0, 2.0])).sum().backward()
        res.append((y.grad_fn.name().removeprefix("torch::autograd::"),  # (minigrad's names drop the C++ namespace)
                    [f.name() if f else None for f, _ in y.grad_fn.next_functions], y.dtype.is_floating_point,
                    w.grad.tolist(), None if s.grad_fn is None else s.grad_fn.next_functions[0][0].variable.grad.tolist()))
    assert res[0] == res[1]


NUMBER_OPERAND_NODES = {
    "x * 2.0": lambda x: x * 2.0, "2.0 * x": lambda x: 2.0 * x, "x * 3": lambda x: x * 3, "x / 3.0": lambda x: x / 3.0,
    "x + 1.0": lambda x: x + 1.0, "1.5 + x": lambda x: 1.5 + x, "x - 1.0": lambda x: x - 1.0, "1 - x": lambda x: 1 - x,
    "x.add(1.0, alpha=2)": lambda x: x.add(1.0, alpha=2),
}


@pytest.mark.parametrize("name", list(NUMBER_OPERAND_NODES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_op_of_a_tensor_and_a_number_records_torchs_node(torch, name, dtype):
    # the node's name, edges, saved number (a float64 or int64 0-d tensor, as PyTorch's wrapped number) and
    # alpha, its refusal to run twice where it saved the number, nothing packed by saved-tensor hooks, and
    # first and second derivatives
    def run(lib):
        x = lib.tensor(np.linspace(-1.5, 2.0, 6), dtype=getattr(lib, dtype), requires_grad=True)
        packed = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
            y = NUMBER_OPERAND_NODES[name](x)
        fn = y.grad_fn
        saved = {}
        for attr in ("_saved_self", "_saved_other", "_saved_alpha"):
            if hasattr(fn, attr):
                v = getattr(fn, attr)
                saved[attr] = (str(v.dtype).split(".")[1], v.item()) if isinstance(v, lib.Tensor) else v
        edges = [None if n is None else node_name(n) for n, _ in fn.next_functions]
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g * x).sum(), x)
        try:
            y.sum().backward()
            y.sum().backward()
            twice = "ok"
        except RuntimeError as e:
            twice = str(e)[:50]
        return fn.name(), edges, saved, len(packed), str(y.dtype).split(".")[1], g.tolist(), h.tolist(), twice

    got, want = run(mg), run(torch)
    assert got[:5] == want[:5] and got[7] == want[7]
    np.testing.assert_allclose(got[5], want[5], rtol=1e-6)
    np.testing.assert_allclose(got[6], want[6], rtol=1e-6)


def test_recorded_t_is_a_view_node_as_torchs(torch):
    """x.t() recorded (its own one-argument node): name, edges, view bookkeeping, gradients (twice), the
    version check after a write through the base, t_()'s node: as PyTorch's."""
    rng = np.random.default_rng(3)
    data, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    results = []
    for lib in (mg, torch):
        x = lib.tensor(data, requires_grad=True)
        y = x * 1.0
        v = y.t()
        (g,) = lib.autograd.grad((v * v).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor(w)).sum(), x)
        y2 = x * 1.0
        v2 = y2.t()
        s = (v2 * v2).sum()
        with lib.no_grad():
            y2.add_(1.0)
        with pytest.raises(RuntimeError) as err:
            s.backward()
        z = x * 2.0
        z.t_()
        results.append((node_name(v.grad_fn), len(v.grad_fn.next_functions), v._base is y, v._is_view(),
                        tuple(v.shape), g.detach().numpy(), gg.numpy(), "modified by an inplace" in str(err.value),
                        node_name(z.grad_fn), tuple(z.shape)))
    ours, theirs = results
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        else:
            assert a == b


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((1, 4), (3, 1)), ((), (3, 4))])
@pytest.mark.parametrize("create_graph", [False, True])
def test_binary_grads_sum_back_to_operand_shapes(torch, op, shapes, create_graph):
    """add/sub (alpha too)/mul/div's gradients, summed back to each operand's shape, with and without a graph of
    the backward: PyTorch's values and shapes."""
    rng = np.random.default_rng(4)
    a_data, b_data = rng.standard_normal(shapes[0]), rng.uniform(1.0, 2.0, shapes[1])
    results = []
    for lib in (mg, torch):
        a, b = lib.tensor(a_data, requires_grad=True), lib.tensor(b_data, requires_grad=True)
        kw = {"alpha": 2.5} if op in ("add", "sub") else {}
        for extra in ({}, kw):
            out = getattr(lib, op)(a, b, **extra)
            grads = lib.autograd.grad((out * out).sum(), (a, b), create_graph=create_graph)
            results.append([(tuple(g.shape), g.detach().numpy(), g.requires_grad) for g in grads])
    n = len(results) // 2
    for ours, theirs in zip(results[:n], results[n:]):
        for (shape, value, rg), (t_shape, t_value, t_rg) in zip(ours, theirs):
            assert (shape, rg) == (t_shape, t_rg)
            np.testing.assert_allclose(value, t_value, rtol=1e-12)
