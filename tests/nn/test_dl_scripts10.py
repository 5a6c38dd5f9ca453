"""Deep-learning scripts of more kinds again (a training step wrapped in torch.compile's spellings, 1-d Grad-CAM
through hooks with kwargs, user parametrizations with right_inverse and caching, activation checkpointing with
dropout, a packed GRU encoder with a GRUCell additive-attention decoder, a switch-style mixture of experts with
capacity, a pre-norm nn.Transformer copy task, a checkerboard RealNVP on images, a neural ODE by RK4 with a
Jacobian penalty, a spectrogram audio classifier), written once against a `torch`-like module and run twice: on
PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree
closely (float64 throughout; random draws by numpy)."""
import types

import numpy as np
import pytest

from twins import both, grads, start


def eager(torch):
    """PyTorch with torch.compile as the identity (and torch._dynamo's two names as no-ops): its compilers take
    many seconds here, and the point is that minigrad.compile accepts these spellings and gives eager's numbers."""
    def compile(model=None, **kw):
        return (lambda f: f) if model is None else model
    dynamo = types.SimpleNamespace(reset=lambda: None, config=types.SimpleNamespace(suppress_errors=False))
    names = {k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")}
    return types.SimpleNamespace(**{**names, "compile": compile, "_dynamo": dynamo})


# ---- a training step under torch.compile's spellings ---------------------------------------------------------
def compiled(torch, init):
    nn, F = torch.nn, torch.nn.functional
    torch._dynamo.reset()
    torch._dynamo.config.suppress_errors = True
    model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.LayerNorm(12), nn.Linear(12, 3))
    init = start(model, init)
    model = torch.compile(model, fullgraph=True, dynamic=False, backend="inductor")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)

    @torch.compile(mode="reduce-overhead")
    def loss_of(x, y):
        return F.cross_entropy(model(x), y, label_smoothing=0.05)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        return loss.detach()

    step = torch.compile(step, backend="inductor", dynamic=False)
    rng = np.random.default_rng(100)
    losses = []
    for i in range(4):
        n = 5 if i < 3 else 3  # a new shape: a new capture on minigrad
        x, y = torch.tensor(rng.standard_normal((n, 6))), torch.tensor(rng.integers(0, 3, n))
        losses.append(step(x, y))
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor(rng.standard_normal((2, 6))))
    torch._dynamo.reset()
    torch._dynamo.config.suppress_errors = False
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), out=out)


def test_compiled_training_step(torch):
    theirs = compiled(eager(torch), None)
    import minigrad
    from twins import agree
    ours = compiled(minigrad, theirs["init"])
    for k in theirs:
        if k != "init":
            agree(ours[k], theirs[k], k)


