"""minigrad.compile: a replayed call equals the eager call bit for bit, and every trap of a tracing
JIT (tinygrad's test_jit_footguns list) gives the right result or a clear error."""
import re
import types
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.compiler import RecompileWarning

rng = np.random.default_rng(0)


def _t(*shape, dtype=np.float32):
    return minigrad.tensor(rng.standard_normal(shape).astype(dtype))


def _mlp(seed=0, p=0.0):
    minigrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(p), nn.Linear(16, 4))


def _train(compiled, model_fn, batches, loss_fn, steps_kw=None):
    """Run the same steps eagerly or compiled; returns everything a step leaves behind."""
    model = model_fn()
    opt = nn.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model, x, y)
        loss.backward()
        opt.step()
        return loss

    f = minigrad.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        losses = [f(x, y) for x, y in batches]
    return dict(losses=[loss.array.copy() for loss in losses], params=[p.array.copy() for p in model.parameters()],
                grads=[p.grad.array.copy() for p in model.parameters()],
                exp_avg=[opt.state[p]["exp_avg"].array.copy() for p in model.parameters()],
                buffers=[b.array.copy() for b in model.buffers()], rng=minigrad.get_rng_state(), f=f)


def _assert_same(a, b):
    for k in ("losses", "params", "grads", "exp_avg", "buffers"):
        assert len(a[k]) == len(b[k])
        for u, v in zip(a[k], b[k]):
            assert u.dtype == v.dtype and np.array_equal(u, v), k
    assert a["rng"] == b["rng"]


def _mlp_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def _batches(n, shape=(6, 8), classes=4):
    return [(_t(*shape), minigrad.tensor(rng.integers(0, classes, shape[0]))) for _ in range(n)]


def test_mlp_adamw_bit_for_bit():
    batches = _batches(6)
    eager = _train(False, lambda: _mlp(p=0.2), batches, _mlp_loss)
    comp = _train(True, lambda: _mlp(p=0.2), batches, _mlp_loss)
    _assert_same(eager, comp)
    assert (comp["f"].stats.captures, comp["f"].stats.replays) == (1, 5)


class _Recurrent(nn.Module):
    def __init__(self, kind, layers):
        super().__init__()
        self.rnn = getattr(nn, kind)(8, 12, num_layers=layers, batch_first=True)
        self.head = nn.Linear(12, 4)

    def forward(self, x):
        out = self.rnn(x)[0]  # (the initial states: zeros made inside, split by layer)
        return self.head(out[:, -1])


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("layers", [1, 2])
def test_recurrent_layers_bit_for_bit(kind, layers):
    # one layer: the states' unbind makes a 1-tuple, which the replay stores as its one value
    def model():
        minigrad.manual_seed(0)
        return _Recurrent(kind, layers)

    batches = _batches(4, shape=(3, 5, 8))
    eager = _train(False, model, batches, _mlp_loss)
    comp = _train(True, model, batches, _mlp_loss)
    _assert_same(eager, comp)
    assert (comp["f"].stats.captures, comp["f"].stats.replays) == (1, 3)


class _Cells(nn.Module):
    # a recurrent cell unrolled in Python: the state of one step is the input of the next
    def __init__(self, kind, bias, **kw):
        super().__init__()
        self.cell = getattr(nn, kind)(8, 6, bias=bias, **kw)
        self.head = nn.Linear(6, 4)

    def forward(self, x):
        h = minigrad.zeros(x.shape[0], 6)
        state = (h, minigrad.zeros(x.shape[0], 6)) if isinstance(self.cell, nn.LSTMCell) else h
        for t in range(x.shape[1]):
            state = self.cell(x[:, t], state)
            h = state[0] if isinstance(state, tuple) else state
        return self.head(h)


@pytest.mark.parametrize("kind, kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("GRUCell", {}),
                                      ("LSTMCell", {})])
@pytest.mark.parametrize("bias", [True, False])
def test_recurrent_cells_replay_on_arrays_bit_for_bit(kind, kw, bias):
    def model():
        minigrad.manual_seed(0)
        return _Cells(kind, bias, **kw)

    batches = _batches(4, shape=(3, 5, 8))
    eager = _train(False, model, batches, _mlp_loss)
    comp = _train(True, model, batches, _mlp_loss)
    _assert_same(eager, comp)
    (program,) = comp["f"].cache.values()
    op = {"RNNCell": "RNNReluCell" if kw else "RNNTanhCell"}.get(kind, kind)
    # (an LSTM cell's last c gets no gradient: that step's backward runs as the op's own)
    assert program.code.count(f"{op}_array_step") == (4 if kind == "LSTMCell" else 5), op


class _GRUCellsWrittenOut(nn.Module):
    # makemore's GRU: the cell's Linear, cat, sigmoid, tanh and arithmetic over time steps in Python
    def __init__(self):
        super().__init__()
        self.z, self.r, self.n = nn.Linear(12, 6), nn.Linear(12, 6), nn.Linear(12, 6)
        self.head = nn.Linear(6, 4)

    def forward(self, x):
        h = minigrad.zeros(x.shape[0], 6)
        for t in range(x.shape[1]):
            xt = x[:, t]
            xh = minigrad.cat([xt, h], 1)
            r = F.sigmoid(self.r(xh))
            n = self.n(minigrad.cat([xt, r * h], 1)).tanh()
            z = minigrad.sigmoid(self.z(xh))
            h = (1 - z) * h + z * n - 0.0 * (h - n)
        return self.head(h)


def test_a_training_step_replays_its_ops_on_arrays_bit_for_bit():
    def model():
        minigrad.manual_seed(0)
        return _GRUCellsWrittenOut()

    batches = _batches(4, shape=(3, 5, 6))
    eager = _train(False, model, batches, _mlp_loss)
    comp = _train(True, model, batches, _mlp_loss)
    _assert_same(eager, comp)
    (program,) = comp["f"].cache.values()
    for op in ("Linear", "Cat", "Sigmoid", "Tanh", "Mul", "RsubScalar", "Add", "Sub"):
        assert f"{op}_array_step" in program.code and f"{op}_array_backward" in program.code, op


class _OpsOnArrays(nn.Module):
    # a little attention written out, and the other ops a training program runs on arrays
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.qkv = nn.Linear(8, 24)
        self.norm = nn.LayerNorm(8)
        self.out = nn.Linear(8, 5)
        self.register_buffer("tril", minigrad.tril(minigrad.ones(6, 6)))

    def forward(self, ids):
        x = self.norm(self.emb(ids))  # (B, T, 8)
        q, k, v = self.qkv(x).split(8, dim=2)
        att = (q @ k.transpose(-2, -1)) * 0.35
        att = att.masked_fill(self.tril[:6, :6] == 0, float("-inf")).softmax(-1)
        h = F.dropout(att, 0.2) @ v  # (B, T, 8)
        h = h + F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True)  # (the fused op)
        h = F.relu(h.permute(1, 0, 2)).permute(1, 0, 2) + x.unsqueeze(1).squeeze(1)
        h = minigrad.stack(h.unbind(1), 1)  # (an op of several outputs and back)
        pooled = minigrad.stack([h[:, 0], h[:, -1]], 1).mean(1).clone()  # (B, 8)
        return self.out(pooled - self.emb.weight[:1].expand(pooled.shape[0], 8))


def _ops_loss(model, ids, y):
    logits = model(ids)
    return (F.nll_loss(F.log_softmax(logits, dim=1), y) + 0.1 * F.mse_loss(logits.softmax(1), logits.tanh() * 0.5)
            + 0.001 * logits.pow(2).sum()  # (pow: an op without an array step, among those with one)
            + 0.01 * (-(logits.exp() / (logits.exp() + 1.0)).log()).mean())


def test_more_ops_replay_on_arrays_bit_for_bit():
    def model():
        minigrad.manual_seed(1)
        return _OpsOnArrays()

    batches = [(minigrad.tensor(rng.integers(0, 10, (3, 6))), minigrad.tensor(rng.integers(0, 5, 3))) for _ in range(4)]
    eager = _train(False, model, batches, _ops_loss)
    comp = _train(True, model, batches, _ops_loss)
    _assert_same(eager, comp)
    (program,) = comp["f"].cache.values()
    for op in ("Embedding", "LayerNorm", "Linear", "SplitEqual", "Transpose", "Bmm", "MaskedFill", "Softmax", "Dropout", "Relu",
               "Permute", "Unsqueeze", "Squeeze", "Stack", "Expand", "LogSoftmax", "MseLoss", "Sub", "NllLoss", "Clone", "Attention", "Mean", "SumAll", "Div", "Neg", "Exp", "Log", "Unbind"):
        assert f"{op}_array_step" in program.code and f"{op}_array_backward" in program.code, op


@pytest.mark.parametrize("split", [lambda t: t.unbind(0)[0], lambda t: t.split(3, 1)[0], lambda t: t.chunk(1, 0)[0]])
def test_a_forward_returning_one_output_in_a_tuple_is_replayed(split):
    def f(x):
        return split(minigrad.zeros(1, 3) + x) * 2.0

    c = minigrad.compile(f)
    for _ in range(3):
        x = _t(1, 3)
        np.testing.assert_array_equal(c(x).array, f(x).array)
    assert c.stats.replays == 2


def test_gpt_with_dropout_bit_for_bit():
    from gpt.model import GPT, GPTConfig

    def model():
        minigrad.manual_seed(3)
        return GPT(GPTConfig(block_size=8, vocab_size=24, n_layer=2, n_head=2, n_embd=16, dropout=0.2))

    def loss_fn(m, x, y):
        _, loss = m(x, y)
        return loss

    y_ignore = rng.integers(0, 24, (3, 8))
    y_ignore[0, :3] = -1  # ignored targets change the mean's denominator: it must not be frozen
    batches = [(minigrad.tensor(rng.integers(0, 24, (3, 8))), minigrad.tensor(rng.integers(0, 24, (3, 8))))
               for _ in range(4)] + [(minigrad.tensor(rng.integers(0, 24, (3, 8))), minigrad.tensor(y_ignore))]
    eager = _train(False, model, batches, loss_fn)
    comp = _train(True, model, batches, loss_fn)
    _assert_same(eager, comp)
    assert comp["f"].stats.replays == 4


