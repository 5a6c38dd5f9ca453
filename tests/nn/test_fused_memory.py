"""Bytes held by saved tensors: each fused op vs the same function written from primitive minigrad ops.

Run with `pytest -s` to see the numbers. `saved` sums every node's `saved_nbytes()` over the graph
from the loss (walking `next_functions`); `unique` counts each saved array once (composite graphs
often save the same intermediate in several nodes).
"""
import numpy as np
import pytest

import minigrad
import nn.functional as F
from nn._functional import reference as R

B, T, V, C = 8, 64, 65, 128


def graph_nodes(t):
    seen, stack, out = set(), [t.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        out.append(node)
        stack.extend(n for n, _ in node.next_functions)
    return out


def saved_bytes(t):
    """(sum of saved_nbytes over the graph, bytes of distinct saved arrays, number of nodes)."""
    nodes = graph_nodes(t)
    total = sum(n.saved_nbytes() for n in nodes if hasattr(n, "saved_nbytes"))
    arrays = {}
    for n in nodes:
        for s in getattr(n, "_saved", None) or ():
            a = getattr(s, "array", None)
            if a is not None and hasattr(a, "nbytes"):
                base = a if a.base is None else a.base
                arrays[id(base)] = base.nbytes
    return total, sum(arrays.values()), len(nodes)


def report(name, fused, composite):
    print(f"\n{name}: fused saves {fused[0]:,} B ({fused[2]} node(s)); composite saves {composite[0]:,} B "
          f"({composite[1]:,} B distinct, {composite[2]} nodes)")


def leaf(*shape, dtype=np.float32):
    return minigrad.tensor(np.random.default_rng(0).standard_normal(shape).astype(dtype), requires_grad=True)


def test_cross_entropy_memory():
    logits = leaf(B * T, V)
    target = minigrad.tensor(np.random.default_rng(1).integers(0, V, B * T))
    fused = F.cross_entropy(logits, target)
    composite = R.cross_entropy(logits, target)
    f, c = saved_bytes(fused), saved_bytes(composite)
    report(f"cross_entropy (B*T={B * T}, V={V}) float32", f, c)
    assert fused.grad_fn.name() == "NllLossBackward0" and f[2] == 2  # the loss node + AccumulateGrad
    assert f[0] == B * T * V * 4  # exactly one (N, C) float32 array
    assert f[0] < c[0] and f[1] < c[1]
    np.testing.assert_allclose(fused.item(), composite.item(), rtol=1e-5)


def test_layer_norm_memory():
    x, w, b = leaf(B, T, C), leaf(C), leaf(C)
    fused = F.layer_norm(x, (C,), w, b)
    composite = R.layer_norm(x, (C,), w, b)
    f, c = saved_bytes(fused), saved_bytes(composite)
    report(f"layer_norm (B={B}, T={T}, C={C}) float32", f, c)
    assert fused.grad_fn.name() == "NativeLayerNormBackward0"
    # the input (alive anyway: it is the caller's tensor), mean and 1/std per row, the weight; as PyTorch
    assert f[0] == B * T * C * 4 + 2 * B * T * 4 + C * 4
    assert fused.grad_fn._saved_input.array is x.array  # not a copy: no array of x's size is added
    assert f[0] < c[0] and f[1] < c[1]


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_memory(approximate):
    x = leaf(B, T, 4 * C)
    fused, composite = F.gelu(x, approximate), R.gelu(x, approximate)
    f, c = saved_bytes(fused), saved_bytes(composite)
    report(f"gelu {approximate} (B={B}, T={T}, 4C={4 * C}) float32", f, c)
    # the exact form also keeps its output (the array the next layer keeps anyway), to skip a second erf
    assert f[0] == (2 if approximate == "none" else 1) * x.nbytes and f[0] < c[0]


def test_attention_memory():
    q, k, v = leaf(B, 4, T, 32), leaf(B, 4, T, 32), leaf(B, 4, T, 32)
    fused = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    composite = R.scaled_dot_product_attention(q, k, v, is_causal=True)
    f, c = saved_bytes(fused), saved_bytes(composite)
    report(f"attention (B={B}, H=4, T={T}, hs=32) causal float32", f, c)
    assert f[0] == 3 * q.nbytes + B * 4 * T * T * 4  # q, k, v and P
    assert f[0] < c[0]
