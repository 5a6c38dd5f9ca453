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

    rng = np.random.default_rng(193)
    states = torch.tensor(rng.standard_normal((4, 2 * d)))
    target = -states[:, :d]  # (unit springs: q'' = -q)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        pred = torch.stack([acceleration(s) for s in states])
        loss = F.mse_loss(pred, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, pred=pred.detach(), grads=grads(net), params=list(net.parameters()))


@pytest.mark.parametrize("inverse", ["pinv", "solve"])
def test_lagrangian_neural_network(torch, inverse):
    both(torch, lagrangian, inverse=inverse)