def test_clip_and_lr_changes_between_calls_are_seen():
    """optimizer.step and clip_grad_norm_ replay as calls: they read the live lr and gradients."""
    batches = _batches(4)

    def run(compiled):
        model = _mlp()
        opt = nn.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            loss = _mlp_loss(model, x, y)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            opt.zero_grad()
            return loss, norm

        f = minigrad.compile(step) if compiled else step
        out = []
        for i, (x, y) in enumerate(batches):
            opt.param_groups[0]["lr"] = 0.1 / (i + 1)
            out += [t.array.copy() for t in f(x, y)]
        return out + [p.array.copy() for p in model.parameters()]

    for u, v in zip(run(False), run(True)):
        assert np.array_equal(u, v)


def _same(x):
    return minigrad.tensor(x.array.copy(), requires_grad=True)


def test_replayed_input_grad_equals_eager():
    w = _t(4, 3)

    def f(x):
        (x @ w).sigmoid().sum().backward()

    g = minigrad.compile(f)
    for _ in range(3):
        a = _t(2, 4).requires_grad_()
        b = _same(a)
        f(a)
        g(b)
        assert np.array_equal(a.grad.array, b.grad.array)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss", "embedding"])
def test_a_replayed_step_checks_each_calls_class_ids(loss):
    # class and embedding ids are data: a replay must check them as the eager call does (a kernel
    # indexes rows by them; numpy would wrap a negative one) and see ignored rows the capture had not
    emb, model = nn.Embedding(6, 8), nn.Linear(8, 4)
    opt = nn.optim.SGD(list(emb.parameters()) + list(model.parameters()), lr=0.1)

    def step(ids, y):
        opt.zero_grad()
        logits = model(emb(ids))
        if loss == "nll_loss":
            out = F.nll_loss(F.log_softmax(logits, dim=-1), y, ignore_index=-1)
        else:
            out = F.cross_entropy(logits, y, ignore_index=-1)
        out.backward()
        opt.step()
        return out

    g = minigrad.compile(step)
    ids, y = minigrad.tensor([0, 1, 2, 3, 4]), minigrad.tensor([0, 1, 2, 3, 0])
    for _ in range(2):
        g(ids, y)
    if loss == "embedding":
        bad = [(minigrad.tensor([0, 1, 6, 3, 4]), "embedding id 6 is not in"),
               (minigrad.tensor([0, -2, 2, 3, 4]), "embedding id -2 is not in")]
        for b, message in bad:
            with pytest.raises(IndexError, match=message):
                g(b, y)
    else:
        for b in ([0, 1, 7, 3, 0], [0, -3, 2, 3, 0]):
            with pytest.raises(IndexError, match=f"^Target {b[1] if b[1] < 0 else b[2]} is out of bounds"):
                g(ids, minigrad.tensor(b))
    y = minigrad.tensor([0, -1, 2, -1, 0])  # two ignored rows: the mean over the three kept
    with minigrad.no_grad():
        logits = model(emb(ids))
        want = (F.nll_loss(F.log_softmax(logits, dim=-1), y, ignore_index=-1) if loss == "nll_loss"
                else F.cross_entropy(logits, y, ignore_index=-1))
    assert np.array_equal(g(ids, y).array, want.array)
    assert g.stats.captures == 1 and g.stats.replays >= 3


@pytest.mark.parametrize("op", ["gather", "scatter", "scatter_add", "scatter_reduce"])
def test_a_replayed_gather_or_scatter_checks_each_calls_index(op):
    def f(x, index):
        if op == "gather":
            return x.gather(1, index)
        if op == "scatter_reduce":
            return x.scatter_reduce(1, index, x[:, :2] * 2, "amax")
        return getattr(x, op)(1, index, x[:, :2] * 2)

    g = minigrad.compile(f)
    x = _t(3, 4)
    for good in ([[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]):
        index = minigrad.tensor(good)
        assert np.array_equal(g(x, index).array, f(x, index).array)
    for bad, shown in (([[0, 4], [1, 1], [2, 0]], 4), ([[0, 1], [-1, 1], [2, 0]], -1)):  # numpy would wrap -1
        with pytest.raises(RuntimeError, match=f"^index {shown} is out of bounds for dimension 1 with size 4$"):
            g(x, minigrad.tensor(bad))
    assert g.stats.captures == 1 and g.stats.replays == 3


def test_one_hot_and_binary_cross_entropy_follow_each_calls_data():
    g = minigrad.compile(lambda t: F.one_hot(t, 4) * 2)
    for ids in ([0, 1], [3, 2], [1, 1]):  # the one-hot rows are data, not constants of the capture
        assert g(minigrad.tensor(ids)).tolist() == (F.one_hot(minigrad.tensor(ids), 4) * 2).tolist()
    with pytest.raises(RuntimeError, match=r"^Class values must be smaller than num_classes\.$"):
        g(minigrad.tensor([4, 1]))
    assert g.stats.captures == 1
    inferred = minigrad.compile(lambda t: F.one_hot(t))  # the count of classes comes from the data: eager
    with pytest.warns(RecompileWarning, match="one_hot without num_classes"):
        assert inferred(minigrad.tensor([0, 2])).shape == (2, 3)
    assert inferred(minigrad.tensor([0, 4])).shape == (2, 5) and inferred.stats.replays == 0
    bce = minigrad.compile(lambda x, t: F.binary_cross_entropy(x, t))
    t = minigrad.tensor([0.0, 1.0])
    for x in ([0.2, 0.7], [0.3, 0.6]):
        assert np.array_equal(bce(minigrad.tensor(x), t).array, F.binary_cross_entropy(minigrad.tensor(x), t).array)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        bce(minigrad.tensor([1.5, 0.6]), t)


def test_a_replayed_index_select_follows_and_checks_each_calls_index():
    g = minigrad.compile(lambda x, i: x.index_select(1, i) * 2)
    x = _t(3, 4).requires_grad_(False)
    for i in ([0, 1], [3, 2], [1, 1]):
        i = minigrad.tensor(i)
        assert np.array_equal(g(x, i).array, (x.index_select(1, i) * 2).array)
    with pytest.raises(RuntimeError, match=r"^INDICES element is out of DATA bounds, id=4 axis_dim=4"):  # (dim 1's words)
        g(x, minigrad.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="INDICES element is out of DATA bounds, id=-1"):  # numpy would wrap it
        g(x, minigrad.tensor([-1, 0]))
    assert g.stats.captures == 1 and g.stats.replays == 4


@pytest.mark.parametrize("op", ["index_add", "index_copy"])
def test_a_replayed_index_add_or_copy_follows_and_checks_each_calls_index(op):
    g = minigrad.compile(lambda x, i: getattr(x, op)(1, i, x[:, :2] * 3))
    x = _t(3, 4)
    for i in ([0, 1], [3, 2], [1, 1] if op == "index_add" else [2, 0]):
        i = minigrad.tensor(i)
        assert np.array_equal(g(x, i).array, getattr(x, op)(1, i, x[:, :2] * 3).array)
    error, text = (RuntimeError, r"index 4 is out of bounds for dimension 1 with size 4") if op == "index_add" else \
        (IndexError, r"index_copy_\(\): index 4 is out of bounds for dimension 1 with size 4")
    with pytest.raises(error, match=text):  # (each op's own words, the same as eager's)
        g(x, minigrad.tensor([0, 4]))
    assert g.stats.captures == 1 and g.stats.replays == 3


@pytest.mark.parametrize("op", ["where_uint8", "take_along_dim", "index_fill"])
def test_results_made_from_an_index_or_mask_follow_each_calls_data(op):
    def f(x, k):
        if op == "where_uint8":
            return minigrad.where((k[:, :1] - 1).to(minigrad.uint8), x, -x)  # (2, 1): 0 or not, per row
        if op == "take_along_dim":
            return minigrad.take_along_dim(x, k, dim=1)
        return x.index_fill(1, k.reshape(-1)[:2], 0.5)

    g = minigrad.compile(f)
    x = _t(2, 3)
    for k in ([[0, 2], [1, 1]], [[2, 0], [0, 1]], [[1, 1], [2, 0]]):
        k = minigrad.tensor(k)
        assert np.array_equal(g(x, k).array, f(x, k).array)
    assert g.stats.captures == 1 and g.stats.replays == 2


@pytest.mark.parametrize("op", ["unique", "unique_consecutive", "where_condition_alone", "bincount",
                                "repeat_interleave"])
def test_results_shaped_by_the_data_run_eagerly_with_a_reason(op):
    def f(x):
        if op == "where_condition_alone":
            return minigrad.where(x > 0)[0]
        if op == "repeat_interleave":
            return minigrad.arange(x.shape[0]).repeat_interleave(x)
        return getattr(minigrad, op)(x)

    g = minigrad.compile(f)
    with pytest.warns(RecompileWarning, match="shape depends on the data"):
        g(minigrad.tensor([1, 1, 2, 0]))
    for data in ([3, 0, 3], [0, 5, 5, 5, 0]):
        assert g(minigrad.tensor(data)).tolist() == f(minigrad.tensor(data)).tolist()
    assert g.stats.replays == 0


@pytest.mark.parametrize("case", ["equal", "allclose", "masked_scatter", "gaussian_nll_loss", "causal_mask_check"])
def test_python_decisions_on_the_data_run_eagerly_with_a_reason(case):
    encoder = _encoder()

    def f(x, y):
        if case == "equal":
            return x * 2 if minigrad.equal(x, y) else x
        if case == "allclose":
            return x * 2 if minigrad.allclose(x, y) else x
        if case == "masked_scatter":
            return x.masked_scatter(y > 0, y * 3)
        if case == "gaussian_nll_loss":
            return F.gaussian_nll_loss(x, y, y.abs() + 0.5)
        return encoder(x.reshape(3, 1, 8) + y.reshape(3, 1, 8), mask=_causal(3))  # is_causal not given

    reasons = {"equal": "equal", "allclose": "allclose", "masked_scatter": "masked_scatter",
               "gaussian_nll_loss": "check of var's values", "causal_mask_check": "whether a mask is causal"}
    g = minigrad.compile(f)
    x = _t(3, 8)
    with pytest.warns(RecompileWarning, match=reasons[case]):
        g(x, x.clone())
    for y in (x.clone(), _t(3, 8), x.clone()):
        assert np.array_equal(g(x, y).array, f(x, y).array)
    assert g.stats.replays == 0


def _causal(n):
    return nn.Transformer.generate_square_subsequent_mask(n)


def _encoder():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    return nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)


