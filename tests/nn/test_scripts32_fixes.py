"""Focused checks for what the scripts of test_dl_scripts32.py found minigrad doing unlike PyTorch, all around complex
parameters: their gradient norm (clip_grad_norm_, get_total_norm) is real; clip_grad_value_ refuses them; LBFGS steps
them as (real, imaginary) pairs; nn.init.normal_ and Tensor.normal_ draw each part from N(mean, std^2 / 2); SparseAdam
refuses them; F.embedding refuses autograd through a complex table and F.embedding_bag a non-floating one."""
import numpy as np
import pytest

import minigrad


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 0.0, float("inf"), 3.0])
def test_clip_grad_norm_of_complex_gradients_is_real(torch, norm_type):
    def run(lib):
        w = lib.nn.Parameter(lib.tensor(np.array([3 + 4j, 1 - 2j, 0.5j])))
        v = lib.nn.Parameter(lib.tensor(np.array([0.25, -1.5])))
        ((w.abs() ** 2).sum() + (v ** 3).sum()).backward()
        total = lib.nn.utils.clip_grad_norm_([w, v], 1.0, norm_type=norm_type)
        after = lib.nn.utils.get_total_norm([w.grad, v.grad], norm_type)
        return total, after, lib.view_as_real(w.grad), v.grad

    for m, t in zip(run(minigrad), run(torch)):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_total_norm_of_an_empty_complex_gradient_is_real(torch):
    ours = minigrad.nn.utils.get_total_norm([minigrad.zeros(0, dtype=minigrad.complex64)])
    theirs = torch.nn.utils.get_total_norm([torch.zeros(0, dtype=torch.complex64)])
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert float(ours) == float(theirs)


def test_clip_grad_value_refuses_complex_gradients_as_pytorch(torch):
    def run(lib):
        w = lib.nn.Parameter(lib.tensor(np.array([3 + 4j, 1 - 2j])))
        (w.abs() ** 2).sum().backward()
        with pytest.raises(Exception) as info:
            lib.nn.utils.clip_grad_value_([w], 0.5)
        return type(info.value).__name__, str(info.value), lib.view_as_real(w.grad).numpy()

    ours, theirs = run(minigrad), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_array_equal(ours[2], theirs[2])  # left as it was


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_steps_complex_parameters_as_their_real_pairs(torch, line_search_fn):
    def run(lib):
        w = lib.nn.Parameter(lib.tensor(np.array([0.5 + 1j, -1 + 0.25j, 2 - 1j])))
        v = lib.nn.Parameter(lib.tensor(np.array([0.3, -0.7])))
        target = lib.tensor(np.array([1 - 1j, 0.5j, -0.5 + 0.5j]))
        opt = lib.optim.LBFGS([w, v], lr=0.5, max_iter=4, history_size=3, line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = ((w * (1 + v.sum()) - target).abs() ** 2).sum() + (v ** 2).sum()
            loss.backward()
            return loss

        losses = [float(opt.step(closure)) for _ in range(2)]
        state = opt.state[w]
        return (losses, lib.view_as_real(w.detach()).numpy(), v.detach().numpy(), state["d"].numpy(),
                state["prev_flat_grad"].numpy(), state["func_evals"])

    ours, theirs = run(minigrad), run(torch)
    for m, t in zip(ours, theirs):
        np.testing.assert_allclose(m, t, rtol=1e-10, atol=1e-12)
    assert ours[3].dtype == np.float64  # the search direction is real: (real, imaginary) pairs


@pytest.mark.parametrize("lib_name", ["minigrad", "torch"])
def test_init_normal_of_a_complex_tensor_draws_each_part_with_half_the_variance(torch, lib_name):
    lib = minigrad if lib_name == "minigrad" else torch
    state = lib.random.get_rng_state()
    try:
        lib.manual_seed(3)
        a = lib.nn.init.normal_(lib.empty(4, 3, dtype=lib.complex128), 2.0, 3.0)
        lib.manual_seed(3)
        b = lib.view_as_real(lib.empty(4, 3, dtype=lib.complex128)).normal_(2.0, 3.0 * 0.5 ** 0.5)
        np.testing.assert_allclose(lib.view_as_real(a).numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
        lib.manual_seed(3)
        c = lib.empty(4, 3, dtype=lib.complex128).normal_(2.0, 3.0)
        np.testing.assert_allclose(lib.view_as_real(c).numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
        w = lib.nn.init.xavier_normal_(lib.empty(200, 300, dtype=lib.complex64))
        assert w.dtype == lib.complex64
        np.testing.assert_allclose(lib.view_as_real(w).std(dim=(0, 1)).numpy(), [(2 / 500 / 2) ** 0.5] * 2, rtol=0.02)
    finally:
        lib.random.set_rng_state(state)


def test_sparse_adam_refuses_complex_parameters_by_place(torch):
    def run(lib):
        real, c = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2, dtype=lib.complex64))
        with pytest.raises(Exception) as info:
            lib.optim.SparseAdam([{"params": [real]}, {"params": [lib.nn.Parameter(lib.ones(3)), c]}])
        return type(info.value).__name__, str(info.value)

    assert run(minigrad) == run(torch) == ("ValueError", "Complex params at indices [[1, 1]]: SparseAdam does not "
                                          "support complex parameters")


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).replace("torch", "minigrad")
    return None


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"max_norm": 1.0}, {"sparse": True}])
def test_complex_embedding_refuses_autograd_as_pytorch(torch, kw):
    def run(lib):
        emb = lib.nn.Embedding(4, 3, dtype=lib.complex128, **kw)
        refused = error_of(lambda: emb(lib.tensor([0, 2])))
        with lib.no_grad():  # (without a graph to record, the lookup is allowed)
            rows = emb(lib.tensor([3, 0]))
        return refused, str(rows.dtype).split(".")[-1], tuple(rows.shape)

    ours, theirs = run(minigrad), run(torch)
    assert ours == theirs
    assert ours[0] == ("RuntimeError", "embedding does not support automatic differentiation for outputs with complex "
                                       "dtype.")


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "complex64", "complex128"])
@pytest.mark.parametrize("ids", ["int64", "float32"])
def test_embedding_bag_refuses_a_non_floating_weight_after_the_ids(torch, dtype, ids):
    if dtype == "int64" and ids == "float32":
        pytest.skip("PyTorch swaps the arguments of this deprecated (weight, input) order")

    def run(lib):
        weight = lib.ones(5, 3, dtype=getattr(lib, dtype))
        return error_of(lambda: lib.nn.functional.embedding_bag(lib.tensor([0, 1], dtype=getattr(lib, ids)), weight,
                                                                lib.tensor([0])))

    ours = run(minigrad)
    assert ours is not None and ours == run(torch)
