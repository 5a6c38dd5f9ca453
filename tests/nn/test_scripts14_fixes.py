"""Focused checks for what the scripts of test_dl_scripts14.py found: autograd.functional's input checks and the
output it hands back, clip_grad_norm_'s coefficient across gradient dtypes, parameters_to_vector on a
non-contiguous parameter."""
import numpy as np
import pytest

import minigrad
import nn as mnn


def outcome(fn, lib):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return "error", type(e).__name__, str(e)
    return "ok", r


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp", "jacobian", "hessian"])
@pytest.mark.parametrize("where", ["inputs", "v", "outputs"])
def test_functional_lists_are_not_tuples(torch, name, where):
    def call(lib):
        AF = lib.autograd.functional
        xs = [lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64)]
        f = (lambda a, b: [(a * b).sum()]) if where == "outputs" else (lambda a, b: (a * b ** 2).sum())
        inputs = xs if where == "inputs" else tuple(xs)
        if name in ("jacobian", "hessian"):
            if where == "v":
                pytest.skip("no v")
            return getattr(AF, name)(f, inputs)
        v = [x.clone() for x in xs] if where == "v" else tuple(x.clone() for x in xs)
        if name == "vjp":
            v = [lib.ones((), dtype=lib.float64)] if where == "v" else lib.ones((), dtype=lib.float64)
        return getattr(AF, name)(f, inputs, v)

    theirs, ours = outcome(call, torch), outcome(call, minigrad)
    assert theirs[0] == "error"
    assert ours == theirs


@pytest.mark.parametrize("name", ["hvp", "vhp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_second_order_products_return_the_output_as_it_is(torch, name, create_graph):
    results = []
    for lib in (torch, minigrad):
        x = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=create_graph)
        out, prod = getattr(lib.autograd.functional, name)(lambda a: (a ** 3).sum(0, keepdim=True), x,
                                                           lib.tensor([1.0, 2.0], dtype=lib.float64),
                                                           create_graph=create_graph)
        results.append((tuple(out.shape), None if out.grad_fn is None else type(out.grad_fn).__name__,
                        out.detach().numpy(), prod.detach().numpy()))
    (ts, tn, to, tp), (ms, mn, mo, mp) = results
    assert (ms, mn) == (ts, tn)
    np.testing.assert_allclose(mo, to, rtol=1e-12)
    np.testing.assert_allclose(mp, tp, rtol=1e-12)


@pytest.mark.parametrize("norm_type", [2.0, "inf"])
def test_clip_grad_norm_scales_each_gradient_in_its_own_dtype(torch, norm_type):
    results = []
    for lib in (torch, minigrad):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        q = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.tensor([3.0, -4.0], dtype=lib.float64)
        q.grad = lib.tensor([-5.0, 0.7, 1.3])
        norm = lib.nn.utils.clip_grad_norm_([p, q], 1.0, norm_type=norm_type)
        r = lib.nn.Parameter(lib.ones(1))
        r.grad = lib.tensor([-5.0])
        lib.nn.utils.clip_grads_with_norm_([r], 0.3, lib.tensor(7.0, dtype=lib.float64))
        results.append((str(norm.dtype).split(".")[-1], norm.item(), p.grad.numpy().copy(), q.grad.numpy().copy(),
                        q.grad.dtype == lib.float32, r.grad.numpy().copy()))
    theirs, ours = results
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2:], theirs[2:]):
        np.testing.assert_array_equal(a, b)  # bit for bit: the float32 ones too


def test_parameters_to_vector_needs_viewable_parameters(torch):
    texts = []
    for lib in (torch, minigrad):
        with pytest.raises(RuntimeError) as e:
            lib.nn.utils.parameters_to_vector([lib.nn.Parameter(lib.ones(2, 3)).t()])
        texts.append(str(e.value))
    assert texts[1] == texts[0]
    vec = mnn.utils.parameters_to_vector([mnn.Parameter(minigrad.ones(2, 3)), mnn.Parameter(minigrad.zeros(2))])
    assert tuple(vec.shape) == (8,) and type(vec.grad_fn).__name__ == "CatBackward0"


@pytest.mark.parametrize("shapes", [[(2, 4), (3, 1)], [(2, 4), (3, 5)], [(2, 4), (3, 2, 4)], [(2, 4), (3,)],
                                    [(2, 4), (1, 3, 4)], [(3,), (2, 4)], [(2, 3), (0, 1)]])
def test_pad_sequence_broadcasts_each_sequence_into_its_slot(torch, shapes):
    results = []
    for lib in (torch, minigrad):
        xs = [lib.tensor(np.arange(np.prod(s), dtype=np.float64).reshape(s) + 1, requires_grad=True) for s in shapes]
        try:
            r = lib.nn.utils.rnn.pad_sequence(xs, batch_first=True, padding_value=-1.0)
        except RuntimeError as e:
            results.append(("error", str(e)))
            continue
        (r * lib.arange(r.numel(), dtype=lib.float64).view(r.shape)).sum().backward()
        results.append(("ok", tuple(r.shape), r.detach().numpy().tolist(), [x.grad.numpy().tolist() for x in xs]))
    assert results[1] == results[0]