def test_a_causal_mask_with_is_causal_given_is_captured():
    encoder, mask = _encoder(), _causal(3)
    g = minigrad.compile(lambda x: encoder(x, mask=mask, is_causal=True))
    with warnings.catch_warnings(), minigrad.no_grad():
        warnings.simplefilter("error", RecompileWarning)
        for _ in range(3):
            x = _t(3, 1, 8)
            assert np.array_equal(g(x).array, encoder(x, mask=mask, is_causal=True).array)
    assert g.stats.replays == 2


# ---- guards ---------------------------------------------------------------------------------------
def _fwd(model):
    return minigrad.compile(lambda x: model(x))


def test_shape_change_captures_again_and_keeps_both():
    model = _mlp()
    f = _fwd(model)
    with minigrad.no_grad():
        f(_t(2, 8))
        with pytest.warns(RecompileWarning, match=r"argument 0 changed: Tensor\(shape=\[2, 8\].*shape=\[5, 8\]"):
            f(_t(5, 8))
        x = _t(2, 8)
        assert np.array_equal(f(x).array, model(x).array)
    assert (f.stats.captures, f.stats.replays) == (2, 1)


@pytest.mark.parametrize("change", ["dtype", "requires_grad", "grad_mode", "eval", "scalar", "parameter"])
def test_a_failed_guard_never_replays_a_wrong_program(change):
    model = _mlp(p=0.5)
    state = {"scale": 2.0}

    def step(x, scale):
        out = model(x) * scale
        if out.requires_grad:
            out.sum().backward()
        return out.detach() if out.requires_grad else out

    f = minigrad.compile(step)
    x = _t(3, 8)
    f(x, state["scale"])
    f(x, state["scale"])
    if change == "dtype":
        x = minigrad.tensor(x.array.astype(np.float64))
        model.double()
    elif change == "requires_grad":
        x = _t(3, 8).requires_grad_()
    elif change == "grad_mode":
        minigrad.set_grad_enabled(False)
    elif change == "eval":
        model.eval()
    elif change == "scalar":
        state["scale"] = 3.0
    elif change == "parameter":
        model[0].weight = nn.Parameter(_t(16, 8))
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            minigrad.manual_seed(5)
            got = f(x, state["scale"]).array.copy()
        assert any(issubclass(m.category, RecompileWarning) for m in w)
        minigrad.manual_seed(5)
        want = step(x, state["scale"]).array
    finally:
        minigrad.set_grad_enabled(True)
    assert np.array_equal(got, want)


def test_outside_tensor_replaced_in_place_shape_captures_again():
    model = nn.Linear(3, 2)
    f = minigrad.compile(lambda x: model(x))
    with minigrad.no_grad():
        f(_t(4, 3))
        f(_t(4, 3))
        model.bias.data = _t(1, 2)  # same object, new shape: broadcasting differs
        x = _t(4, 3)
        with pytest.warns(RecompileWarning, match="from outside changed"):
            got = f(x)
        assert np.array_equal(got.array, model(x).array)