# ---- 1-d Grad-CAM: activations and their gradients by hooks, kwargs rewritten by a pre-hook -------------------
def gradcam(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv1d(2, 4, 3, padding=1), nn.Conv1d(4, 5, 3, padding=1)
            self.head = nn.Linear(5, 3)

        def forward(self, x, scale=1.0):
            h = F.relu(self.conv2(F.relu(self.conv1(x * scale))))
            return self.head(h.mean(-1))

    model = Net()
    init = start(model, init)
    store, log = {}, []

    def forward_hook(module, args, output):
        store["act"] = output
        output.register_hook(lambda g: store.__setitem__("grad", g.clone()))

    def pre_hook(module, args, kwargs):
        log.append(("pre", sorted(kwargs)))
        return args, {**kwargs, "scale": kwargs.get("scale", 1.0) * 2}

    def backward_hook(module, grad_input, grad_output):
        log.append(("backward", tuple(grad_output[0].shape), grad_input[0] is None))

    handles = [model.conv2.register_forward_hook(forward_hook),
               model.register_forward_pre_hook(pre_hook, with_kwargs=True),
               model.conv1.register_full_backward_hook(backward_hook),
               model.head.register_forward_hook(lambda m, a, o: log.append("head first"), prepend=True)]
    x = torch.tensor(np.random.default_rng(101).standard_normal((2, 2, 7)), requires_grad=True)
    logits = model(x, scale=0.5)
    logits.retain_grad()
    cls = logits.argmax(-1)
    logits.gather(1, cls[:, None]).sum().backward()
    weights = store["grad"].mean(-1, keepdim=True)
    cam = F.relu((weights * store["act"]).sum(1))
    cam = cam / cam.amax(-1, keepdim=True).clamp_min(1e-12)
    out = dict(init=init, logits=logits, logits_grad=logits.grad, cls=cls, cam=cam, x_grad=x.grad.clone(),
               grads=grads(model), log=list(log), is_leaf=(logits.is_leaf, store["act"].is_leaf))
    for h in handles:
        h.remove()
    log.clear()
    store.clear()
    model.zero_grad()
    model(x).sum().backward()
    return dict(out, after=(list(log), sorted(store)), grads_after=grads(model))


def test_grad_cam_1d_hooks_with_kwargs(torch):
    both(torch, gradcam)


# ---- user parametrizations: symmetric, positive (with right_inverse), cached, removed ------------------------
def parametrizations(torch, init):
    nn, P = torch.nn, torch.nn.utils.parametrize

    class Symmetric(nn.Module):
        def forward(self, w):
            return w.triu() + w.triu(1).transpose(-1, -2)

        def right_inverse(self, w):
            return w.triu()

    class Positive(nn.Module):
        def forward(self, w):
            return w.exp()

        def right_inverse(self, w):
            return w.clamp_min(1e-3).log()

    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 3), nn.Linear(3, 3, bias=False))
    init = start(model, init)
    P.register_parametrization(model[0], "weight", Symmetric())
    P.register_parametrization(model[2], "bias", Positive())
    torch.nn.utils.parametrizations.orthogonal(model[3], orthogonal_map="cayley")
    model[0].weight = model[0].weight.detach() + 0.1  # assigned through right_inverse
    rng = np.random.default_rng(102)
    x = torch.tensor(rng.standard_normal((6, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(3):
        with P.cached():
            loss = (model(x) - 0.3).pow(2).mean() + model[0].weight.abs().sum() * 1e-3
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    w0, b2 = model[0].weight, model[2].bias
    keys = list(model.state_dict())
    flags = (P.is_parametrized(model[0]), P.is_parametrized(model[2], "weight"), P.is_parametrized(model[3]))
    P.remove_parametrizations(model[0], "weight", leave_parametrized=True)
    P.remove_parametrizations(model[2], "bias", leave_parametrized=False)
    return dict(init=init, losses=losses, grads=grads(model), w0=w0, sym=bool((w0 == w0.T).all()), b2=b2,
                keys=keys, flags=flags, after=list(model.state_dict()), gram=model[3].weight.T @ model[3].weight,
                out=model(x), plain=(type(model[0].weight).__name__, model[2].bias.shape))


def test_user_parametrizations_cached_and_removed(torch):
    both(torch, parametrizations)


# ---- activation checkpointing through dropout, checkpoint_sequential ------------------------------------------
def checkpointed(torch, init, reentrant):
    nn = torch.nn
    cp = torch.utils.checkpoint
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(6, 6), nn.Tanh(), nn.Dropout(0.3))],
                          nn.Linear(6, 2))
    init = start(model, init)
    x = torch.tensor(np.random.default_rng(103).standard_normal((5, 6)), requires_grad=True)

    def run(how, seed):
        torch.manual_seed(seed)
        model.zero_grad()
        x.grad = None
        if how == "plain":
            y = model(x)
        elif how == "checkpoint":
            h = x
            for i in range(0, 12, 3):
                h = cp.checkpoint(model[i:i + 3], h, use_reentrant=reentrant, preserve_rng_state=True)
            y = model[12](h)
        else:
            y = cp.checkpoint_sequential(model, 3, x, use_reentrant=reentrant)
        y.pow(2).sum().backward()
        return y.detach(), x.grad.clone(), grads(model)

    train = [run(how, 7) for how in ("plain", "checkpoint", "sequential")]
    same = [all(bool(torch.equal(a, b)) for a, b in zip([t[0], t[1], *t[2]], [train[0][0], train[0][1],
                                                                              *train[0][2]])) for t in train]
    model.eval()  # without dropout the two libraries agree number for number
    evals = [run(how, 0) for how in ("plain", "checkpoint", "sequential")]
    return dict(init=init, same=same, evals=evals)


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_dropout_deep_mlp(torch, reentrant):
    theirs, _ = both(torch, checkpointed, reentrant=reentrant)
    assert theirs["same"] == [True, True, True]


