"""nn.Module's less common methods against PyTorch: get_parameter, get_buffer, set_submodule, get_extra_state /
set_extra_state in state dicts, to_empty, share_memory, type, and the state-dict hooks (register_state_dict_pre_hook,
register_state_dict_post_hook, register_load_state_dict_pre_hook, register_load_state_dict_post_hook)."""
import copy

import numpy as np
import pytest

import minigrad
import nn


def build(mod):
    """The same small tree in torch.nn or nn: a Linear, a BatchNorm with buffers, a nested Sequential."""
    return mod.Sequential(mod.Linear(3, 4), mod.BatchNorm1d(4), mod.Sequential(mod.ReLU(), mod.Linear(4, 2)))


def error_of(fn, *args, **kwargs):
    """(type, message) of the error fn(*args, **kwargs) raises, or None."""
    try:
        fn(*args, **kwargs)
    except Exception as e:  # (the error itself is what is compared)
        return type(e), str(e)
    return None


# ---- get_parameter, get_buffer, set_submodule ----------------------------------------------------------------
def test_get_parameter_and_buffer_vs_torch(torch):
    ours, theirs = build(nn), build(torch.nn)
    assert ours.get_parameter("2.1.weight") is ours[2][1].weight
    assert ours.get_buffer("1.running_mean") is ours[1].running_mean
    assert ours.get_buffer("1.num_batches_tracked") is ours[1].num_batches_tracked
    for call in (lambda m: m.get_parameter("0.nope"), lambda m: m.get_parameter("1.running_mean"),
                 lambda m: m.get_parameter("5.weight"), lambda m: m.get_buffer("0.weight"),
                 lambda m: m.get_buffer("1.nope"), lambda m: m.get_parameter("1.training")):
        got, want = error_of(call, ours), error_of(call, theirs)
        assert want is not None and got == want


def test_set_submodule_vs_torch(torch):
    for mod in (nn, torch.nn):
        m = build(mod)
        m.set_submodule("2.1", mod.Linear(4, 5))
        assert m[2][1].out_features == 5
        m.set_submodule("2.new", mod.Tanh())  # (not strict: a new name under an existing parent)
        assert isinstance(m[2].new, mod.Tanh)
        m.set_submodule("0", mod.Identity(), strict=True)
        assert isinstance(m[0], mod.Identity)
    ours, theirs = build(nn), build(torch.nn)
    for target, value, strict in (("", "Linear", False), ("0", 3, False), ("2.zzz", "Tanh", True),
                                  ("9.x", "Tanh", False), ("1.training", "Tanh", False),
                                  ("0.weight", "Tanh", False)):
        errors = []
        for m, lib in ((ours, nn), (theirs, torch.nn)):
            v = getattr(lib, value)(*([1, 1] if value == "Linear" else [])) if isinstance(value, str) else value
            errors.append(error_of(m.set_submodule, target, v, strict=strict))
        assert errors[1] is not None and errors[0] == errors[1]


# ---- extra state --------------------------------------------------------------------------------------------------
def with_extra_state(mod):
    class Counter(mod.Module):
        def __init__(self):
            super().__init__()
            self.lin = mod.Linear(2, 2)
            self.steps = 0

        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]

    return Counter