class _Scaled(nn.Module):
    """A module whose forward reads a Python number, a plain tensor attribute (no parameter, no buffer)
    and a numpy array attribute."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)
        self.scale = 2.0
        self.mask = minigrad.ones(4)
        self.offset = np.zeros(4, dtype=np.float32)

    def forward(self, x):
        return self.drop(self.lin(x)) * self.scale * self.mask + minigrad.tensor(self.offset)


@pytest.mark.parametrize("change,says", [
    ("number", "module _Scaled: attribute 'scale' changed: 2.0 -> 5.0"),
    ("dropout_p", "module _Scaled: attribute 'drop.p' changed: 0.5 -> 0.0"),
    ("tensor", "module _Scaled: attribute 'mask' is another object"),
    ("array", "module _Scaled: attribute 'offset' is another object"),
])
def test_a_modules_attributes_are_guarded(change, says):
    # a forward bakes what it reads from its module into the program: a changed value or a rebound
    # tensor is another program (they were replayed with the captured value: wrong results)
    minigrad.manual_seed(0)
    m = _Scaled()
    f = minigrad.compile(m)
    x = _t(3, 4)
    with minigrad.no_grad():
        f(x)
        f(x)
        if change == "number":
            m.scale = 5.0
        elif change == "dropout_p":
            m.drop.p = 0.0
        elif change == "tensor":
            m.mask = minigrad.tensor(np.array([0.0, 1.0, 0.0, 1.0], dtype=np.float32))
        else:
            m.offset = np.full(4, 3.0, dtype=np.float32)
        minigrad.manual_seed(3)
        with pytest.warns(RecompileWarning, match=re.escape(says)):
            got = f(x).array
        minigrad.manual_seed(3)
        want = m(x).array
        assert np.array_equal(got, want)
        minigrad.manual_seed(3)
        assert np.array_equal(f(x).array, want)  # and the new program is replayed
    assert f._compiled.stats.captures == 2 and f._compiled.stats.replays == 2



def test_a_modules_state_is_walked_again_only_after_a_change(monkeypatch):
    from minigrad.compiler import guards

    walks = []
    walk = guards._walk
    monkeypatch.setattr(guards, "_walk", lambda m: walks.append(m) or walk(m))
    model = _mlp()
    f = minigrad.compile(lambda x: model(x))
    x = _t(2, 8)
    with minigrad.no_grad():
        f(x)
        n = len(walks)
        for _ in range(3):
            model.train()  # already training: the same objects again change nothing
            model[2].p = model[2].p
            f(x)
        assert len(walks) == n and f.stats.replays == 3
        model.eval()
        with pytest.warns(RecompileWarning, match="training flags changed"):
            f(x)
        assert len(walks) == n + 1



class _Runner:
    """A plain object (not a module) with a compiled method that reads its model and a number from self."""

    def __init__(self, model):
        self.model, self.scale, self.steps_taken = model, 2.0, 0
        self.run = minigrad.compile(self._run)

    def _run(self, x):
        return self.model(x) * self.scale


@pytest.mark.parametrize("where", ["method_of_a_plain_object", "module_in_a_dict", "config_object"])
def test_modules_and_numbers_reached_through_plain_objects_are_guarded(where):
    # a model reached through `self.model`, `models["net"]` or `cfg.model` switched to eval (or a number
    # read as `self.scale`, `cfg.scale` changed) was replayed with the captured program: dropout on
    net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cfg = types.SimpleNamespace(model=net, scale=2.0, unread=0)
    models = {"net": net}
    if where == "method_of_a_plain_object":
        runner = _Runner(net)
        f, holder = runner.run, runner
    elif where == "module_in_a_dict":
        f, holder = minigrad.compile(lambda x: models["net"](x) * 2.0), None
    else:
        f, holder = minigrad.compile(lambda x: cfg.model(x) * cfg.scale), cfg
    x = _t(3, 4)
    with minigrad.no_grad():
        f(x)
        f(x)
        if holder is not None:  # an attribute the function does not read changes nothing
            holder.__dict__["steps_taken" if holder is not cfg else "unread"] = 7
            f(x)
            assert f.stats.replays == 2
        net.eval()
        with pytest.warns(RecompileWarning, match="training flags changed"):
            assert np.array_equal(f(x).array, net(x).array * 2.0)
        if holder is not None:
            holder.scale = 3.0
            with pytest.warns(RecompileWarning, match=r"scale changed: 2\.0 -> 3\.0"):
                assert np.array_equal(f(x).array, net(x).array * 3.0)



LOSS_FN = F.mse_loss
OPT = None


def test_a_function_or_optimizer_rebound_in_globals_is_another_program():
    # the program calls what it captured (opt.step of the optimizer it saw, the loss function it ran):
    # a global bound to another optimizer or function was replayed with the old one
    global LOSS_FN, OPT
    minigrad.manual_seed(0)
    model = nn.Linear(4, 2)
    OPT = nn.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        loss = LOSS_FN(model(x), y)
        loss.backward()
        OPT.step()
        OPT.zero_grad()
        return loss

    f = minigrad.compile(step)
    x, y = _t(3, 4), _t(3, 2)
    try:
        f(x, y)
        f(x, y)
        OPT = nn.optim.SGD(model.parameters(), lr=0.0)  # nothing may move now
        before = model.weight.array.copy()
        with pytest.warns(RecompileWarning, match="global 'OPT' is another SGD"):
            f(x, y)
        assert np.array_equal(model.weight.array, before)
        LOSS_FN = F.l1_loss
        with pytest.warns(RecompileWarning, match="global 'LOSS_FN' is another function"):
            got = f(x, y).array
        assert np.array_equal(got, F.l1_loss(model(x), y).detach().array)
    finally:
        LOSS_FN, OPT = F.mse_loss, None



def test_a_loop_variable_named_like_an_attribute_the_function_reads_is_not_guarded():
    # a script's loop rebinds its global `loss` every iteration; the compiled function reads `.loss` of
    # an object, not the global: it is replayed, not captured again each call
    global loss

    def f(x):
        return types.SimpleNamespace(loss=x * 2).loss.sum()

    g = minigrad.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecompileWarning)
        for _ in range(4):
            loss = g(_t(3))
    assert g.stats.captures == 1 and g.stats.replays == 3


MASK = minigrad.ones(3)


def test_a_tensor_rebound_in_globals_or_a_closure_is_another_program():
    # a batch kept in a global (or a closure variable) and read by the compiled step, rebound every
    # iteration: each call must see its own tensor, not the one captured first
    global MASK

    def make():
        bias = minigrad.zeros(3)

        def f(x):
            return x * MASK + bias

        def set_bias(b):
            nonlocal bias
            bias = b
        return f, set_bias

    f, set_bias = make()
    g = minigrad.compile(f)
    x = _t(2, 3)
    g(x)
    g(x)
    MASK = minigrad.tensor(np.array([1.0, 0.0, 2.0], dtype=np.float32))
    with pytest.warns(RecompileWarning, match="global 'MASK' is another tensor"):
        assert np.array_equal(g(x).array, f(x).array)
    set_bias(minigrad.ones(3))
    with pytest.warns(RecompileWarning, match="closure variable 'bias' is another tensor"):
        assert np.array_equal(g(x).array, f(x).array)
    assert np.array_equal(g(x).array, x.array * MASK.array + 1.0)  # replayed with the last ones
    assert g.stats.captures == 3


# ---- the footguns of a tracing JIT (tinygrad's test_jit_footguns) -----------------------------------
def test_frozen_constants_closure_and_global_numbers_are_guarded():
    scale = 1.0

    def f(x):
        return x * scale + OFFSET

    g = minigrad.compile(f)
    x = _t(3)
    for scale, off in [(1.0, 0.0), (1.0, 0.0), (2.0, 0.0), (2.0, 5.0)]:
        globals()["OFFSET"] = off
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecompileWarning)
            assert np.array_equal(g(x).array, (x.array * scale + off).astype(np.float32))
    assert g.stats.captures == 3


OFFSET = 0.0


NO_GRADIENT_OPS = {  # ops whose result has no gradient: each must be recorded, not frozen at capture
    "compare": lambda x: (x > 0) & (x < 1) | (x == x.max()),
    "logical": lambda x: minigrad.logical_not((x > 0).logical_xor(x < -1)),
    "isnan_isinf": lambda x: minigrad.isnan(x / x.abs().min()) | minigrad.isinf(x / 0.0) | minigrad.isfinite(x),
    "integer_cast": lambda x: (x * 10).long() + (x > 0).int(),
    "argmax": lambda x: x.argmax(dim=1) * 10 + x.argmin() + x.argmax(dim=0, keepdim=True).sum(),
    "isclose_signbit": lambda x: minigrad.isclose(x, x.round(decimals=1), atol=0.05) ^ minigrad.signbit(x),
    "mask_from_a_comparison": lambda x: x.masked_fill(x < x.mean(-1, keepdim=True), float("-inf")).softmax(-1),
}


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("op", sorted(NO_GRADIENT_OPS))
def test_ops_without_a_gradient_are_replayed_on_new_data(op):
    f = NO_GRADIENT_OPS[op]
    g = minigrad.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecompileWarning)  # nothing breaks the capture
        for _ in range(4):  # the first call captures; each later one must follow its own input
            x = _t(5, 7)
            got, want = g(x), f(x)
            assert got.dtype == want.dtype and np.array_equal(got.array, want.array)
    assert (g.stats.captures, g.stats.replays) == (1, 3)


def test_frozen_branch_on_a_python_argument_is_guarded():
    def f(x, flip):
        return -x if flip else x * 2

    g = minigrad.compile(f)
    x = _t(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        for flip in [False, False, True, True, False]:
            assert np.array_equal(g(x, flip).array, f(x, flip).array)
    assert (g.stats.captures, g.stats.replays) == (2, 3)


@pytest.mark.parametrize("escape", ["item", "float", "bool_branch", "print", "tolist", "numpy", "index"])
def test_values_leaving_the_trace_run_eagerly_with_a_reason(escape, capsys):
    def f(x):
        y = x * 2
        if escape == "item":
            return y * y.sum().item()
        if escape == "float":
            return y * float(y.sum())
        if escape == "bool_branch":
            return y if y.sum() > 0 else -y  # a data-dependent branch
        if escape == "print":
            print(y)
            return y
        if escape == "tolist":
            return y + y.tolist()[0]
        if escape == "index":  # a slice's bound from a tensor (its __index__)
            return y[:y.argmax() + 1]
        return y + float(y.numpy()[0])

    g = minigrad.compile(f)
    with pytest.warns(RecompileWarning, match="running eagerly: .*inside the compiled function"):
        g(_t(3))
    for _ in range(3):
        x = _t(3)
        assert np.array_equal(g(x).array, f(x).array)  # the data-dependent value is fresh every call
    assert g.stats.replays == 0 and g.stats.eager_calls == 3


def test_item_inside_fullgraph_is_an_error():
    g = minigrad.compile(lambda x: x * x.sum().item(), fullgraph=True)
    with pytest.raises(RuntimeError, match=r"fullgraph=True.*item\(\)"):
        g(_t(3))


def test_a_result_made_from_python_values_is_a_new_tensor_each_call():
    # `zeros(3)` made in the function is a constant of the program: returned as such, a caller that
    # changed it in place changed every later call's result (eager makes a new one each call)
    def f(x):
        h = minigrad.zeros(3)
        return x + h, h, model_weight

    model_weight = nn.Parameter(minigrad.ones(3))
    g = minigrad.compile(f)
    x = _t(3)
    g(x)
    _, h, w = g(x)
    h.add_(5.0)
    y, h2, w2 = g(x)
    assert np.array_equal(y.array, x.array) and np.array_equal(h2.array, np.zeros(3, np.float32))
    assert h2 is not h and w2 is model_weight  # (a tensor from before the call is returned as itself)
    assert g.stats.replays == 2


def test_outputs_are_not_overwritten_by_the_next_call():
    model = _mlp()
    f = _fwd(model)
    xs = [_t(2, 8) for _ in range(4)]
    with minigrad.no_grad():
        outs = [f(x) for x in xs]
        for x, o in zip(xs, outs):
            assert np.array_equal(o.array, model(x).array)
    assert len({id(o.array) for o in outs}) == 4


def test_an_inference_replay_holds_no_array_after_the_call():
    """An inference replay keeps one Tensor per intermediate slot from call to call (no Tensor made per
    op): each lets go of its array after its last reader, and what the call returns is the caller's
    alone, freed when the caller drops it, as in eager mode."""
    import gc
    import weakref

    model = _mlp()
    f = _fwd(model)
    with minigrad.no_grad():
        for _ in range(3):
            out = f(_t(2, 8))
        program = next(iter(f.cache.values()))
        assert "shell" in program.code  # (the intermediates are kept in shells)
        held = [v for k, v in program._run_steps.__globals__.items() if k.startswith("shell")]
        assert held and all(t.array is None for t in held)
        ref = weakref.ref(out.array)
        del out
        gc.collect()
        assert ref() is None


def test_a_capture_records_only_its_own_threads_ops():
    import sys
    import threading

    def f(x):
        for _ in range(50):
            x = (x * 0.5 + 1.0).tanh()
        return x.sum()

    alone = minigrad.compile(f)
    alone(_t(4, 4))
    n_steps = len(next(iter(alone.cache.values())).steps)
    stop, errors = threading.Event(), []

    def busy():  # eager ops on another thread, all through the capture
        a = _t(4, 4)
        while not stop.is_set():
            try:
                assert np.allclose((a * 3.0).array, a.array * 3.0)
            except Exception as e:
                errors.append(e)
                return

    other = threading.Thread(target=busy)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the threads take turns often, so the other one runs during the capture
    other.start()
    try:
        g = minigrad.compile(f)
        for _ in range(20):
            x = _t(4, 4)
            assert np.allclose(g(x).array, f(x).array)
    finally:
        stop.set()
        other.join()
        sys.setswitchinterval(interval)
    assert not errors
    program = next(iter(g.cache.values()))
    assert len(program.steps) == n_steps and g.stats.captures == 1


def test_duplicate_inputs():
    def f(a, b):
        return a * 2 + b

    g = minigrad.compile(f)
    x = _t(3)
    g(x, x)
    g(x, x)
    a, b = _t(3), _t(3)
    with pytest.warns(RecompileWarning, match="argument 1 changed: .*the same memory as argument 0"):
        got = g(a, b)  # the program of g(x, x) read one slot for both: it must not be replayed here
    assert np.array_equal(got.array, f(a, b).array)


def test_method_shared_across_instances():
    class Scaler:
        def __init__(self, w):
            self.w = w

        @minigrad.compile
        def __call__(self, x):
            return x * self.w

    a, b = Scaler(_t(3)), Scaler(_t(3))
    x = _t(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        for _ in range(2):
            assert np.array_equal(a(x).array, x.array * a.w.array)
            assert np.array_equal(b(x).array, x.array * b.w.array)


def test_nested_compile():
    inner = minigrad.compile(lambda x: x.exp() * 2)
    outer = minigrad.compile(lambda x: inner(x) + 1)
    for _ in range(3):
        x = _t(4)
        assert np.array_equal(outer(x).array, np.exp(x.array) * 2 + 1)
    assert outer.stats.replays == 2 and inner.stats.captures == 0  # inner ran inside outer's capture only


def _sgd_data(model, lr):
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)


def _sgd_no_grad(model, lr):
    with minigrad.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
            p.grad.zero_()


@pytest.mark.parametrize("update", [_sgd_data, _sgd_no_grad])
def test_hand_written_in_place_updates_are_replayed_bit_for_bit(update):
    batches = _batches(5, shape=(6, 8))

    def run(compiled):
        model = _mlp(seed=3)

        def step(x, y):
            model.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            update(model, 0.1)
            return loss

        f = minigrad.compile(step) if compiled else step
        losses = [f(x, y).array.copy() for x, y in batches]
        return losses, [p.array.copy() for p in model.parameters()], f

    (eager, eager_params, _), (comp, comp_params, f) = run(False), run(True)
    assert all(np.array_equal(a, b) for a, b in zip(eager + eager_params, comp + comp_params))
    assert (f.stats.captures, f.stats.replays) == (1, 4)
    # the library calls, the accumulations into .grad and the forwards that read a leaf's .grad are written
    # out as lines of the replay (no step object's run is called)
    code = next(iter(f.cache.values())).code
    assert re.search(r"call\d+\(", code) and "accumulate_into_leaf(" in code
    assert not re.search(r"^ +step\d+\(env, ctxs", code, re.M), code


def test_in_place_ops_on_values_made_in_the_call_are_replayed():
    def f(x, ids):
        y = x * 2.0
        y.add_(1.0)
        y.mul_(x)
        y[:, 0] = 5.0
        y[ids] = x[ids] - 1.0  # an index tensor of the call's: each call's
        y.masked_fill_(x > 1.0, -2.0)
        y.clamp_(-1.5, 4.0)
        z = x * 0  # (an op's result: a value of the call, remade at each replay)
        z.copy_(y)
        z.sub_(x, alpha=0.5)
        z.div_(2.0)
        y.fill_(0.25)
        return y + z

    c = minigrad.compile(f)
    for _ in range(4):
        x, ids = _t(5, 4), minigrad.tensor(rng.integers(0, 5, 2))
        np.testing.assert_array_equal(c(x, ids).array, f(x, ids).array)
    assert c.stats.replays == 3


def test_an_in_place_write_into_a_tensor_made_from_an_array_runs_eagerly():
    def f(x, i):
        counts = minigrad.from_numpy(np.zeros(4, np.float32))  # a constant of the program: its writes would add up
        counts[i] += 1.0
        return x * counts

    c = minigrad.compile(f)
    x = _t(4)
    with pytest.warns(RecompileWarning, match="made inside the function from Python values"):
        c(x, 1)
    for _ in range(3):
        np.testing.assert_array_equal(c(x, 1).array, f(x, 1).array)
    assert c.stats.replays == 0


def test_writes_into_a_tensor_a_factory_made_in_the_call_are_replayed():
    # zeros / ones / full / empty (and their _like forms) made in the call are made again at each replay,
    # so that writes into them start from the same values each call (they ran eagerly: "made inside the
    # function from Python values"); with MultiheadAttention's bool padding mask (zeros_like(mask).
    # masked_fill_), gumbel_softmax's hard one-hot (scatter_) and its noise (empty_like(...).exponential_())
    def f(x, i, mask):
        counts = minigrad.zeros(4) + minigrad.tensor([0.0, 1.0, 0.0, 0.0])  # (tensor() of data: made again too)
        counts[i] += 1.0
        counts = counts + minigrad.arange(4.0)
        one_hot = minigrad.zeros_like(x).scatter_(1, x.argmax(1, keepdim=True), 1.0)
        bias = minigrad.zeros(mask.shape).masked_fill_(mask, -1.0)
        noise = minigrad.empty(4, 4).uniform_(-1.0, 1.0) + minigrad.empty_like(x).normal_() * minigrad.full((4,), 2.0)
        noise = noise + minigrad.bernoulli(minigrad.full((4, 4), 0.3)) + minigrad.normal(0.0, 2.0, (4, 4))
        return x * counts + one_hot + bias + noise, F.gumbel_softmax(x, hard=True)

    def run(compiled):
        minigrad.manual_seed(0)
        g = minigrad.Generator().manual_seed(1)
        c = minigrad.compile(f) if compiled else f
        out = []
        for k in range(4):
            x = minigrad.randn(4, 4, generator=g)
            mask = minigrad.tensor(np.arange(16).reshape(4, 4) % (k + 2) == 0)
            out += [t.array.copy() for t in c(x, 1, mask)]
        return out + [minigrad.randn(3).array], c

    (want, _), (got, c) = run(False), run(True)
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert c.stats.replays == 3 and c.stats.eager_calls == 0


def test_a_tensor_carried_in_a_dict_between_calls_is_another_program():
    # a hidden state kept in a closure's dict: the program would read the tensor it captured
    lin = nn.Linear(3, 3)
    state = {"h": minigrad.zeros(2, 3)}

    def step(x):
        h = lin(x + state["h"]).tanh().detach()
        state["h"] = h
        return h

    c = minigrad.compile(step)
    xs = [_t(2, 3) for _ in range(4)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecompileWarning)
        got = [c(x).array.copy() for x in xs]
    # (the call changes the dict: every call runs eagerly, said once)
    assert [str(w.message).split(": ")[2] for w in caught] == ["running eagerly from now on"]
    assert "a change to closure variable 'state'" in str(caught[0].message)
    state["h"] = minigrad.zeros(2, 3)
    want = [step(x).array.copy() for x in xs]
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_random_draws_in_the_function_are_drawn_again_at_each_replay():
    # makemore's loop draws its batch inside the step: randint, randn, rand and randperm from the default
    # generator are steps of the program, drawing fresh numbers in eager's order (the same stream)
    model = _mlp(seed=2)
    X, Y = _t(40, 8), minigrad.tensor(rng.integers(0, 4, 40))

    g = minigrad.Generator()

    def step():
        ix = minigrad.randint(0, X.shape[0], (6,), generator=g)  # (a generator of the script's own too)
        noise = minigrad.randn(6, 8) * 0.1 + minigrad.rand(6, 8) * 0.01
        loss = F.cross_entropy(model(X[ix] + noise), Y[ix]) + 0 * minigrad.randperm(5).float().sum()
        model.zero_grad()
        loss.backward()
        with minigrad.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        return loss

    def run(f):
        minigrad.manual_seed(7)
        g.manual_seed(8)
        return [f().item() for _ in range(5)], [p.array.copy() for p in model.parameters()], minigrad.get_rng_state()

    start = [p.array.copy() for p in model.parameters()]
    eager = run(step)
    for p, a in zip(model.parameters(), start):
        p.array[...] = a
    c = minigrad.compile(step)
    compiled = run(c)
    assert c.stats.replays == 4 and eager[0] == compiled[0] and eager[2] == compiled[2]
    assert all(np.array_equal(a, b) for a, b in zip(eager[1], compiled[1]))
    assert len(set(eager[0])) == 5  # (each step drew another batch)


def test_in_place_writes_into_inputs_follow_each_call_and_its_aliasing():
    def f(a, b):
        a.add_(1.0)
        a[a > 1.5] = 0.0  # a mask computed in the call, written through
        return a + b

    c = minigrad.compile(f)
    for i in range(4):
        arr = _t(3, 4).array
        x1, x2 = minigrad.tensor(arr), minigrad.tensor(arr)
        other = _t(3, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecompileWarning)
            got = c(x1, x1) if i % 2 else c(x1, other)  # (the same tensor twice: another program)
        want = f(x2, x2) if i % 2 else f(x2, other)
        assert np.array_equal(got.array, want.array) and np.array_equal(x1.array, x2.array)
    assert (c.stats.captures, c.stats.replays) == (2, 2)


def test_python_side_effects_run_at_capture_only():
    """Documented: the replay runs tensor work only; a list changed through a function the compiled one
    calls counts captures (one the function reads itself is seen changing: it then runs eagerly)."""
    calls, seen = [], []
    count = calls.append

    def f(x):
        count(1)
        return x + 1

    def g(x):
        seen.append(1)
        return x + 1

    f, g = minigrad.compile(f), minigrad.compile(g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        for _ in range(3):
            f(_t(2)), g(_t(2))
    assert len(calls) == 1 and len(seen) == 3


@pytest.mark.parametrize("what", ["inplace", "hook", "numpy_arg",
                                  "init_fill", "manual_seed", "set_rng_state"])
def test_what_cannot_be_captured_runs_eagerly_with_a_reason(what):
    w = _t(3).requires_grad_()

    def f(x):
        if what == "inplace":  # an in-place op in the autograd graph on a view (one without a gradient, or on a
            y = x * w  # tensor of the call's, is replayed)
            y[:2].add_(1)
            y.sum().backward()
            return w.grad.detach()
        if what == "hook":
            y = x * w
            y.register_hook(lambda g: g * 2)
            y.sum().backward()
            return w.grad.detach()
        if what == "init_fill":  # a write to an outside tensor's array, not an op
            nn.init.constant_(buf, float(len(buf.array)))
            return x * buf
        if what == "manual_seed":  # a replay would not reseed: its dropout masks would differ from eager's
            minigrad.manual_seed(3)
            return F.dropout(x, 0.5)
        if what == "set_rng_state":
            state = minigrad.get_rng_state()
            y = F.dropout(x, 0.5)
            minigrad.set_rng_state(state)
            return y + F.dropout(x, 0.5)
        return minigrad.as_tensor(x) + 1

    buf = minigrad.zeros(3)
    reasons = {"inplace": "in-place", "hook": "hook",
               "numpy_arg": "is an array", "init_fill": "nn.init fill",
               "manual_seed": "seed or state", "set_rng_state": "seed or state"}
    g = minigrad.compile(f)
    arg = rng.standard_normal(3) if what == "numpy_arg" else _t(3)
    with pytest.warns(RecompileWarning, match=reasons[what]):
        g(arg)
    minigrad.manual_seed(1)
    w.grad = None
    got = g(arg)
    minigrad.manual_seed(1)
    w.grad = None
    want = f(arg)
    assert np.array_equal(got.array, want.array)
    assert g.stats.replays == 0


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_training_counts_its_batches_at_every_replay(momentum):
    # num_batches_tracked += 1 was a write to the buffer's array in module code: a replay skipped it
    # (1 batch counted after 5 steps); with momentum=None its value decides the average (`item()`):
    # such a step runs eagerly
    def model():
        minigrad.manual_seed(0)
        return nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8, momentum=momentum), nn.ReLU(), nn.Linear(8, 4))

    batches = _batches(5)
    eager, comp = _train(False, model, batches, _mlp_loss), _train(True, model, batches, _mlp_loss)
    _assert_same(eager, comp)  # running mean, var and num_batches_tracked (5) among the buffers
    assert eager["buffers"][2] == 5
    assert comp["f"].stats.replays == (4 if momentum is not None else 0)


def test_a_checkpointed_block_with_dropout_is_replayed_bit_for_bit():
    # checkpoint's recomputation restores the generators' state it ran with (not a user's reseeding:
    # it is part of the recorded backward), so the step is captured and replayed
    from minigrad.utils.checkpoint import checkpoint

    def loss_fn(model, x, y):
        return F.cross_entropy(checkpoint(model, x, use_reentrant=False), y)

    batches = _batches(4)
    eager, comp = _train(False, lambda: _mlp(p=0.3), batches, loss_fn), _train(True, lambda: _mlp(p=0.3), batches, loss_fn)
    _assert_same(eager, comp)
    assert comp["f"].stats.captures == 1 and comp["f"].stats.replays == 3


def test_a_forward_that_sets_its_modules_attributes_runs_eagerly_once_said():
    # `self.last = y` in forward is Python a replay would skip (the attribute would keep the capture's
    # tensor); it changes the module too, so each call's guard differs: said once, then every call eager
    class Keeps(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            y = self.lin(x)
            self.last = y
            return y * 2

    m = Keeps()
    f = minigrad.compile(m)
    with warnings.catch_warnings(record=True) as w, minigrad.no_grad():
        warnings.simplefilter("always")
        for _ in range(10):
            x = _t(2, 3)
            out = f(x)
            assert np.array_equal(m.last.array, m.lin(x).array) and np.array_equal(out.array, m.lin(x).array * 2)
    said = [str(x.message) for x in w if issubclass(x.category, RecompileWarning)]
    assert len(said) == 1 and "setting Keeps.last" in said[0]
    assert f._compiled.stats.eager_calls == 9 and f._compiled.stats.replays == 0


def test_clip_grad_value_is_replayed_each_step():
    # it clamps the gradients' arrays in place, in Python: a replay skipped it (unclipped updates)
    batches = _batches(4)
    runs = []
    for compiled in (False, True):
        m = _mlp()
        opt = nn.optim.SGD(m.parameters(), lr=0.1)

        def step(x, y, m=m, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y) * 100.0
            loss.backward()
            nn.utils.clip_grad_value_(m.parameters(), 0.01)
            opt.step()
            return loss

        f = minigrad.compile(step) if compiled else step
        losses = [f(x, y).array.copy() for x, y in batches]
        runs.append((losses, [p.array.copy() for p in m.parameters()], f))
    (want, want_p, _), (got, got_p, f) = runs
    assert all(np.array_equal(a, b) for a, b in zip(want + want_p, got + got_p))
    assert f.stats.replays == 3


@pytest.mark.parametrize("update", ["grad_set_to_none", "data_assigned"])
def test_hand_written_updates_through_grad_and_data_are_replayed(update):
    # `p.grad = None` (makemore's zeroing) and `p.data = p.data - lr * p.grad` are attribute writes, not
    # ops: a replay skipped them (gradients summed over the steps; the parameters never moved)
    def run(compiled):
        minigrad.manual_seed(0)
        model = _mlp()
        opt = nn.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            if update == "grad_set_to_none":
                for p in model.parameters():
                    p.grad = None
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            if update == "data_assigned":
                for p in model.parameters():
                    p.data = p.data - 0.1 * p.grad
                    p.grad = None
            else:
                opt.step()
            return loss

        f = minigrad.compile(step) if compiled else step
        losses = [f(x, y).array.copy() for x, y in batches]
        return losses + [p.array.copy() for p in model.parameters()], f

    batches = _batches(4)
    (want, _), (got, f) = run(False), run(True)
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert f.stats.replays == 3


@pytest.mark.parametrize("after", ["zero_grad", "grad_replaced", "zero_grad_in_place"])
def test_a_grad_read_in_the_call_is_what_it_was_when_read(after):
    # `g = p.grad` after backward, then zero_grad() (or `p.grad = ...`) before g is used or returned: a
    # replay read the leaf's `.grad` as it was when g was used (None: an AttributeError 7 frames deep,
    # or None returned), not as it was when the call read it
    def run(compiled):
        minigrad.manual_seed(0)
        model = _mlp()
        opt = nn.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        w = model[0].weight

        def step(x, y):
            F.cross_entropy(model(x), y).backward()
            g = w.grad
            grads = [p.grad for p in model.parameters()]
            if after == "grad_replaced":
                w.grad = g * 0.5
            opt.step()
            opt.zero_grad(set_to_none=after != "zero_grad_in_place")
            return g, g.norm(), grads[-1]

        f = minigrad.compile(step) if compiled else step
        out = []
        for x, y in batches:
            g, norm, last = f(x, y)
            assert (g is w.grad) == (after == "zero_grad_in_place")  # the object itself, as eagerly
            out += [g.array.copy(), norm.array.copy(), last.array.copy()]
        return out + [p.array.copy() for p in model.parameters()], f

    batches = _batches(4)
    (want, _), (got, f) = run(False), run(True)
    assert len(want) == len(got) and all(np.array_equal(a, b) for a, b in zip(want, got))
    assert f.stats.replays == 3


def test_compile_a_module():
    model = _mlp()
    cm = minigrad.compile(model)
    assert cm._orig_mod is model and cm.training and list(cm.parameters()) == list(model.parameters())
    with minigrad.no_grad():
        for _ in range(3):
            x = _t(2, 8)
            assert np.array_equal(cm(x).array, model(x).array)
    assert cm._compiled.stats.replays == 2


def test_compile_arguments():
    assert minigrad.compile(disable=True)(len) is len
    assert minigrad.compile(len, backend="eager") is len
    with pytest.raises(RuntimeError, match="Invalid backend: 'nope'"):
        minigrad.compile(len, backend="nope")

    @minigrad.compile(fullgraph=True)
    def f(x):
        return x + 1

    x = _t(2)
    f(x)
    assert np.array_equal(f(x).array, x.array + 1)


def test_replayed_grads_never_alias_each_other_or_a_result():
    # the engine adopts a gradient as `.grad` only when nothing else holds it; the replay lets go of a
    # gradient's slot before accumulating, so the same test decides there: `y = a + b` gives both
    # leaves one gradient, which must still become two arrays
    a = minigrad.tensor(np.ones(4, np.float32), requires_grad=True)
    b = minigrad.tensor(np.ones(4, np.float32), requires_grad=True)

    def step(x):
        y = (x * a + b) * 2.0
        y.sum().backward()
        return y

    f = minigrad.compile(step)
    for k in range(3):
        x = minigrad.tensor(np.full(4, k + 1, np.float32))
        a.grad = b.grad = None  # outside: a Python assignment inside would run at capture only
        y = f(x)
        np.testing.assert_array_equal(a.grad.array, 2.0 * x.array)
        np.testing.assert_array_equal(b.grad.array, np.full(4, 2.0, np.float32))
        assert not np.shares_memory(a.grad.array, b.grad.array)
        assert not np.shares_memory(b.grad.array, y.array)
    assert f.stats.replays == 2


def test_the_capture_frees_what_the_call_drops():
    # the recorder keeps ids and weak references, not values: a temporary the function drops is freed
    # during the capture as in eager mode (the capture's peak memory is eager's)
    import weakref

    freed = []
    note = freed.append  # (a list the function changes itself would make it run eagerly)

    def f(x):
        y = x * 2.0
        ref = weakref.ref(y)
        del y
        note(ref() is None)
        return x + 1.0

    c = minigrad.compile(f)
    for _ in range(3):
        x = _t(16)
        assert np.array_equal(c(x).array, x.array + np.float32(1.0))
    assert freed == [True]  # one capture (the replays run no Python of f)


class _Growing:
    """A live argument (as a KV cache): each call's `_Grow` returns one row more than the last."""

    def __init__(self):
        self.rows = np.zeros((0, 8), np.float32)

    def compile_guard(self):
        return "growing"