# ---- seq2seq: a packed two-layer GRU encoder, a GRUCell decoder with additive attention, teacher forcing --------
def packed_attention_seq2seq(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rnn_utils = nn.utils.rnn
    V, E, H, PAD, BOS = 9, 5, 6, 0, 1

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, E, padding_idx=PAD)
            self.enc = nn.GRU(E, H, num_layers=2, batch_first=True)
            self.w_enc, self.w_dec = nn.Linear(H, H, bias=False), nn.Linear(H, H)
            self.v = nn.Linear(H, 1, bias=False)
            self.cell = nn.GRUCell(E + H, H)
            self.out = nn.Linear(2 * H, V)

        def forward(self, src, lengths, tgt, force):
            packed = rnn_utils.pack_padded_sequence(self.emb(src), lengths, batch_first=True, enforce_sorted=False)
            enc_packed, h_n = self.enc(packed)
            enc, lens = rnn_utils.pad_packed_sequence(enc_packed, batch_first=True, total_length=src.shape[1])
            mask = torch.arange(src.shape[1])[None, :] < lens[:, None]
            keys = self.w_enc(enc)
            h, token, logits, attns = h_n[-1], tgt[:, 0], [], []
            for t in range(1, tgt.shape[1]):
                score = self.v(torch.tanh(keys + self.w_dec(h).unsqueeze(1))).squeeze(-1)
                alpha = F.softmax(score.masked_fill(~mask, float("-inf")), dim=-1)
                context = torch.bmm(alpha.unsqueeze(1), enc).squeeze(1)
                h = self.cell(torch.cat([self.emb(token), context], -1), h)
                step = self.out(torch.cat([h, context], -1))
                logits.append(step)
                attns.append(alpha)
                token = torch.where(force[:, t - 1], tgt[:, t], step.argmax(-1))
            return torch.stack(logits, 1), torch.stack(attns, 1), lens

    model = Model()
    init = start(model, init)
    rng = np.random.default_rng(104)
    lengths = torch.tensor([3, 6, 2, 5])
    src = rng.integers(2, V, (4, 6))
    src[np.arange(6)[None, :] >= lengths.numpy()[:, None]] = PAD
    tgt = np.concatenate([np.full((4, 1), BOS), src[:, :5]], 1)
    src, tgt = torch.tensor(src), torch.tensor(tgt)
    force = torch.tensor(rng.random((3, 4, 5)) < 0.6)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(3):
        logits, attn, lens = model(src, lengths, tgt, force[step])
        loss = F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, attn=attn, lens=lens, grads=grads(model), params=list(model.parameters()))


def test_packed_gru_encoder_additive_attention_grucell_decoder(torch):
    both(torch, packed_attention_seq2seq)


# ---- a switch-style mixture of experts: top-2 of the router logits, capacity, gather / scatter dispatch ---------
def switch_moe(torch, init):
    nn, F = torch.nn, torch.nn.functional
    d, n_exp, k, cap = 4, 3, 2, 4

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.router = nn.Linear(d, n_exp, bias=False)
            self.w1 = nn.Parameter(torch.randn(n_exp, d, 8, dtype=torch.float64) * 0.3)
            self.w2 = nn.Parameter(torch.randn(n_exp, 8, d, dtype=torch.float64) * 0.3)

        def forward(self, x):
            logits = self.router(x)  # (tokens, experts)
            top_logits, chosen = torch.topk(logits, k, dim=-1)
            gates = F.softmax(top_logits, dim=-1)
            onehot = F.one_hot(chosen, n_exp).to(x.dtype)  # (tokens, k, experts)
            # a token's place in its expert's queue: the choices before it, first choices first
            flat = onehot.transpose(0, 1).reshape(-1, n_exp)
            position = (flat.cumsum(0) - 1).reshape(k, -1, n_exp).transpose(0, 1)
            position = (position * onehot).sum(-1).long()  # (tokens, k)
            keep = position < cap
            slot = chosen * cap + position.clamp(max=cap - 1)
            buffer = torch.zeros(n_exp * cap, d, dtype=x.dtype)
            src = x.unsqueeze(1).expand(-1, k, -1) * keep.unsqueeze(-1)
            buffer = buffer.index_add(0, slot[keep], src[keep])
            h = torch.bmm(F.gelu(torch.bmm(buffer.view(n_exp, cap, d), self.w1)), self.w2).reshape(-1, d)
            back = h.gather(0, slot.reshape(-1, 1).expand(-1, d)).view(-1, k, d)
            weight = (gates * keep).unsqueeze(-1)
            out = (back * weight).sum(1)
            probs = F.softmax(logits, dim=-1)
            fraction = torch.zeros(n_exp, dtype=x.dtype).scatter_add(0, chosen[:, 0], torch.ones(len(x),
                                                                                                  dtype=x.dtype))
            balance = n_exp * (fraction / len(x) * probs.mean(0)).sum()
            z_loss = torch.logsumexp(logits, -1).pow(2).mean()
            return out, balance, z_loss, keep

    model = nn.ModuleDict(dict(moe=MoE(), head=nn.Linear(d, 2)))
    init = start(model, init)
    rng = np.random.default_rng(105)
    x, y = torch.tensor(rng.standard_normal((7, d))), torch.tensor(rng.integers(0, 2, 7))
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    losses = []
    for _ in range(3):
        h, balance, z_loss, keep = model["moe"](x)
        loss = F.cross_entropy(model["head"](x + h), y) + 0.01 * balance + 1e-3 * z_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, balance=balance, keep=keep, grads=grads(model),
                params=list(model.parameters()))


