"""nn.Module and nn.Parameter: registration, traversal, modes, devices/dtypes, state dicts, repr."""
import copy
from collections import OrderedDict

import numpy as np
import pytest

import minigrad
import nn


class Net(nn.Module):
    """Two layers, a persistent and a non-persistent buffer, and a tied weight."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(3, 3, bias=False)
        self.head = nn.Linear(3, 3, bias=False)
        self.head.weight = self.fc2.weight  # tied: one Parameter, two names
        self.register_buffer("steps", minigrad.zeros(1, dtype=minigrad.int64))
        self.register_buffer("scratch", minigrad.ones(2), persistent=False)

    def forward(self, x):
        return self.head(self.act(self.fc2(self.act(self.fc1(x)))))


def test_parameter_is_a_leaf_sharing_data():
    t = minigrad.ones(3)
    p = nn.Parameter(t)
    assert isinstance(p, minigrad.Tensor) and p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.array is t.array
    assert repr(p) == "Parameter containing:\ntensor([1., 1., 1.], requires_grad=True)"
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)


def test_registration_and_traversal():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight"]  # the tied weight once
    assert len(list(net.parameters())) == 3
    assert [n for n, _ in net.named_parameters(remove_duplicate=False)] == names + ["head.weight"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2", "head"]
    assert list(net.modules())[0] is net and len(list(net.children())) == 4
    assert [n for n, _ in net.fc1.named_parameters(prefix="fc1")] == ["fc1.weight", "fc1.bias"]
    assert net.get_submodule("fc1") is net.fc1
    # re-assigning an attribute moves it between tables
    net.fc1 = None
    assert "fc1" in net._modules and net.fc1 is None
    del net.act
    assert "act" not in net._modules
    net.extra = minigrad.zeros(1)  # a plain tensor is a plain attribute, not a buffer
    assert "extra" not in dict(net.named_buffers())
    assert "fc2" in dir(net)


def test_registration_errors():
    class NoInit(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(minigrad.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        NoInit()
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'minigrad.FloatTensor' as parameter 'weight'"):
        lin.weight = minigrad.ones(2, 2)
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        lin.register_buffer("forward", minigrad.ones(1))
    with pytest.raises(KeyError, match=r'contain "\."'):
        lin.register_buffer("a.b", minigrad.ones(1))
    with pytest.raises(TypeError, match="Tensor or None required"):
        lin.register_buffer("x", [1, 2])
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = lin.nope
    with pytest.raises(NotImplementedError, match="missing the required \"forward\""):
        nn.Module()(1)


def test_train_eval_apply_requires_grad():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5)))
    assert net.eval() is net
    assert all(not m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    visited = []
    net.apply(lambda m: visited.append(type(m).__name__))
    assert visited == ["Linear", "Dropout", "Sequential", "Sequential"]  # children first
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(ValueError, match="boolean"):
        net.train("yes")


def test_zero_grad():
    lin = nn.Linear(3, 2)
    lin(minigrad.randn(4, 3)).sum().backward()
    grad = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is grad and not grad.array.any()
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_to_dtype_keeps_parameter_identity_and_converts_grads():
    net = Net()
    params = list(net.parameters())
    net(minigrad.randn(2, 4)).sum().backward()
    assert net.double() is net
    assert list(net.parameters()) == params  # the same objects (an optimizer built before stays valid)
    assert all(p.dtype == minigrad.float64 and p.grad.dtype == minigrad.float64 for p in params)
    assert net.steps.dtype == minigrad.int64  # only floating tensors change dtype
    assert net.scratch.dtype == minigrad.float64
    assert net.head.weight is net.fc2.weight
    net.to(minigrad.float32).to("cpu").cpu().float()
    assert all(p.dtype == minigrad.float32 for p in params)
    out = net(minigrad.randn(2, 4))
    assert out.dtype == minigrad.float32
    with pytest.raises(TypeError, match="floating point"):
        net.to(minigrad.int64)


@pytest.mark.skipif(not minigrad.cuda_is_available(), reason="needs a CUDA GPU and cupy")
def test_to_cuda_and_back():
    net = Net()
    params = list(net.parameters())
    net.cuda()
    assert list(net.parameters()) == params and all(p.is_cuda for p in params)
    assert net.steps.is_cuda
    out = net(minigrad.randn(2, 4, device="cuda"))
    assert out.is_cuda
    net.cpu()
    assert not any(p.is_cuda for p in params)


def test_deepcopy_is_independent():
    net = Net()
    twin = copy.deepcopy(net)
    assert twin.fc1.weight is not net.fc1.weight
    assert twin.head.weight is twin.fc2.weight  # ties survive the copy
    np.testing.assert_array_equal(twin.fc1.weight.array, net.fc1.weight.array)
    twin.fc1.weight.array[...] = 0
    assert net.fc1.weight.array.any()


def test_state_dict_keys_and_sharing():
    net = Net()
    sd = net.state_dict()
    # a module's own entries come before its children's (as in PyTorch); no non-persistent buffer;
    # the tied weight under both of its names
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "head.weight"]
    assert not isinstance(sd["fc1.weight"], nn.Parameter) and not sd["fc1.weight"].requires_grad
    assert sd["fc1.weight"].array is net.fc1.weight.array  # detached, not copied
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight


def test_replacing_a_member_keeps_its_place(torch):
    # a new module or parameter under an old name takes the old one's place (PyTorch's order), so that
    # a subclass replacing a submodule (nn.Transformer's decoder by a Linear) has torch's state_dict keys
    # and a Sequential still runs its modules in order
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    seq[0] = nn.Linear(2, 3, bias=False)
    assert list(seq.state_dict()) == ["0.weight", "2.weight", "2.bias"]
    assert seq(minigrad.ones(4, 2)).shape == (4, 1)
    net, theirs = Net(), torch.nn.Linear(4, 3)
    net.fc1 = nn.Linear(4, 3, bias=False)
    net.fc1.weight = nn.Parameter(minigrad.zeros(3, 4))
    net.fc1.register_parameter("bias", nn.Parameter(minigrad.zeros(3)))
    theirs.weight = torch.nn.Parameter(torch.zeros(3, 4))
    assert list(net.state_dict())[:3] == ["steps", "fc1.weight", "fc1.bias"]
    assert list(net.fc1.state_dict()) == list(theirs.state_dict())


def test_load_state_dict_roundtrip():
    a, b = Net(), Net()
    result = b.load_state_dict({k: v.clone() for k, v in a.state_dict().items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for va, vb in zip(a.state_dict().values(), b.state_dict().values()):
        np.testing.assert_array_equal(va.array, vb.array)
    # numpy arrays are accepted as values too
    b.load_state_dict({k: np.zeros(v.shape, dtype=v.array.dtype) for k, v in a.state_dict().items()})
    assert not b.fc1.weight.array.any()


def _snapshot(module):
    return {k: v.array.copy() for k, v in module.state_dict().items()}


def _assert_unchanged(module, snap):
    for k, v in module.state_dict().items():
        np.testing.assert_array_equal(v.array, snap[k])


def test_load_state_dict_missing_and_unexpected_keys():
    net = Net()
    snap = _snapshot(net)
    sd = {k: minigrad.zeros(*v.shape, dtype=v.dtype) for k, v in net.state_dict().items()}
    del sd["fc1.bias"]
    sd["fc3.weight"] = minigrad.zeros(1)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    msg = str(err.value)
    assert "Error(s) in loading state_dict for Net" in msg
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "fc3.weight"' in msg
    _assert_unchanged(net, snap)  # strict failure copies nothing
    result = net.load_state_dict(sd, strict=False)
    assert result == (["fc1.bias"], ["fc3.weight"])
    assert result.missing_keys == ["fc1.bias"] and result.unexpected_keys == ["fc3.weight"]
    assert not net.fc1.weight.array.any()


def test_load_state_dict_size_mismatch_names_every_key_and_changes_nothing():
    net = Net()
    snap = _snapshot(net)
    sd = {k: minigrad.zeros(*v.shape, dtype=v.dtype) for k, v in net.state_dict().items()}
    sd["fc1.weight"] = minigrad.zeros(3, 5)
    sd["fc2.weight"] = minigrad.zeros(2, 3)
    sd["steps"] = "not a tensor"
    for strict in (True, False):
        with pytest.raises(RuntimeError) as err:
            net.load_state_dict(sd, strict=strict)
        msg = str(err.value)
        assert "size mismatch for fc1.weight: copying a param with shape minigrad.Size([3, 5]) from checkpoint, " \
               "the shape in current model is minigrad.Size([3, 4])." in msg
        assert "size mismatch for fc2.weight" in msg
        assert 'While copying the parameter named "steps"' in msg
        _assert_unchanged(net, snap)


def test_repr():
    assert repr(nn.Linear(4, 3)) == "Linear(in_features=4, out_features=3, bias=True)"
    net = nn.Sequential(nn.Linear(4, 3, bias=False), nn.ModuleDict({"act": nn.GELU(approximate="tanh")}))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=4, out_features=3, bias=False)\n"
        "  (1): ModuleDict(\n"
        "    (act): GELU(approximate='tanh')\n"
        "  )\n"
        ")"
    )
    blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.LayerNorm(2, bias=False)])
    assert repr(blocks) == (
        "ModuleList(\n"
        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (3): LayerNorm((2,), eps=1e-05, elementwise_affine=True, bias=False)\n"
        ")"
    )
    assert repr(nn.ModuleList()) == "ModuleList()"


# ---- member tables and their mirror in __dict__ (members are read by ordinary attribute lookup) ----
def _members_agree(m):
    for table in (m._parameters, m._buffers, m._modules):
        for name, value in table.items():
            assert getattr(m, name) is value


def test_member_tables_written_directly_are_what_attributes_read():
    import weakref
    lin = nn.Linear(3, 2)
    new = nn.Parameter(minigrad.zeros(2, 3))
    lin._parameters["weight"] = new  # a library's way (parametrizations, functional_call)
    assert lin.weight is new
    del lin._parameters["bias"]
    with pytest.raises(AttributeError, match="has no attribute 'bias'"):
        _ = lin.bias
    lin._parameters.update({"bias": None})
    assert lin.bias is None
    assert lin._parameters.pop("bias") is None and not hasattr(lin, "bias")
    lin._buffers.setdefault("steps", minigrad.zeros(1))
    assert lin.steps is lin._buffers["steps"]
    name, value = lin._buffers.popitem()
    assert name == "steps" and not hasattr(lin, "steps")
    lin._parameters.clear()
    assert not hasattr(lin, "weight") and list(lin.parameters()) == []
    assert type(lin._modules.copy()) is OrderedDict and type(lin._modules | {}) is OrderedDict
    # the table does not keep its module alive (no reference cycle: freed at once, not by the collector)
    m = nn.Linear(2, 2)
    ref = weakref.ref(m)
    del m
    assert ref() is None


def test_member_mirror_follows_assignment_deletion_and_copies():
    import copy
    import pickle
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seq[0] = nn.Linear(2, 3)
    _members_agree(seq)
    lin = seq[0]
    lin.weight = nn.Parameter(minigrad.ones(3, 2))
    lin.bias = None
    _members_agree(lin)
    del lin.weight
    assert "weight" not in lin._parameters and not hasattr(lin, "weight")
    for twin in (copy.deepcopy(seq), pickle.loads(pickle.dumps(seq))):
        t0 = twin[0]
        assert t0 is not lin
        p = nn.Parameter(minigrad.zeros(3, 2))
        t0._parameters["weight"] = p  # the copy's tables mirror into the copy, not the original
        assert t0.weight is p and not hasattr(lin, "weight")
        _members_agree(twin)


def test_tree_walks_are_pre_order_with_shared_modules_once():
    shared = nn.Linear(2, 2)
    inner = nn.Sequential(shared, nn.ReLU())
    net = nn.Sequential(inner, nn.Sequential(shared, nn.Linear(2, 3)), shared)
    assert [n for n, _ in net.named_modules()] == ["", "0", "0.0", "0.1", "1", "1.1"]
    assert [n for n, _ in net.named_modules(remove_duplicate=False)] == [
        "", "0", "0.0", "0.1", "1", "1.0", "1.1", "2"]
    assert list(net.modules()) == [m for _, m in net.named_modules()]
    assert [n for n, _ in net.named_modules(prefix="net")][:2] == ["net", "net.0"]
    memo = {id(inner)}  # a memo given in: those modules (and what only they hold) are skipped
    assert [n for n, _ in net.named_modules(memo=memo)] == ["", "1", "1.0", "1.1"]
    params = [p for _, p in net.named_parameters()]
    assert list(net.parameters()) == params and len(params) == 4  # shared weight and bias once
    assert list(net.parameters(recurse=False)) == []
    net.register_buffer("b", minigrad.zeros(1))
    inner.register_buffer("b", net.b)
    assert list(net.buffers()) == [net.b] and list(net.buffers(recurse=False)) == [net.b]


def _hooked_run(L):
    nn = L.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).double()
    with L.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(L.tensor(np.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1) * 0.5))
    log, feats = [], {}
    handles = [
        model[1].register_forward_hook(lambda m, a, o: feats.__setitem__("relu", o.detach().numpy().copy())),
        model[0].register_forward_pre_hook(lambda m, a: (a[0] * 2,)),  # new args
        model[2].register_forward_hook(lambda m, a, o: o + 1),  # a new output
        model[2].register_forward_hook(lambda m, a, kw, o: log.append(("kwargs", sorted(kw))), with_kwargs=True),
        model[2].register_forward_hook(lambda m, a, o: log.append(("first",)), prepend=True),
        model[0].register_full_backward_hook(
            lambda m, gi, go: log.append(("grads of 0", [g.numpy().copy() for g in gi], [g.numpy().copy() for g in go]))),
        model[2].register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,)),  # new grad_input
        model[2].register_full_backward_pre_hook(lambda m, go: log.append(("grad_output of 2", [g.numpy().copy() for g in go]))),
    ]
    x = L.tensor(np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -0.1]]), requires_grad=True)
    out = model(x)
    out.sum().backward()
    values = [out.detach().numpy().copy(), feats["relu"], x.grad.numpy().copy(), model[0].weight.grad.numpy().copy()]
    for h in handles:
        h.remove()
    with model[2].register_forward_hook(lambda m, a, o: o * 0):
        zero = model(x)
    values += [zero.detach().numpy().copy(), model(x).detach().numpy().copy()]  # removed on leaving the block
    return values, log


def test_module_hooks_like_torch(torch):
    (got, got_log), (want, want_log) = _hooked_run(minigrad), _hooked_run(torch)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert [e[0] for e in got_log] == [e[0] for e in want_log] == ["first", "kwargs", "grad_output of 2", "grads of 0"]
    for a, b in zip(got_log, want_log):
        for p, q in zip([x for part in a[1:] for x in part], [x for part in b[1:] for x in part]):
            np.testing.assert_allclose(p, q, rtol=1e-12)


def test_full_backward_hook_warns_when_no_input_needs_a_gradient(torch):
    # the usual case for a model's first layer (the data needs no gradient): grad_input is all None, and
    # PyTorch says so with a UserWarning; an input that requires grad gets no warning
    import warnings

    seen = []
    for L in (minigrad, torch):
        lin = L.nn.Linear(2, 2)
        grads = []
        lin.register_full_backward_hook(lambda m, gi, go, log=grads: log.append(gi))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lin(L.ones(1, 2)).sum().backward()
            lin(L.ones(1, 2, requires_grad=True)).sum().backward()
        seen.append(([(w.category, str(w.message)) for w in caught], [g[0] is None for g in grads]))
    assert seen[0] == seen[1] and len(seen[0][0]) == 1 and seen[0][1] == [True, False]


def _two_in_two_out_hook_grads(L, b_requires_grad):
    class TwoOut(L.nn.Module):
        def forward(self, a, b, c=None):
            return a * 2 + b, a * 3

    seen = []
    m = TwoOut()
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(
        ([None if g is None else g.tolist() for g in gi], [None if g is None else g.tolist() for g in go])))
    m.register_full_backward_pre_hook(lambda mod, go: seen.append([None if g is None else g.tolist() for g in go]))
    a = L.ones(1, 2, requires_grad=True)
    b = L.full((1, 2), 3.0, requires_grad=b_requires_grad)
    for call, use in (((a, b, 5), 0), ((a, b, 5), 1), ((a, 7, b), 1)):
        outs = m(*call)
        outs[use].sum().backward()
    return seen


@pytest.mark.parametrize("b_requires_grad", [False, True])
def test_full_backward_hook_grads_of_unused_outputs_and_constant_inputs_as_torch(torch, b_requires_grad):
    # a module of two outputs, one used: PyTorch's grad_output holds None for the other (minigrad gave zeros),
    # and its grad_input holds zeros for a tensor argument that needs no gradient (minigrad gave None)
    got, want = _two_in_two_out_hook_grads(minigrad, b_requires_grad), _two_in_two_out_hook_grads(torch, b_requires_grad)
    assert got == want


def _hook_grads_of_outputs_without_gradients(L):
    class Outs(L.nn.Module):
        def forward(self, a, b):
            return a * 2, b * 3, 4  # (b needs no gradient, nor its product; 4 is no tensor)

    seen = []
    m = Outs()
    m.register_full_backward_pre_hook(lambda mod, go: seen.append([None if g is None else g.tolist() for g in go]))
    m.register_full_backward_hook(lambda mod, gi, go: seen.append([None if g is None else g.tolist() for g in go]))
    m(L.ones(2, requires_grad=True), L.ones(2))[0].sum().backward()
    return seen


def test_full_backward_hooks_grad_output_has_an_entry_per_output_as_torch(torch):
    # PyTorch's grad_output lists every output, None for those that need no gradient: minigrad listed only the
    # outputs that needed one (a hook reading grad_output[1] failed)
    assert _hook_grads_of_outputs_without_gradients(minigrad) == _hook_grads_of_outputs_without_gradients(torch)


def test_forward_hooks_run_in_order_and_go_away():
    lin = nn.Linear(2, 2)
    seen = []
    h = lin.register_forward_hook(lambda m, a, o: seen.append("b"))
    lin.register_forward_pre_hook(lambda m, a: seen.append("a"))
    lin.register_forward_hook(lambda m, a, o: seen.append("failed" if o is None else "c"), always_call=True)
    lin(minigrad.ones(1, 2))
    assert seen == ["a", "b", "c"]
    h.remove()
    seen.clear()
    with pytest.raises(RuntimeError):
        lin(minigrad.ones(1, 3))  # forward raises: always_call's hook still runs, with no output
    assert seen == ["a", "failed"]


def test_state_dict_positional_arguments_warn_as_pytorch():
    # older scripts call model.state_dict(None, "prefix.") or state_dict({}, "", True): PyTorch takes them with a
    # FutureWarning; keywords say nothing
    import warnings

    torch = pytest.importorskip("torch")
    seen = []
    for lib in (nn, torch.nn):
        m = lib.Linear(2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            keys = [list(m.state_dict(None, "x.")), list(m.state_dict({}, "", True)),
                    list(m.state_dict(destination={}, prefix="y."))]
            kept = m.state_dict(None, "", True)["weight"].requires_grad
        seen.append((keys, kept, [(w.category, str(w.message)) for w in caught]))
    assert seen[0] == seen[1] and len(seen[0][2]) == 3