class _Grow(minigrad.autograd.Function):
    @staticmethod
    def forward(ctx, x, store):
        store.rows = np.concatenate([store.rows, x.array.reshape(1, 8)])
        return store.rows.copy()


class _GrowingKV:
    """A live argument as a KV cache: each call's `_AppendKV` gives keys and values one position longer,
    laid out as `layout` says: contiguous (B, H, S, E), or (B, H, S, E) views of (B, H, E, S) memory,
    whose rows no BLAS reads in place."""

    def __init__(self):
        self.k = np.zeros((1, 2, 0, 4), np.float32)
        self.v = np.zeros((1, 2, 0, 4), np.float32)
        self.layout = "rows"

    def compile_guard(self):
        return "kv"


class _AppendKV(minigrad.autograd.Function):
    @staticmethod
    def forward(ctx, k_new, v_new, store):
        store.k = np.concatenate([store.k, k_new.array], axis=2)
        store.v = np.concatenate([store.v, v_new.array], axis=2)
        if store.layout == "rows":
            return store.k.copy(), store.v.copy()
        return tuple(np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2) for a in (store.k, store.v))


def test_attention_on_arrays_decides_again_when_the_layout_changes():
    # attention's array function keeps its choices (the backend, the output's layout) while its
    # arrays' layout stays, the keys growing; keys laid out otherwise (rows no BLAS reads in place)
    # choose again: each call the same bits as eager
    def fn(q, k_new, v_new, store):
        k, v = _AppendKV.apply(k_new, v_new, store)
        return F.scaled_dot_product_attention(q, k, v)

    f = minigrad.compile(fn)
    stores = _GrowingKV(), _GrowingKV()
    with minigrad.no_grad():
        for step in range(8):
            for store in stores:
                store.layout = "columns" if step in (3, 4) else "rows"
            q, k_new, v_new = _t(1, 2, 1, 4), _t(1, 2, 1, 4), _t(1, 2, 1, 4)
            want, got = fn(q, k_new, v_new, stores[0]), f(q, k_new, v_new, stores[1])
            assert got.shape == want.shape == (1, 2, 1, 4)
            assert np.array_equal(got.array, want.array), step
    assert re.search(r"out = Attention_array\d+\(", next(iter(f.cache.values())).code)