def test_extra_state_in_state_dict_vs_torch(torch):
    ours, theirs = with_extra_state(nn)(), with_extra_state(torch.nn)()
    ours.steps = theirs.steps = 7
    outer_o, outer_t = nn.Sequential(ours, nn.Linear(2, 1)), torch.nn.Sequential(theirs, torch.nn.Linear(2, 1))
    sd = outer_o.state_dict()
    assert list(sd) == list(outer_t.state_dict())
    assert sd["0._extra_state"] == {"steps": 7}
    fresh = nn.Sequential(with_extra_state(nn)(), nn.Linear(2, 1))
    result = fresh.load_state_dict(sd)
    assert fresh[0].steps == 7 and not result.missing_keys and not result.unexpected_keys
    # a missing extra state is a missing key; one for a module without set_extra_state is unexpected
    errors = []
    for model in (outer_t, outer_o):
        state = {k: v for k, v in model.state_dict().items() if k != "0._extra_state"}
        assert model.load_state_dict(state, strict=False).missing_keys == ["0._extra_state"]
        state["1._extra_state"] = 1
        assert model.load_state_dict(state, strict=False).unexpected_keys == ["1._extra_state"]
        errors.append(error_of(model.load_state_dict, state))
    assert errors[0] == errors[1] and errors[0][0] is RuntimeError
    # the base class's methods are never called, and say so if they are
    for lib in (torch.nn, nn):
        with pytest.raises(RuntimeError, match="Reached a code path in Module.get_extra_state"):
            lib.Linear(1, 1).get_extra_state()
        assert "_extra_state" not in "".join(lib.Linear(1, 1).state_dict())


# ---- to_empty, share_memory, type ------------------------------------------------------------------------------
def test_to_empty_share_memory_and_type():
    m = build(nn)
    params = list(m.parameters())
    shapes = [(tuple(t.shape), t.dtype) for t in m.state_dict().values()]
    assert m.to_empty(device="cpu") is m
    assert [(tuple(t.shape), t.dtype) for t in m.state_dict().values()] == shapes
    assert list(m.parameters())[0] is params[0]  # (the same Tensor objects, new arrays)
    with pytest.raises(TypeError):
        m.to_empty("cpu")  # (device is keyword-only, as in PyTorch)
    inner = build(nn)
    before = inner[0].weight.array
    inner.to_empty(device=None, recurse=False)  # (the Sequential itself has no tensors of its own)
    assert inner[0].weight.array is before
    assert m.share_memory() is m
    m.type(minigrad.float64)
    assert m[0].weight.dtype == minigrad.float64
    assert m[1].num_batches_tracked.dtype == minigrad.float64  # type() converts integer buffers too, as PyTorch
    m.type("torch.FloatTensor")
    assert m[0].weight.dtype == minigrad.float32



@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_share_memory_lets_forked_workers_train_the_parents_model_in_place():
    # Hogwild: the parent's model is trained by its worker processes; without shared memory the parent
    # kept its untrained weights and the script's final evaluation reported them silently
    import multiprocessing

    minigrad.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = minigrad.tensor(np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32))
    y = x.sum(1, keepdim=True)
    assert not any(p.is_shared() for p in m.parameters())
    assert m.share_memory() is m
    assert all(p.is_shared() for p in m.parameters()) and m[0].weight[0].is_shared()  # (a view of one too)
    twin = copy.deepcopy(m)  # (a copy is not shared, as in PyTorch)
    assert not any(p.is_shared() for p in twin.parameters())

    def one_step(model):
        opt = nn.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()

    ctx = multiprocessing.get_context("fork")
    worker = ctx.Process(target=one_step, args=(m,))
    worker.start()
    worker.join()
    assert worker.exitcode == 0
    one_step(twin)  # the same step in this process, on the unshared copy
    for ours, theirs in zip(m.parameters(), twin.parameters()):
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def test_is_shared_as_torch(torch):
    for lib in (torch, minigrad):
        t = lib.arange(6.0).view(2, 3)
        assert t.is_shared() is False
        assert t.share_memory_() is t
        assert t.is_shared() is True and t[1].is_shared() is True
        assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]

def test_type_vs_torch(torch):
    ours, theirs = build(nn), build(torch.nn)
    ours.type(minigrad.float64)
    theirs.type(torch.float64)
    assert [str(t.dtype).split(".")[1] for t in ours.state_dict().values()] == \
           [str(t.dtype).split(".")[1] for t in theirs.state_dict().values()]


