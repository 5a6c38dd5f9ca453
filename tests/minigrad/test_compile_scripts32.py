"""torch.compile scripts of issue 30's kinds, in idioms test_compile_scripts28.py leaves out: a compiled GRU char model
switched between train and eval with a short last batch and a greedy generation of growing length, a loss function
compiled with fullgraph=True under OneCycleLR and foreach clipping, torch._dynamo.reset() between epochs with a
torch.compiler.is_compiling() check in the forward, a tied transformer under mode="reduce-overhead" with dropout, a
compiled sampling step drawing top-k tokens from a Generator, an LSTM with proj_size under dynamic=False, and a compiled
model's checkpoint (its _orig_mod's state_dict) saved, deep-copied for early stopping and loaded back, a weight-normed
head over a GRU with dropout between layers, and padded batches from a DataLoader's collate_fn through a compiled
attention classifier with a key_padding_mask. Each script is
written once against a `torch`-like namespace and run three ways: torch eager (the reference, within float32
tolerance, for scripts without random draws), minigrad eager and minigrad compiled (equal bit for bit)."""
import copy
import io
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.compiler import RecompileWarning

torch = pytest.importorskip("torch")

WORDS = ["alba", "bruno", "chiara", "dario", "elena", "fabio", "giulia", "ivo", "lucia", "marco", "nora", "piero"]
CHARS = ["."] + sorted(set("".join(WORDS)))
STOI = {c: i for i, c in enumerate(CHARS)}
V = len(CHARS)
IDS = np.array([STOI[c] for c in ".".join(WORDS)])


def _np(t):
    return t.detach().cpu().numpy().copy() if hasattr(t, "detach") else np.asarray(t)


def _start(T, model, init):
    """The model from PyTorch's initial weights: recorded on the torch run (the first), loaded on minigrad's."""
    if T is torch:
        init.clear()
        init.update({k: _np(v) for k, v in model.state_dict().items()})
    else:
        model.load_state_dict({k: T.tensor(v) for k, v in init.items()})
    return model