def test_an_inference_program_runs_ops_on_their_arrays_and_equals_eager():
    # without a backward, a replayed linear, layer_norm, gelu and embedding run through their
    # `array_forward` (no ctx, no backend lookup): the same bits as eager, parameters read live
    minigrad.manual_seed(0)
    emb, norm, norm_nb = nn.Embedding(10, 8), nn.LayerNorm(8), nn.LayerNorm(8, bias=False)
    lin, lin_nb = nn.Linear(8, 8), nn.Linear(8, 8, bias=False)

    def fn(idx):
        h = norm(emb(idx))
        return lin_nb(F.gelu(lin(norm_nb(h)))) + F.gelu(h, approximate="tanh")

    f = minigrad.compile(fn)
    with minigrad.no_grad():
        for seed in range(4):
            idx = minigrad.tensor(np.random.default_rng(seed).integers(0, 10, (2, 3)))
            assert np.array_equal(f(idx).array, fn(idx).array)
        program = next(iter(f.cache.values()))
        for op in ("Embedding", "LayerNorm", "Linear", "LinearNoBias", "Gelu"):
            assert re.search(rf"out = {op}_array\d+\(", program.code), op
        with minigrad.no_grad():  # a parameter changed in place, and one given a new array
            lin.weight.mul_(2.0)
            norm.weight.data = minigrad.full((8,), 0.5)
        assert np.array_equal(f(idx).array, fn(idx).array)
        with pytest.raises(IndexError, match="index out of range"):  # each call's ids still checked
            f(minigrad.tensor([[1, 2, 10], [0, 0, 0]]))