# ---- state-dict hooks -----------------------------------------------------------------------------------------
def record_hooks(m, calls):
    handles = []
    for name, sub in m.named_modules():
        handles.append(sub.register_state_dict_pre_hook(
            lambda mod, prefix, keep_vars, name=name: calls.append(("pre", name, prefix, keep_vars))))
        handles.append(sub.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta, name=name: calls.append(("post", name, prefix, len(sd)))))
        handles.append(sub.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, meta, strict, missing, unexpected, errors, name=name:
            calls.append(("load_pre", name, prefix, sorted(sd)))))
        handles.append(sub.register_load_state_dict_post_hook(
            lambda mod, keys, name=name: calls.append(("load_post", name, list(keys.missing_keys)))))
    return handles


def test_state_dict_hooks_order_and_arguments_vs_torch(torch):
    ours, theirs = build(nn), build(torch.nn)
    calls_o, calls_t = [], []
    handles = record_hooks(ours, calls_o)
    record_hooks(theirs, calls_t)
    ours.state_dict(keep_vars=True)
    theirs.state_dict(keep_vars=True)
    assert calls_o == calls_t
    state = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items() if k != "0.bias"}
    calls_o.clear()
    calls_t.clear()
    ours.load_state_dict({k: minigrad.tensor(v) for k, v in state.items()}, strict=False)
    theirs.load_state_dict({k: torch.tensor(v) for k, v in state.items()}, strict=False)
    # the pre-hooks run as PyTorch's, module by module; the post-hooks too, children first, but here all
    # after the copy (PyTorch runs each right after its module's subtree is loaded)
    for kind in ("load_pre", "load_post"):
        assert [c for c in calls_o if c[0] == kind] == [c for c in calls_t if c[0] == kind]
    for h in handles:
        h.remove()
    calls_o.clear()
    ours.state_dict()
    ours.load_state_dict(ours.state_dict())
    assert calls_o == []


def test_state_dict_post_hook_edits_in_place_and_must_return_none(torch):
    for lib in (torch.nn, nn):
        m = lib.Linear(2, 2)
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop(prefix + "bias"))
        with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
            m.state_dict()
        m = lib.Linear(2, 2)
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.__setitem__(prefix + "extra", 1) or None)
        assert list(m.state_dict()) == ["weight", "bias", "extra"]


def test_load_state_dict_pre_hook_renames_keys_vs_torch(torch):
    def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        for old in [k for k in sd if k.startswith(prefix + "old_")]:
            sd[prefix + old[len(prefix) + 4:]] = sd.pop(old)

    for lib, mod in ((torch, torch.nn), (minigrad, nn)):
        m = mod.Sequential(mod.Linear(2, 3))
        m[0].register_load_state_dict_pre_hook(rename)
        state = {"0.old_weight": lib.ones(3, 2), "0.old_bias": lib.zeros(3)}
        result = m.load_state_dict(state)
        assert not result.missing_keys and not result.unexpected_keys
        assert float(m[0].weight.sum()) == 6.0
        assert list(state) == ["0.old_weight", "0.old_bias"]  # (the caller's dict is left as it was)


def test_load_state_dict_post_hook_clears_keys_for_strict_vs_torch(torch):
    def forgive(mod, keys):
        keys.missing_keys.clear()

    for lib, mod in ((torch, torch.nn), (minigrad, nn)):
        m = mod.Linear(2, 3)
        m.register_load_state_dict_post_hook(forgive)
        result = m.load_state_dict({"weight": lib.ones(3, 2)})  # strict, bias missing: the hook forgives it
        assert result.missing_keys == [] and float(m.weight.sum()) == 6.0
        m = mod.Linear(2, 3)
        m.register_load_state_dict_post_hook(lambda mod, keys: 1)
        with pytest.raises(AssertionError, match="are not expected to return new values"):
            m.load_state_dict(m.state_dict())


