"""Scripts of the plumbing users write around a model in each domain (NLP vocabularies, masks and packed LSTMs;
vision normalisation, crops, flips and resizes by hand; time-series windows, teacher forcing and rollouts; tabular
one-hot, class weights, stratified splits and multi-label heads; RL replay buffers and target networks; GAN
two-optimizer steps; seq2seq masks, shifted targets and greedy decoding; parameter utilities; multi-output models
with learned loss weights; curriculum sampling and hard-example mining), written once against a `torch`-like module
and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs
must agree closely (float64 throughout; random draws by numpy where the two libraries' streams differ by design)."""
import collections
import copy

import numpy as np

from twins import both, grads, start


def kind(t):
    """A tensor's dtype by name ('int64'), comparable across the two libraries."""
    return str(t.dtype).split(".")[-1]


# ---- NLP: a Counter vocabulary, <pad>/<unk>, lengths and masks, a packed LSTM, masked pooling, token tagging -------
TEXT = ["the cat sat on the mat", "a dog ran", "the dog sat", "cats and dogs ran on the mat today", "a cat"]


def nlp_plumbing(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rnn = nn.utils.rnn
    counts = collections.Counter(w for line in TEXT[:4] for w in line.split())
    vocab = {"<pad>": 0, "<unk>": 1}
    for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if c >= 2:
            vocab[w] = len(vocab)
    pad, unk = vocab["<pad>"], vocab["<unk>"]
    seqs = [torch.tensor([vocab.get(w, unk) for w in line.split()]) for line in TEXT]
    lengths = torch.tensor([len(s) for s in seqs])
    ids = rnn.pad_sequence(seqs, batch_first=True, padding_value=pad)
    L = ids.shape[1] + 1
    ids = F.pad(ids, (0, 1), value=pad)
    mask = torch.arange(L)[None, :] < lengths[:, None]
    tags = torch.where(mask, ids % 3, torch.full_like(ids, pad - 100))  # -100 marks padding for the tagger
    facts = [vocab, kind(ids), lengths.tolist(), mask.sum().item(), (ids == unk).sum().item(), kind(tags),
             kind(mask), list(ids.shape)]

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(len(vocab), 5, padding_idx=pad)
            self.lstm = nn.LSTM(5, 4, batch_first=True, bidirectional=True)
            self.tag = nn.Linear(8, 3)
            self.cls = nn.Linear(8, 2)

        def forward(self, ids, lengths):
            packed = rnn.pack_padded_sequence(self.emb(ids), lengths, batch_first=True, enforce_sorted=False)
            out, (h, c) = self.lstm(packed)
            out, out_lengths = rnn.pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1])
            m = (torch.arange(ids.shape[1])[None, :] < out_lengths[:, None]).unsqueeze(-1).to(out.dtype)
            pooled = (out * m).sum(1) / m.sum(1).clamp(min=1)
            return self.tag(out), self.cls(pooled), out_lengths, h

    model = Tagger()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    tag_loss = nn.CrossEntropyLoss(ignore_index=-100)
    labels = torch.tensor([0, 1, 1, 0, 1])
    losses = []
    for _ in range(3):
        tag_logits, cls_logits, out_lengths, h = model(ids, lengths)
        loss = tag_loss(tag_logits.reshape(-1, 3), tags.reshape(-1)) + F.cross_entropy(cls_logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # ignore_index on the pad id itself, as a token-level loss over ids
    lm = nn.CrossEntropyLoss(ignore_index=pad, reduction="sum")(tag_logits.reshape(-1, 3), (ids % 3).reshape(-1))
    preds = tag_logits.argmax(-1).masked_fill(~mask, pad)
    acc = ((preds == tags) & mask).sum() / mask.sum()
    return dict(init=init, facts=facts, losses=losses, lm=lm, preds=preds, acc=acc, out_lengths=out_lengths,
                h=h, grads=grads(model), params=list(model.parameters()))


def test_nlp_vocab_masks_packed_lstm_tagging(torch):
    both(torch, nlp_plumbing)


# ---- vision by hand: uint8 HWC -> CHW floats, per-channel normalisation, crops, flips, interpolate, a make-grid ---
def vision_plumbing(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(231)
    raw = [torch.tensor(rng.integers(0, 256, (7, 6, 3)).astype(np.uint8)) for _ in range(4)]
    mean = torch.tensor([0.485, 0.456, 0.406], dtype=torch.float64).view(3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], dtype=torch.float64).reshape(3, 1, 1)
    offsets, flips = [(0, 0), (1, 2), (2, 1), (1, 0)], [False, True, True, False]
    images = []
    for img, (top, left), flip in zip(raw, offsets, flips):
        x = img.permute(2, 0, 1).float().div(255).double()
        x = (x - mean) / std
        x = x[:, top:top + 5, left:left + 4]
        if flip:
            x = torch.flip(x, dims=[-1])
        images.append(x)
    batch = torch.stack(images)
    up = F.interpolate(batch, size=(8, 6), mode="bilinear", align_corners=False)
    near = F.interpolate(batch, size=(3, 7), mode="nearest")
    scaled = F.interpolate(batch, scale_factor=0.5, mode="bilinear", align_corners=False)
    thumbs = F.interpolate(torch.stack(raw).permute(0, 3, 1, 2), size=(4, 3), mode="nearest")
    facts = [kind(raw[0]), kind(raw[0].float().div(255)), list(batch.shape), batch.is_contiguous(),
             raw[0].permute(2, 0, 1).is_contiguous(), list(up.shape), list(near.shape), list(scaled.shape),
             kind(thumbs)]

    def make_grid(imgs, nrow, padding=1, value=0.0):
        padded = [F.pad(im, (padding, padding, padding, padding), value=value) for im in imgs]
        rows = [torch.cat(padded[i:i + nrow], dim=2) for i in range(0, len(padded), nrow)]
        return torch.cat(rows, dim=1)

    grid = make_grid(list(batch), nrow=2)
    shown = (grid * std + mean).clamp(0, 1).mul(255).round().to(torch.uint8).permute(1, 2, 0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            x = F.interpolate(x, size=(6, 6), mode="bilinear", align_corners=False)
            x = F.relu(self.conv(x))
            x = F.interpolate(x, scale_factor=2, mode="nearest")
            return self.fc(x.mean(dim=(2, 3)))

    model = Net()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    y = torch.tensor([0, 1, 1, 0])
    losses = []
    for step in range(3):
        x = batch if step % 2 == 0 else batch.flip(-1)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, facts=facts, batch=batch, up=up, near=near, scaled=scaled, grid=grid, shown=shown, thumbs=thumbs,
                losses=losses, grads=grads(model), params=list(model.parameters()))


def test_vision_normalise_crop_flip_resize_grid(torch):
    both(torch, vision_plumbing)


# ---- time series: standardisation, unfold windows, a GRUCell with teacher forcing, a no_grad rollout, inverse ------
def series_plumbing(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(232)
    t = np.arange(40)
    raw = torch.tensor(np.stack([np.sin(t / 3.0) * 5 + 10, np.cos(t / 5.0) * 2 - 1], 1) + rng.normal(0, 0.1, (40, 2)))
    train, test = raw[:30], raw[30:]
    mu, sigma = train.mean(dim=0, keepdim=True), train.std(dim=0, keepdim=True)
    z = (train - mu) / sigma
    windows = z.unfold(0, 8, 3)  # (n, 2, 8)
    windows = windows.permute(0, 2, 1).contiguous()  # (n, 8, 2)
    inputs, targets = windows[:, :-1], windows[:, 1:]
    facts = [list(mu.shape), list(windows.shape), z.mean(0).abs().max().item() < 1e-12, windows.stride(),
             list(z.unfold(0, 5, 5).shape)]

    class Forecaster(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(2, 6)
            self.out = nn.Linear(6, 2)

        def forward(self, x, truth_mask):
            h = x.new_zeros(x.shape[0], 6)
            prev, outs = x[:, 0], []
            for i in range(x.shape[1]):
                step_in = x[:, i] if truth_mask[i] else prev
                h = self.cell(step_in, h)
                prev = self.out(h)
                outs.append(prev)
            return torch.stack(outs, dim=1), h

    model = Forecaster()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    masks = [[True] * 7, [True, True, False, True, False, True, False], [True] + [False] * 6]
    losses = []
    for truth_mask in masks:
        pred, h = model(inputs, truth_mask)
        loss = F.mse_loss(pred, targets)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        history = z[-8:].unsqueeze(0)
        h = torch.zeros(1, 6, dtype=z.dtype)
        for i in range(history.shape[1]):
            h = model.cell(history[:, i], h)
        last = model.out(h)
        for _ in range(9):
            history = torch.cat([history, last.unsqueeze(1)], dim=1)
            h = model.cell(last, h)
            last = model.out(h)
        future = history[0, 8:]
    forecast = future * sigma + mu
    mae = (forecast - test[:9]).abs().mean(dim=0)
    return dict(init=init, facts=facts, windows=windows, losses=losses, forecast=forecast, mae=mae,
                requires=[future.requires_grad, forecast.grad_fn is None], grads=grads(model),
                params=list(model.parameters()))


def test_time_series_windows_teacher_forcing_rollout(torch):
    both(torch, series_plumbing)


# ---- tabular: one-hot features, bincount class weights, stratified splits, a multi-label head with pos_weight -----
def tabular_plumbing(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(233)
    num = torch.tensor(rng.standard_normal((24, 3)))
    cat = torch.tensor(rng.integers(0, 4, 24))
    y = torch.tensor(np.r_[np.zeros(12), np.ones(8), np.full(4, 2)].astype(np.int64)[rng.permutation(24)])
    tags = torch.tensor((rng.random((24, 3)) < [0.5, 0.2, 0.1]).astype(np.float64))
    x = torch.cat([num, F.one_hot(cat, num_classes=5).float().double()], dim=1)
    counts = torch.bincount(y, minlength=3)
    weight = (counts.sum() / (len(counts) * counts.clamp(min=1))).double()
    train_idx, val_idx = [], []
    for c in range(3):
        members = torch.where(y == c)[0]
        cut = int(0.75 * len(members))
        train_idx.append(members[:cut])
        val_idx.append(torch.nonzero(y == c).squeeze(1)[cut:])
    train_idx, val_idx = torch.cat(train_idx), torch.cat(val_idx)
    train_idx = train_idx[torch.argsort(train_idx)]
    pos = tags[train_idx].sum(0)
    pos_weight = (len(train_idx) - pos) / pos.clamp(min=1)
    facts = [kind(F.one_hot(cat)), list(F.one_hot(cat).shape), counts.tolist(), kind(counts), kind(weight),
             train_idx.tolist(), val_idx.tolist(), torch.bincount(y[val_idx], minlength=3).tolist(),
             kind(torch.nonzero(y == 1)), list(torch.nonzero(y == 1).shape)]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(8, 10), nn.ReLU())
            self.cls = nn.Linear(10, 3)
            self.tags = nn.Linear(10, 3)

        def forward(self, x):
            h = self.body(x)
            return self.cls(h), self.tags(h)

    model = Net()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    ce, bce = nn.CrossEntropyLoss(weight=weight), nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    losses = []
    for _ in range(4):
        logits, tag_logits = model(x[train_idx])
        loss = ce(logits, y[train_idx]) + bce(tag_logits, tags[train_idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        logits, tag_logits = model(x[val_idx])
    pred = logits.argmax(1)
    hits = torch.sigmoid(tag_logits) > 0.5
    truth = tags[val_idx].bool()
    tp = (hits & truth).sum(0).double()
    precision = tp / hits.sum(0).clamp(min=1)
    recall = tp / truth.sum(0).clamp(min=1)
    f1 = torch.where(precision + recall > 0, 2 * precision * recall / (precision + recall), torch.zeros_like(tp))
    per_class = [((pred == c) & (y[val_idx] == c)).sum().item() / max((y[val_idx] == c).sum().item(), 1)
                 for c in range(3)]
    return dict(init=init, facts=facts, weight=weight, pos_weight=pos_weight, losses=losses, hits=hits,
                precision=precision, recall=recall, f1=f1, per_class=per_class, grads=grads(model),
                params=list(model.parameters()))


def test_tabular_one_hot_class_weights_stratified_multilabel(torch):
    both(torch, tabular_plumbing)


# ---- RL: a deque replay buffer, a deepcopy target network soft-updated, gather Q(s, a), done masks, SmoothL1 ------
def rl_plumbing(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(234)
    q = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    init = start(q, init)
    target = copy.deepcopy(q)
    target.requires_grad_(False)
    opt = torch.optim.Adam(q.parameters(), lr=0.01)
    buffer = collections.deque(maxlen=12)
    state = torch.tensor(rng.standard_normal(4))
    eps, tau, gamma = 0.3, 0.1, 0.9
    uniforms, random_actions = rng.random(40), rng.integers(0, 3, 40)
    actions_taken, losses = [], []
    for t in range(20):
        if uniforms[t] < eps:
            action = int(random_actions[t])
        else:
            with torch.no_grad():
                action = q(state.unsqueeze(0)).argmax(dim=1).item()
        actions_taken.append(action)
        next_state = torch.tensor(rng.standard_normal(4))
        reward, done = float(rng.normal()), bool(rng.random() < 0.2)
        buffer.append((state, torch.tensor(action), torch.tensor(reward), next_state, torch.tensor(done)))
        state = next_state
        if len(buffer) < 6:
            continue
        picks = rng.integers(0, len(buffer), 5)
        s, a, r, s2, d = (torch.stack(items) for items in zip(*[buffer[i] for i in picks]))
        q_sa = q(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            best_under_no_grad = target(s2).max(1)[0]
        best_next = target(s2).max(1)[0].detach()
        assert torch.equal(best_next, best_under_no_grad) and not best_under_no_grad.requires_grad
        goal = r + gamma * best_next * (1 - d.double())
        loss = nn.SmoothL1Loss()(q_sa, goal)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        with torch.no_grad():
            for tp, p in zip(target.parameters(), q.parameters()):
                tp.data.mul_(1 - tau).add_(tau * p.data)
    lerped = copy.deepcopy(target)
    foreached = copy.deepcopy(target)
    with torch.no_grad():
        for tp, p in zip(lerped.parameters(), q.parameters()):
            tp.lerp_(p, tau)
        tps, ps = list(foreached.parameters()), list(q.parameters())
        torch._foreach_mul_(tps, 1 - tau)
        torch._foreach_add_(tps, ps, alpha=tau)
    facts = [len(buffer), kind(torch.stack([b[4] for b in buffer])), kind(torch.stack([b[1] for b in buffer])),
             [p.requires_grad for p in target.parameters()], all(p.grad is None for p in target.parameters())]
    return dict(init=init, facts=facts, actions=actions_taken, losses=losses, target=list(target.parameters()),
                lerped=list(lerped.parameters()), foreached=list(foreached.parameters()), grads=grads(q),
                params=list(q.parameters()))


def test_rl_replay_buffer_target_network_soft_update(torch):
    both(torch, rl_plumbing)


# ---- GAN: two optimizers, fake.detach() for D, D frozen for G's step, one-sided smoothing, fixed monitoring noise ---
def gan_plumbing(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(235)

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.G = nn.Sequential(nn.Linear(3, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
            self.D = nn.Sequential(nn.Linear(2, 6), nn.LeakyReLU(0.2), nn.Dropout(0.3), nn.Linear(6, 1))

    pair = Pair()
    init = start(pair, init)
    G, D = pair.G, pair.D
    opt_g = torch.optim.Adam(G.parameters(), lr=0.01, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=0.01, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    fixed_noise = torch.tensor(rng.standard_normal((4, 3)))
    D.eval()  # no dropout draws: the two libraries' streams differ
    d_losses, g_losses, snapshots, frozen_grads = [], [], [], []
    for _ in range(3):
        real = torch.tensor(rng.standard_normal((6, 2)) * 0.5 + 2)
        noise = torch.tensor(rng.standard_normal((6, 3)))
        fake = G(noise)
        d_real, d_fake = D(real), D(fake.detach())
        real_labels = torch.full_like(d_real, 0.9)
        fake_labels = torch.zeros_like(d_fake)
        d_loss = criterion(d_real, real_labels) + criterion(d_fake, fake_labels)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        for p in D.parameters():
            p.requires_grad_(False)
        g_loss = criterion(D(fake), torch.ones_like(d_fake))
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        frozen_grads.append([p.grad is None for p in G.parameters()] + [p.requires_grad for p in D.parameters()])
        for p in D.parameters():
            p.requires_grad_(True)
        d_losses.append(d_loss.item())
        g_losses.append(g_loss.item())
        G.eval()
        with torch.no_grad():
            snapshots.append(G(fixed_noise).clone())
        G.train()
    facts = [G.training, D.training, [m.training for m in G], fake.requires_grad, fake.detach().requires_grad,
             snapshots[0].requires_grad, kind(real_labels)]
    return dict(init=init, facts=facts, d_losses=d_losses, g_losses=g_losses, snapshots=snapshots,
                frozen=frozen_grads, buffers=list(G[1].buffers()), g_grads=grads(G), d_grads=grads(D),
                params=list(pair.parameters()))


def test_gan_two_optimizers_detach_freeze_smoothing(torch):
    both(torch, gan_plumbing)


# ---- seq2seq: padding and causal masks, shifted targets, label smoothing, greedy decoding with an EOS stop --------
def seq2seq_plumbing(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(236)
    PAD, BOS, EOS, V, L = 0, 1, 2, 9, 6
    src = torch.tensor([[5, 6, 7, 8, 0], [3, 4, 0, 0, 0], [7, 3, 5, 0, 0]])
    tgt = torch.tensor([[1, 8, 7, 6, 2, 0], [1, 4, 3, 2, 0, 0], [1, 5, 3, 7, 2, 0]])
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    n = tgt_in.shape[1]
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    square = nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64)
    facts = [kind(causal), causal.sum().item(), kind(square), torch.isinf(square).sum().item(),
             bool(torch.equal(torch.isinf(square), causal)), square[0, 1].item(), square[1, 0].item()]

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 8, padding_idx=PAD)
            self.pos = nn.Parameter(torch.zeros(L, 8))
            self.tf = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                     dim_feedforward=16, dropout=0.0, batch_first=True)
            self.out = nn.Linear(8, V)

        def embed(self, ids):
            return self.emb(ids) + self.pos[:ids.shape[1]]

        def forward(self, src, tgt_in, tgt_mask):
            h = self.tf(self.embed(src), self.embed(tgt_in), tgt_mask=tgt_mask,
                        src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt_in == PAD,
                        memory_key_padding_mask=src == PAD)
            return self.out(h)

    model = Seq2Seq()
    init = start(model, init)
    with torch.no_grad():
        model.pos.copy_(torch.tensor(rng.standard_normal((L, 8)) * 0.1))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
    losses = []
    for step in range(3):
        mask = causal if step % 2 == 0 else square
        logits = model(src, tgt_in, mask)
        loss = criterion(logits.reshape(-1, V), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        ys = torch.full((src.shape[0], 1), BOS, dtype=torch.long)
        finished = torch.zeros(src.shape[0], dtype=torch.bool)
        steps = 0
        while ys.shape[1] < L:
            m = nn.Transformer.generate_square_subsequent_mask(ys.shape[1], dtype=torch.float64)
            nxt = model(src, ys, m)[:, -1].argmax(-1)
            nxt = torch.where(finished, torch.full_like(nxt, PAD), nxt)
            ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
            finished |= nxt == EOS
            steps += 1
            if torch.all(finished) or not finished.any() and steps > 3:
                break
    return dict(init=init, facts=facts, losses=losses, decoded=ys, finished=finished, steps=steps,
                grads=grads(model), params=list(model.parameters()))


def test_seq2seq_masks_shifted_targets_greedy_eos(torch):
    both(torch, seq2seq_plumbing)


# ---- parameter utilities: a flat vector round trip, a flat-gradient norm, decay by name, renamed state_dict keys ---
def parameter_utilities(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(237)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 6)
            self.norm = nn.LayerNorm(6)
            self.fc2 = nn.Linear(6, 2, bias=False)
            self.emb = nn.Embedding(5, 4)

        def forward(self, ids, x):
            return self.fc2(F.gelu(self.norm(self.fc1(x + self.emb(ids)))))

    model = Net()
    init = start(model, init)
    model.emb.weight.requires_grad_(False)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    vec = nn.utils.parameters_to_vector(model.parameters())
    nn.utils.vector_to_parameters(vec * 0.5, model.parameters())
    halved = nn.utils.parameters_to_vector(model.parameters())
    nn.utils.vector_to_parameters(vec, model.parameters())
    restored = nn.utils.parameters_to_vector(model.parameters())
    facts = [trainable, total, list(vec.shape), vec.requires_grad, vec.grad_fn is None, kind(vec),
             bool(torch.equal(restored, vec))]

    decay = [p for n, p in model.named_parameters() if p.requires_grad and not n.endswith("bias") and "norm" not in n]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and (n.endswith("bias") or "norm" in n)]
    names = [[n for n, p in model.named_parameters() if any(p is q for q in group)] for group in (decay, no_decay)]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=0.1)
    ids, x = torch.tensor(rng.integers(0, 5, 7)), torch.tensor(rng.standard_normal((7, 4)))
    y = torch.tensor(rng.standard_normal((7, 2)))
    losses, norms = [], []
    for _ in range(3):
        loss = F.mse_loss(model(ids, x), y)
        opt.zero_grad()
        loss.backward()
        flat = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
        norms.append(flat.norm())
        norms.append(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()
                                                           if p.grad is not None])))
        with torch.no_grad():  # decoupled decay by hand on the decay group, besides the optimizer's own
            for p in decay:
                p.mul_(1 - 0.01)
        opt.step()
        losses.append(loss.item())

    wrapped = {"module." + k: v for k, v in model.state_dict().items()}
    wrapped["module.extra.weight"] = torch.zeros(2)
    stripped = {k.removeprefix("module."): v for k, v in wrapped.items() if k != "module.fc2.weight"}
    fresh = Net().double()
    result = fresh.load_state_dict(stripped, strict=False)
    facts += [names, list(result.missing_keys), list(result.unexpected_keys), type(result).__name__,
              bool(torch.equal(fresh.fc1.weight, model.fc1.weight))]
    return dict(init=init, facts=facts, vec=vec, halved=halved, losses=losses, norms=norms, grads=grads(model),
                params=list(model.parameters()))


def test_parameter_vector_flat_grad_norm_decay_filter_key_rename(torch):
    both(torch, parameter_utilities)


# ---- multi-output models: a dict and a tuple out, weighted sums, stacked task losses, learned log-variances ------
def multi_output(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(238)

    class MultiTask(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Sequential(nn.Linear(5, 8), nn.Tanh())
            self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "reg": nn.Linear(8, 2)})
            self.aux = nn.Linear(8, 1)
            self.log_vars = nn.Parameter(torch.zeros(3))

        def forward(self, x):
            h = self.trunk(x)
            return {name: head(h) for name, head in self.heads.items()}, (self.aux(h).squeeze(-1), h)

    model = MultiTask()
    init = start(model, init)
    with torch.no_grad():
        model.log_vars.copy_(torch.tensor([0.3, -0.2, 0.1]))
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    x = torch.tensor(rng.standard_normal((8, 5)))
    y_cls, y_reg = torch.tensor(rng.integers(0, 3, 8)), torch.tensor(rng.standard_normal((8, 2)))
    y_aux = torch.tensor((rng.random(8) < 0.5).astype(np.float64))
    weights = {"cls": 1.0, "reg": 0.5, "aux": 0.25}
    history = []
    for step in range(4):
        outs, (aux, h) = model(x)
        task = {"cls": F.cross_entropy(outs["cls"], y_cls), "reg": F.mse_loss(outs["reg"], y_reg),
                "aux": F.binary_cross_entropy_with_logits(aux, y_aux)}
        stacked = torch.stack(list(task.values()))
        if step < 2:
            loss = sum(weights[k] * v for k, v in task.items()) + 0.01 * h.pow(2).mean() + 0 * stacked.mean()
        else:
            loss = (torch.exp(-model.log_vars) * stacked + model.log_vars).sum() + stacked.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append({k: v.item() for k, v in task.items()} | {"total": loss.item()})
    facts = [sorted(outs), type(outs).__name__, len(model(x)[1]), kind(stacked), list(stacked.shape),
             type(stacked.grad_fn).__name__]
    return dict(init=init, facts=facts, history=history, log_vars=model.log_vars, grads=grads(model),
                params=list(model.parameters()))


def test_multi_output_dict_tuple_weighted_uncertainty_losses(torch):
    both(torch, multi_output)


# ---- curriculum: per-sample losses, hard-example mining by topk, a loss-weighted sampler, detached softmax weights -
def curriculum_plumbing(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(239)
    x, y = torch.tensor(rng.standard_normal((16, 4))), torch.tensor(rng.integers(0, 3, 16))
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
    criterion = nn.CrossEntropyLoss(reduction="none")
    losses, mined, sampled, facts = [], [], [], []
    for step in range(4):
        per_sample = criterion(model(x), y)
        if step == 0:
            facts += [list(per_sample.shape), type(per_sample.grad_fn).__name__, per_sample.requires_grad]
        hard = torch.topk(per_sample.detach(), k=5, largest=True, sorted=True)
        mined.append((hard.values, hard.indices))
        probs = per_sample.detach() / per_sample.detach().sum()
        # torch.multinomial(probs, 6, replacement=True) draws from each library's own stream: numpy's draw instead
        idx = torch.tensor(rng.choice(16, 6, p=probs.numpy() / probs.numpy().sum()))
        sampled.append(idx)
        w = torch.softmax(per_sample.detach() / 0.5, dim=0)
        if step % 2 == 0:
            loss = per_sample[hard.indices].mean() + (w * per_sample).sum()
        else:
            loss = criterion(model(x[idx]), y[idx]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    easy_first = torch.argsort(per_sample.detach())
    facts += [kind(hard.indices), kind(w), w.requires_grad, kind(easy_first)]
    return dict(init=init, facts=facts, losses=losses, mined=mined, sampled=sampled, order=easy_first,
                grads=grads(model), params=list(model.parameters()))


def test_curriculum_hard_mining_weighted_sampling(torch):
    both(torch, curriculum_plumbing)
