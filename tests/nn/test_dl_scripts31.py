"""Vision, generative and NLP scripts as people write them (a tiny ResNet with kaiming fan_out init, zero-init
residual gammas and decay-free BN/bias groups; BERT-style masked language modelling with the 80/10/10 rule and tied
decoder weights; MADE with masked linear layers and a MAF step; NADE; CycleGAN's losses with an image pool; a
character-level CNN classifier; nn.DataParallel on a CPU-only install; a torchtext-free vocabulary into a packed
bidirectional GRU; augmentation by tensor ops with test-time averaging; gradient accumulation with a last partial
window; autocast to bfloat16; label smoothing with class weights and ignore_index), written once against a
`torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients,
parameters and outputs must agree closely (float64 throughout; random draws made by numpy and given to both runs,
where the two libraries' streams differ by design)."""
import collections
import itertools
import math

import numpy as np
import pytest

from twins import both, grads, start


def kind(t):
    return str(t.dtype).split(".")[-1]


# ---- a tiny ResNet: BasicBlock with a 1x1 downsample, kaiming fan_out, zero-init last BN gamma, two groups -----
def tiny_resnet(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                                nn.BatchNorm2d(planes))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, num_classes=3):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = nn.Sequential(BasicBlock(4, 4))
            self.layer2 = nn.Sequential(BasicBlock(4, 8, stride=2))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8 * BasicBlock.expansion, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            for m in self.modules():
                if isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.layer2(self.layer1(x))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    model = ResNet()
    fresh = [m.bn2.weight.abs().sum().item() for m in model.modules() if isinstance(m, BasicBlock)]
    stds = [round(m.weight.std().item() / math.sqrt(2 / (m.out_channels * m.kernel_size[0] * m.kernel_size[1])))
            for m in model.modules() if isinstance(m, nn.Conv2d) and m.weight.numel() > 100]
    init = start(model, init)
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim <= 1 or name.endswith(".bias") or ".bn" in name or "downsample.1" in name
         else decay).append(p)
    opt = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=0.1, momentum=0.9, nesterov=True)
    rng = np.random.default_rng(1)
    x, y = torch.tensor(rng.standard_normal((4, 3, 8, 8))), torch.tensor(rng.integers(0, 3, 4))
    losses = []
    model.train()
    for _ in range(3):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(x)
    state = model.state_dict()
    again = ResNet().double()
    result = again.load_state_dict(state)
    again.eval()
    with torch.no_grad():
        out_again = again(x)
    return dict(init=init, fresh=fresh, stds=stds, sizes=[len(decay), len(no_decay)], losses=losses, out=out,
                out_again=out_again, keys=list(state), missing=[list(result.missing_keys), list(result.unexpected_keys)],
                tracked=[v.item() for k, v in state.items() if k.endswith("num_batches_tracked")],
                running=[v for k, v in state.items() if "running" in k], params=list(model.parameters()),
                momentum=[opt.state[p]["momentum_buffer"] for p in no_decay[:3]])


def test_tiny_resnet_kaiming_zero_gamma_nesterov_groups(torch):
    both(torch, tiny_resnet)


