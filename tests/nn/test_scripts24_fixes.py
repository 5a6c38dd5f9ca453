"""Focused tests for what the scripts of test_dl_scripts24.py found minigrad doing differently from PyTorch."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


def test_custom_function_jvp_may_delete_what_forward_stashed_on_ctx(torch):
    """The forward-mode AD tutorial's Function keeps its result on ctx in forward and `del`s it in jvp."""
    def run(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.result = lib.exp(x)
                return ctx.result

            @staticmethod
            def jvp(ctx, g):
                out = g * ctx.result
                del ctx.result
                assert not hasattr(ctx, "result")
                return out

        fwAD = lib.autograd.forward_ad
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)
        with fwAD.dual_level():
            y = Exp.apply(fwAD.make_dual(x, lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)))
            return fwAD.unpack_dual(y).tangent.numpy()

    np.testing.assert_allclose(run(minigrad), run(torch), rtol=1e-15)


# ---- 5-D (volumetric) affine_grid and grid_sample: they raised NotImplementedError --------------------------------
def _volume_and_grid(seed, out=(2, 3, 2)):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2, 2, 3, 4, 5)), rng.uniform(-1.3, 1.3, (2, *out, 3))


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_5d_values_grad_fn_and_gradients_as_pytorch(torch, mode, padding_mode, align_corners):
    from twins import same

    x, g = _volume_and_grid(len(mode) + len(padding_mode) + align_corners)
    same(lambda F, x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners),
         x, g)


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_3d_values_grad_fn_and_theta_gradient_as_pytorch(torch, align_corners):
    from twins import same

    theta = np.random.default_rng(5).standard_normal((2, 3, 4))
    same(lambda F, t: F.affine_grid(t, (2, 1, 3, 4, 2), align_corners=align_corners), theta)


def test_grid_sample_5d_float32_as_pytorch(torch):
    x, g = _volume_and_grid(7)
    ours = F.grid_sample(minigrad.tensor(x, dtype=minigrad.float32), minigrad.tensor(g, dtype=minigrad.float32),
                         align_corners=False)
    theirs = torch.nn.functional.grid_sample(torch.tensor(x, dtype=torch.float32), torch.tensor(g, dtype=torch.float32),
                                             align_corners=False)
    assert ours.dtype == minigrad.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda F, lib: F.grid_sample(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 2, 2, 2, 3), mode="bicubic",
                                 align_corners=False),
    lambda F, lib: F.grid_sample(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 2, 2, 3), align_corners=False),
    lambda F, lib: F.grid_sample(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 2, 2, 2, 2), align_corners=False),
    lambda F, lib: F.affine_grid(lib.zeros(2, 3, 4), (1, 1, 2, 2, 2), align_corners=False),
    lambda F, lib: F.affine_grid(lib.zeros(1, 2, 3), (1, 1, 2, 2, 2), align_corners=False),
])
def test_volumetric_errors_as_pytorch(torch, call):
    def message(F, lib):
        try:
            call(F, lib)
        except Exception as e:  # noqa: BLE001 (the type and text are compared)
            return type(e).__name__, str(e).split("\n")[0].replace("torch.Size", "minigrad.Size")
        return None

    ours = message(F, minigrad)
    assert ours is not None and ours == message(torch.nn.functional, torch)


# ---- vmap over BatchNorm in training: unbatched running statistics are refused, batched ones updated per slice ---
def test_vmap_refuses_batch_norm_training_with_unbatched_running_stats(torch):
    def message(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        try:
            lib.func.vmap(model, in_dims=1)(lib.ones(4, 3, 2))
        except RuntimeError as e:
            return str(e), int(model[1].num_batches_tracked)
        return None

    assert message(minigrad) is not None and message(minigrad) == message(torch)


def test_vmap_batch_norm_with_stacked_running_stats_updates_each_model(torch):
    x = np.random.default_rng(9).standard_normal((2, 4, 2))

    def run(lib):
        lib.manual_seed(0)
        models = [lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3)).double() for _ in range(2)]
        if lib is minigrad:  # torch's initial weights
            for m, t in zip(models, run.torch_models):
                m.load_state_dict({k: minigrad.tensor(v.numpy()) for k, v in t.state_dict().items()})
        else:
            run.torch_models = models
        params, buffers = lib.func.stack_module_state(models)
        out = lib.func.vmap(lambda p, b, x: lib.func.functional_call(models[0], (p, b), (x,)))(params, buffers,
                                                                                             lib.tensor(x))
        return out.detach().numpy(), {k: v.numpy() for k, v in buffers.items()}

    theirs, ours = run(torch), run(minigrad)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    assert list(ours[1]) == list(theirs[1])
    for k in theirs[1]:
        np.testing.assert_allclose(ours[1][k], theirs[1][k], rtol=1e-10, atol=1e-12, err_msg=k)
    model = minigrad.nn.BatchNorm1d(3).eval()  # eval mode: nothing is written, nothing refused
    assert tuple(minigrad.func.vmap(model)(minigrad.ones(2, 4, 3)).shape) == (2, 4, 3)


