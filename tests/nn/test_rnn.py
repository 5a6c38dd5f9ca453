"""RNN, LSTM, GRU and their cells against PyTorch from the same weights: outputs, final states and the
gradients of inputs, initial states and every parameter; the fused op against the reference; one node
per layer and direction; state dicts; PyTorch's error texts; a small character model trained in lockstep."""
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends
from minigrad.autograd import gradcheck

I, H, T, B = 5, 6, 4, 3
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")  # (torch's, on the CPU)
TOL = {"float64": 1e-10, "float32": 1e-5}
KINDS = {  # name -> (class name, constructor options)
    "rnn_tanh": ("RNN", {}),
    "rnn_relu": ("RNN", {"nonlinearity": "relu"}),
    "lstm": ("LSTM", {}),
    "lstm_proj": ("LSTM", {"proj_size": 4}),
    "gru": ("GRU", {}),
}
OPTIONS = {
    "plain": {},
    "two_layers_bidirectional": {"num_layers": 2, "bidirectional": True},
    "batch_first_no_bias": {"batch_first": True, "bias": False},
    "dropout_in_eval": {"num_layers": 2, "dropout": 0.4},
}


def _pair(torch, cls, opts, dtype):
    """A torch module and a minigrad one holding the same weights (the torch state_dict loaded as it is)."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (dropout with one layer, LSTM projections without oneDNN)
        t = getattr(torch.nn, cls)(I, H, **opts, dtype=getattr(torch, dtype))
        m = getattr(nn, cls)(I, H, **opts, dtype=getattr(minigrad, dtype))
    m.load_state_dict(t.state_dict())
    return t, m


def _arrays(shapes, dtype, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _run(lib, module, inputs, weights, unpack):
    """module(*inputs), every array (also inside a tuple such as LSTM's (h0, c0)) a tensor requiring grad ->
    (outputs, grads of the inputs, grads of the parameters by name) for the loss sum_k <output_k, weights_k>."""
    leaves = []

    def tensor(a):
        if isinstance(a, tuple):
            return tuple(map(tensor, a))
        leaves.append(lib.tensor(a, requires_grad=True))
        return leaves[-1]

    outs = unpack(module(*map(tensor, inputs)))
    loss = sum((o * lib.tensor(w)).sum() for o, w in zip(outs, weights))
    loss.backward()
    arr = (lambda t: t.detach().numpy().copy()) if lib.__name__ == "torch" else (lambda t: t.array.copy())
    return ([arr(o) for o in outs], [arr(t.grad) for t in leaves],
            {k: arr(p.grad) for k, p in module.named_parameters()})


def _assert_same(a, b, tol):
    (outs_a, gin_a, gp_a), (outs_b, gin_b, gp_b) = a, b
    for x, y in zip(outs_a + gin_a, outs_b + gin_b):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)
    assert len(gin_a) == len(gin_b) and sorted(gp_a) == sorted(gp_b)
    for k in gp_a:
        np.testing.assert_allclose(gp_a[k], gp_b[k], rtol=tol, atol=tol, err_msg=k)


def _layer_case(cls, opts, batched, given, dtype):
    """(inputs, loss weights, unpack) for a layer: x and, if given, h0 (and c0)."""
    D = 2 if opts.get("bidirectional") else 1
    L, h_out = opts.get("num_layers", 1) * D, opts.get("proj_size") or H
    x_shape = ((B, T, I) if opts.get("batch_first") else (T, B, I)) if batched else (T, I)
    state = (lambda n: (L, B, n) if batched else (L, n))
    out_shape = x_shape[:-1] + (D * h_out,)
    if cls == "LSTM":
        x, h0, c0 = _arrays([x_shape, state(h_out), state(H)], dtype)
        weights = _arrays([out_shape, state(h_out), state(H)], dtype, seed=2)
        return ([x, (h0, c0)] if given else [x]), weights, lambda r: [r[0], *r[1]]
    x, h0 = _arrays([x_shape, state(h_out)], dtype)
    return ([x, h0] if given else [x]), _arrays([out_shape, state(h_out)], dtype, seed=2), list


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("given", [True, False], ids=["h0", "no_h0"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("option", sorted(OPTIONS))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_layer_matches_torch(torch, kind, option, batched, given, dtype):
    cls, opts = KINDS[kind]
    opts = {**opts, **OPTIONS[option]}
    t, m = _pair(torch, cls, opts, dtype)
    if opts.get("dropout"):  # in eval: no dropout (the others run in training mode, dropout 0)
        t.eval(), m.eval()
    inputs, weights, unpack = _layer_case(cls, opts, batched, given, dtype)
    _assert_same(_run(minigrad, m, inputs, weights, unpack), _run(torch, t, inputs, weights, unpack),
                 TOL[dtype])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_dropout_zero_equals_dropout_in_eval(kind):
    cls, opts = KINDS[kind]
    minigrad.manual_seed(0)
    a = getattr(nn, cls)(I, H, num_layers=2, dropout=0.0, **opts).double()
    b = getattr(nn, cls)(I, H, num_layers=2, dropout=0.7, **opts).double().eval()
    b.load_state_dict(a.state_dict())
    x = minigrad.randn(T, B, I, dtype=minigrad.float64)
    np.testing.assert_array_equal(a(x)[0].array, b(x)[0].array)


def test_dropout_in_training_drops_between_layers():
    minigrad.manual_seed(0)
    m = nn.GRU(I, H, num_layers=2, dropout=0.5).double()
    x = minigrad.randn(T, B, I, dtype=minigrad.float64)
    eval_out = m.eval()(x)[0].array
    m.train()
    minigrad.manual_seed(3)
    a = m(x)[0]
    minigrad.manual_seed(3)
    b = m(x)[0]
    np.testing.assert_array_equal(a.array, b.array)  # the masks come from minigrad's seeded generator
    assert not np.allclose(a.array, eval_out)
    names = _node_names(a.grad_fn)
    assert names.count("MkldnnRnnLayerBackward0") == 2 and "NativeDropoutBackward0" in names
    m.dropout = 1.0  # every input of layer 2 dropped: its output is the layer run on zeros
    out2 = m(x)[0].array
    zeros = minigrad.zeros(T, B, H, dtype=minigrad.float64)
    h = minigrad.zeros(B, H, dtype=minigrad.float64)
    ref = nn._functional.reference.rnn_layer("GRU", zeros, h, None, m.weight_ih_l1, m.weight_hh_l1, m.bias_ih_l1,
                                              m.bias_hh_l1)[0]
    np.testing.assert_allclose(out2, ref.array, rtol=1e-12, atol=1e-12)


def _node_names(fn):
    """Every node's name reachable from fn."""
    seen, stack, names = set(), [fn], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.append(n.name())
        stack.extend(f for f, _ in n.next_functions)
    return names


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_one_fused_node_per_layer_and_direction(kind):
    cls, opts = KINDS[kind]
    m = getattr(nn, cls)(I, H, num_layers=3, bidirectional=True, **opts)
    x = minigrad.randn(T, B, I, requires_grad=True)
    out = m(x)[0]
    names = _node_names(out.grad_fn)
    assert names.count("MkldnnRnnLayerBackward0") == 6
    assert not {"TanhBackward0", "SigmoidBackward0", "MmBackward0", "ReluBackward0"} & set(names)
    one = getattr(nn, cls)(I, H, **opts)
    out, h = one(x)
    node = out.grad_fn
    assert node.name() == "MkldnnRnnLayerBackward0"  # as PyTorch's LSTM on the CPU
    h = h[0] if cls == "LSTM" else h
    assert h.grad_fn.name() == "StackBackward0" and h.grad_fn.next_functions[0][0] is node
    leaves = {id(f.variable) for f, _ in node.next_functions if f is not None and f.name() == "AccumulateGrad"}
    assert leaves == {id(p) for p in one.parameters()} | {id(x)}  # the weights and x feed the node directly
    with backends.kernels("reference"):  # the reference: primitive nodes, a loop over time
        names = _node_names(one(x)[0].grad_fn)
    assert "MkldnnRnnLayerBackward0" not in names and names.count("TanhBackward0" if kind != "rnn_relu" else
                                                                  "ReluBackward0") >= T


@pytest.mark.parametrize("proj", [False, True])
@pytest.mark.parametrize("kernels", ["numpy", None])
def test_an_lstm_layer_keeps_forwards_tanh_of_its_cells_for_backward(torch, proj, kernels):
    # backward reads the tanh(c_t) forward computed for h_t = o tanh(c_t) (numpy's, or the step kernel's),
    # kept, not computed again: exactly tanh of the kept cells under the numpy code, within a few ulp of
    # numpy's tanh with the kernels; the gradients PyTorch's
    with backends.kernels(kernels or backends.get_kernels()):
        t, m = _pair(torch, "LSTM", {"proj_size": 4} if proj else {}, "float32")
        x = np.random.default_rng(4).standard_normal((T, B, I)).astype(np.float32)
        ours, theirs = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out = m(ours)[0]
        node = out.grad_fn
        while node.name() != "MkldnnRnnLayerBackward0":
            node = node.next_functions[0][0]
        tanh_c, cells = node._saved_tanh_cells.numpy(), node._saved_cells.numpy()
        if kernels == "numpy":
            assert np.array_equal(tanh_c, np.tanh(cells))
        np.testing.assert_allclose(tanh_c, np.tanh(cells), rtol=1e-6, atol=1e-7)
        (out * out).sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tout = t(theirs)[0]
        (tout * tout).sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-5)
        for p, q in zip(m.parameters(), t.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("layer", ["numpy", "fast"])
def test_fused_equals_reference(kind, layer):
    cls, opts = KINDS[kind]
    opts = {**opts, "num_layers": 2, "bidirectional": True, "batch_first": True}
    minigrad.manual_seed(0)
    m = getattr(nn, cls)(I, H, **opts).double()
    inputs, weights, unpack = _layer_case(cls, opts, True, True, "float64")
    with backends.kernels("reference"):
        ref = _run(minigrad, m, inputs, weights, unpack)
    m.zero_grad()
    with backends.kernels(layer):
        fused = _run(minigrad, m, inputs, weights, unpack)
    _assert_same(fused, ref, 1e-12)


@pytest.mark.parametrize("layer", ["numpy", "fast"])
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_float32_gate_kernels_at_vector_widths_match_torch(torch, kind, layer):
    # H = 37: the step kernels' loops run in vector lanes plus a remainder (at H = 6 above only the
    # remainder runs); float32, the dtype of the vectorized gate math; and the numpy passes alike
    cls, opts = KINDS[kind]
    opts = {**opts, "num_layers": 2, "bidirectional": True}
    torch.manual_seed(0)
    t = getattr(torch.nn, cls)(11, 37, **opts)
    m = getattr(nn, cls)(11, 37, **opts)
    m.load_state_dict(t.state_dict())
    x, h0, c0 = _arrays([(9, 5, 11), (4, 5, 37), (4, 5, 37)], "float32")
    weights = _arrays([(9, 5, 74), (4, 5, 37), (4, 5, 37)], "float32", seed=2)
    inputs = [x, (h0, c0)] if cls == "LSTM" else [x, h0]
    unpack = (lambda r: [r[0], *r[1]]) if cls == "LSTM" else list
    with backends.kernels(layer):
        got = _run(minigrad, m, inputs, weights[:3 if cls == "LSTM" else 2], unpack)
    _assert_same(got, _run(torch, t, inputs, weights[:3 if cls == "LSTM" else 2], unpack), 2e-5)


@pytest.mark.parametrize("mode", ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"])
def test_fused_layer_gradcheck(mode):
    from nn._functional.rnn import GATES, rnn_layer

    rng = np.random.default_rng(0)
    G, P = GATES[mode], 2 if mode == "LSTM" else None
    shapes = [(3, 2, 3), (2, P or 4), (2, 4) if mode == "LSTM" else None, (G * 4, 3), (G * 4, P or 4), (G * 4,),
              (G * 4,), (P, 4) if P else None]
    ts = [None if s is None else minigrad.tensor(rng.standard_normal(s) * 0.7, requires_grad=True) for s in shapes]
    if mode == "RNN_RELU":
        ts[0].array[np.abs(ts[0].array) < 0.1] = 0.5
    for reverse in (False, True):
        def f(*args, reverse=reverse):
            full = iter(args)
            x, h, c, wi, wh, bi, bh, wr = [None if t is None else next(full) for t in ts]
            out, h, c = rnn_layer(mode, x, h, c, wi, wh, bi, bh, wr, reverse)
            return (out, h) if c is None else (out, h, c)

        assert gradcheck(f, [t for t in ts if t is not None])


def test_needs_input_grad_and_initial_states_that_require_grad(torch):
    t, m = _pair(torch, "LSTM", {"num_layers": 2}, "float64")
    m.requires_grad_(False)
    t.requires_grad_(False)
    x, h0, c0 = _arrays([(T, B, I), (2, B, H), (2, B, H)], "float64")
    xm = minigrad.tensor(x)
    hm, cm = (minigrad.tensor(a, requires_grad=True) for a in (h0, c0))
    ht, ct = (torch.tensor(a, requires_grad=True) for a in (h0, c0))
    out, (h, c) = m(xm, (hm * 2, cm))  # an initial state made by an op (not a leaf)
    (out.sum() + (c * c).sum()).backward()
    out_t, (h_t, c_t) = t(torch.tensor(x), (ht * 2, ct))
    (out_t.sum() + (c_t * c_t).sum()).backward()
    assert xm.grad is None and all(p.grad is None for p in m.parameters())
    np.testing.assert_allclose(hm.grad.array, ht.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(cm.grad.array, ct.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("used", ["output", "h_n"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_loss_on_one_output_matches_torch(torch, kind, used):
    # a classifier reads h_n only (the layers' output gradients are None), a tagger the output only
    cls, opts = KINDS[kind]
    opts = {**opts, "num_layers": 2, "bidirectional": True, "batch_first": True}
    t, m = _pair(torch, cls, opts, "float64")
    inputs, weights, unpack = _layer_case(cls, opts, True, True, "float64")
    k = 0 if used == "output" else 1
    one = (lambda r: [unpack(r)[k]])
    for fast in ("numpy", "fast"):
        m.zero_grad()
        with backends.kernels(fast):
            got = _run(minigrad, m, inputs, weights[k:k + 1], one)
        _assert_same(got, _run(torch, t, inputs, weights[k:k + 1], one), 1e-10)
        t.zero_grad()


@pytest.mark.parametrize("kind", ["rnn_tanh", "lstm", "gru"])
def test_backward_makes_no_sequence_sized_temporary(kind):
    # the gates' gradient is the thread's scratch and an unused output's gradient is not made as zeros: a
    # fresh array of a few MB per step is freed at its end, glibc trims the heap and the next step faults
    # every page in again
    import tracemalloc

    cls, opts = KINDS[kind]
    Tn, Bn, Hn = 50, 16, 64
    m = getattr(nn, cls)(3, Hn, **opts)
    x = minigrad.randn(Tn, Bn, 3)
    gates_bytes = Tn * Bn * {"rnn_tanh": 1, "lstm": 4, "gru": 3}[kind] * Hn * 4
    for _ in range(2):  # (the first call makes the scratch)
        h_n = m(x)[1]
        loss = (h_n[0] if kind == "lstm" else h_n).sum()
        tracemalloc.start()
        loss.backward()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < gates_bytes, (peak, gates_bytes)


def test_output_modified_in_place_is_caught():
    m = nn.RNN(I, H)
    out, _ = m(minigrad.randn(T, B, I, requires_grad=True))
    out.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# ---- cells ------------------------------------------------------------------------------------------------------
CELLS = {"rnn_tanh": ("RNNCell", {}), "rnn_relu": ("RNNCell", {"nonlinearity": "relu"}), "lstm": ("LSTMCell", {}),
         "gru": ("GRUCell", {})}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("given", [True, False], ids=["hx", "no_hx"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("kind", sorted(CELLS))
def test_cell_matches_torch(torch, kind, batched, given, bias, dtype):
    cls, opts = CELLS[kind]
    torch.manual_seed(0)
    t = getattr(torch.nn, cls)(I, H, bias=bias, **opts, dtype=getattr(torch, dtype))
    m = getattr(nn, cls)(I, H, bias=bias, **opts, dtype=getattr(minigrad, dtype))
    m.load_state_dict(t.state_dict())
    lead = (B,) if batched else ()
    x, h0, c0 = _arrays([lead + (I,), lead + (H,), lead + (H,)], dtype)
    weights = _arrays([lead + (H,), lead + (H,)], dtype, seed=2)
    if cls == "LSTMCell":
        inputs, unpack = ([x, (h0, c0)] if given else [x]), list
    else:
        inputs, unpack, weights = ([x, h0] if given else [x]), (lambda r: [r]), weights[:1]
    _assert_same(_run(minigrad, m, inputs, weights, unpack), _run(torch, t, inputs, weights, unpack), TOL[dtype])


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_cell_is_one_node_and_agrees_with_reference(kind):
    cls, opts = CELLS[kind]
    minigrad.manual_seed(0)
    m = getattr(nn, cls)(I, H, **opts).double()
    x = minigrad.randn(B, I, dtype=minigrad.float64, requires_grad=True)
    h = minigrad.randn(B, H, dtype=minigrad.float64, requires_grad=True)
    name = {"rnn_tanh": "RnnTanhCellBackward0", "rnn_relu": "RnnReluCellBackward0", "lstm": "ThnnFusedLstmCellBackward0",
            "gru": "ThnnFusedGruCellBackward0"}[kind]
    results = []
    for layer in ("fast", "reference"):
        with backends.kernels(layer):
            out = m(x, (h, h * 0.5) if cls == "LSTMCell" else h)
            outs = out if isinstance(out, tuple) else (out,)
            if layer == "fast":
                node = outs[0].grad_fn
                assert node.name() == name and all(o.grad_fn is node for o in outs)
                assert {f.name() for f, _ in node.next_functions if f is not None} <= {"AccumulateGrad", "MulBackward0"}
            grads = minigrad.autograd.grad(sum((o * o).sum() for o in outs), [x, h, *m.parameters()])
            results.append([o.array for o in outs] + [g.array for g in grads])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# ---- parameters, state dicts, repr ------------------------------------------------------------------------------
MODULES = [("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}), ("LSTM", {"proj_size": 2}),
           ("LSTM", {"num_layers": 2, "bidirectional": True, "bias": False, "proj_size": 3}),
           ("GRU", {"batch_first": True, "dropout": 0.2, "num_layers": 3}), ("RNNCell", {"nonlinearity": "relu"}),
           ("LSTMCell", {"bias": False}), ("GRUCell", {})]


@pytest.mark.parametrize("cls,opts", MODULES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(MODULES)])
def test_parameters_state_dict_and_repr_as_torch(torch, cls, opts):
    t, m = _pair(torch, cls, opts, "float32")
    assert list(m.state_dict()) == list(t.state_dict())
    assert [(k, tuple(p.shape)) for k, p in m.named_parameters()] == [(k, tuple(p.shape)) for k, p in
                                                                      t.named_parameters()]
    for k, v in t.state_dict().items():  # loaded as torch tensors
        np.testing.assert_array_equal(m.state_dict()[k].array, v.numpy())
    assert repr(m) == repr(t)
    if not cls.endswith("Cell"):
        assert [[tuple(p.shape) for p in w] for w in m.all_weights] == [[tuple(p.shape) for p in w]
                                                                         for w in t.all_weights]
        assert m._flat_weights_names == t._flat_weights_names and m.flatten_parameters() is None
        for a in ("mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                  "bidirectional", "proj_size"):
            assert getattr(m, a) == getattr(t, a), a


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_init_is_uniform_in_one_over_sqrt_hidden(cls):
    minigrad.manual_seed(0)
    m = getattr(nn, cls)(3, 100)
    bound = 1 / np.sqrt(100)
    for p in m.parameters():
        a = p.array
        assert a.min() >= -bound and a.max() <= bound and a.max() > 0.9 * bound and a.min() < -0.9 * bound
    minigrad.manual_seed(0)
    again = getattr(nn, cls)(3, 100)
    for p, q in zip(m.parameters(), again.parameters()):
        np.testing.assert_array_equal(p.array, q.array)  # drawn from minigrad's seeded generator


def test_float64_module_and_to():
    m = nn.LSTM(I, H).to(minigrad.float64)
    out, (h, c) = m(minigrad.randn(T, B, I, dtype=minigrad.float64))
    assert out.dtype == h.dtype == c.dtype == minigrad.float64


# ---- errors: PyTorch's exception type and text --------------------------------------------------------------------
ERRORS = [
    ("RNN", {}, lambda lib: [lib.randn(5, 3, 4)]),
    ("RNN", {}, lambda lib: [lib.randn(5, 3, 5, 2)]),
    ("RNN", {}, lambda lib: [lib.randn(5)]),
    ("LSTM", {}, lambda lib: [lib.randn(5)]),
    ("GRU", {}, lambda lib: [lib.randn(2, 5, 3, 5)]),
    ("RNN", {"num_layers": 2}, lambda lib: [lib.randn(5, 3, 5), lib.randn(2, 3, 7)]),
    ("GRU", {}, lambda lib: [lib.randn(5, 3, 5), lib.randn(1, 6)]),
    ("GRU", {}, lambda lib: [lib.randn(4, 5), lib.randn(1, 3, 6)]),
    ("RNN", {}, lambda lib: [lib.randn(4, 5), lib.randn(1, 7)]),
    ("GRU", {}, lambda lib: [lib.randn(4, 3, 5, dtype=lib.float64)]),
    ("GRU", {}, lambda lib: [lib.randn(4, 3, 5), lib.randn(1, 3, 6, dtype=lib.float64)]),
    ("LSTM", {"proj_size": 2}, lambda lib: [lib.randn(5, 3, 5), (lib.randn(1, 3, 6), lib.randn(1, 3, 6))]),
    ("LSTM", {"proj_size": 2}, lambda lib: [lib.randn(5, 3, 5), (lib.randn(1, 3, 2), lib.randn(1, 3, 2))]),
    ("LSTM", {}, lambda lib: [lib.randn(5, 3, 5), (lib.randn(1, 3, 6), lib.randn(3, 6))]),
    ("LSTM", {}, lambda lib: [lib.randn(5, 5), (lib.randn(1, 3, 6), lib.randn(3, 6))]),
    ("GRU", {}, lambda lib: [lib.randn(0, 3, 5)]),
    ("RNNCell", {}, lambda lib: [lib.randn(3, 4)]),
    ("RNNCell", {}, lambda lib: [lib.randn(3, 5), lib.randn(4, 6)]),
    ("RNNCell", {"nonlinearity": "relu"}, lambda lib: [lib.randn(3, 5), lib.randn(3, 7)]),
    ("RNNCell", {}, lambda lib: [lib.randn(3, 3, 5)]),
    ("RNNCell", {}, lambda lib: [lib.randn(5), lib.randn(3, 3, 6)]),
    ("RNNCell", {}, lambda lib: [lib.randn(5), lib.randn(3, 6)]),
    ("RNNCell", {"nonlinearity": "sigmoid"}, lambda lib: [lib.randn(3, 5)]),
    ("LSTMCell", {}, lambda lib: [lib.randn(2, 3, 5)]),
    ("LSTMCell", {}, lambda lib: [lib.randn(3, 5), (lib.randn(3, 3, 6), lib.randn(3, 6))]),
    ("LSTMCell", {}, lambda lib: [lib.randn(3, 5), (lib.randn(3, 6), lib.randn(4, 6))]),
    ("LSTMCell", {}, lambda lib: [lib.randn(3, 5), (lib.randn(3, 6), lib.randn(3, 7))]),
    ("GRUCell", {}, lambda lib: [lib.randn(3, 4)]),
    ("GRUCell", {}, lambda lib: [lib.randn(3, 5), lib.randn(2, 2, 6)]),
    ("GRUCell", {}, lambda lib: [lib.randn(3, 5, dtype=lib.float64)]),
    ("LSTMCell", {}, lambda lib: [lib.randn(3, 5), (lib.randn(3, 6, dtype=lib.float64), lib.randn(3, 6))]),
]


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the point is to compare whatever each raises)
        return type(e).__name__, str(e).replace("torch.", "minigrad.")
    return None


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_torch(torch, case):
    cls, opts, args = ERRORS[case]
    minigrad.manual_seed(0)
    t, m = getattr(torch.nn, cls)(5, 6, **opts), getattr(nn, cls)(5, 6, **opts)
    expected = _error(lambda: t(*args(torch)))
    assert expected is not None
    assert _error(lambda: m(*args(minigrad))) == expected


CONSTRUCTOR_ERRORS = [
    ("RNN", dict(nonlinearity="sigmoid")), ("RNN", dict(dropout=1.5)), ("GRU", dict(dropout=True)),
    ("LSTM", dict(num_layers=0)), ("LSTM", dict(proj_size=6)), ("LSTM", dict(proj_size=-1)),
    ("GRU", dict(proj_size=2)), ("RNN", dict(proj_size=2)),
]


@pytest.mark.parametrize("cls,opts", CONSTRUCTOR_ERRORS)
def test_constructor_errors_as_torch(torch, cls, opts):
    expected = _error(lambda: getattr(torch.nn, cls)(5, 6, **opts))
    assert expected is not None and _error(lambda: getattr(nn, cls)(5, 6, **opts)) == expected
    assert _error(lambda: nn.RNN(5, 0)) == _error(lambda: torch.nn.RNN(5, 0))
    assert _error(lambda: nn.RNN(5, 2.0)) == _error(lambda: torch.nn.RNN(5, 2.0))


def test_dropout_with_one_layer_warns_as_torch(torch):
    with pytest.warns(UserWarning) as ours:
        nn.GRU(5, 6, dropout=0.5)
    with pytest.warns(UserWarning) as theirs:
        torch.nn.GRU(5, 6, dropout=0.5)
    assert str(ours[0].message) == str(theirs[0].message)


# ---- a character model trained in lockstep with PyTorch --------------------------------------------------------------
@pytest.mark.parametrize("cls", ["GRU", "LSTM"])
def test_char_model_trains_in_lockstep_with_torch(torch, cls):
    text = "hello world, hello recurrent nets. " * 3
    vocab = sorted(set(text))
    ids = np.array([vocab.index(ch) for ch in text])
    V, E, Hd = len(vocab), 8, 16

    def build(lib, mod):
        class CharModel(mod.Module):
            def __init__(self):
                super().__init__()
                self.emb = mod.Embedding(V, E)
                self.rnn = getattr(mod, cls)(E, Hd, num_layers=2, batch_first=True)
                self.head = mod.Linear(Hd, V)

            def forward(self, idx):
                return self.head(self.rnn(self.emb(idx))[0])

        return CharModel().double()

    t = build(torch, torch.nn)
    m = build(minigrad, nn)
    m.load_state_dict(t.state_dict())
    opt_t = torch.optim.AdamW(t.parameters(), lr=1e-2)
    opt_m = nn.optim.AdamW(m.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(6):
        starts = rng.integers(0, len(ids) - 13, size=4)
        xb = np.stack([ids[s:s + 12] for s in starts])
        yb = np.stack([ids[s + 1:s + 13] for s in starts])
        pair = []
        for lib, model, opt, ce in ((torch, t, opt_t, torch.nn.functional.cross_entropy),
                                    (minigrad, m, opt_m, F.cross_entropy)):
            logits = model(lib.tensor(xb))
            loss = ce(logits.reshape(-1, V), lib.tensor(yb).reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            pair.append(loss.item())
        losses.append(pair)
    losses = np.array(losses)
    np.testing.assert_allclose(losses[:, 0], losses[:, 1], rtol=1e-10, atol=1e-10)
    assert losses[-1, 0] < losses[0, 0]  # it learns


@pytest.mark.parametrize("hx", ["tensor", "one"])
def test_lstm_cell_hx_not_a_pair_raises_as_torch(torch, hx):
    # a Tensor hx was unpacked along its first dim (a batch-size error), a 1-tuple gave a ValueError
    def call(L, N):
        h = L.zeros(2, 4)
        return N.LSTMCell(3, 4)(L.zeros(2, 3), h if hx == "tensor" else (h,))

    with pytest.raises((TypeError, RuntimeError)) as theirs:
        call(torch, torch.nn)
    with pytest.raises(theirs.type) as ours:
        call(minigrad, nn)
    assert str(ours.value) == str(theirs.value)