@pytest.mark.parametrize("bias", [True, False])
def test_a_replayed_linear_on_one_matrix_equals_eager(bias):
    # a generated token's linear layers take (1, 1, in): the replay's array function is then numpy's matmul
    # of x against W^T as it is (no views around it), the same BLAS call as eager's 2-D product: the same
    # bits. Several matrices (a batch of rows before the last two dims) take eager's own path
    from nn._functional.linear import Linear, LinearNoBias, _forward, _matrix_product

    minigrad.manual_seed(0)
    lin = nn.Linear(48, 40, bias=bias)
    cls = Linear if bias else LinearNoBias
    args = (lin.weight, lin.bias) if bias else (lin.weight,)
    strided = _t(1, 9, 48)[:, ::2]  # rows apart in memory: the same strides for both calls
    for x in [_t(1, 1, 48), _t(1, 7, 48), _t(5, 48), _t(1, 48), _t(1, 1, 1, 48), strided, _t(3, 1, 48), _t(2, 4, 48)]:
        shape = tuple(x.shape)
        fn = cls.array_forward(x, lin.weight, lin.bias)
        # (where a CPU backend takes the product, at capture, the replay runs it as eager does)
        backend = _forward(x.array, lin.weight.array, None)[1]
        assert (fn is _matrix_product) == (backend is None and all(d == 1 for d in shape[:-2])), shape
        got = fn(x.array, *[a.array for a in args])
        with minigrad.no_grad():
            want = lin(x)
        assert got.shape == want.shape and np.array_equal(got, want.array), shape
    # an inner size of 1 (an outer product, matmul_arrays' own path) is not one of them
    assert LinearNoBias.array_forward(_t(1, 1, 1), nn.Linear(1, 4).weight, None) is not _matrix_product


def test_an_array_forward_given_another_shape_than_at_capture_runs_the_op_as_usual():
    # a value derived from a live argument may grow from call to call: a step through `array_forward`
    # checks its inputs' shapes and, on another shape, runs the op's forward (not the captured plan)
    minigrad.manual_seed(0)
    lin = nn.Linear(8, 3)

    def fn(x, store):
        return F.layer_norm(lin(_Grow.apply(x, store)), (3,))

    f = minigrad.compile(fn)
    eager_store, compiled_store = _Growing(), _Growing()
    with minigrad.no_grad():
        for seed in range(4):
            x = _t(8)
            want, got = fn(x, eager_store), f(x, compiled_store)
            assert got.shape == want.shape == (seed + 1, 3)
            assert np.array_equal(got.array, want.array)
    assert "_array" in next(iter(f.cache.values())).code


def test_a_replay_hands_each_gradient_to_its_leaf_as_eager_does(monkeypatch):
    # the engine lets a leaf adopt its first gradient without a copy when nothing else holds it; a replay's
    # generated code must not keep a second reference (a backward's result tuple, say), or every step would
    # copy every parameter's gradient
    from minigrad.autograd import engine

    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = nn.optim.Adam(model.parameters())
    x = _t(5, 8)

    def step():
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()

    answers = []
    real = engine.reusable

    def asked(grad, holders, contiguous=False):  # (this wrapper's argument is one more holder: counted)
        answers.append(real(grad, holders + 1, contiguous))
        return answers[-1]

    monkeypatch.setattr(engine, "reusable", asked)
    step()
    eager = list(answers)
    compiled = minigrad.compile(step)
    compiled()  # the capture
    answers.clear()
    # a replay adopts an array step's gradient with the same test, written into its code; where that
    # test declines, the engine's accumulation is asked, as eagerly
    ns = next(iter(compiled.cache.values()))._run_steps.__globals__
    engine_calls = []
    accumulate = ns["accumulate_into_leaf"]
    monkeypatch.setitem(ns, "accumulate_into_leaf", lambda v, g: (engine_calls.append(v), accumulate(v, g))[1])
    compiled()  # a replay
    assert compiled.stats.replays == 1 and len(eager) == 4 and all(eager)
    assert len(answers) == len(engine_calls) and all(answers)


def _running_loss(model, x, y):
    """A loss summed a row at a time into `loss = zeros(1)` by `loss += ...` (the char-RNN tutorials' loop)."""
    loss = minigrad.zeros(1)
    for i in range(x.shape[0]):
        loss += F.cross_entropy(model(x[i:i + 1]), y[i:i + 1])
    return loss


def test_a_running_loss_summed_in_place_is_captured_bit_for_bit():
    # `loss += part` records the out-of-place sum; the replay makes it in a slot, starting each call from
    # the zeros the function makes (not from the capture's total, which that tensor holds afterwards)
    batches = _batches(5)
    eager = _train(False, lambda: _mlp(p=0.2), batches, _running_loss)
    comp = _train(True, lambda: _mlp(p=0.2), batches, _running_loss)
    _assert_same(eager, comp)
    assert (comp["f"].stats.captures, comp["f"].stats.replays, comp["f"].stats.eager_calls) == (1, 4, 0)


def test_an_in_place_sum_into_a_computed_value_and_its_limits():
    w = minigrad.tensor(np.arange(4.0, dtype=np.float32), requires_grad=True)

    def into_a_slot(x):  # h, computed in the call, summed into twice
        h = x * w
        h += x * 2
        h -= w * w
        return h.sum()

    def read_before_written(x):  # the zeros read by an op before the sum is written into them (a factory's
        # tensor made in the call: a value of the program, made again at each replay)
        total = minigrad.zeros(4)
        seen = total * 3
        total += x * w
        return (total + seen).sum()

    def into_a_viewed_tensor(x):  # a view taken before the write must see it, which a replay would not do
        h = x * w
        first = h[0]
        h += w
        return h.sum() + first

    def step_of(loss_fn):
        def step(x):
            w.grad = None
            loss = loss_fn(x)
            loss.backward()
            return loss
        return step

    for loss_fn, replayed in ((into_a_slot, True), (read_before_written, True), (into_a_viewed_tensor, False)):
        step = step_of(loss_fn)
        g = minigrad.compile(step)
        for _ in range(3):
            x = _t(4)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RecompileWarning)
                got, got_grad = g(x).detach(), w.grad.array.copy()
            want = step(x).detach()
            assert np.array_equal(got.array, want.array) and np.array_equal(got_grad, w.grad.array), loss_fn.__name__
        assert (g.stats.replays > 0) == replayed, loss_fn.__name__


def test_an_in_place_sum_into_a_module_buffer_runs_eagerly():
    minigrad.manual_seed(0)
    lin = nn.Linear(3, 3)
    lin.register_buffer("total", minigrad.zeros(3))
    x = _t(2, 3)

    def into_the_buffer(x):
        lin.total += lin(x).sum(0)
        loss = lin.total.sum()
        loss.backward()
        return loss

    h = minigrad.compile(into_the_buffer)
    with pytest.warns(RecompileWarning, match="an in-place op recording a gradient into a tensor from before"):
        out = h(x)
    assert out.requires_grad and h.stats.replays == 0
    assert np.array_equal(lin.total.detach().array, lin(x).sum(0).detach().array)  # written, as eager writes it

    def into_the_argument(total, x):  # the caller's tensor is written, as eager writes it
        total += lin(x).sum(0)
        loss = total.sum()
        loss.backward()
        return loss

    a = minigrad.compile(into_the_argument)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        for k in range(3):
            total = minigrad.full((3,), float(k))
            a(total, x)
            np.testing.assert_array_equal(total.detach().array, k + lin(x).sum(0).detach().array)
    assert a.stats.replays == 0


def test_a_recompile_warning_names_the_callers_line_and_the_module():
    # it named minigrad/compiler/__init__.py (or nn/optimized_module.py) for every call, so Python's
    # once-per-line filter showed one of two compiled functions' warnings
    f = minigrad.compile(lambda x: x * 2)
    m = minigrad.compile(nn.Linear(2, 2))
    f(_t(2))
    m(_t(1, 2))
    with pytest.warns(RecompileWarning) as caught:
        f(_t(3))
        m(_t(3, 2))
    assert [w.filename for w in caught] == [__file__, __file__]
    assert "minigrad.compile: Linear: capturing again" in str(caught[1].message)


@pytest.mark.parametrize("dropout", [nn.Dropout1d(0.4), nn.Dropout2d(0.5), nn.Dropout3d(0.3), nn.AlphaDropout(0.3),
                                     nn.FeatureAlphaDropout(0.3)])
def test_channel_and_alpha_dropouts_draw_again_at_each_replay(dropout):
    # their masks were drawn outside an op: every call ran eagerly ("a random draw outside an op")
    conv = nn.Conv2d(3, 3, 1)
    shape = {nn.Dropout1d: (2, 3, 4), nn.Dropout3d: (2, 3, 2, 2, 2)}.get(type(dropout), (2, 3, 4, 4))

    def step(x):
        y = dropout(x) * 2.0
        return y, conv(y.reshape(2, 3, 4, -1)).sum()

    def run(compiled):
        minigrad.manual_seed(0)
        f = minigrad.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error", RecompileWarning)
            with minigrad.no_grad():
                out = [t.array.copy() for _ in range(4) for t in f(minigrad.randn(*shape))]
        return out + [minigrad.randn(2).array], f

    (want, _), (got, f) = run(False), run(True)
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert f.stats.replays == 3


