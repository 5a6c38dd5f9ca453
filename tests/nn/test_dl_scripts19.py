"""Deep-learning scripts of yet more kinds (a Sinkhorn optimal-transport loss in the log domain, a Neural-Turing-
Machine-like memory, an RNN-Transducer loss over its (T, U) lattice, a Lagrangian neural network, a segmentation
loss zoo (Tversky, Lovasz hinge, SSIM), center loss beside cross entropy, a Koopman autoencoder, a DenseNet block,
an xLSTM-style mLSTM / sLSTM cell, a log-mel audio front end), written once against a `torch`-like module and run
twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must
agree closely (float64 throughout; random draws by numpy)."""
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- a Sinkhorn loss: squared cdist cost, log-domain iterations, epsilon scaling, the plan's exp ----------------
def sinkhorn(torch, init):
    rng = np.random.default_rng(190)
    x = torch.tensor(rng.standard_normal((7, 2)), requires_grad=True)
    y = torch.tensor(rng.standard_normal((5, 2)) + 1.0)
    log_a = torch.full((7,), -math.log(7), dtype=torch.float64)
    log_b = torch.full((5,), -math.log(5), dtype=torch.float64)
    opt = torch.optim.Adam([x], lr=0.05)
    losses, plans = [], []
    for _ in range(3):
        cost = torch.cdist(x, y, p=2) ** 2
        f = torch.zeros(7, dtype=torch.float64)
        g = torch.zeros(5, dtype=torch.float64)
        for eps in (1.0, 0.5, 0.25):
            for _ in range(5):
                f = -eps * torch.logsumexp((g.unsqueeze(0) - cost) / eps + log_b.unsqueeze(0), dim=1)
                g = -eps * torch.logsumexp((f.unsqueeze(1) - cost) / eps + log_a.unsqueeze(1), dim=0)
        plan = torch.exp((f.unsqueeze(1) + g.unsqueeze(0) - cost) / eps + log_a.unsqueeze(1) + log_b.unsqueeze(0))
        loss = (plan * cost).sum()
        opt.zero_grad()
        loss.backward()
        plans.append((plan.detach(), plan.detach().sum(1), plan.detach().sum(0)))
        opt.step()
        losses.append(loss.detach())
    return dict(init=None, losses=losses, plans=plans, grad=x.grad, x=x.detach())


def test_sinkhorn_log_domain_optimal_transport(torch):
    theirs, _ = both(torch, sinkhorn)
    np.testing.assert_allclose(theirs["plans"][-1][2].numpy(), np.full(5, 0.2), atol=1e-12)