# ---- BERT-style MLM: 80/10/10 masking from given draws, a padding mask from lengths, tied decoder weights ------
def bert_mlm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    PAD, CLS, MASK, V, D, T, H = 0, 1, 2, 16, 8, 6, 2

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(V, D, padding_idx=PAD)
            self.pos = nn.Embedding(T, D)
            self.ln = nn.LayerNorm(D)
            self.qkv = nn.Linear(D, 3 * D)
            self.proj = nn.Linear(D, D)
            self.ff = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))
            self.ln2 = nn.LayerNorm(D)
            self.transform = nn.Sequential(nn.Linear(D, D), nn.GELU(), nn.LayerNorm(D, eps=1e-12))
            self.decoder = nn.Linear(D, V, bias=False)
            self.bias = nn.Parameter(torch.zeros(V))
            self.decoder.weight = self.tok.weight

        def forward(self, ids, attention_mask):
            B, L = ids.shape
            h = self.ln(self.tok(ids) + self.pos(torch.arange(L)))
            q, k, v = self.qkv(h).view(B, L, 3, H, D // H).permute(2, 0, 3, 1, 4).unbind(0)
            scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)
            scores = scores.masked_fill(attention_mask[:, None, None, :] == 0, float("-inf"))
            ctx = scores.softmax(-1) @ v
            h = self.ln2(h + self.proj(ctx.transpose(1, 2).reshape(B, L, D)))
            h = h + self.ff(h)
            return self.decoder(self.transform(h)) + self.bias

    model = Bert()
    init = start(model, init)
    rng = np.random.default_rng(2)
    lengths = torch.tensor([6, 4, 5])
    ids = torch.tensor(rng.integers(3, V, (3, T)))
    ids[:, 0] = CLS
    attention_mask = (torch.arange(T)[None, :] < lengths[:, None]).long()
    ids = ids.masked_fill(attention_mask == 0, PAD)
    special = (ids == PAD) | (ids == CLS)
    draws = [torch.tensor(rng.random((3, T))) for _ in range(3)]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    losses, seen = [], []
    for step in range(3):
        labels = ids.clone()
        probability = torch.full(labels.shape, 0.3, dtype=torch.float64).masked_fill(special, 0.0)
        masked = draws[step] < probability
        labels[~masked] = -100
        replaced = (draws[(step + 1) % 3] < 0.8) & masked
        inputs = ids.masked_fill(replaced, MASK)
        randomized = (draws[(step + 2) % 3] < 0.5) & masked & ~replaced
        random_words = torch.tensor(rng.integers(3, V, (3, T)))
        inputs[randomized] = random_words[randomized]
        logits = model(inputs, attention_mask)
        loss = F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        seen.append([inputs, labels, int(masked.sum()), int(replaced.sum()), int(randomized.sum())])
    with torch.no_grad():
        pred = model(ids, attention_mask).argmax(-1)
    names = [n for n, _ in model.named_parameters()]
    return dict(init=init, losses=losses, seen=seen, pred=pred, names=names, keys=list(model.state_dict()),
                tied=model.decoder.weight is model.tok.weight, params=list(model.parameters()),
                pad_row=model.tok.weight[PAD])


def test_bert_mlm_80_10_10_tied_decoder_padding_mask(torch):
    both(torch, bert_mlm)