@pytest.mark.parametrize("settings", ["dict", "dataclass", "namespace"])
def test_a_modules_settings_object_read_in_forward_is_guarded(settings):
    # `self.config.scale` / `self.cfg["scale"]` (a config object on the module, HuggingFace's and nanoGPT's
    # way): the replay kept the value the capture read, silently
    import dataclasses

    @dataclasses.dataclass
    class Config:
        scale: float = 1.0
        name: str = "x"

    class Scaled(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.cfg, self.lin = cfg, nn.Linear(2, 2)

        def forward(self, x):
            scale = self.cfg["scale"] if isinstance(self.cfg, dict) else self.cfg.scale
            return self.lin(x) * scale

    def make():
        return {"scale": 1.0, "unused": []} if settings == "dict" else Config() if settings == "dataclass" \
            else types.SimpleNamespace(scale=1.0, log=[])

    def run(compiled):
        minigrad.manual_seed(0)
        cfg = make()
        model = Scaled(cfg)
        f = minigrad.compile(model) if compiled else model
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for scale in (1.0, 1.0, 3.0, 3.0, 1.0):
                if isinstance(cfg, dict):
                    cfg["scale"] = scale
                    cfg["unused"].append(scale)  # (not a setting the class's code names: no capture)
                else:
                    cfg.scale = scale
                with minigrad.no_grad():
                    out.append(f(minigrad.ones(1, 2)).array.copy())
        return out, f, [str(w.message) for w in caught]

    (want, _, _), (got, f, said) = run(False), run(True)
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert (f._compiled.stats.captures, f._compiled.stats.replays) == (2, 3)
    assert len(said) == 1 and re.search(r"setting '(cfg)\.scale' changed: 1\.0 -> 3\.0", said[0])


@pytest.mark.parametrize("op", ["relu_", "clamp_", "masked_fill_", "mul_", "div_", "add_alpha", "sigmoid_",
                                "mul_then_tanh_", "relu_module"])
def test_an_in_place_op_in_the_autograd_graph_on_a_value_of_the_call_is_replayed(op):
    # ReLU(inplace=True) after a Linear, `scores.masked_fill_(mask, -inf)`, `h.mul_(2)`: the out-of-place op is
    # the step and the tensor its result from then on (they ran eagerly: "an in-place tensor op ... in the
    # autograd graph")
    body = {"relu_": lambda h: h.relu_(), "clamp_": lambda h: h.clamp_(min=-0.1, max=0.5),
            "masked_fill_": lambda h: h.masked_fill_(h > 0.3, 0.0), "mul_": lambda h: h.mul_(2.0),
            "div_": lambda h: h.div_(minigrad.full((8,), 3.0)), "add_alpha": lambda h: h.add_(h.detach() * 2, alpha=0.5),
            "sigmoid_": lambda h: h.sigmoid_(), "mul_then_tanh_": lambda h: (h.mul_(2.0), h.tanh_()),
            "relu_module": nn.ReLU(inplace=True)}[op]

    def run(compiled):
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 3))
        opt = nn.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            h = model[0](x)
            body(h)
            loss = model[1](h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss, h

        f = minigrad.compile(step) if compiled else step
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("error", RecompileWarning)
            for _ in range(4):
                loss, h = f(minigrad.randn(5, 4))
                out += [loss.array.copy(), h.detach().array.copy()]
        return out + [p.array.copy() for p in model.parameters()], f

    (want, _), (got, f) = run(False), run(True)
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert f.stats.replays == 3


def _eager_and_compiled(make_step, calls=4, inputs=lambda k: (minigrad.randn(3, 4),)):
    """make_step() -> (step, parameters): run fresh ones eagerly and compiled from the same seed; returns
    (the results and parameters, each run's) and the compiled function."""
    runs = []
    for compiled in (False, True):
        minigrad.manual_seed(0)
        step, params = make_step()
        f = minigrad.compile(step) if compiled else step
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecompileWarning)
            for k in range(calls):
                res = f(*inputs(k))
                out += [r.detach().array.copy() for r in (res if isinstance(res, tuple) else (res,))
                        if isinstance(r, minigrad.Tensor)]
        runs.append((out + [p.array.copy() for p in params] + [minigrad.randn(2).array], f))
    (want, _), (got, f) = runs
    assert len(want) == len(got) and all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(want, got))
    return f


@pytest.mark.parametrize("case", ["leaf_made_in_the_call", "grad_read_before_backward", "view_inplace",
                                  "wider_dtype", "view_taken_before", "data_taken_before", "detach_taken_before"])
def test_what_a_replay_could_get_wrong_equals_eager(case):
    # each gave a value other than eager's on replay: a leaf made in the call (FGSM's delta) was one tensor
    # whose .grad summed over the calls; .grad read before backward was the capture's object (or None);
    # t_() / unsqueeze_() were not replayed; `h += float64` carried float64 on; a view, `.data` or detach()
    # taken before an in-place op in the graph read the values before it
    def make_step():
        lin = nn.Linear(4, 4)
        w64 = nn.Parameter(minigrad.randn(4, dtype=minigrad.float64))
        opt = nn.optim.SGD([*lin.parameters(), w64], lr=0.1)

        def step(x):
            if case == "leaf_made_in_the_call":
                delta = minigrad.zeros_like(x, requires_grad=True)
                lin(x + delta).pow(2).sum().backward()
                return x + 0.1 * delta.grad.sign(), delta.grad
            if case == "grad_read_before_backward":
                g0 = lin.weight.grad
                loss = lin(x).pow(2).mean()
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=False)
                return (loss,) if g0 is None else (loss, g0 * 1)
            if case == "view_inplace":
                m = (x > 0).float()
                m.t_()
                m.unsqueeze_(0)
                return m * 2, lin(x)
            h = lin(x)
            alias = {"view_taken_before": lambda: h.view(-1), "data_taken_before": lambda: h.data,
                     "detach_taken_before": lambda: h.detach()}.get(case, lambda: None)()
            if case == "wider_dtype":
                h += w64
            else:
                h.mul_(-1.0)
            loss = (h * (alias.view(h.shape) > 0).float()).sum() if alias is not None else h.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss, h.detach()

        return step, [*lin.parameters(), w64]

    f = _eager_and_compiled(make_step)
    replayed = case in ("leaf_made_in_the_call", "grad_read_before_backward", "view_inplace")
    assert (f.stats.replays > 0) == replayed


def test_settings_guard_tells_types_added_entries_tensors_and_lists_apart():
    class M(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.cfg = cfg

        def forward(self, x):
            c = self.cfg
            return x * c["scale"] + c.get("shift", 0) + c["mask"] + x.new_tensor(c["dims"][:1]).float()

    cfg = {"scale": 2, "mask": minigrad.ones(3), "dims": [1, 2]}
    m = M(cfg)
    f = minigrad.compile(m)
    x = minigrad.arange(3)
    changes = [("scale", 2.0), ("shift", 10.0), ("mask", minigrad.zeros(3)), ("dims", [5, 2]), ("scale", True)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        f(x)
        for k, v in changes:
            cfg[k] = v
            got, want = f(x), m(x)
            assert got.dtype == want.dtype and np.array_equal(got.array, want.array), k
    assert f._compiled.stats.captures == 1 + len(changes)


def test_an_in_place_op_on_a_leaf_that_requires_grad_raises_in_a_capture_as_eagerly():
    lin = nn.Linear(2, 2)

    def f(x):
        lin.weight.mul_(2.0)
        return lin(x)

    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        minigrad.compile(f)(minigrad.ones(1, 2))
    assert lin.weight.grad_fn is None  # (still a leaf: nothing was written)
    np.testing.assert_array_equal(minigrad.full((3,), minigrad.tensor(2.5)).array, np.full(3, 2.5, np.float32))


def test_tensors_made_in_the_call_from_values_of_the_call_and_their_requires_grad_replay_as_eager():
    # tensor([x.sum(), x.max()]) kept the capture's values; a detach().requires_grad_() leaf of the call lost
    # its flag (its .grad None at replay); eye/linspace(requires_grad=True) were one leaf for every call
    def make_step():
        lin = nn.Linear(4, 4)

        def step(x):
            stats = minigrad.tensor([x.sum(), x.max()]) * 2
            leaf = (x * 0).detach().requires_grad_()
            (leaf * x).sum().backward()
            eye = minigrad.eye(4, requires_grad=True)
            (lin(x) @ eye).pow(2).sum().backward()
            return stats, leaf.grad, eye.grad, minigrad.linspace(0, 1, 4) * x.mean()

        return step, list(lin.parameters())

    f = _eager_and_compiled(make_step)
    assert f.stats.replays == 3


def test_a_grad_read_as_a_tensor_is_checked_at_each_replay():
    w = minigrad.ones(3, requires_grad=True)

    def f(x):
        return x * 2 if w.grad is None else x + w.grad

    c = minigrad.compile(f)
    x = minigrad.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        for step in range(6):
            if step % 3 == 1:
                (w * x).sum().backward()
            elif step % 3 == 2:
                w.grad = None
            np.testing.assert_array_equal(c(x).array, f(x).array)


def test_settings_read_through_a_decorated_forward_a_property_or_a_parent_are_guarded():
    import types as pytypes

    class Child(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.config = cfg

        @property
        def mult(self):
            return self.config.mult

        @minigrad.no_grad()
        def forward(self, x):
            return x * self.config.scale * self.mult

    class Parent(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.child = Child(cfg)

        def forward(self, x):
            return self.child(x) + self.child.config.shift

    cfg = pytypes.SimpleNamespace(scale=1.0, mult=2.0, shift=0.5)
    m = Parent(cfg)
    f = minigrad.compile(m)
    x = minigrad.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        f(x)
        for k in ("scale", "mult", "shift"):
            setattr(cfg, k, getattr(cfg, k) + 1.0)
            np.testing.assert_array_equal(f(x).array, m(x).array)
    assert f._compiled.stats.captures == 4
