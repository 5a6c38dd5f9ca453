"""Scientific-ML, probabilistic and structured models as researchers write them (a Fourier neural operator in 1-D and
2-D with complex spectral weights, DeepONet, a KAN layer on Cox-de Boor B-splines, an E(n)-equivariant GNN layer,
SchNet's continuous-filter convolution, a hidden Markov model's log-space forward algorithm and Viterbi decoding,
DeepAR's Normal likelihood, a particle filter with systematic resampling, a DARTS cell, SWAG moments, integrated
gradients and SmoothGrad, DistMult / ComplEx with 1-N scoring), written once against a `torch`-like module and run
twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree
closely (float64 throughout; random draws made by numpy and passed to both runs)."""
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- a Fourier neural operator: rfft, complex weights on the kept modes by einsum, irfft; 1-D and 2-D ----------
def fno(torch, init, dims, weights):
    nn, F = torch.nn, torch.nn.functional
    width, modes, n = 4, 3, 12

    class SpectralConv(nn.Module):
        def __init__(self):
            super().__init__()
            shape = (width, width) + (modes,) * dims
            scale = 1 / (width * width)
            if weights == "complex":
                self.w = nn.Parameter(scale * torch.randn(*shape, dtype=torch.cdouble))
            else:
                self.w = nn.Parameter(scale * torch.randn(*shape, 2, dtype=torch.float64))

        def forward(self, x):
            w = self.w if weights == "complex" else torch.view_as_complex(self.w)
            if dims == 1:
                xf = torch.fft.rfft(x)
                out = torch.zeros(x.shape[0], width, n // 2 + 1, dtype=xf.dtype)
                out[:, :, :modes] = torch.einsum("bix,iox->box", xf[:, :, :modes], w)
                return torch.fft.irfft(out, n=n)
            xf = torch.fft.rfft2(x)
            out = torch.zeros(x.shape[0], width, n, n // 2 + 1, dtype=torch.cdouble)
            out[:, :, :modes, :modes] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :modes, :modes], w)
            return torch.fft.irfft2(out, s=(n, n))

    class FNO(nn.Module):
        def __init__(self):
            super().__init__()
            self.lift = nn.Linear(2, width)
            self.spectral = SpectralConv()
            self.pointwise = (nn.Conv1d if dims == 1 else nn.Conv2d)(width, width, 1)
            self.proj = nn.Linear(width, 1)

        def forward(self, u):
            h = self.lift(u).movedim(-1, 1)
            h = F.gelu(self.spectral(h) + self.pointwise(h))
            return self.proj(h.movedim(1, -1)).squeeze(-1)

    model = FNO()
    init = start(model, init)
    rng = np.random.default_rng(11 + dims)
    shape = (3,) + (n,) * dims
    u0 = torch.tensor(rng.standard_normal(shape))
    grid = torch.linspace(0, 1, n, dtype=torch.float64)
    if dims == 2:
        grid = grid[:, None] * grid[None, :]
    x = torch.stack([u0, grid.expand(shape)], dim=-1)
    target = torch.roll(u0, 1, dims=-1) * 0.5
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        loss = F.mse_loss(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, out=model(x), grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("dims, weights", [(1, "complex"), (1, "real_pairs"), (2, "complex")])
def test_fourier_neural_operator(torch, dims, weights):
    both(torch, fno, dims=dims, weights=weights)


# ---- DeepONet: a branch net on sensor values, a trunk net on query points, their einsum plus a bias --------------
def deeponet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    m, p = 6, 5

    class DeepONet(nn.Module):
        def __init__(self):
            super().__init__()
            self.branch = nn.Sequential(nn.Linear(m, 8), nn.Tanh(), nn.Linear(8, p))
            self.trunk = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, p), nn.Tanh())
            self.b0 = nn.Parameter(torch.zeros(1))

        def forward(self, u, y):
            return torch.einsum("bp,qp->bq", self.branch(u), self.trunk(y)) + self.b0

    model = DeepONet()
    init = start(model, init)
    rng = np.random.default_rng(21)
    a = torch.tensor(rng.uniform(-1, 1, (4, 1)))
    sensors = torch.linspace(0, 1, m, dtype=torch.float64)
    u = torch.sin(math.pi * a * sensors)
    y = torch.linspace(0, 1, 7, dtype=torch.float64).unsqueeze(1)
    # the antiderivative of sin(pi a s) from 0 to y
    target = (1 - torch.cos(math.pi * a * y.T)) / (math.pi * a)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=1e-2)
    losses = []
    for _ in range(4):
        loss = F.mse_loss(model(u, y), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, out=model(u, y), grads=grads(model), params=list(model.parameters()))


def test_deeponet_branch_trunk_einsum(torch):
    both(torch, deeponet)