# ---- MADE: masked linear layers (register_buffer masks, weight * mask), a MAF step with a summed log-det -------
def made_maf(torch, init):
    nn, F = torch.nn, torch.nn.functional
    D, Hd = 4, 8

    class MaskedLinear(nn.Linear):
        def __init__(self, n_in, n_out):
            super().__init__(n_in, n_out)
            self.register_buffer("mask", torch.ones(n_out, n_in))

        def set_mask(self, mask):
            self.mask.data.copy_(mask.T)

        def forward(self, x):
            return F.linear(x, self.weight * self.mask, self.bias)

    class MADE(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2, self.out = MaskedLinear(D, Hd), MaskedLinear(Hd, Hd), MaskedLinear(Hd, 2 * D)
            degrees = [torch.arange(1, D + 1), torch.arange(Hd) % (D - 1) + 1, torch.arange(Hd) % (D - 1) + 1]
            self.l1.set_mask((degrees[0][:, None] <= degrees[1][None, :]).double())
            self.l2.set_mask((degrees[1][:, None] <= degrees[2][None, :]).double())
            self.out.set_mask((degrees[2][:, None] < degrees[0].repeat(2)[None, :]).double())

        def forward(self, x):
            mu, alpha = self.out(F.relu(self.l2(F.relu(self.l1(x))))).chunk(2, dim=1)
            return mu, alpha.clamp(-5, 5)

    made = MADE()
    init = start(made, init)
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((10, D)) @ np.triu(np.ones((D, D))) * 0.5)
    opt = torch.optim.Adam(made.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        mu, alpha = made(x)
        u = (x - mu) * torch.exp(-alpha)
        log_det = -alpha.sum(dim=1)
        log_prob = (-0.5 * u.pow(2) - 0.5 * math.log(2 * math.pi)).sum(dim=1) + log_det
        loss = -log_prob.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    xg = x[:2].clone().requires_grad_(True)
    jac = torch.stack([torch.autograd.grad(made(xg)[0][:, i].sum(), xg)[0] for i in range(D)], dim=1)
    u = torch.tensor(rng.standard_normal((3, D)))
    with torch.no_grad():
        sample = torch.zeros(3, D, dtype=torch.float64)
        for i in range(D):
            mu, alpha = made(sample)
            sample[:, i] = mu[:, i] + u[:, i] * torch.exp(alpha[:, i])
        mu, alpha = made(sample)
        u_back = (sample - mu) * torch.exp(-alpha)
    buffers = {n: b for n, b in made.named_buffers()}
    return dict(init=init, losses=losses, jac=jac, autoregressive=bool((jac.abs().sum(0).triu() == 0).all()),
                sample=sample, u_back=u_back, buffers=buffers, keys=list(made.state_dict()), grads=grads(made))


def test_made_masked_linear_buffers_maf_log_det(torch):
    both(torch, made_maf)


# ---- NADE: a running hidden pre-activation over the input order, BCE log-likelihood, sampling by given draws ---
def nade(torch, init):
    nn, F = torch.nn, torch.nn.functional
    D, Hd = 5, 6

    class NADE(nn.Module):
        def __init__(self):
            super().__init__()
            self.W = nn.Parameter(torch.randn(Hd, D) * 0.1)
            self.c = nn.Parameter(torch.zeros(Hd))
            self.V = nn.Parameter(torch.randn(D, Hd) * 0.1)
            self.b = nn.Parameter(torch.zeros(D))

        def forward(self, x):
            a = self.c.expand(x.shape[0], -1)
            probs = []
            for d in range(D):
                h = torch.sigmoid(a)
                probs.append(torch.sigmoid(h @ self.V[d] + self.b[d]))
                a = a + x[:, d:d + 1] * self.W[:, d]
            return torch.stack(probs, dim=1)

        @torch.no_grad()
        def sample(self, uniforms):
            x = torch.zeros(uniforms.shape, dtype=self.W.dtype)
            a = self.c.expand(uniforms.shape[0], -1)
            for d in range(D):
                p = torch.sigmoid(torch.sigmoid(a) @ self.V[d] + self.b[d])
                x[:, d] = (uniforms[:, d] < p).to(x.dtype)
                a = a + x[:, d:d + 1] * self.W[:, d]
            return x

    model = NADE()
    init = start(model, init)
    rng = np.random.default_rng(4)
    x = torch.tensor((rng.random((8, D)) < [0.2, 0.8, 0.5, 0.3, 0.9]).astype(np.float64))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    nll = []
    for _ in range(4):
        p = model(x)
        loss = F.binary_cross_entropy(p, x, reduction="sum") / x.shape[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        nll.append(loss.item())
    with torch.no_grad():
        log_lik = -F.binary_cross_entropy(model(x), x, reduction="none").sum(1)
    samples = model.sample(torch.tensor(rng.random((4, D))))
    return dict(init=init, nll=nll, log_lik=log_lik, samples=samples, params=list(model.parameters()),
                grads=grads(model))


def test_nade_autoregressive_bce_sampling(torch):
    both(torch, nade)


# ---- CycleGAN: LSGAN MSE, cycle L1, identity L1, an image pool with given choices, chained generator params ---
def cyclegan(torch, init):
    nn, F = torch.nn, torch.nn.functional

    def generator():
        # (no bias before the norm: its gradient is zero up to rounding, which Adam would magnify)
        return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect", bias=False), nn.InstanceNorm2d(4),
                             nn.ReLU(True),
                             nn.Conv2d(4, 3, 3, padding=1), nn.Tanh())

    def discriminator():
        return nn.Sequential(nn.Conv2d(3, 4, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True),
                             nn.Conv2d(4, 1, 3, padding=1))

    class ImagePool:
        def __init__(self, size, draws):
            self.size, self.images, self.draws = size, [], iter(draws)

        def query(self, images):
            out = []
            for image in images:
                image = torch.unsqueeze(image.data, 0)
                if len(self.images) < self.size:
                    self.images.append(image)
                    out.append(image)
                    continue
                p, idx = next(self.draws)
                if p > 0.5:
                    old = self.images[idx].clone()
                    self.images[idx] = image
                    out.append(old)
                else:
                    out.append(image)
            return torch.cat(out, 0)

    nets = nn.ModuleDict(dict(G_AB=generator(), G_BA=generator(), D_A=discriminator(), D_B=discriminator()))
    init = start(nets, init)
    G_AB, G_BA, D_A, D_B = nets["G_AB"], nets["G_BA"], nets["D_A"], nets["D_B"]
    opt_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=2e-3, betas=(0.5, 0.999))
    opt_D = torch.optim.Adam(itertools.chain(D_A.parameters(), D_B.parameters()), lr=2e-3, betas=(0.5, 0.999))
    rng = np.random.default_rng(5)
    choices = [(float(p), int(i)) for p, i in zip(rng.random(8), rng.integers(0, 2, 8))]
    pool_A, pool_B = ImagePool(2, choices[:4]), ImagePool(2, choices[4:])
    mse, l1 = nn.MSELoss(), nn.L1Loss()

    def set_requires_grad(nets, flag):
        for net in nets:
            for p in net.parameters():
                p.requires_grad = flag

    log = []
    for _ in range(3):
        real_A = torch.tensor(rng.uniform(-1, 1, (2, 3, 6, 6)))
        real_B = torch.tensor(rng.uniform(-1, 1, (2, 3, 6, 6)))
        fake_B, fake_A = G_AB(real_A), G_BA(real_B)
        set_requires_grad([D_A, D_B], False)
        opt_G.zero_grad()
        pred_B, pred_A = D_B(fake_B), D_A(fake_A)
        loss_gan = mse(pred_B, torch.ones_like(pred_B)) + mse(pred_A, torch.ones_like(pred_A))
        loss_cycle = l1(G_BA(fake_B), real_A) * 10.0 + l1(G_AB(fake_A), real_B) * 10.0
        loss_idt = l1(G_AB(real_B), real_B) * 5.0 + l1(G_BA(real_A), real_A) * 5.0
        loss_G = loss_gan + loss_cycle + loss_idt
        loss_G.backward()
        opt_G.step()
        set_requires_grad([D_A, D_B], True)
        opt_D.zero_grad()
        losses_D = []
        for D, real, fake in ((D_A, real_A, pool_A.query(fake_A)), (D_B, real_B, pool_B.query(fake_B))):
            pred_real, pred_fake = D(real), D(fake.detach())
            loss_D = (mse(pred_real, torch.ones_like(pred_real)) + mse(pred_fake, torch.zeros_like(pred_fake))) * 0.5
            loss_D.backward()
            losses_D.append(loss_D.item())
        opt_D.step()
        log.append([loss_gan.item(), loss_cycle.item(), loss_idt.item(), losses_D])
    return dict(init=init, log=log, pool=torch.cat(pool_A.images + pool_B.images), params=list(nets.parameters()),
                grads=grads(nets), groups=[len(opt_G.param_groups[0]["params"]), len(opt_D.param_groups[0]["params"])])


def test_cyclegan_lsgan_cycle_identity_image_pool(torch):
    both(torch, cyclegan)