def test_load_state_dict_checks_before_copying_and_error_order(torch):
    ours, theirs = build(nn), build(torch.nn)
    state = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}
    del state["0.bias"]
    state["2.9.weight"] = np.zeros(1)
    state["0.weight"] = np.zeros((5, 5))
    before = ours[0].weight.detach().numpy().copy()
    got = error_of(ours.load_state_dict, {k: minigrad.tensor(v) for k, v in state.items()})
    want = error_of(theirs.load_state_dict, {k: torch.tensor(v) for k, v in state.items()})
    assert got[0] is want[0] is RuntimeError
    assert got[1].replace("minigrad.", "torch.") == want[1]
    np.testing.assert_array_equal(ours[0].weight.detach().numpy(), before)


def test_scalar_from_one_element_vector_and_metadata(torch):
    for lib, mod in ((torch, torch.nn), (minigrad, nn)):
        m = mod.BatchNorm1d(2)
        state = dict(m.state_dict())
        state["num_batches_tracked"] = lib.tensor([5])
        m.load_state_dict(state)
        assert int(m.num_batches_tracked) == 5
    # each module's local metadata, by its prefix, as PyTorch's (whose BatchNorm is at version 2)
    tree = (lambda mod: mod.Sequential(mod.Linear(3, 4), mod.Sequential(mod.ReLU(), mod.Linear(4, 2))))
    assert tree(nn).state_dict()._metadata == tree(torch.nn).state_dict()._metadata


def test_hook_tables_are_pytorchs_id_to_hook_maps():
    # scripts (and PyTorch's pruning code) read `module._forward_pre_hooks.values()` as the hooks themselves
    torch = pytest.importorskip("torch")
    from collections import OrderedDict

    def pre(module, args):
        return None

    def post(module, args, kwargs, out):
        return None

    for lib in (torch, minigrad):
        m = lib.nn.Linear(2, 2)
        assert isinstance(m._forward_pre_hooks, OrderedDict) and len(m._forward_pre_hooks) == 0
        h1 = m.register_forward_pre_hook(pre)
        h2 = m.register_forward_hook(post, with_kwargs=True)
        assert list(m._forward_pre_hooks.values()) == [pre] and list(m._forward_hooks.values()) == [post]
        assert list(m._forward_hooks_with_kwargs) == [h2.id]
        m(lib.ones(2))
        h1.remove(), h2.remove()
        assert len(m._forward_pre_hooks) == 0 and len(m._forward_hooks_with_kwargs) == 0


# ---- nn.utils.fusion and skip_init ------------------------------------------------------------------------------------
def _same_weights(ours, theirs):
    for name, t in list(theirs.named_parameters()) + list(theirs.named_buffers()):
        getattr(ours, name).data = minigrad.tensor(t.detach().numpy())