def _three_ways(script, rng=False):
    """Runs `script(T, compile, init)` on torch eager, minigrad eager and minigrad compiled: the two minigrad runs
    agree bit for bit, and (without random draws) torch's within float32 tolerance. Returns the compiled run's
    extra result and its RecompileWarning lines."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    init = {}
    want, _ = script(torch, lambda m, **kw: m, init)
    minigrad.manual_seed(0)
    eager, _ = script(minigrad, lambda m, **kw: m, init)
    minigrad.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecompileWarning)
        got, extra = script(minigrad, minigrad.compile, init)
    lines = [str(w.message) for w in caught if issubclass(w.category, RecompileWarning)]
    assert len(got) == len(eager) == len(want)
    for e, g in zip(eager, got):
        np.testing.assert_array_equal(g, e)
    if not rng:
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)
    return extra, lines


def _windows(starts, T):
    x = np.stack([IDS[i:i + T] for i in starts])
    y = np.stack([IDS[i + 1:i + T + 1] for i in starts])
    return x, y


# ---- a GRU char model compiled whole: batches of 4, 4 and a short 2 (a new shape, captured again), eval under
# no_grad after model.eval(), then a greedy generation whose context grows a token per call -----------------------
def gru_char_model(T, compile, init):
    nn, F = T.nn, T.nn.functional

    class CharGRU(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 12)
            self.gru = nn.GRU(12, 24, batch_first=True)
            self.ln = nn.LayerNorm(24)
            self.head = nn.Linear(24, V)

        def forward(self, x):
            h, _ = self.gru(self.emb(x))
            return self.head(self.ln(h))

    model = compile(_start(T, CharGRU(), init))
    opt = T.optim.Adam(model.parameters(), lr=5e-3)
    x, y = _windows(range(0, 50, 5), 8)
    out = []
    for _ in range(2):
        model.train()
        for i in range(0, 10, 4):
            logits = model(T.tensor(x[i:i + 4]))
            loss = F.cross_entropy(logits.reshape(-1, V), T.tensor(y[i:i + 4]).reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            out.append(_np(loss))
        model.eval()
        with T.no_grad():
            out.append(_np(F.cross_entropy(model(T.tensor(x)).transpose(1, 2), T.tensor(y))))
    idx = T.zeros((1, 1), dtype=T.long)
    with T.no_grad():
        for _ in range(5):
            nxt = model(idx)[:, -1, :].argmax(-1, keepdim=True)
            idx = T.cat([idx, nxt], dim=1)
    out.append(_np(idx))
    out += [_np(p) for p in model.parameters()]
    return out, None


def test_a_compiled_gru_char_model_trained_evaluated_and_generating():
    _, lines = _three_ways(gru_char_model)
    assert any("shape=[2, 8]" in line for line in lines)  # the short last batch is captured again


# ---- makemore's MLP with BatchNorm1d: only the loss is compiled (fullgraph=True), the backward, foreach clipping
# with error_if_nonfinite and OneCycleLR's per-batch step stay eager -------------------------------------------------
def mlp_compiled_loss(T, compile, init):
    nn, F = T.nn, T.nn.functional
    rng = np.random.default_rng(3)
    xs, ys = [], []
    for w in WORDS:
        ctx = [0, 0, 0]
        for ch in w + ".":
            xs.append(list(ctx))
            ys.append(STOI[ch])
            ctx = ctx[1:] + [STOI[ch]]
    X, Y = np.array(xs), np.array(ys)
    model = _start(T, nn.Sequential(nn.Embedding(V, 6), nn.Flatten(), nn.Linear(18, 32, bias=False),
                                    nn.BatchNorm1d(32), nn.Tanh(), nn.Linear(32, V)), init)

    def compute_loss(model, xb, yb):
        return F.cross_entropy(model(xb), yb, label_smoothing=0.05)

    compute_loss = compile(compute_loss, fullgraph=True)
    opt = T.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    sched = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.2, total_steps=8)
    out = []
    for _ in range(8):
        ix = rng.integers(0, len(X), 16)
        loss = compute_loss(model, T.tensor(X[ix]), T.tensor(Y[ix]))
        opt.zero_grad()
        loss.backward()
        out.append(_np(nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True, foreach=True)))
        opt.step()
        sched.step()
        out.append(_np(loss))
    model.eval()
    with T.no_grad():
        out.append(_np(compute_loss(model, T.tensor(X), T.tensor(Y))))
    out += [_np(t) for t in model.state_dict().values()]
    return out, None


def test_a_loss_compiled_fullgraph_under_one_cycle_and_foreach_clipping():
    _, lines = _three_ways(mlp_compiled_loss)
    assert any("changed" in line for line in lines)  # eval() and the whole set are programs of their own


# ---- a regression whose forward checks its input only when not compiling (torch.compiler.is_compiling()), and
# torch._dynamo.reset() between epochs: the next call is captured afresh --------------------------------------------
def reset_between_epochs(T, compile, init):
    nn, F = T.nn, T.nn.functional
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 2, (24, 2)).astype(np.float32)
    y = (x[:, :1] * x[:, 1:] + np.cos(x[:, :1])).astype(np.float32)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 32), nn.Mish(), nn.Linear(32, 32), nn.Hardswish(),
                                      nn.Linear(32, 1))

        def forward(self, x):
            if not T.compiler.is_compiling():
                assert x.dim() == 2 and x.shape[1] == 2, "expected (N, 2) inputs"
            return self.body(x)

    model = compile(_start(T, Net(), init))
    opt = T.optim.RAdam(model.parameters(), lr=1e-2)
    sched = T.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    out = []
    for epoch in range(3):
        for i in range(0, 24, 8):
            loss = F.huber_loss(model(T.tensor(x[i:i + 8])), T.tensor(y[i:i + 8]), delta=0.5)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step(epoch + i / 24)
            out.append(_np(loss))
        T._dynamo.reset()
    out += [_np(p) for p in model.parameters()]
    return out, None


def test_dynamo_reset_between_epochs_and_is_compiling_in_the_forward():
    _, lines = _three_ways(reset_between_epochs)
    assert not any("eager" in line for line in lines)


# ---- a tiny transformer LM (nn.TransformerEncoderLayer with dropout, the head tied to the embedding) compiled with
# mode="reduce-overhead": the dropout masks are eager's, so eager and compiled agree bit for bit ------------------
def transformer_reduce_overhead(T, compile, init):
    nn, F = T.nn, T.nn.functional
    rng = np.random.default_rng(5)
    d, L = 16, 8

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(V, d)
            self.pos = nn.Parameter(T.zeros(1, L, d))
            self.enc = nn.TransformerEncoderLayer(d, 4, 32, dropout=0.1, batch_first=True, activation="gelu")
            self.head = nn.Linear(d, V, bias=False)
            self.head.weight = self.tok.weight
            self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(L))

        def forward(self, x):
            t = x.size(1)
            h = self.tok(x) + self.pos[:, :t]
            return self.head(self.enc(h, src_mask=self.causal[:t, :t], is_causal=True))

    model = compile(_start(T, LM(), init), mode="reduce-overhead")
    opt = T.optim.AdamW(model.parameters(), lr=3e-3)
    out = []
    for _ in range(4):
        x, y = _windows(rng.integers(0, len(IDS) - L - 1, 4), L)
        loss = F.cross_entropy(model(T.tensor(x)).flatten(0, 1), T.tensor(y).flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        out.append(_np(loss))
    model.eval()
    with T.inference_mode():
        out.append(_np(model(T.tensor(IDS[:L][None]))))
    out += [_np(p) for p in model.parameters()]
    return out, model


def test_a_tied_transformer_under_reduce_overhead_with_dropout():
    model, _ = _three_ways(transformer_reduce_overhead, rng=True)
    assert model.head.weight is model.tok.weight


# ---- a compiled sampling step: crop to the block, temperature, topk + masked_fill, softmax, torch.multinomial from
# the script's Generator (each replay draws as eager draws); with top_k=1 the draw is PyTorch's too -------------------
def compiled_sampling(T, compile, init, top_k=3):
    nn = T.nn
    model = _start(T, nn.Sequential(nn.Embedding(V, 8), nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, V)), init)
    model.eval()

    @compile
    def next_token(idx, temperature, gen):
        logits = model(idx[:, -4:])[:, -1, :] / temperature
        v, _ = T.topk(logits, top_k)
        logits = logits.masked_fill(logits < v[:, [-1]], -float("inf"))
        probs = T.softmax(logits, dim=-1)
        return T.multinomial(probs, num_samples=1, generator=gen)

    g = T.Generator().manual_seed(7)
    idx = T.zeros((2, 4), dtype=T.long)
    with T.no_grad():
        for _ in range(6):
            idx = T.cat([idx, next_token(idx, 0.9, g)], dim=1)
    return [_np(idx)], None


def test_a_compiled_top_k_sampling_step_draws_eagers_tokens():
    _three_ways(compiled_sampling, rng=True)
    _three_ways(lambda T, c, init: compiled_sampling(T, c, init, top_k=1))


# ---- a word model on an LSTM with proj_size, compiled with dynamic=False: a shorter last sequence is another
# program; a stateful hidden state carried (detached) between batches as an argument --------------------------------
def lstm_proj_dynamic_false(T, compile, init):
    nn, F = T.nn, T.nn.functional

    class WordLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 10)
            self.lstm = nn.LSTM(10, 20, num_layers=2, proj_size=6)
            self.out = nn.Linear(6, V)

        def forward(self, x, hidden):
            y, hidden = self.lstm(self.emb(x), hidden)
            return self.out(y), hidden

    model = compile(_start(T, WordLSTM(), init), dynamic=False)
    opt = T.optim.SGD(model.parameters(), lr=0.5)
    data = T.tensor(IDS[:61].reshape(-1, 1).repeat(3, axis=1))  # (61, 3): seq-first, as the tutorial batchifies
    hidden = (T.zeros(2, 3, 6), T.zeros(2, 3, 20))
    out = []
    for i, n in ((0, 12), (12, 12), (24, 12), (36, 12), (48, 9)):  # a short last sequence
        x, y = data[i:i + n], data[i + 1:i + 1 + n]
        hidden = tuple(h.detach() for h in hidden)
        logits, hidden = model(x, hidden)
        loss = F.cross_entropy(logits.view(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        out.append(_np(loss))
    out += [_np(h) for h in hidden] + [_np(p) for p in model.parameters()]
    return out, None


def test_an_lstm_with_proj_size_compiled_with_dynamic_false():
    _, lines = _three_ways(lstm_proj_dynamic_false)
    assert any("shape=[9, 3]" in line for line in lines)


# ---- early stopping on a compiled model: its state_dict (keys `_orig_mod.`) deep-copied at the best epoch and loaded
# back, the original module (unwrapped by an isinstance of torch._dynamo.eval_frame.OptimizedModule) saved with
# torch.save and loaded into a fresh eager model -------------------------------------------------------------------
def compiled_early_stopping(T, compile, init):
    nn, F = T.nn, T.nn.functional
    rng = np.random.default_rng(6)
    x = rng.standard_normal((30, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + rng.standard_normal((30, 1))).astype(np.float32)
    xt, yt, xv, yv = (T.tensor(a) for a in (x[:10], y[:10], x[10:], y[10:]))

    def make():
        return nn.Sequential(nn.Linear(3, 24), nn.ELU(), nn.Linear(24, 1))

    model = compile(_start(T, make(), init))
    opt = T.optim.Adam(model.parameters(), lr=0.05)
    best, best_state, bad, vals = float("inf"), None, 0, []
    for _ in range(30):  # (how many ran: len(vals))
        model.train()
        loss = F.mse_loss(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with T.no_grad():
            val = F.mse_loss(model(xv), yv)
        vals.append(_np(val))
        if val.item() < best - 1e-3:
            best, bad, best_state = val.item(), 0, copy.deepcopy(model.state_dict())
        else:
            bad += 1
            if bad == 2:
                break
    keys = list(best_state)
    model.load_state_dict(best_state)
    buf = io.BytesIO()
    plain = model._orig_mod if isinstance(model, T._dynamo.eval_frame.OptimizedModule) else model
    T.save(plain.state_dict(), buf)
    buf.seek(0)
    fresh = make()
    fresh.load_state_dict(T.load(buf, weights_only=True))
    fresh.eval()
    with T.no_grad():
        out = [np.array(len(vals)), *vals, _np(model(xv)), _np(fresh(xv))]
    return out, keys


def test_early_stopping_on_a_compiled_models_state_dict():
    keys, _ = _three_ways(compiled_early_stopping)
    assert keys == ["_orig_mod.0.weight", "_orig_mod.0.bias", "_orig_mod.2.weight", "_orig_mod.2.bias"]


# ---- a weight-normed head (parametrizations.weight_norm: the weight recomputed in each forward) over a 2-layer GRU
# with dropout between its layers, compiled and trained: eager's dropout masks, eager's parameters ----------------
def weight_norm_gru_dropout(T, compile, init):
    nn, F = T.nn, T.nn.functional

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 8)
            self.gru = nn.GRU(8, 16, num_layers=2, dropout=0.2, batch_first=True)
            self.head = nn.utils.parametrizations.weight_norm(nn.Linear(16, V))

        def forward(self, x):
            return self.head(self.gru(self.emb(x))[0])

    model = compile(_start(T, Model(), init))
    opt = T.optim.Adam(model.parameters(), lr=1e-2)
    x, y = _windows(range(0, 40, 5), 6)
    out = []
    for _ in range(3):
        model.train()
        loss = F.cross_entropy(model(T.tensor(x)).flatten(0, 1), T.tensor(y).flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(_np(loss))
    model.eval()
    with T.no_grad():
        out.append(_np(model(T.tensor(x[:2]))))
    out += [_np(v) for v in model.state_dict().values()]
    return out, list(model.state_dict())


def test_a_weight_normed_head_over_a_gru_with_dropout_compiled():
    keys, _ = _three_ways(weight_norm_gru_dropout, rng=True)
    assert "_orig_mod.head.parametrizations.weight.original1" in keys


# ---- sentences padded per batch by a DataLoader's collate_fn (drop_last), through a compiled classifier with
# nn.MultiheadAttention under a bool key_padding_mask: each batch's mask values are its own (a guard on shapes only),
# a batch of another length another program ----------------------------------------------------------------------
SENTENCES = [("good fun film", 1), ("bad dull plot", 0), ("a good and fun story", 1), ("too dull", 0),
             ("fun", 1), ("bad acting and a dull plot", 0), ("good story", 1), ("dull and bad", 0)]
VOCAB = ["<pad>"] + sorted({w for s, _ in SENTENCES for w in s.split()})


def padded_attention_classifier(T, compile, init):
    nn, F = T.nn, T.nn.functional
    data = T.utils.data

    def collate(batch):
        seqs = [T.tensor([VOCAB.index(w) for w in s.split()]) for s, _ in batch]
        return nn.utils.rnn.pad_sequence(seqs, batch_first=True), T.tensor([c for _, c in batch])

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(len(VOCAB), 8, padding_idx=0)
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
            self.fc = nn.Linear(8, 2)

        def forward(self, x):
            pad = x == 0
            e = self.emb(x)
            h, _ = self.attn(e, e, e, key_padding_mask=pad, need_weights=False)
            h = h.masked_fill(pad.unsqueeze(-1), 0.0)
            return self.fc(h.sum(1) / (~pad).sum(1, keepdim=True))

    model = compile(_start(T, Classifier(), init))
    # (SGD: the key bias's gradient is zero but for rounding, which Adam would scale up to a step of lr)
    opt = T.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loader = data.DataLoader(SENTENCES, batch_size=3, shuffle=False, drop_last=True, collate_fn=collate)
    out = []
    for _ in range(2):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(_np(loss))
    out += [_np(p) for p in model.parameters()]
    return out, len(loader)


def test_padded_batches_through_a_compiled_attention_classifier():
    batches, lines = _three_ways(padded_attention_classifier)
    assert batches == 2 and not any("eager" in line for line in lines)