# ---- torch.load(mmap=True) maps only a file given by its path ------------------------------------------------------
def test_load_mmap_needs_a_path_as_pytorch(torch, tmp_path):
    import io

    def outcome(lib, f):
        try:
            return "ok", lib.load(f, mmap=True, weights_only=True)["a"].tolist()
        except ValueError as e:
            return "error", str(e)

    for lib in (torch, minigrad):
        lib.save({"a": lib.ones(2)}, tmp_path / f"{lib.__name__}.pt")
    for make in (lambda lib: io.BytesIO((tmp_path / f"{lib.__name__}.pt").read_bytes()),
                 lambda lib: tmp_path / f"{lib.__name__}.pt", lambda lib: str(tmp_path / f"{lib.__name__}.pt")):
        assert outcome(minigrad, make(minigrad)) == outcome(torch, make(torch))
    with open(tmp_path / "minigrad.pt", "rb") as fh:
        assert outcome(minigrad, fh)[0] == "error"


# ---- parametrize.transfer_parametrizations_and_params: it was missing ---------------------------------------------
@pytest.mark.parametrize("case", ["symmetric", "weight_norm", "one_name_into_an_empty_module"])
def test_transfer_parametrizations_and_params_as_pytorch(torch, case):
    rng = np.random.default_rng(11)
    w, b = rng.standard_normal((3, 3)), rng.standard_normal(3)

    def run(lib):
        nn, P = lib.nn, lib.nn.utils.parametrize

        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(0, 1)

        class Doubled(nn.Module):
            def forward(self, X):
                return X * 2

        src = nn.Linear(3, 3).double()
        with lib.no_grad():
            src.weight.copy_(lib.tensor(w))
            src.bias.copy_(lib.tensor(b))
        if case == "weight_norm":
            lib.nn.utils.parametrizations.weight_norm(src)
        else:
            P.register_parametrization(src, "weight", Symmetric())
            P.register_parametrization(src, "bias", Doubled())
        if case == "one_name_into_an_empty_module":
            dst = P.transfer_parametrizations_and_params(src, nn.Module(), "weight")
        else:
            dst = P.transfer_parametrizations_and_params(src, nn.Linear(3, 3).double())
        shared = [a is b for a, b in zip(src.parameters(), dst.parameters())]
        (dst.weight.sum() * 2).backward()
        original = [n for n, _ in dst.named_parameters()]
        return (type(dst).__name__, P.is_parametrized(dst), list(dst.state_dict()), original, shared,
                dst.weight.detach().numpy(), [p.grad.numpy() for p in src.parameters() if p.grad is not None])

    ours, theirs = run(minigrad), run(torch)
    assert ours[:5] == theirs[:5]
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-12)
    assert len(ours[6]) == len(theirs[6])
    for a, b in zip(ours[6], theirs[6]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ---- prune: a structured dim out of range, a custom mask or importance scores of the wrong shape ---------------
@pytest.mark.parametrize("call", [
    lambda prune, lib: prune.ln_structured(lib.nn.Linear(3, 4), "weight", amount=1, n=2, dim=2),
    lambda prune, lib: prune.ln_structured(lib.nn.Linear(3, 4), "weight", amount=1, n=2, dim=-3),
    lambda prune, lib: prune.random_structured(lib.nn.Linear(3, 4), "weight", amount=1, dim=5),
    lambda prune, lib: prune.random_structured(lib.nn.Linear(3, 4), "weight", amount=1, dim=-3),
    lambda prune, lib: prune.custom_from_mask(lib.nn.Linear(3, 4), "weight", mask=lib.ones(3, 4)),
    lambda prune, lib: prune.l1_unstructured(lib.nn.Linear(3, 4), "weight", amount=2, importance_scores=lib.ones(2, 2)),
])
def test_prune_argument_errors_as_pytorch(torch, call):
    pytest.importorskip("torch.nn.utils.prune")

    def message(lib):
        try:
            call(lib.nn.utils.prune, lib)
        except Exception as e:  # noqa: BLE001 (the type and text are compared)
            return type(e).__name__, str(e).replace("torch.Size", "minigrad.Size")
        return None

    ours = message(minigrad)
    assert ours is not None and ours == message(torch)


def test_ln_structured_negative_dim_prunes_that_dim(torch):
    pytest.importorskip("torch.nn.utils.prune")
    w = np.random.default_rng(12).standard_normal((4, 3, 2))

    def mask(lib):
        m = lib.nn.Conv1d(3, 4, 2).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        lib.nn.utils.prune.ln_structured(m, "weight", amount=1, n=1, dim=-2)
        return m.weight_mask.numpy()

    np.testing.assert_array_equal(mask(minigrad), mask(torch))


# ---- forward AD: an in-place op on a copy (clone, x + 0) wrote into the original dual's tangent too --------------
@pytest.mark.parametrize("copy_of", [lambda x: x.clone(), lambda x: x + 0, lambda x: x.contiguous() * 1,
                                     lambda x: x.to(x.dtype, copy=True)])
def test_inplace_on_a_copy_leaves_the_dual_tangent_alone(torch, copy_of):
    def run(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor([1.0, 2.0], dtype=lib.float64), lib.tensor([3.0, 4.0], dtype=lib.float64))
            y = copy_of(d)
            y.mul_(d)
            z = d[0] * 2
            return [fwAD.unpack_dual(t).tangent.numpy().copy() for t in (d, y, z)]

    for ours, theirs in zip(run(minigrad), run(torch)):
        np.testing.assert_array_equal(ours, theirs)