# ---- an NTM-like memory: cosine content addressing, a softplus-sharpened softmax, circular shifts, erase / add ---
def ntm(torch, init, shift):
    nn, F = torch.nn, torch.nn.functional
    N, M, H, X = 6, 4, 8, 3

    class NTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(X + M, H)
            self.key, self.beta = nn.Linear(H, M), nn.Linear(H, 1)
            self.shift = nn.Linear(H, 3)
            self.erase, self.add = nn.Linear(H, M), nn.Linear(H, M)
            self.out = nn.Linear(H + M, X)

        def address(self, h, memory):
            key = self.key(h)
            sim = F.cosine_similarity(key.unsqueeze(1), memory, dim=-1)  # (B, N)
            w = F.softmax(F.softplus(self.beta(h)) * sim, dim=-1)
            s = F.softmax(self.shift(h), dim=-1)
            if shift == "roll":
                w = s[:, :1] * torch.roll(w, 1, dims=1) + s[:, 1:2] * w + s[:, 2:] * torch.roll(w, -1, dims=1)
            else:
                padded = F.pad(w.unsqueeze(0), (1, 1), mode="circular")  # (1, B, N + 2)
                w = F.conv1d(padded, s.flip(-1).unsqueeze(1), groups=w.size(0)).squeeze(0)
            return w

        def forward(self, xs):
            B = xs.size(0)
            h, c = xs.new_zeros(B, H), xs.new_zeros(B, H)
            memory = torch.full((B, N, M), 1e-2, dtype=xs.dtype)
            read = xs.new_zeros(B, M)
            outs = []
            for t in range(xs.size(1)):
                h, c = self.cell(torch.cat([xs[:, t], read], dim=1), (h, c))
                w = self.address(h, memory)
                read = torch.einsum("bn,bnm->bm", w, memory)
                erase, add = torch.sigmoid(self.erase(h)), torch.tanh(self.add(h))
                memory = memory * (1 - torch.einsum("bn,bm->bnm", w, erase))
                memory = memory + torch.stack([torch.outer(w[b], add[b]) for b in range(B)])
                outs.append(self.out(torch.cat([h, read], dim=1)))
            return torch.stack(outs, dim=1), memory

    model = NTM()
    init = start(model, init)
    rng = np.random.default_rng(191)
    xs = torch.tensor(rng.integers(0, 2, (2, 4, X)).astype(np.float64))
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        out, memory = model(xs)
        loss = F.binary_cross_entropy_with_logits(out, xs.flip(1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, memory=memory, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("shift", ["roll", "circular_conv"])
def test_ntm_memory_content_addressing_shift_erase_add(torch, shift):
    both(torch, ntm, shift=shift)


# ---- an RNN-Transducer loss: a joint network's broadcast sum, log_softmax, alpha over the (T, U) lattice ---------
def rnnt(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, H, T, U = 5, 6, 4, 3  # (label 0 is blank)

    class Transducer(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.GRU(3, H, batch_first=True)
            self.emb = nn.Embedding(V, H)
            self.pred = nn.LSTM(H, H, batch_first=True)
            self.joint = nn.Sequential(nn.Tanh(), nn.Linear(H, V))

        def forward(self, feats, labels):
            enc, _ = self.enc(feats)  # (B, T, H)
            blank_first = F.pad(labels, (1, 0), value=0)
            pred, _ = self.pred(self.emb(blank_first))  # (B, U + 1, H)
            return F.log_softmax(self.joint(enc.unsqueeze(2) + pred.unsqueeze(1)), dim=-1)  # (B, T, U + 1, V)

    def transducer_loss(logp, labels):
        B = logp.size(0)
        blank = logp[..., 0]
        emit = logp[:, :, :-1].gather(3, labels.view(B, 1, U, 1).expand(B, T, U, 1)).squeeze(3)
        alpha = torch.full((B, T, U + 1), float("-inf"), dtype=logp.dtype)
        alpha[:, 0, 0] = 0.0
        for t in range(T):
            for u in range(U + 1):
                if t == 0 and u == 0:
                    continue
                came = []
                if t > 0:
                    came.append(alpha[:, t - 1, u] + blank[:, t - 1, u])
                if u > 0:
                    came.append(alpha[:, t, u - 1] + emit[:, t, u - 1])
                alpha[:, t, u] = torch.logsumexp(torch.stack(came), dim=0)
        return -(alpha[:, T - 1, U] + blank[:, T - 1, U]), alpha

    model = Transducer()
    init = start(model, init)
    rng = np.random.default_rng(192)
    feats = torch.tensor(rng.standard_normal((2, T, 3)))
    labels = torch.tensor(rng.integers(1, V, (2, U)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        nll, alpha = transducer_loss(model(feats, labels), labels)
        loss = nll.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(nll.detach())
    return dict(init=init, losses=losses, alpha=alpha.detach(), grads=grads(model), params=list(model.parameters()))


def test_rnn_transducer_lattice_loss(torch):
    both(torch, rnnt)


# ---- a Lagrangian neural network: jacobian and hessian of a learned L(q, q'), accelerations by pinv / solve -------
def lagrangian(torch, init, inverse):
    nn, F = torch.nn, torch.nn.functional
    d = 2
    net = nn.Sequential(nn.Linear(2 * d, 16), nn.Softplus(), nn.Linear(16, 1))
    init = start(net, init)

    def L(state):
        return net(state).squeeze(-1) + 0.5 * (state[d:] ** 2).sum()  # (a kinetic prior keeps d2L/dq'2 invertible)

    def acceleration(state):
        jac = torch.autograd.functional.jacobian(L, state, create_graph=True)  # (2d,)
        hess = torch.autograd.functional.hessian(L, state, create_graph=True)  # (2d, 2d)
        rhs = jac[:d] - hess[d:, :d] @ state[d:]
        if inverse == "pinv":
            return torch.linalg.pinv(hess[d:, d:]) @ rhs
        return torch.linalg.solve(hess[d:, d:], rhs)

    def batched(states):  # (torch.func: the same accelerations, the net's parameters passed in, vmapped over states)
        params = dict(net.named_parameters())

        def lagrangian_of(p, state):
            return torch.func.functional_call(net, p, (state,)).squeeze(-1) + 0.5 * (state[d:] ** 2).sum()

        jac = torch.func.vmap(torch.func.grad(lagrangian_of, argnums=1), in_dims=(None, 0))(params, states)
        hess = torch.func.vmap(torch.func.hessian(lagrangian_of, argnums=1), in_dims=(None, 0))(params, states)
        rhs = jac[:, :d] - (hess[:, d:, :d] @ states[:, d:].unsqueeze(-1)).squeeze(-1)
        return torch.linalg.solve(hess[:, d:, d:], rhs)

    rng = np.random.default_rng(193)
    states = torch.tensor(rng.standard_normal((4, 2 * d)))
    target = -states[:, :d]  # (unit springs: q'' = -q)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        pred = batched(states) if inverse == "vmap" else torch.stack([acceleration(s) for s in states])
        loss = F.mse_loss(pred, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, pred=pred.detach(), grads=grads(net), params=list(net.parameters()))


@pytest.mark.parametrize("inverse", ["pinv", "solve", "vmap"])
def test_lagrangian_neural_network(torch, inverse):
    both(torch, lagrangian, inverse=inverse)


# ---- a segmentation loss zoo: Tversky, Lovasz hinge (sorted errors, Jaccard by differences), SSIM, avg_pool2d -----
def seg_zoo(torch, init):
    nn, F = torch.nn, torch.nn.functional
    C = 2
    model = nn.Sequential(nn.Conv2d(1, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 1, 3, padding=1))
    init = start(model, init)

    def tversky(prob, target, alpha=0.3, beta=0.7):
        tp = (prob * target).sum((1, 2, 3))
        fp = (prob * (1 - target)).sum((1, 2, 3))
        fn = ((1 - prob) * target).sum((1, 2, 3))
        return (1 - (tp + 1) / (tp + alpha * fp + beta * fn + 1)).mean()

    def lovasz_hinge(logits, labels):
        signs = 2 * labels - 1
        errors = 1 - logits * signs
        errors_sorted, perm = torch.sort(errors, descending=True)
        gt = labels[perm]
        intersection = gt.sum() - gt.cumsum(0)
        union = gt.sum() + (1 - gt).cumsum(0)
        jaccard = 1 - intersection / union
        jaccard = torch.cat([jaccard[:1], jaccard[1:] - jaccard[:-1]])
        return torch.dot(F.relu(errors_sorted), jaccard)

    def gaussian_window(size=5, sigma=1.5):
        g = torch.exp(-(torch.arange(size, dtype=torch.float64) - size // 2) ** 2 / (2 * sigma ** 2))
        g = g / g.sum()
        return torch.outer(g, g).expand(C, 1, size, size).contiguous()

    def ssim(a, b, window):
        mu_a = F.conv2d(a, window, padding=2, groups=C)
        mu_b = F.conv2d(b, window, padding=2, groups=C)
        var_a = F.conv2d(a * a, window, padding=2, groups=C) - mu_a ** 2
        var_b = F.conv2d(b * b, window, padding=2, groups=C) - mu_b ** 2
        cov = F.conv2d(a * b, window, padding=2, groups=C) - mu_a * mu_b
        c1, c2 = 0.01 ** 2, 0.03 ** 2
        s = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
        return s.mean()

    rng = np.random.default_rng(194)
    image = torch.tensor(rng.standard_normal((3, 1, 8, 8)))
    mask = (F.avg_pool2d(image, 3, stride=1, padding=1) > 0).to(torch.float64)
    window = gaussian_window()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses, parts = [], []
    for _ in range(3):
        logits = model(image)
        prob = torch.sigmoid(logits)
        two = torch.cat([prob, 1 - prob], dim=1)
        target = torch.cat([mask, 1 - mask], dim=1)
        t = tversky(prob, mask)
        lz = torch.stack([lovasz_hinge(lg.flatten(), m.flatten()) for lg, m in zip(logits, mask)]).mean()
        s = 1 - ssim(F.avg_pool2d(two, 2), F.avg_pool2d(target, 2), window)
        loss = t + lz + s
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        parts.append((t.detach(), lz.detach(), s.detach()))
    return dict(init=init, losses=losses, parts=parts, grads=grads(model), params=list(model.parameters()))


def test_segmentation_losses_tversky_lovasz_ssim(torch):
    both(torch, seg_zoo)


# ---- center loss: a centers Parameter in its own SGD beside Adam, index_select by label, a manual index_add_ ----
def center_loss(torch, init, manual):
    nn = torch.nn
    n_cls, dim = 3, 2

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.PReLU(), nn.Linear(8, dim))
            self.head = nn.Linear(dim, n_cls)

        def forward(self, x):
            feat = self.body(x)
            return feat, self.head(feat)

    model = Net()
    centers = nn.Parameter(torch.zeros(n_cls, dim, dtype=torch.float64))
    init = start(model, init)
    rng = np.random.default_rng(195)
    x = torch.tensor(rng.standard_normal((9, 4)))
    y = torch.tensor(rng.integers(0, n_cls, 9))
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    opt_centers = torch.optim.SGD([centers], lr=0.5)
    losses = []
    for _ in range(3):
        feat, logits = model(x)
        own = centers.index_select(0, y)
        pull = ((feat - own) ** 2).sum(1).mean() / 2
        loss = criterion(logits, y) + 0.1 * pull
        opt.zero_grad()
        opt_centers.zero_grad()
        loss.backward()
        opt.step()
        if manual:
            with torch.no_grad():  # (the classic update: each center moves toward its class's mean feature)
                diff = torch.zeros_like(centers).index_add_(0, y, own - feat.detach())
                count = torch.zeros(n_cls, dtype=torch.float64).index_add_(0, y, torch.ones(9, dtype=torch.float64))
                centers.index_add_(0, torch.arange(n_cls), -0.5 * diff / (1 + count.unsqueeze(1)))
        else:
            opt_centers.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, centers=centers.detach().clone(), center_grad=centers.grad,
                grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("manual", [False, True])
def test_center_loss_two_optimizers_index_add(torch, manual):
    both(torch, center_loss, manual=manual)


# ---- a Koopman autoencoder: linear latent dynamics K, matrix_power and a matmul loop, a spectral penalty ----------
def koopman(torch, init, spectrum):
    nn, F = torch.nn, torch.nn.functional
    dx, dz, steps = 3, 4, 3

    class Koopman(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Linear(dx, 8), nn.Tanh(), nn.Linear(8, dz))
            self.dec = nn.Sequential(nn.Linear(dz, 8), nn.Tanh(), nn.Linear(8, dx))
            self.K = nn.Parameter(torch.eye(dz) + 0.1 * torch.randn(dz, dz))

    model = Koopman()
    init = start(model, init)
    rng = np.random.default_rng(196)
    theta = 0.3
    rot = np.array([[np.cos(theta), -np.sin(theta), 0], [np.sin(theta), np.cos(theta), 0], [0, 0, 0.9]])
    x0 = rng.standard_normal((5, dx))
    traj = torch.tensor(np.stack([x0 @ np.linalg.matrix_power(rot, k).T for k in range(steps + 1)], 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses, penalties = [], []
    for _ in range(3):
        z = model.enc(traj[:, 0])
        recon = F.mse_loss(model.dec(z), traj[:, 0])
        pred, z_loop = 0, z
        for k in range(1, steps + 1):
            z_k = z @ torch.linalg.matrix_power(model.K, k).T
            z_loop = z_loop @ model.K.T
            pred = pred + F.mse_loss(model.dec(z_k), traj[:, k]) + F.mse_loss(z_loop, z_k)
        if spectrum == "eigvals":
            radius = torch.linalg.eigvals(model.K).abs()
        else:
            radius = torch.linalg.svdvals(model.K)
        penalty = F.relu(radius - 1).pow(2).sum()
        loss = recon + pred / steps + penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        penalties.append(torch.sort(radius.detach()).values)
    return dict(init=init, losses=losses, penalties=penalties, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("spectrum", ["eigvals", "svdvals"])
def test_koopman_autoencoder_spectral_penalty(torch, spectrum):
    both(torch, koopman, spectrum=spectrum)


# ---- a DenseNet: torch.cat of growing feature lists, BN-ReLU(inplace)-Conv 1x1 / 3x3, an AvgPool2d transition ----
def densenet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    growth = 4

    class DenseLayer(nn.Module):
        def __init__(self, c_in):
            super().__init__()
            self.norm1, self.relu1 = nn.BatchNorm2d(c_in), nn.ReLU(inplace=True)
            self.conv1 = nn.Conv2d(c_in, 2 * growth, 1, bias=False)
            self.norm2, self.relu2 = nn.BatchNorm2d(2 * growth), nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(2 * growth, growth, 3, padding=1, bias=False)

        def forward(self, features):
            x = torch.cat(features, 1)
            return self.conv2(self.relu2(self.norm2(self.conv1(self.relu1(self.norm1(x))))))

    class DenseBlock(nn.ModuleDict):
        def __init__(self, n, c_in):
            super().__init__()
            for i in range(n):
                self.add_module(f"layer{i + 1}", DenseLayer(c_in + i * growth))

        def forward(self, x):
            features = [x]
            for _, layer in self.items():
                features.append(layer(features))
            return torch.cat(features, 1)

    class DenseNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(1, 6, 3, padding=1, bias=False)
            self.block1 = DenseBlock(2, 6)
            self.transition = nn.Sequential(nn.BatchNorm2d(14), nn.ReLU(inplace=True), nn.Conv2d(14, 7, 1, bias=False),
                                            nn.AvgPool2d(2))
            self.block2 = DenseBlock(2, 7)
            self.norm = nn.BatchNorm2d(15)
            self.fc = nn.Linear(15, 3)

        def forward(self, x):
            x = self.block2(self.transition(self.block1(self.stem(x))))
            x = F.relu(self.norm(x), inplace=True)
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    model = DenseNet()
    init = start(model, init)
    rng = np.random.default_rng(197)
    x = torch.tensor(rng.standard_normal((4, 1, 8, 8)))
    y = torch.tensor(rng.integers(0, 3, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
    losses = []
    for _ in range(2):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    model.eval()
    with torch.no_grad():
        out = model(x)
    return dict(init=init, losses=losses, eval=out, state=dict(model.state_dict()), grads=grads(model))


def test_densenet_blocks_concat_features(torch):
    both(torch, densenet)


# ---- an xLSTM-style cell: exponential gates stabilised by m, a matrix memory of outer products, a clamped |n.q| --
def xlstm(torch, init, kind):
    nn, F = torch.nn, torch.nn.functional
    D, H = 3, 4

    class MLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(D, 3 * H)
            self.gates = nn.Linear(D, 3)  # (input, forget, output pre-activations)
            self.head = nn.Linear(H, 2)

        def forward(self, xs):
            B = xs.size(0)
            C = xs.new_zeros(B, H, H)
            n = xs.new_zeros(B, H)
            m = xs.new_zeros(B, 1)
            outs = []
            for t in range(xs.size(1)):
                q, k, v = self.qkv(xs[:, t]).chunk(3, dim=-1)
                k = k / math.sqrt(H)
                i_pre, f_pre, o_pre = self.gates(xs[:, t]).split(1, dim=-1)
                logf = F.logsigmoid(f_pre)
                m_new = torch.maximum(logf + m, i_pre)
                i, f = torch.exp(i_pre - m_new), torch.exp(logf + m - m_new)
                m = m_new
                if kind == "mlstm":
                    C = f.unsqueeze(-1) * C + i.unsqueeze(-1) * (v.unsqueeze(-1) @ k.unsqueeze(-2))
                    n = f * n + i * k
                    denom = torch.clamp((n * q).sum(-1, keepdim=True).abs(), min=1)
                    h = torch.sigmoid(o_pre) * (C @ q.unsqueeze(-1)).squeeze(-1) / denom
                else:  # (sLSTM: a vector memory, the normaliser a running sum of input gates)
                    C = f.unsqueeze(-1) * C + i.unsqueeze(-1) * torch.diag_embed(torch.tanh(v))
                    n = f * n + i
                    h = torch.sigmoid(o_pre) * torch.diagonal(C, dim1=-2, dim2=-1) / torch.clamp(n, min=1)
                outs.append(h)
            return self.head(torch.stack(outs, 1)), m

    model = MLSTM()
    init = start(model, init)
    rng = np.random.default_rng(198)
    xs = torch.tensor(3 * rng.standard_normal((2, 5, D)))
    target = torch.tensor(rng.standard_normal((2, 5, 2)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        out, m = model(xs)
        loss = F.smooth_l1_loss(out, target)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, out=out.detach(), m=m.detach(), grads=grads(model),
                params=list(model.parameters()))


@pytest.mark.parametrize("kind", ["mlstm", "slstm"])
def test_xlstm_exponential_gating_matrix_memory(torch, kind):
    both(torch, xlstm, kind=kind)


# ---- a log-mel front end: a filterbank of torch ops, a normalized stft's power, log10 of a clamp, istft back ------
def log_mel(torch, init, pad_mode):
    nn, F = torch.nn, torch.nn.functional
    sr, n_fft, hop, n_mels = 1000, 32, 8, 5

    def mel_filterbank():
        def to_mel(f):
            return 2595.0 * torch.log10(1.0 + f / 700.0)

        top = to_mel(torch.tensor(sr / 2, dtype=torch.float64))
        mels = torch.linspace(0.0, float(top), n_mels + 2, dtype=torch.float64)
        hz = 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
        freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1, dtype=torch.float64).unsqueeze(1)
        rise = (freqs - hz[:-2]) / (hz[1:-1] - hz[:-2])
        fall = (hz[2:] - freqs) / (hz[2:] - hz[1:-1])
        return torch.clamp(torch.minimum(rise, fall), min=0)  # (freq, mels)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window", torch.hamming_window(n_fft, dtype=torch.float64))
            self.register_buffer("fbank", mel_filterbank())
            self.conv = nn.Sequential(nn.Conv1d(n_mels, 6, 3, padding=1), nn.GELU(), nn.Conv1d(6, 6, 3, dilation=2),
                                      nn.GELU())
            self.head = nn.Linear(6, 2)

        def forward(self, wave):
            spec = torch.stft(wave, n_fft, hop_length=hop, window=self.window, center=True, pad_mode=pad_mode,
                              normalized=True, return_complex=True)
            power = spec.abs().pow(2)
            mel = (power.transpose(-1, -2) @ self.fbank).transpose(-1, -2)
            logmel = torch.clamp(mel, min=1e-10).log10()
            logmel = logmel - logmel.amax(dim=(-2, -1), keepdim=True)
            return self.head(self.conv(logmel).mean(-1)), spec, logmel

    model = Net()
    init = start(model, init)
    rng = np.random.default_rng(199)
    t = np.arange(160) / sr
    y = rng.integers(0, 2, 4)
    wave = torch.tensor(np.sin(2 * np.pi * np.array([60, 300])[y][:, None] * t) + 0.05 * rng.standard_normal((4, 160)))
    wave.requires_grad_(True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        logits, spec, logmel = model(wave)
        loss = F.cross_entropy(logits, torch.tensor(y))
        opt.zero_grad()
        wave.grad = None
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    with torch.no_grad():
        back = torch.istft(spec, n_fft, hop_length=hop, window=model.window, center=True, normalized=True,
                           length=160)
        one = torch.stft(wave[0], n_fft, hop_length=hop, window=model.window, center=True, pad_mode=pad_mode,
                         normalized=True, return_complex=True)
    return dict(init=init, losses=losses, logmel=logmel.detach(), fbank=model.fbank, wave_grad=wave.grad,
                back=back, round_trip=bool(torch.allclose(back, wave.detach(), atol=1e-10)), one=torch.view_as_real(one),
                grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("pad_mode", ["reflect", "constant"])
def test_log_mel_front_end_conv1d_istft(torch, pad_mode):
    theirs, _ = both(torch, log_mel, pad_mode=pad_mode)
    assert theirs["round_trip"]