def test_switch_moe_capacity_gather_scatter(torch):
    both(torch, switch_moe)


# ---- a pre-norm nn.Transformer on a copy task, greedy decoding through the whole model in eval mode ------------
def prenorm_copy(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, D, PAD, BOS = 8, 8, 0, 1

    class Copier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.pos = nn.Embedding(V, D, padding_idx=PAD), nn.Parameter(torch.zeros(1, 8, D))
            self.tf = nn.Transformer(D, 2, 1, 1, dim_feedforward=16, dropout=0.0, batch_first=True,
                                     norm_first=True, activation=F.gelu)
            self.out = nn.Linear(D, V)

        def forward(self, src, tgt):
            mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], dtype=torch.float64)
            pad = src == PAD
            h = self.tf(self.emb(src) + self.pos[:, :src.shape[1]], self.emb(tgt) + self.pos[:, :tgt.shape[1]],
                        tgt_mask=mask, src_key_padding_mask=pad, memory_key_padding_mask=pad, tgt_is_causal=True)
            return self.out(h)

    model = Copier()
    init = start(model, init)
    rng = np.random.default_rng(106)
    src = rng.integers(2, V, (3, 5))
    src[0, 3:] = PAD
    src = torch.tensor(src)
    tgt = torch.cat([torch.full((3, 1), BOS), src], 1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(src, tgt[:, :-1]).reshape(-1, V), tgt[:, 1:].reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.inference_mode():
        ys = torch.full((3, 1), BOS)
        for _ in range(4):
            ys = torch.cat([ys, model(src, ys)[:, -1].argmax(-1, keepdim=True)], 1)
        last = model(src, ys).log_softmax(-1)
    return dict(init=init, losses=losses, ys=ys, last=last, grads=grads(model), params=list(model.parameters()))


def test_prenorm_transformer_copy_greedy(torch):
    both(torch, prenorm_copy)


# ---- RealNVP on 4x4 images: checkerboard masks, convolutional affine couplings, Independent(Normal) base --------
def checkerboard_realnvp(torch, init):
    nn, D = torch.nn, torch.distributions

    class Coupling(nn.Module):
        def __init__(self, parity):
            super().__init__()
            grid = torch.arange(4).view(4, 1) + torch.arange(4).view(1, 4)
            self.register_buffer("mask", ((grid + parity) % 2).to(torch.float64).view(1, 1, 4, 4))
            self.net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 3, padding=1))
            self.scale = nn.Parameter(torch.ones(1))

        def forward(self, x):
            log_s, t = self.net(x * self.mask).chunk(2, dim=1)
            log_s = self.scale * torch.tanh(log_s) * (1 - self.mask)
            y = x * self.mask + (1 - self.mask) * (x * log_s.exp() + t)
            return y, log_s.flatten(1).sum(-1)

        def inverse(self, y):
            log_s, t = self.net(y * self.mask).chunk(2, dim=1)
            log_s = self.scale * torch.tanh(log_s) * (1 - self.mask)
            return y * self.mask + (1 - self.mask) * (y - t) * torch.exp(-log_s)

    flows = nn.ModuleList([Coupling(i % 2) for i in range(3)])
    init = start(flows, init)
    base = D.Independent(D.Normal(torch.zeros(1, 4, 4, dtype=torch.float64),
                                  torch.ones(1, 4, 4, dtype=torch.float64)), 3)

    def log_prob(x):
        total = torch.zeros(x.shape[0], dtype=x.dtype)
        for f in flows:
            x, ld = f(x)
            total = total + ld
        return base.log_prob(x) + total, x

    rng = np.random.default_rng(107)
    data = torch.tensor(rng.standard_normal((6, 1, 4, 4)) * 0.5 + 0.2)
    opt = torch.optim.Adam(flows.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        loss = -log_prob(data)[0].mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        z = torch.tensor(rng.standard_normal((2, 1, 4, 4)))
        x = z
        for f in reversed(flows):
            x = f.inverse(x)
        lp, back = log_prob(x)
    return dict(init=init, losses=losses, grads=grads(flows), params=list(flows.parameters()), samples=x, lp=lp,
                back=back, event=(tuple(base.batch_shape), tuple(base.event_shape)),
                entropy=base.entropy(), same=bool(torch.allclose(back, z, atol=1e-10)))


def test_checkerboard_realnvp_images(torch):
    theirs, _ = both(torch, checkerboard_realnvp)
    assert theirs["same"]


# ---- a neural ODE: a hand-written RK4, a Jacobian-norm penalty by jacrev + vmap, the Hessian of an energy ------
def neural_ode(torch, init):
    nn = torch.nn
    func = torch.func

    field = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
    init = start(field, init)
    params = dict(field.named_parameters())

    def f(z):
        return field(z)

    def rk4(z, steps=4, dt=0.25):
        for _ in range(steps):
            k1 = f(z)
            k2 = f(z + dt / 2 * k1)
            k3 = f(z + dt / 2 * k2)
            k4 = f(z + dt * k3)
            z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return z

    def one(p, z):
        return func.functional_call(field, p, (z,))

    rng = np.random.default_rng(108)
    z0 = torch.tensor(rng.standard_normal((5, 2)))
    target = torch.stack([z0[:, 1], -z0[:, 0]], 1)  # a quarter turn
    opt = torch.optim.Adam(field.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        jac = func.vmap(func.jacrev(one, argnums=1), in_dims=(None, 0))(params, z0)  # (5, 2, 2)
        loss = (rk4(z0) - target).pow(2).mean() + 1e-2 * jac.pow(2).sum((1, 2)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)

    def energy(z):
        return 0.5 * (field(z) ** 2).sum() + z.pow(4).sum() / 4

    hess = torch.autograd.functional.hessian(energy, z0[0])
    hess_graph = torch.autograd.functional.hessian(energy, z0[1], create_graph=True)
    hess_graph.trace().backward()
    return dict(init=init, losses=losses, jac=jac, hess=hess, hess_sym=bool(torch.allclose(hess, hess.T)),
                grads=grads(field), params=list(field.parameters()), final=rk4(z0).detach())


def test_neural_ode_rk4_jacobian_penalty_hessian(torch):
    theirs, _ = both(torch, neural_ode)
    assert theirs["hess_sym"]


# ---- an audio classifier: stft magnitude, a triangular filterbank, log1p, Conv1d, AdaptiveAvgPool1d; istft -------
def audio_classifier(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_fft, hop, n_bands = 32, 8, 6

    edges = np.linspace(0, n_fft // 2, n_bands + 2)
    bins = np.arange(n_fft // 2 + 1)[:, None]
    fbank = np.clip(np.minimum((bins - edges[None, :-2]) / (edges[1:-1] - edges[:-2]),
                               (edges[None, 2:] - bins) / (edges[2:] - edges[1:-1])), 0, None)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window", torch.hann_window(n_fft, dtype=torch.float64))
            self.register_buffer("fbank", torch.tensor(fbank))
            self.convs = nn.Sequential(nn.Conv1d(n_bands, 8, 3, padding=1), nn.BatchNorm1d(8), nn.ReLU(),
                                       nn.Conv1d(8, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1))
            self.head = nn.Linear(8, 3)

        def forward(self, wave):
            spec = torch.stft(wave, n_fft, hop_length=hop, window=self.window, center=True, pad_mode="reflect",
                              return_complex=True)
            mel = torch.matmul(spec.abs().transpose(1, 2), self.fbank).transpose(1, 2)  # (batch, bands, frames)
            return self.head(self.convs(torch.log1p(mel)).squeeze(-1)), spec

    model = Net()
    init = start(model, init)
    rng = np.random.default_rng(109)
    t = np.arange(128) / 128
    freqs = np.array([3, 11, 23])
    y = rng.integers(0, 3, 6)
    wave = torch.tensor(np.sin(2 * np.pi * freqs[y][:, None] * t) + 0.1 * rng.standard_normal((6, 128)))
    y = torch.tensor(y)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(3):
        logits, spec = model(wave)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        logits, spec = model(wave)
        back = torch.istft(spec, n_fft, hop_length=hop, window=model.window, center=True, length=128)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), eval=logits,
                spec=spec, back=back, round_trip=bool(torch.allclose(back, wave, atol=1e-10)),
                stats=(model.convs[1].running_mean, model.convs[1].running_var))


def test_stft_filterbank_conv1d_audio_classifier(torch):
    theirs, _ = both(torch, audio_classifier)
    assert theirs["round_trip"]