@pytest.mark.parametrize("conv,bn,transpose,shape", [
    (("Conv2d", 3, 4, 3), ("BatchNorm2d", 4), False, (2, 3, 6, 6)),
    (("Conv3d", 2, 4, 2, {"bias": False}), ("BatchNorm3d", 4, {"affine": False}), False, (1, 2, 4, 3, 4)),
    (("ConvTranspose2d", 4, 6, 3), ("BatchNorm2d", 6), True, (2, 4, 3, 3)),
])
def test_fuse_conv_bn_eval_vs_torch(conv, bn, transpose, shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    mods = []
    for lib in (nn, torch.nn):
        c = getattr(lib, conv[0])(*[a for a in conv[1:] if not isinstance(a, dict)], **next(
            (a for a in conv[1:] if isinstance(a, dict)), {}))
        b = getattr(lib, bn[0])(*[a for a in bn[1:] if not isinstance(a, dict)], **next(
            (a for a in bn[1:] if isinstance(a, dict)), {}))
        mods.append((c, b))
    (c, b), (tc, tb) = mods
    with torch.no_grad():
        tb.running_mean.copy_(torch.tensor(rng.standard_normal(tb.num_features)))
        tb.running_var.copy_(torch.tensor(rng.uniform(0.5, 2, tb.num_features)))
        if tb.weight is not None:
            tb.weight.copy_(torch.tensor(rng.standard_normal(tb.num_features)))
    _same_weights(c, tc), _same_weights(b, tb)
    with pytest.raises(AssertionError, match="^Fusion only for eval!$"):
        nn.utils.fuse_conv_bn_eval(c, b, transpose)
    for m in (c, b, tc, tb):
        m.eval()
    fused, tfused = nn.utils.fuse_conv_bn_eval(c, b, transpose), torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    assert fused is not c and repr(fused) == repr(tfused)
    assert type(fused.weight) is nn.Parameter and fused.bias.requires_grad == tfused.bias.requires_grad
    # the fused parameters are PyTorch's bit for bit (the same operations in the same order)
    np.testing.assert_array_equal(fused.weight.detach().numpy(), tfused.weight.detach().numpy())
    np.testing.assert_array_equal(fused.bias.detach().numpy(), tfused.bias.detach().numpy())
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(fused(minigrad.tensor(x)).array, tfused(torch.tensor(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(fused(minigrad.tensor(x)).array, b(c(minigrad.tensor(x))).array, rtol=1e-4, atol=1e-5)


def test_fuse_linear_bn_eval_vs_torch_and_its_errors():
    torch = pytest.importorskip("torch")
    ours, theirs = (nn.Linear(3, 4), nn.BatchNorm1d(4)), (torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    with torch.no_grad():
        theirs[1].running_var.fill_(3.0), theirs[1].running_mean.fill_(0.5), theirs[1].bias.fill_(0.25)
    for o, t in zip(ours, theirs):
        _same_weights(o, t)
        o.eval(), t.eval()
    fused, tfused = nn.utils.fuse_linear_bn_eval(*ours), torch.nn.utils.fuse_linear_bn_eval(*theirs)
    x = np.random.default_rng(4).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(fused(minigrad.tensor(x)).array, tfused(torch.tensor(x)).detach().numpy(), rtol=1e-5)
    w, b = nn.utils.fuse_linear_bn_weights(ours[0].weight, None, ours[1].running_mean, ours[1].running_var, 1e-5,
                                           ours[1].weight, ours[1].bias)
    tw, tb = torch.nn.utils.fuse_linear_bn_weights(theirs[0].weight, None, theirs[1].running_mean,
                                                   theirs[1].running_var, 1e-5, theirs[1].weight, theirs[1].bias)
    np.testing.assert_array_equal(b.array, tb.detach().numpy())  # (PyTorch's operations in its order: its bits)
    np.testing.assert_array_equal(w.array, tw.detach().numpy())
    assert (type(w), type(b), b.requires_grad) == (nn.Parameter, nn.Parameter, tb.requires_grad)
    for args in [lambda lib: (lib.Linear(3, 4).eval(), lib.BatchNorm1d(5).eval()),
                 lambda lib: (lib.Linear(3, 4), lib.BatchNorm1d(4).eval()),
                 lambda lib: (lib.Linear(3, 4).eval(), lib.BatchNorm1d(4, track_running_stats=False).eval())]:
        with pytest.raises(AssertionError) as theirs_error:
            torch.nn.utils.fuse_linear_bn_eval(*args(torch.nn))
        with pytest.raises(AssertionError) as ours_error:
            nn.utils.fuse_linear_bn_eval(*args(nn))
        assert str(ours_error.value) == str(theirs_error.value)


def test_skip_init_vs_torch():
    torch = pytest.importorskip("torch")
    m = nn.utils.skip_init(nn.Linear, 3, 4, bias=False)
    assert repr(m) == repr(torch.nn.utils.skip_init(torch.nn.Linear, 3, 4, bias=False))
    assert m.weight.shape == (4, 3) and type(m.weight) is nn.Parameter
    for cls in ("ReLU", "Sequential"):
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.utils.skip_init(getattr(torch.nn, cls))
        with pytest.raises(RuntimeError) as ours:
            nn.utils.skip_init(getattr(nn, cls))
        assert str(ours.value) == str(theirs.value)