# ---- a KAN layer: B-spline bases by the Cox-de Boor recursion on a uniform grid, a SiLU base branch ---------------
def kan(torch, init):
    nn, F = torch.nn, torch.nn.functional
    k, g = 3, 5

    class KANLinear(nn.Module):
        def __init__(self, fan_in, fan_out):
            super().__init__()
            h = 2 / g
            grid = torch.arange(-k, g + k + 1, dtype=torch.float64) * h - 1
            self.register_buffer("grid", grid.expand(fan_in, -1).contiguous())
            self.base_weight = nn.Parameter(torch.empty(fan_out, fan_in))
            self.spline_weight = nn.Parameter(0.1 * torch.randn(fan_out, fan_in, g + k))
            nn.init.kaiming_uniform_(self.base_weight, a=math.sqrt(5))

        def b_splines(self, x):
            grid, x = self.grid, x.unsqueeze(-1)
            bases = ((x >= grid[:, :-1]) & (x < grid[:, 1:])).to(x.dtype)
            for j in range(1, k + 1):
                left = (x - grid[:, :-(j + 1)]) / (grid[:, j:-1] - grid[:, :-(j + 1)]) * bases[..., :-1]
                right = (grid[:, j + 1:] - x) / (grid[:, j + 1:] - grid[:, 1:-j]) * bases[..., 1:]
                bases = left + right
            return bases

        def forward(self, x):
            base = F.linear(F.silu(x), self.base_weight)
            spline = F.linear(self.b_splines(x).view(x.size(0), -1), self.spline_weight.view(self.spline_weight.size(0), -1))
            return base + spline

    model = nn.Sequential(KANLinear(2, 4), KANLinear(4, 1))
    init = start(model, init)
    rng = np.random.default_rng(31)
    x = torch.tensor(rng.uniform(-0.95, 0.95, (16, 2)))
    y = torch.sin(math.pi * x[:, :1]) * x[:, 1:] ** 2
    opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)
    losses = []

    def closure():
        opt.zero_grad()
        loss = F.mse_loss(model(x), y) + 1e-3 * sum(m.spline_weight.abs().mean() for m in model)
        loss.backward()
        return loss

    for _ in range(2):
        losses.append(opt.step(closure).item())
    bases = model[0].b_splines(x)
    return dict(init=init, losses=losses, out=model(x), bases=bases, partition=bases.sum(-1),
                grads=grads(model), params=list(model.parameters()))


def test_kan_cox_de_boor_splines_silu_base(torch):
    both(torch, kan)


# ---- EGNN: messages from squared distances, coordinates moved by index_add_, equivariance under a rotation -------
def egnn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    d, n = 4, 5

    class EGNNLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.phi_e = nn.Sequential(nn.Linear(2 * d + 1, 8), nn.SiLU(), nn.Linear(8, 8), nn.SiLU())
            self.phi_x = nn.Sequential(nn.Linear(8, 8), nn.SiLU(), nn.Linear(8, 1, bias=False))
            self.phi_h = nn.Sequential(nn.Linear(d + 8, 8), nn.SiLU(), nn.Linear(8, d))

        def forward(self, h, x, edges):
            src, dst = edges
            rel = x[dst] - x[src]
            dist2 = (rel ** 2).sum(-1, keepdim=True)
            m = self.phi_e(torch.cat([h[dst], h[src], dist2], dim=-1))
            counts = torch.zeros(n, dtype=x.dtype).scatter_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
            x_new = x.clone().index_add_(0, dst, rel * self.phi_x(m)) / 1
            x_new = x + (x_new - x) / counts.clamp(min=1).unsqueeze(-1)
            agg = torch.zeros(n, m.shape[1], dtype=m.dtype).index_add_(0, dst, m)
            return h + self.phi_h(torch.cat([h, agg], dim=-1)), x_new

    layer = EGNNLayer()
    init = start(layer, init)
    rng = np.random.default_rng(41)
    h = torch.tensor(rng.standard_normal((n, d)))
    x = torch.tensor(rng.standard_normal((n, 3)))
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j and (i + j) % 3]
    edges = torch.tensor(pairs).T
    q, _ = torch.linalg.qr(torch.tensor(rng.standard_normal((3, 3))))
    shift = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    h1, x1 = layer(h, x, edges)
    h2, x2 = layer(h, x @ q.T + shift, edges)
    equivariant = [torch.allclose(h1, h2, atol=1e-10), torch.allclose(x1 @ q.T + shift, x2, atol=1e-10)]
    opt = torch.optim.Adam(layer.parameters(), lr=1e-2)
    target = torch.tensor(rng.standard_normal((n, 3)))
    losses = []
    for _ in range(3):
        hh, xx = layer(h, x, edges)
        loss = F.mse_loss(xx, target) + hh.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, equivariant=equivariant, h1=h1, x1=x1, losses=losses, grads=grads(layer),
                params=list(layer.parameters()))


