"""Deep-learning scripts of yet more kinds (WGAN-GP, normalizing flows, LoRA, distillation, CLIP, captioning,
attention seq2seq, mixture density networks, CTC, quantization-aware training), written once against a
`torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses,
gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import math
import random

import numpy as np

from twins import both, grads, start


# ---- WGAN-GP: a gradient penalty on interpolated samples, n_critic critic steps per generator step ----------
def wgan_gp(torch, init):
    nn = torch.nn

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(
                nn.Conv2d(1, 4, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                nn.Conv2d(4, 6, 4, stride=2, padding=1, bias=False), nn.InstanceNorm2d(6, affine=True), nn.LeakyReLU(0.2),
                nn.Conv2d(6, 6, 3, stride=1, padding=1, bias=False), nn.LayerNorm([6, 2, 2]), nn.LeakyReLU(0.2),
                nn.Flatten(), nn.Linear(6 * 2 * 2, 1))

        def forward(self, x):
            return self.net(x).view(-1)

    class Generator(nn.Module):
        def __init__(self, nz=3):
            super().__init__()
            self.fc = nn.Linear(nz, 6 * 2 * 2)
            self.net = nn.Sequential(
                nn.ConvTranspose2d(6, 4, 4, stride=2, padding=1), nn.BatchNorm2d(4), nn.ReLU(True),
                nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1), nn.Tanh())

        def forward(self, z):
            return self.net(self.fc(z).view(-1, 6, 2, 2))

    critic, gen = Critic(), Generator()
    model = nn.ModuleDict({"critic": critic, "gen": gen})
    init = start(model, init)
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.0, 0.9))
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3, betas=(0.0, 0.9))
    rng = np.random.default_rng(40)
    lambda_gp, n_critic, b = 10.0, 2, 3

    def gradient_penalty(real, fake):
        alpha = torch.tensor(rng.uniform(size=(b, 1, 1, 1)))
        interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        d = critic(interp)
        g, = torch.autograd.grad(outputs=d, inputs=interp, grad_outputs=torch.ones_like(d),
                                 create_graph=True, retain_graph=True)
        return ((g.view(b, -1).norm(2, dim=1) - 1) ** 2).mean()

    losses = []
    for _ in range(2):
        for _ in range(n_critic):
            real = torch.tensor(np.tanh(rng.standard_normal((b, 1, 8, 8))))
            fake = gen(torch.tensor(rng.standard_normal((b, 3)))).detach()
            gp = gradient_penalty(real, fake)
            loss_c = critic(fake).mean() - critic(real).mean() + lambda_gp * gp
            opt_c.zero_grad()
            loss_c.backward()
            opt_c.step()
            losses.append([loss_c.item(), gp])
        for p in critic.parameters():
            p.requires_grad_(False)
        loss_g = -critic(gen(torch.tensor(rng.standard_normal((b, 3))))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        for p in critic.parameters():
            p.requires_grad_(True)
        losses.append(loss_g)
    return dict(init=init, losses=losses, state=list(model.state_dict().values()), grads=grads(model))


def test_wgan_gp(torch):
    both(torch, wgan_gp)


# ---- RealNVP: affine couplings with masks, the log-determinant, a Normal prior, sampling by the inverse -----
def realnvp(torch, init):
    nn = torch.nn
    D = torch.distributions

    class Coupling(nn.Module):
        def __init__(self, mask):
            super().__init__()
            self.register_buffer("mask", mask)
            self.s = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2), nn.Tanh())
            self.t = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))

        def forward(self, x):  # x -> z, log|det dz/dx|
            xm = x * self.mask
            s, t = self.s(xm) * (1 - self.mask), self.t(xm) * (1 - self.mask)
            return xm + (1 - self.mask) * (x * torch.exp(s) + t), s.sum(dim=1)

        def inverse(self, z):
            zm = z * self.mask
            s, t = self.s(zm) * (1 - self.mask), self.t(zm) * (1 - self.mask)
            return zm + (1 - self.mask) * (z - t) * torch.exp(-s)

    class Flow(nn.Module):
        def __init__(self):
            super().__init__()
            masks = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])] * 2
            self.layers = nn.ModuleList([Coupling(m) for m in masks])

        def forward(self, x):
            log_det = torch.zeros(x.shape[0], dtype=x.dtype)
            for layer in self.layers:
                x, ld = layer(x)
                log_det = log_det + ld
            return x, log_det

        def inverse(self, z):
            for layer in reversed(self.layers):
                z = layer.inverse(z)
            return z

    flow = Flow()
    init = start(flow, init)
    prior = D.MultivariateNormal(torch.zeros(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64))
    normal = D.Normal(torch.tensor(0.0, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64))
    opt = torch.optim.Adam(flow.parameters(), lr=1e-2)
    rng = np.random.default_rng(41)
    losses = []
    for step in range(3):
        x = torch.tensor(rng.standard_normal((16, 2)) * [1.0, 0.3] + [[0.5, -1.0]])
        z, log_det = flow(x)
        log_px = (prior.log_prob(z) if step % 2 else normal.log_prob(z).sum(dim=1)) + log_det
        loss = -log_px.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        samples = flow.inverse(torch.tensor(rng.standard_normal((5, 2))))
        round_trip = flow.inverse(flow(samples)[0])
        density = prior.log_prob(flow(samples)[0]) + flow(samples)[1]
    return dict(init=init, losses=losses, samples=samples, round_trip=round_trip, density=density,
                params=list(flow.parameters()), grads=grads(flow))


def test_realnvp_flow(torch):
    _, ours = both(torch, realnvp)
    np.testing.assert_allclose(ours["round_trip"].numpy(), ours["samples"].numpy(), atol=1e-12)


# ---- LoRA: a frozen base, low-rank adapters, an optimizer over the trainable ones, merging, adapter state ---
def lora(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class LoRALinear(nn.Module):
        def __init__(self, base, r=2, alpha=4):
            super().__init__()
            self.base = base
            self.lora_A = nn.Parameter(torch.randn(r, base.in_features) * 0.1)
            self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
            self.scaling = alpha / r

        def forward(self, x):
            return self.base(x) + (x @ self.lora_A.T @ self.lora_B.T) * self.scaling

        @torch.no_grad()
        def merge(self):
            self.base.weight += (self.lora_B @ self.lora_A) * self.scaling
            return self.base

    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    for p in model.parameters():
        p.requires_grad_(False)
    model[0] = LoRALinear(model[0])
    model[2] = LoRALinear(model[2])
    init = start(model, init)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=0.05, weight_decay=0.01)
    rng = np.random.default_rng(42)
    losses = []
    for _ in range(3):
        x, y = torch.tensor(rng.standard_normal((5, 6))), torch.tensor(rng.integers(0, 3, 5))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss)
    adapters = {k: v.clone() for k, v in model.state_dict().items() if "lora_" in k}
    x = torch.tensor(rng.standard_normal((4, 6)))
    with torch.no_grad():
        before = model(x)
        merged = nn.Sequential(model[0].merge(), nn.ReLU(), model[2].merge())
        after = merged(x)
    return dict(init=init, trainable=trainable, losses=losses, adapters=adapters, keys=list(adapters),
                before=before, after=after, base_grads=[p.grad for p in merged.parameters()],
                flags=[p.requires_grad for p in model.parameters()], grads=grads(model))


def test_lora_fine_tuning(torch):
    _, ours = both(torch, lora)
    np.testing.assert_allclose(ours["after"].numpy(), ours["before"].numpy(), rtol=1e-12, atol=1e-12)


# ---- knowledge distillation: KL divergence at a temperature, the teacher in eval mode under no_grad ----------
def distillation(torch, init):
    nn, F = torch.nn, torch.nn.functional
    teacher = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 4))
    student = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 4))
    model = nn.ModuleDict({"teacher": teacher, "student": student})
    init = start(model, init)
    teacher.eval()
    kl = nn.KLDivLoss(reduction="batchmean")
    kl_log = nn.KLDivLoss(reduction="batchmean", log_target=True)
    opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    rng = np.random.default_rng(43)
    T, alpha = 3.0, 0.7
    losses = []
    for step in range(4):
        x, y = torch.tensor(rng.standard_normal((6, 6))), torch.tensor(rng.integers(0, 4, 6))
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        log_p = F.log_softmax(s_logits / T, dim=1)
        if step % 2:
            soft = kl_log(log_p, F.log_softmax(t_logits / T, dim=1))
        else:
            soft = kl(log_p, F.softmax(t_logits / T, dim=1))
        by_hand = F.kl_div(log_p, F.softmax(t_logits / T, dim=-1), reduction="none").sum() / x.shape[0]
        loss = alpha * soft * T * T + (1 - alpha) * F.cross_entropy(s_logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append([loss, soft.item(), by_hand, t_logits.requires_grad])
    return dict(init=init, losses=losses, training=[teacher.training, student.training],
                teacher_grads=[p.grad for p in teacher.parameters()], state=list(model.state_dict().values()))


def test_knowledge_distillation(torch):
    both(torch, distillation)


# ---- CLIP: normalized embeddings, a learned temperature clamped under no_grad, symmetric cross entropy ---------
def clip(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class CLIP(nn.Module):
        def __init__(self, vocab=10, dim=6):
            super().__init__()
            self.visual = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, dim))
            self.token_embedding = nn.Embedding(vocab, 8)
            self.text_projection = nn.Parameter(torch.empty(8, dim))
            nn.init.normal_(self.text_projection, std=8 ** -0.5)
            self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))

        def encode_text(self, tokens):
            return self.token_embedding(tokens).mean(dim=1) @ self.text_projection

        def forward(self, image, text):
            image_features = F.normalize(self.visual(image), dim=-1)
            text_features = self.encode_text(text)
            text_features = text_features / text_features.norm(dim=1, keepdim=True)
            logit_scale = self.logit_scale.exp()
            logits_per_image = logit_scale * image_features @ text_features.t()
            return logits_per_image, logits_per_image.t()

    model = CLIP()
    init = start(model, init)
    others = [p for n, p in model.named_parameters() if n != "logit_scale"]
    opt = torch.optim.Adam([{"params": others}, {"params": [model.logit_scale], "lr": 1.0}], lr=0.01)
    rng = np.random.default_rng(44)
    n, losses, scales = 5, [], []
    for _ in range(4):
        image, text = torch.tensor(rng.standard_normal((n, 8))), torch.tensor(rng.integers(0, 10, (n, 3)))
        logits_per_image, logits_per_text = model(image, text)
        labels = torch.arange(n, dtype=torch.long)
        loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        losses.append(loss)
        scales.append(model.logit_scale.item())
    with torch.no_grad():
        image, text = torch.tensor(rng.standard_normal((3, 8))), torch.tensor(rng.integers(0, 10, (4, 3)))
        probs = model(image, text)[0].softmax(dim=-1)
    return dict(init=init, losses=losses, scales=scales, probs=probs, top=probs.argmax(dim=-1),
                params=list(model.parameters()), grads=grads(model))


def test_clip_contrastive(torch):
    _, ours = both(torch, clip)
    assert ours["scales"][-1] in (0.0, math.log(100))  # a bound of the clamp was reached


# ---- image captioning: a CNN encoder, an LSTM decoder with teacher forcing on packed captions, greedy decoding --
def captioning(torch, init):
    nn, F = torch.nn, torch.nn.functional
    pack, unpack = nn.utils.rnn.pack_padded_sequence, nn.utils.rnn.pad_packed_sequence
    PAD, BOS, EOS, V = 0, 1, 2, 9

    class Captioner(nn.Module):
        def __init__(self, embed=8, hidden=10):
            super().__init__()
            self.cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                                     nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                     nn.Flatten(), nn.Linear(6, embed))
            self.embed = nn.Embedding(V, embed, padding_idx=PAD)
            self.lstm = nn.LSTM(embed, hidden, batch_first=True)
            self.out = nn.Linear(hidden, V)

        def forward(self, images, captions, lengths):
            inputs = torch.cat((self.cnn(images).unsqueeze(1), self.embed(captions)), dim=1)
            packed = pack(inputs, lengths, batch_first=True, enforce_sorted=False)
            hiddens, _ = self.lstm(packed)
            return self.out(hiddens.data), unpack(hiddens, batch_first=True, total_length=inputs.shape[1])

        def sample(self, images, max_len=5):
            inputs, states, words = self.cnn(images).unsqueeze(1), None, []
            for _ in range(max_len):
                h, states = self.lstm(inputs, states)
                word = self.out(h.squeeze(1)).argmax(dim=1)
                words.append(word)
                inputs = self.embed(word).unsqueeze(1)
            return torch.stack(words, dim=1)

    model = Captioner()
    init = start(model, init)
    opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
    rng = np.random.default_rng(45)
    losses = []
    for _ in range(3):
        images = torch.tensor(rng.standard_normal((3, 1, 6, 6)))
        lengths = [4, 2, 3]  # caption tokens, EOS included; the image feature comes first
        caps = np.zeros((3, 4), dtype=np.int64)
        for i, n in enumerate(lengths):
            caps[i, :n - 1] = rng.integers(3, V, n - 1)
            caps[i, n - 1] = EOS
        caps = torch.tensor(caps)
        inputs = torch.cat((torch.full((3, 1), BOS, dtype=torch.long), caps[:, :-1]), dim=1)  # shifted right
        logits, (padded, out_lengths) = model(images, inputs, torch.tensor(lengths))
        targets = pack(caps, torch.tensor(lengths) + 0, batch_first=True, enforce_sorted=False).data
        loss = F.cross_entropy(logits, targets)
        padded_loss = F.cross_entropy(model.out(padded[:, :4]).reshape(-1, V), caps.reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        (loss + 0.5 * padded_loss).backward()
        opt.step()
        losses.append([loss, padded_loss, out_lengths])
    model.eval()
    with torch.no_grad():
        words = model.sample(torch.tensor(rng.standard_normal((2, 1, 6, 6))))
    return dict(init=init, losses=losses, words=words, state=list(model.state_dict().values()), grads=grads(model))


def test_image_captioning(torch):
    both(torch, captioning)


# ---- seq2seq GRU with Bahdanau attention, a padding mask and seeded teacher forcing ---------------------------
def bahdanau(torch, init):
    nn, F = torch.nn, torch.nn.functional
    PAD, BOS, V, E, H = 0, 1, 10, 6, 8

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(V, E, padding_idx=PAD)
            self.rnn = nn.GRU(E, H, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * H, H)

        def forward(self, src):
            outputs, hidden = self.rnn(self.embedding(src))
            return outputs, torch.tanh(self.fc(torch.cat((hidden[-2], hidden[-1]), dim=1)))

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.Linear(3 * H, H)
            self.v = nn.Linear(H, 1, bias=False)

        def forward(self, hidden, enc_out, mask):
            hidden = hidden.unsqueeze(1).repeat(1, enc_out.shape[1], 1)
            energy = torch.tanh(self.attn(torch.cat((hidden, enc_out), dim=2)))
            scores = self.v(energy).squeeze(2).masked_fill(mask == 0, -1e10)
            return F.softmax(scores, dim=1)

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(V, E)
            self.attention = Attention()
            self.rnn = nn.GRU(2 * H + E, H, batch_first=True)
            self.fc_out = nn.Linear(3 * H + E, V)

        def forward(self, token, hidden, enc_out, mask):
            embedded = self.embedding(token.unsqueeze(1))
            a = self.attention(hidden, enc_out, mask)
            context = torch.bmm(a.unsqueeze(1), enc_out)
            output, hidden = self.rnn(torch.cat((embedded, context), dim=2), hidden.unsqueeze(0))
            pred = self.fc_out(torch.cat((output, context, embedded), dim=2).squeeze(1))
            return pred, hidden.squeeze(0), a

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.decoder = Encoder(), Decoder()

        def forward(self, src, trg, teacher_forcing_ratio, draw):
            enc_out, hidden = self.encoder(src)
            mask = src != PAD
            outputs = torch.zeros(trg.shape[0], trg.shape[1], V, dtype=enc_out.dtype)
            token, attentions = trg[:, 0], []
            for t in range(1, trg.shape[1]):
                pred, hidden, a = self.decoder(token, hidden, enc_out, mask)
                outputs[:, t] = pred
                attentions.append(a)
                token = trg[:, t] if draw.random() < teacher_forcing_ratio else pred.argmax(1)
            return outputs, torch.stack(attentions, dim=1)

    model = Seq2Seq()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)
    rng, draw = np.random.default_rng(46), random.Random(7)
    losses = []
    for _ in range(3):
        src = torch.tensor([[3, 4, 5, 6], [7, 8, PAD, PAD], [9, 3, 4, PAD]])
        trg = torch.cat((torch.full((3, 1), BOS), torch.tensor(rng.integers(2, V, (3, 4)))), dim=1)
        trg[1, 3:] = PAD
        outputs, attn = model(src, trg, 0.5, draw)
        loss = criterion(outputs[:, 1:].reshape(-1, V), trg[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append([loss, norm])
    return dict(init=init, losses=losses, attn=attn, outputs=outputs, params=list(model.parameters()),
                grads=grads(model))


def test_bahdanau_attention_seq2seq(torch):
    _, ours = both(torch, bahdanau)
    assert float(ours["attn"][1, :, 2:].abs().max()) == 0.0  # no weight on padding


# ---- mixture density network: a Gaussian mixture over 2-D targets from torch.distributions -------------------
def mdn(torch, init):
    nn = torch.nn
    D = torch.distributions

    class MDN(nn.Module):
        def __init__(self, k=3, d=2):
            super().__init__()
            self.k, self.d = k, d
            self.body = nn.Sequential(nn.Linear(1, 12), nn.Tanh())
            self.pi = nn.Linear(12, k)
            self.mu = nn.Linear(12, k * d)
            self.log_sigma = nn.Linear(12, k * d)

        def forward(self, x):
            h = self.body(x)
            mu = self.mu(h).view(-1, self.k, self.d)
            sigma = torch.exp(self.log_sigma(h)).view(-1, self.k, self.d)
            return D.MixtureSameFamily(D.Categorical(logits=self.pi(h)), D.Independent(D.Normal(mu, sigma), 1))

    model = MDN()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    rng = np.random.default_rng(47)
    losses = []
    for _ in range(3):
        x = rng.uniform(-1, 1, (10, 1))
        y = np.concatenate([np.sin(3 * x), x ** 2], axis=1) + 0.1 * rng.standard_normal((10, 2))
        gmm = model(torch.tensor(x))
        loss = -gmm.log_prob(torch.tensor(y)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        gmm = model(torch.tensor([[-0.5], [0.0], [0.5]], dtype=torch.float64))
        best = gmm.mixture_distribution.probs.argmax(dim=-1)
        mode = gmm.component_distribution.base_dist.loc[torch.arange(3), best]
        stats = [gmm.mean, gmm.variance, gmm.mixture_distribution.probs, gmm.batch_shape, gmm.event_shape,
                 gmm.component_distribution.log_prob(torch.zeros(3, 1, 2, dtype=torch.float64))]
    return dict(init=init, losses=losses, mode=mode, stats=stats, params=list(model.parameters()), grads=grads(model))


def test_mixture_density_network(torch):
    both(torch, mdn)


# ---- CTC speech recognition: Conv1d features, a bidirectional LSTM, CTC loss, greedy decoding -----------------
def ctc(torch, init):
    nn, F = torch.nn, torch.nn.functional
    BLANK, V = 0, 5

    class Recognizer(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv1d(4, 8, 3, padding=1), nn.BatchNorm1d(8), nn.ReLU())
            self.lstm = nn.LSTM(8, 6, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(12, V)

        def forward(self, feats):  # (N, C, T) -> (T, N, V) log-probabilities
            h, _ = self.lstm(self.conv(feats).transpose(1, 2))
            return F.log_softmax(self.fc(h), dim=2).transpose(0, 1)

    def greedy(log_probs, lengths):
        best = log_probs.argmax(dim=2).transpose(0, 1).tolist()
        out = []
        for seq, n in zip(best, lengths.tolist()):
            words, prev = [], BLANK
            for s in seq[:n]:
                if s != prev and s != BLANK:
                    words.append(s)
                prev = s
            out.append(words)
        return out

    model = Recognizer()
    init = start(model, init)
    criterion = nn.CTCLoss(blank=BLANK, zero_infinity=True)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(48)
    losses = []
    input_lengths = torch.tensor([10, 8, 3], dtype=torch.long)
    target_lengths = torch.tensor([3, 2, 3], dtype=torch.long)  # the last: 1 1 1 needs 5 frames, has 3
    for _ in range(3):
        feats = torch.tensor(rng.standard_normal((3, 4, 10)))
        targets = torch.tensor(np.concatenate([rng.integers(1, V, 5), [1, 1, 1]]))
        log_probs = model(feats)
        loss = criterion(log_probs, targets, input_lengths, target_lengths)
        per_sample = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, reduction="none",
                                zero_infinity=True)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append([loss, per_sample])
    model.eval()
    with torch.no_grad():
        decoded = greedy(model(torch.tensor(rng.standard_normal((3, 4, 10)))), input_lengths)
    return dict(init=init, losses=losses, decoded=decoded, state=list(model.state_dict().values()),
                grads=grads(model))


def test_ctc_speech_recognition(torch):
    both(torch, ctc)


# ---- quantization-aware training: observed ranges, fake-quantized activations and per-channel weights ---------
def qat(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class ActFakeQuant(nn.Module):
        """uint8, asymmetric: a moving-average min/max observer while training, frozen in eval."""
        def __init__(self, momentum=0.1, tensor_qparams=False):
            super().__init__()
            self.momentum, self.tensor_qparams = momentum, tensor_qparams
            self.register_buffer("min_val", torch.tensor(0.0))
            self.register_buffer("max_val", torch.tensor(0.0))
            self.register_buffer("initialized", torch.tensor(False))

        def qparams(self):
            scale = max(float(self.max_val - self.min_val) / 255, 1e-8)
            zero_point = int(min(max(round(-float(self.min_val) / scale), 0), 255))
            return scale, zero_point

        def forward(self, x):
            if self.training:
                with torch.no_grad():
                    lo, hi = x.min().clamp(max=0), x.max().clamp(min=0)
                    if not self.initialized:
                        self.min_val.copy_(lo)
                        self.max_val.copy_(hi)
                        self.initialized.fill_(True)
                    else:
                        self.min_val.lerp_(lo, self.momentum)
                        self.max_val.lerp_(hi, self.momentum)
            scale, zero_point = self.qparams()
            if self.tensor_qparams:
                return torch.fake_quantize_per_tensor_affine(x, torch.tensor(scale), torch.tensor(zero_point,
                                                             dtype=torch.int32), 0, 255)
            return torch.fake_quantize_per_tensor_affine(x, scale, zero_point, 0, 255)

    class QATLinear(nn.Linear):
        """int8 weights, symmetric per output channel."""
        def weight_qparams(self):
            scale = (self.weight.detach().abs().amax(dim=1) / 127).clamp(min=1e-8).float()
            return scale, torch.zeros(self.out_features, dtype=torch.int32)

        def forward(self, x):
            scale, zero_point = self.weight_qparams()
            w = torch.fake_quantize_per_channel_affine(self.weight, scale, zero_point, 0, -128, 127)
            return F.linear(x, w, self.bias)

    model = nn.Sequential(ActFakeQuant(), QATLinear(6, 8), nn.ReLU(), ActFakeQuant(tensor_qparams=True),
                          QATLinear(8, 3))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(49)
    losses = []
    for _ in range(4):
        x, y = torch.tensor(rng.standard_normal((8, 6))), torch.tensor(rng.integers(0, 3, 8))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor(rng.standard_normal((4, 6))))
        ints = []
        for layer in (model[1], model[4]):
            scale, _ = layer.weight_qparams()
            q = torch.clamp(torch.round(layer.weight / scale[:, None].double()), -128, 127).to(torch.int8)
            ints.append([q, q.double() * scale[:, None].double() - layer.weight])
    return dict(init=init, losses=losses, out=out, ints=ints, qparams=[model[0].qparams(), model[3].qparams()],
                state=list(model.state_dict().values()), grads=grads(model))


def test_quantization_aware_training(torch):
    both(torch, qat)