def test_egnn_layer_equivariant_index_add(torch):
    theirs, _ = both(torch, egnn)
    assert theirs["equivariant"] == [True, True]


# ---- SchNet: Gaussian RBF of pairwise distances, a cosine cutoff, a filter network, cfconv by scatter_add_ -------
def schnet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_rbf, dim, cutoff = 6, 8, 2.5

    def ssp(x):
        return F.softplus(x) - math.log(2.0)

    class CFConv(nn.Module):
        def __init__(self):
            super().__init__()
            self.filter = nn.Sequential(nn.Linear(n_rbf, dim), nn.Softplus(), nn.Linear(dim, dim))
            self.in2f = nn.Linear(dim, dim, bias=False)
            self.f2out = nn.Linear(dim, dim)
            self.register_buffer("centers", torch.linspace(0, cutoff, n_rbf, dtype=torch.float64))

        def forward(self, h, pos, src, dst):
            dist = (pos[src] - pos[dst]).norm(dim=-1)
            gamma = 0.5 / (self.centers[1] - self.centers[0]) ** 2
            rbf = torch.exp(-gamma * (dist.unsqueeze(-1) - self.centers) ** 2)
            c = 0.5 * (torch.cos(dist * math.pi / cutoff) + 1) * (dist < cutoff).to(dist.dtype)
            w = self.filter(rbf) * c.unsqueeze(-1)
            msg = self.in2f(h)[src] * w
            agg = torch.zeros_like(h).scatter_add_(0, dst.unsqueeze(-1).expand_as(msg), msg)
            return h + self.f2out(ssp(agg))

    class SchNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(4, dim)
            self.conv = CFConv()
            self.out = nn.Sequential(nn.Linear(dim, 4), nn.Softplus(), nn.Linear(4, 1))

        def forward(self, z, pos, src, dst):
            return self.out(self.conv(self.embed(z), pos, src, dst)).sum()

    model = SchNet()
    init = start(model, init)
    rng = np.random.default_rng(51)
    z = torch.tensor([0, 1, 2, 1, 3, 0])
    pos = torch.tensor(rng.uniform(0, 2.0, (6, 3)), requires_grad=True)
    src, dst = torch.meshgrid(torch.arange(6), torch.arange(6), indexing="ij")
    keep = src != dst
    src, dst = src[keep], dst[keep]
    energy = model(z, pos, src, dst)
    (forces,) = torch.autograd.grad(-energy, pos, create_graph=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        energy = model(z, pos, src, dst)
        (f,) = torch.autograd.grad(-energy, pos, create_graph=True)
        loss = (energy - 1.0) ** 2 + f.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, forces=forces, losses=losses, grads=grads(model), params=list(model.parameters()))


def test_schnet_rbf_cosine_cutoff_forces(torch):
    both(torch, schnet)


# ---- a hidden Markov model: log_softmax parameters, the forward algorithm by logsumexp, Viterbi by backtracking --
def hmm(torch, init):
    nn = torch.nn
    S, V = 3, 4

    class HMM(nn.Module):
        def __init__(self):
            super().__init__()
            self.start_logits = nn.Parameter(torch.randn(S))
            self.trans_logits = nn.Parameter(torch.randn(S, S))
            self.emit_logits = nn.Parameter(torch.randn(S, V))

        def log_params(self):
            return (torch.log_softmax(self.start_logits, -1), torch.log_softmax(self.trans_logits, -1),
                    torch.log_softmax(self.emit_logits, -1))

        def forward(self, obs):
            log_pi, log_a, log_b = self.log_params()
            alpha = log_pi + log_b[:, obs[:, 0]].T
            for t in range(1, obs.shape[1]):
                alpha = torch.logsumexp(alpha.unsqueeze(-1) + log_a, dim=1) + log_b[:, obs[:, t]].T
            return torch.logsumexp(alpha, dim=-1)

        @torch.no_grad()
        def viterbi(self, seq):
            log_pi, log_a, log_b = self.log_params()
            score, back = log_pi + log_b[:, seq[0]], []
            for t in range(1, len(seq)):
                best, arg = (score.unsqueeze(-1) + log_a).max(dim=0)
                back.append(arg)
                score = best + log_b[:, seq[t]]
            path = [int(score.argmax())]
            for arg in reversed(back):
                path.append(int(arg[path[-1]]))
            return path[::-1], score.max()

    model = HMM()
    init = start(model, init)
    rng = np.random.default_rng(61)
    obs = torch.tensor(rng.integers(0, V, (5, 7)))
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for _ in range(4):
        loss = -model(obs).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    paths = [model.viterbi(seq) for seq in obs]
    return dict(init=init, losses=losses, loglik=model(obs), paths=paths, grads=grads(model),
                params=list(model.parameters()))


def test_hmm_forward_logsumexp_viterbi(torch):
    both(torch, hmm)
