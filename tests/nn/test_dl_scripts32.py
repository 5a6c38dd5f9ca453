"""Scientific-ML, probabilistic and structured models as researchers write them (a Fourier neural operator in 1-D and
2-D with complex spectral weights, clipped, and a float32 2-D one with cfloat corner-mode weights, a learned spectral
transfer function fitted by LBFGS over a complex Parameter, DeepONet, a KAN layer on Cox-de Boor B-splines, an
E(n)-equivariant GNN layer, SchNet's continuous-filter convolution, DimeNet's Bessel basis with its envelope, a hidden
Markov model's log-space forward algorithm with Viterbi decoding and its posteriors by differentiating log Z with a
Baum-Welch step, DeepAR with a Normal and with a NegativeBinomial likelihood, a particle filter with systematic
resampling, a batched Kalman filter with an RTS smoother, an unbalanced debiased Sinkhorn divergence, a DARTS cell,
second-order DARTS, GDAS, SWAG moments, SVGD, HMC with given momenta, a rational-quadratic spline flow, integrated
gradients (batched and by vmap(grad)) and SmoothGrad, DistMult / ComplEx with 1-N scoring), written once against a
`torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients,
parameters and outputs must agree closely (float64 unless said; random draws made by numpy and passed to both runs)."""
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
    losses, norms = [], []
    for _ in range(3):
        loss = F.mse_loss(model(x), target)
        opt.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.spectral.parameters(), 0.05))
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, norms=norms, out=model(x), grads=grads(model),
                params=list(model.parameters()))


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


# ---- DeepAR: an LSTM emitting Normal(mu, softplus(sigma)), teacher forcing, ancestral sampling from given noise --
def deepar(torch, init):
    nn, F = torch.nn, torch.nn.functional
    from_dist = torch.distributions

    class DeepAR(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(2, 6, num_layers=2, batch_first=True)
            self.mu = nn.Linear(6, 1)
            self.sigma = nn.Linear(6, 1)

        def forward(self, z_prev, cov, state=None):
            out, state = self.lstm(torch.cat([z_prev, cov], dim=-1), state)
            return self.mu(out).squeeze(-1), F.softplus(self.sigma(out)).squeeze(-1) + 1e-3, state

    model = DeepAR()
    init = start(model, init)
    rng = np.random.default_rng(71)
    T, H = 10, 4
    t = torch.arange(T + H, dtype=torch.float64)
    cov = torch.sin(2 * math.pi * t / 6).expand(3, -1).unsqueeze(-1)
    z = torch.tensor(np.sin(2 * math.pi * np.arange(T + H) / 6) + 0.1 * rng.standard_normal((3, T + H)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        mu, sigma, _ = model(z[:, :T - 1].unsqueeze(-1), cov[:, 1:T])
        dist = from_dist.Normal(mu, sigma)
        loss = -dist.log_prob(z[:, 1:T]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    noise = torch.tensor(rng.standard_normal((H, 3)))
    with torch.no_grad():
        _, _, state = model(z[:, :T - 1].unsqueeze(-1), cov[:, 1:T])
        prev, samples = z[:, T - 1:T], []
        for h in range(H):
            mu, sigma, state = model(prev.unsqueeze(-1), cov[:, T + h:T + h + 1], state)
            prev = mu + sigma * noise[h].unsqueeze(-1)
            samples.append(prev.squeeze(-1))
    return dict(init=init, losses=losses, samples=torch.stack(samples, 1), grads=grads(model),
                params=list(model.parameters()))


def test_deepar_lstm_normal_likelihood_ancestral_sampling(torch):
    both(torch, deepar)


# ---- a particle filter: weights in log space, systematic resampling from given uniforms by cumsum + searchsorted --
def particle_filter(torch, init):
    nn = torch.nn
    N, T = 8, 6

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(torch.tensor(0.7))
            self.log_obs_std = nn.Parameter(torch.tensor(-0.5))

    model = Model()
    init = start(model, init)
    rng = np.random.default_rng(81)
    ys = torch.tensor(np.cumsum(0.3 * rng.standard_normal(T)))
    eps = torch.tensor(rng.standard_normal((T, N)))
    u0 = torch.tensor(rng.uniform(0, 1, T))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses, ancestry = [], []
    for _ in range(2):
        particles = torch.zeros(N, dtype=torch.float64)
        loglik, means = 0, []
        for t in range(T):
            particles = model.a * particles + 0.3 * eps[t]
            logw = torch.distributions.Normal(particles, model.log_obs_std.exp()).log_prob(ys[t])
            loglik = loglik + torch.logsumexp(logw, 0) - math.log(N)
            w = torch.softmax(logw, 0)
            means.append((w * particles).sum())
            positions = (u0[t] + torch.arange(N, dtype=torch.float64)) / N
            cdf = torch.cumsum(w.detach(), 0)
            idx = torch.searchsorted(cdf, positions).clamp(max=N - 1)
            ancestry.append(idx)
            particles = particles.gather(0, idx)
        loss = -loglik
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, means=torch.stack(means), ancestry=torch.stack(ancestry),
                grads=grads(model), params=list(model.parameters()))


def test_particle_filter_systematic_resampling(torch):
    both(torch, particle_filter)


# ---- a DARTS cell: softmax-weighted mixed operations, architecture and weight steps by two optimizers -----------
def darts(torch, init):
    nn, F = torch.nn, torch.nn.functional
    C = 4

    class MixedOp(nn.Module):
        def __init__(self):
            super().__init__()
            self.ops = nn.ModuleList([
                nn.Identity(),
                nn.Sequential(nn.ReLU(), nn.Conv1d(C, C, 3, padding=1, bias=False), nn.BatchNorm1d(C, affine=False)),
                nn.Sequential(nn.ReLU(), nn.Conv1d(C, C, 5, padding=4, dilation=2, groups=C, bias=False)),
                nn.AvgPool1d(3, stride=1, padding=1, count_include_pad=False),
                nn.MaxPool1d(3, stride=1, padding=1),
            ])

        def forward(self, x, weights):
            return sum(w * op(x) for w, op in zip(weights, self.ops))

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv1d(1, C, 3, padding=1)
            self.edges = nn.ModuleList([MixedOp() for _ in range(3)])
            self.alpha = nn.Parameter(1e-3 * torch.randn(3, 5))
            self.head = nn.Linear(C, 2)

        def forward(self, x):
            s0 = self.stem(x)
            w = F.softmax(self.alpha, dim=-1)
            s1 = self.edges[0](s0, w[0])
            s2 = self.edges[1](s0, w[1]) + self.edges[2](s1, w[2])
            return self.head(s2.mean(-1))

        def weights(self):
            return [p for n, p in self.named_parameters() if n != "alpha"]

    model = Cell()
    init = start(model, init)
    rng = np.random.default_rng(91)
    x_train, x_val = (torch.tensor(rng.standard_normal((6, 1, 8))) for _ in range(2))
    y_train, y_val = (torch.tensor(rng.integers(0, 2, 6)) for _ in range(2))
    w_opt = torch.optim.SGD(model.weights(), lr=0.05, momentum=0.9, weight_decay=3e-4)
    a_opt = torch.optim.Adam([model.alpha], lr=3e-2, betas=(0.5, 0.999), weight_decay=1e-3)
    losses = []
    for _ in range(3):
        a_opt.zero_grad()
        val = F.cross_entropy(model(x_val), y_val)
        val.backward()
        a_opt.step()
        w_opt.zero_grad()
        train = F.cross_entropy(model(x_train), y_train)
        train.backward()
        nn.utils.clip_grad_norm_(model.weights(), 5.0)
        w_opt.step()
        losses.append((val.item(), train.item()))
    genotype = F.softmax(model.alpha, dim=-1).argmax(-1)
    return dict(init=init, losses=losses, genotype=genotype, alpha=model.alpha, grads=grads(model),
                params=list(model.parameters()))


def test_darts_cell_alternating_optimizers(torch):
    both(torch, darts)


# ---- SWAG: running first and second moments of the flattened parameters, sampling from given noise -------------
def swag(torch, init):
    nn, F = torch.nn, torch.nn.functional
    from_vec = nn.utils
    model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
    init = start(model, init)
    rng = np.random.default_rng(101)
    x = torch.tensor(rng.standard_normal((12, 3)))
    y = x[:, :1] * x[:, 1:2] - x[:, 2:]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    mean = torch.zeros_like(from_vec.parameters_to_vector(model.parameters()))
    sq_mean = torch.zeros_like(mean)
    devs, n, losses = [], 0, []
    for step in range(6):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step % 2 == 1:
            with torch.no_grad():
                w = from_vec.parameters_to_vector(model.parameters())
                mean = (n * mean + w) / (n + 1)
                sq_mean = (n * sq_mean + w ** 2) / (n + 1)
                devs.append(w - mean)
                n += 1
    var = torch.clamp(sq_mean - mean ** 2, min=1e-12)
    D = torch.stack(devs, dim=1)
    z1 = torch.tensor(rng.standard_normal(mean.shape[0]))
    z2 = torch.tensor(rng.standard_normal(D.shape[1]))
    sample = mean + (0.5 ** 0.5) * var.sqrt() * z1 + D @ z2 / (2 * (D.shape[1] - 1)) ** 0.5
    preds = []
    with torch.no_grad():
        from_vec.vector_to_parameters(sample, model.parameters())
        preds.append(model(x))
        from_vec.vector_to_parameters(mean, model.parameters())
        preds.append(model(x))
    return dict(init=init, losses=losses, mean=mean, var=var, sample=sample, preds=preds,
                params=list(model.parameters()))


def test_swag_moments_parameters_to_vector(torch):
    both(torch, swag)


# ---- integrated gradients over given alphas (a batch of interpolates, a trapezoidal sum), SmoothGrad ------------
def attributions(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(5, 8), nn.Softplus(), nn.Linear(8, 3))
    init = start(model, init)
    rng = np.random.default_rng(111)
    x = torch.tensor(rng.standard_normal((2, 5)))
    baseline = torch.zeros_like(x)
    target = model(x).argmax(-1)
    alphas = torch.linspace(0, 1, 9, dtype=torch.float64)
    path = baseline.unsqueeze(0) + alphas.view(-1, 1, 1) * (x - baseline).unsqueeze(0)
    path.requires_grad_(True)
    out = model(path)
    picked = out.gather(-1, target.view(1, -1, 1).expand(len(alphas), -1, 1)).sum()
    (g,) = torch.autograd.grad(picked, path)
    avg = torch.trapezoid(g, alphas, dim=0)
    avg_by_hand = ((g[:-1] + g[1:]) / 2 * torch.diff(alphas).view(-1, 1, 1)).sum(0)
    ig = (x - baseline) * avg
    rows = torch.arange(2)
    completeness = ig.sum(-1) - (model(x)[rows, target] - model(baseline)[rows, target])
    noise = torch.tensor(rng.normal(0, 0.2, (6, 2, 5)))
    noisy = (x.unsqueeze(0) + noise).requires_grad_()
    (sg,) = torch.autograd.grad(model(noisy)[..., 0].sum(), noisy)
    return dict(init=init, ig=ig, by_hand=avg_by_hand, completeness=completeness,
                smooth=sg.mean(0), smooth_sq=sg.pow(2).mean(0))


def test_integrated_gradients_trapezoid_smoothgrad(torch):
    both(torch, attributions)


# ---- DistMult and ComplEx: 1-N scoring against every entity, BCE with label smoothing, a filtered rank ----------
def kg_1n(torch, init, kind):
    nn, F = torch.nn, torch.nn.functional
    E, R, k = 7, 3, 4

    class KG(nn.Module):
        def __init__(self):
            super().__init__()
            width = 2 * k if kind == "complex" else k
            self.ent = nn.Embedding(E, width)
            self.rel = nn.Embedding(R, width)
            self.drop = nn.Dropout(0.0)
            nn.init.xavier_normal_(self.ent.weight)
            nn.init.xavier_normal_(self.rel.weight)

        def forward(self, h, r):
            eh, er = self.drop(self.ent(h)), self.rel(r)
            if kind == "distmult":
                return (eh * er) @ self.ent.weight.T
            hc = torch.view_as_complex(eh.view(-1, k, 2))
            rc = torch.view_as_complex(er.view(-1, k, 2))
            tc = torch.view_as_complex(self.ent.weight.view(E, k, 2))
            return torch.real((hc * rc) @ tc.conj().T)

    model = KG()
    init = start(model, init)
    triples = torch.tensor([[0, 0, 1], [1, 1, 2], [2, 0, 3], [0, 0, 4], [5, 2, 6], [3, 1, 0]])
    h, r, t = triples.T
    labels = torch.zeros(len(triples), E, dtype=torch.float64)
    labels[torch.arange(len(triples)), t] = 1.0
    for i, (hh, rr, _) in enumerate(triples.tolist()):
        same = (h == hh) & (r == rr)
        labels[i, t[same]] = 1.0
    smoothed = (1 - 0.1) * labels + 0.1 / E
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        loss = F.binary_cross_entropy_with_logits(model(h, r), smoothed)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        scores = torch.sigmoid(model(h, r))
        filtered = scores.masked_fill(labels.bool() & ~F.one_hot(t, E).bool(), -1.0)
        ranks = 1 + (filtered > filtered.gather(1, t[:, None])).sum(1)
    return dict(init=init, losses=losses, scores=scores, ranks=ranks, mrr=(1.0 / ranks.double()).mean(),
                grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("kind", ["distmult", "complex"])
def test_distmult_complex_one_to_n_label_smoothing(torch, kind):
    both(torch, kg_1n, kind=kind)


# ---- a learned spectral transfer function: a complex Parameter by nn.init.normal_, fitted by strong-Wolfe LBFGS ---
def spectral_filter(torch, init):
    nn = torch.nn
    n = 16

    class Filter(nn.Module):
        def __init__(self):
            super().__init__()
            self.H = nn.Parameter(torch.empty(n // 2 + 1, dtype=torch.cdouble))
            nn.init.normal_(self.H, 0.5, 0.1)

        def forward(self, x):
            return torch.fft.irfft(torch.fft.rfft(x, norm="ortho") * self.H, n=n, norm="ortho")

    model = Filter()
    init = start(model, init)
    rng = np.random.default_rng(121)
    x = torch.tensor(rng.standard_normal((4, n)))
    kernel = torch.tensor([0.25, 0.5, 0.25, -0.1])
    y = sum(k * torch.roll(x, i, dims=-1) for i, k in enumerate(kernel))
    opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=6, history_size=4, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean() + 1e-3 * model.H.abs().pow(2).sum()
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(2)]
    try:
        nn.utils.clip_grad_value_(model.parameters(), 0.1)
        refused = None
    except NotImplementedError as e:
        refused = str(e)
    state = opt.state[model.H]
    return dict(init=init, losses=losses, H=torch.view_as_real(model.H.detach()), refused=refused,
                direction=state["d"], evals=state["func_evals"], out=model(x))


def test_spectral_filter_complex_parameter_lbfgs(torch):
    both(torch, spectral_filter)


# ---- a batched Kalman filter with an RTS smoother: MultivariateNormal innovations, Q by a Cholesky factor -------
def kalman_rts(torch, init):
    nn, D = torch.nn, torch.distributions

    class StateSpace(nn.Module):
        def __init__(self):
            super().__init__()
            self.F = nn.Parameter(torch.tensor([[1.0, 0.1], [0.0, 0.95]]))
            self.q_raw = nn.Parameter(torch.tensor([[-1.0, 0.0], [0.2, -1.5]]))
            self.log_r = nn.Parameter(torch.tensor(-1.0))

        def Q(self):
            L = torch.tril(self.q_raw, diagonal=-1) + torch.diag_embed(self.q_raw.diagonal().exp())
            return L @ L.mT

        def forward(self, ys):
            B, T, _ = ys.shape
            H = torch.tensor([[1.0, 0.0]], dtype=ys.dtype)
            Q, R = self.Q(), self.log_r.exp().reshape(1, 1)
            m = torch.zeros(B, 2, dtype=ys.dtype)
            P = torch.eye(2, dtype=ys.dtype).expand(B, 2, 2)
            loglik, filt, preds = 0, [], []
            for t in range(T):
                m_pred = m @ self.F.T
                P_pred = self.F @ P @ self.F.T + Q
                preds.append((m_pred, P_pred))
                S = H @ P_pred @ H.T + R
                loglik = loglik + D.MultivariateNormal(m_pred @ H.T, covariance_matrix=S).log_prob(ys[:, t]).sum()
                K = torch.linalg.solve(S, H @ P_pred).mT
                m = m_pred + ((ys[:, t] - m_pred @ H.T).unsqueeze(1) @ K.mT).squeeze(1)
                I_KH = torch.eye(2, dtype=ys.dtype) - K @ H
                P = I_KH @ P_pred @ I_KH.mT + K @ R @ K.mT  # Joseph form
                filt.append((m, P))
            ms, Ps = [filt[-1][0]], [filt[-1][1]]
            for t in range(T - 2, -1, -1):
                m_f, P_f = filt[t]
                m_p, P_p = preds[t + 1]
                G = torch.linalg.solve(P_p, self.F @ P_f).mT
                ms.insert(0, m_f + ((ms[0] - m_p).unsqueeze(1) @ G.mT).squeeze(1))
                Ps.insert(0, P_f + G @ (Ps[0] - P_p) @ G.mT)
            return loglik, torch.stack(ms, 1), torch.stack(Ps, 1)

    model = StateSpace()
    init = start(model, init)
    rng = np.random.default_rng(131)
    pos = np.cumsum(0.1 * np.cumsum(0.2 * rng.standard_normal((3, 7)), 1), 1)
    ys = torch.tensor(pos + 0.3 * rng.standard_normal((3, 7))).unsqueeze(-1)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        loglik, ms, Ps = model(ys)
        opt.zero_grad()
        (-loglik).backward()
        opt.step()
        losses.append(loglik.item())
    return dict(init=init, losses=losses, smoothed=ms, covs=Ps, Q=model.Q(), grads=grads(model),
                params=list(model.parameters()))


def test_kalman_rts_smoother_batched_mvn_joseph(torch):
    both(torch, kalman_rts)


# ---- a debiased, unbalanced Sinkhorn divergence (KL-relaxed marginals) moving a point cloud by SGD -------------
def sinkhorn_divergence(torch, init):
    eps, rho, iters = 0.1, 1.0, 20
    damp = rho / (rho + eps)

    def ot(x, y, a, b):
        C = torch.cdist(x, y) ** 2 / 2
        f, g = torch.zeros_like(a), torch.zeros_like(b)
        for _ in range(iters):
            f = -damp * eps * torch.logsumexp(b.log().unsqueeze(0) + (g.unsqueeze(0) - C) / eps, dim=1)
            g = -damp * eps * torch.logsumexp(a.log().unsqueeze(1) + (f.unsqueeze(1) - C) / eps, dim=0)
        # the dual objective of the unbalanced problem
        phi = lambda p: -rho * (torch.exp(-p / rho) - 1)  # noqa: E731
        plan = torch.exp((f.unsqueeze(1) + g.unsqueeze(0) - C) / eps) * a.unsqueeze(1) * b.unsqueeze(0)
        return (a * phi(f)).sum() + (b * phi(g)).sum() - eps * (plan.sum() - a.sum() * b.sum()), plan

    rng = np.random.default_rng(141)
    x = torch.tensor(rng.standard_normal((6, 2)), requires_grad=True)
    y = torch.tensor(rng.standard_normal((5, 2)) + 1.0)
    a = torch.full((6,), 1 / 6, dtype=torch.float64)
    b = torch.tensor(rng.uniform(0.5, 1.5, 5) / 5)
    opt = torch.optim.SGD([x], lr=0.5)
    losses = []
    for _ in range(3):
        xy, plan = ot(x, y, a, b)
        loss = xy - 0.5 * ot(x, x, a, a)[0] - 0.5 * ot(y, y, b, b)[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=None, losses=losses, x=x, plan=plan, mass=plan.sum(), grad=x.grad)


def test_unbalanced_sinkhorn_divergence_debiased(torch):
    both(torch, sinkhorn_divergence)


# ---- DeepAR on counts: NegativeBinomial(total_count, logits) scaled by each series' mean, a mean forecast --------
def deepar_counts(torch, init):
    nn, F, D = torch.nn, torch.nn.functional, torch.distributions

    class DeepARCounts(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(2, 5, batch_first=True)
            self.mu = nn.Linear(5, 1)
            self.alpha = nn.Linear(5, 1)

        def forward(self, z_prev, age, scale, h=None):
            out, h = self.rnn(torch.cat([z_prev / scale.unsqueeze(-1), age], -1), h)
            mu = F.softplus(self.mu(out)).squeeze(-1) * scale
            alpha = F.softplus(self.alpha(out)).squeeze(-1) / scale.sqrt()
            total = 1 / alpha
            return D.NegativeBinomial(total_count=total, logits=(alpha * mu).log()), h

    model = DeepARCounts()
    init = start(model, init)
    rng = np.random.default_rng(151)
    z = torch.tensor(rng.poisson(np.array([[2.0], [6.0], [12.0]]) * (1.2 + np.sin(np.arange(12) / 2)), (3, 12)))
    z = z.double()
    age = torch.log1p(torch.arange(12, dtype=torch.float64)).expand(3, -1).unsqueeze(-1)
    scale = 1 + z[:, :8].mean(1, keepdim=True)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        dist, _ = model(z[:, :7].unsqueeze(-1), age[:, 1:8], scale)
        loss = -dist.log_prob(z[:, 1:8]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        dist, h = model(z[:, :7].unsqueeze(-1), age[:, 1:8], scale)
        prev, means = z[:, 7:8], []
        for t in range(8, 12):
            d, h = model(prev.unsqueeze(-1), age[:, t:t + 1], scale, h)
            prev = d.mean
            means.append(prev.squeeze(-1))
    return dict(init=init, losses=losses, fit_mean=dist.mean, fit_var=dist.variance, forecast=torch.stack(means, 1),
                grads=grads(model), params=list(model.parameters()))


def test_deepar_negative_binomial_counts(torch):
    both(torch, deepar_counts)


# ---- SVGD: an RBF kernel with the median heuristic, the score by autograd.grad, particles moved by Adagrad -------
def svgd(torch, init):
    D = torch.distributions
    mix = D.MixtureSameFamily(D.Categorical(probs=torch.tensor([0.3, 0.7], dtype=torch.float64)),
                              D.Independent(D.Normal(torch.tensor([[-2.0, 0.0], [2.0, 1.0]], dtype=torch.float64),
                                                     torch.tensor([[0.5, 0.8], [0.7, 0.5]], dtype=torch.float64)), 1))
    rng = np.random.default_rng(161)
    x = torch.tensor(rng.standard_normal((7, 2)))
    opt = torch.optim.Adagrad([x], lr=0.3)
    bandwidths = []
    for _ in range(4):
        xg = x.detach().requires_grad_(True)
        (score,) = torch.autograd.grad(mix.log_prob(xg).sum(), xg)
        d2 = torch.cdist(x, x) ** 2
        h = d2.flatten().median() / math.log(x.shape[0] + 1)
        bandwidths.append(h.item())
        K = torch.exp(-d2 / h)
        repulse = (K.sum(1, keepdim=True) * x - K @ x) * 2 / h
        phi = (K @ score + repulse) / x.shape[0]
        x.grad = -phi
        opt.step()
    return dict(init=None, x=x, bandwidths=bandwidths, logp=mix.log_prob(x), state=opt.state[x]["sum"])


def test_svgd_rbf_median_heuristic_mixture(torch):
    both(torch, svgd)


# ---- HMC: leapfrog by autograd.grad on a learned energy, given momenta and uniforms, Metropolis by torch.where ----
def hmc(torch, init):
    nn = torch.nn
    energy = nn.Sequential(nn.Linear(2, 8), nn.Softplus(), nn.Linear(8, 1))
    init = start(energy, init)
    rng = np.random.default_rng(171)
    momenta = torch.tensor(rng.standard_normal((3, 5, 2)))
    uniforms = torch.tensor(rng.uniform(0, 1, (3, 5)))

    def U(q):
        return energy(q).squeeze(-1) + 0.5 * (q ** 2).sum(-1)

    def grad_U(q):
        q = q.detach().requires_grad_(True)
        return torch.autograd.grad(U(q).sum(), q)[0]

    q = torch.zeros(5, 2, dtype=torch.float64)
    accepts, step = [], 0.3
    for i in range(3):
        p0 = momenta[i]
        qn, p = q.clone(), p0 - 0.5 * step * grad_U(q)
        for k in range(4):
            qn = qn + step * p
            if k < 3:
                p = p - step * grad_U(qn)
        p = p - 0.5 * step * grad_U(qn)
        with torch.no_grad():
            h0 = U(q) + 0.5 * (p0 ** 2).sum(-1)
            h1 = U(qn) + 0.5 * (p ** 2).sum(-1)
            accept = uniforms[i].log() < (h0 - h1)
            q = torch.where(accept.unsqueeze(-1), qn, q)
        accepts.append(accept)
    # contrastive-divergence style step on the energy from the chain's samples
    data = torch.tensor(rng.standard_normal((5, 2)) + 1.0)
    loss = energy(data).mean() - energy(q).mean()
    loss.backward()
    return dict(init=init, q=q, accepts=torch.stack(accepts), loss=loss, grads=grads(energy))


def test_hmc_leapfrog_given_momenta_metropolis(torch):
    both(torch, hmc)


# ---- a neural spline flow: monotone rational-quadratic splines, bins found by searchsorted, the log-determinant -
def spline_flow(torch, init):
    nn, F = torch.nn, torch.nn.functional
    K, B = 4, 3.0

    def rq_spline(x, w, h, d):
        widths = F.pad(torch.cumsum(F.softmax(w, -1), -1), (1, 0)) * 2 * B - B
        heights = F.pad(torch.cumsum(F.softmax(h, -1), -1), (1, 0)) * 2 * B - B
        derivs = F.pad(F.softplus(d) + 1e-3, (1, 1), value=1.0)
        inside = (x > -B) & (x < B)
        xc = x.clamp(-B + 1e-6, B - 1e-6)
        idx = (torch.searchsorted(widths.contiguous(), xc.unsqueeze(-1)) - 1).clamp(0, K - 1)
        pick = lambda t: t.gather(-1, idx).squeeze(-1)  # noqa: E731
        x0, x1, y0, y1 = pick(widths), pick(widths[..., 1:]), pick(heights), pick(heights[..., 1:])
        d0, d1 = pick(derivs), pick(derivs[..., 1:])
        wk, s = x1 - x0, (y1 - y0) / (x1 - x0)
        xi = (xc - x0) / wk
        denom = s + (d1 + d0 - 2 * s) * xi * (1 - xi)
        y = y0 + (y1 - y0) * (s * xi ** 2 + d0 * xi * (1 - xi)) / denom
        dy = s ** 2 * (d1 * xi ** 2 + 2 * s * xi * (1 - xi) + d0 * (1 - xi) ** 2) / denom ** 2
        return torch.where(inside, y, x), torch.where(inside, dy.log(), torch.zeros_like(x))

    class Coupling(nn.Module):
        def __init__(self, flip):
            super().__init__()
            self.flip = flip
            self.net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 3 * K - 1))

        def forward(self, x):
            a, b = (x[:, 1:], x[:, :1]) if self.flip else (x[:, :1], x[:, 1:])
            w, h, d = self.net(a).unsqueeze(1).split([K, K, K - 1], dim=-1)
            yb, logdet = rq_spline(b, w, h, d)
            y = torch.cat([yb, a], 1) if self.flip else torch.cat([a, yb], 1)
            return y, logdet.sum(1)

    flows = nn.ModuleList([Coupling(False), Coupling(True)])
    init = start(flows, init)
    rng = np.random.default_rng(181)
    x = torch.tensor(np.stack([rng.standard_normal(16), rng.standard_normal(16) ** 2 - 1], 1))
    base = torch.distributions.Normal(0.0, 1.0)
    opt = torch.optim.Adam(flows.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        z, total = x, 0
        for f in flows:
            z, ld = f(z)
            total = total + ld
        loss = -(base.log_prob(z).sum(1) + total).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, z=z, logdet=total, grads=grads(flows), params=list(flows.parameters()))


def test_neural_spline_flow_searchsorted(torch):
    both(torch, spline_flow)


# ---- GDAS: a hard Gumbel-softmax over operations with given Gumbel noise, the straight-through estimator --------
def gdas(torch, init):
    nn, F = torch.nn, torch.nn.functional
    ops = [lambda x: x, torch.tanh, F.relu, lambda x: torch.zeros_like(x)]

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.pre = nn.Linear(3, 4)
            self.arch = nn.Parameter(torch.zeros(2, len(ops)))
            self.post = nn.Linear(4, 2)

        def forward(self, x, gumbel, tau):
            soft = F.softmax((self.arch + gumbel) / tau, dim=-1)
            index = soft.argmax(-1, keepdim=True)
            hard = torch.zeros_like(soft).scatter_(-1, index, 1.0)
            w = hard - soft.detach() + soft
            h = self.pre(x)
            for e in range(2):
                h = sum(w[e, i] * op(h) for i, op in enumerate(ops))
            return self.post(h), index.squeeze(-1)

    model = Cell()
    init = start(model, init)
    rng = np.random.default_rng(191)
    x, y = torch.tensor(rng.standard_normal((8, 3))), torch.tensor(rng.integers(0, 2, 8))
    g = torch.tensor(-np.log(-np.log(rng.uniform(1e-9, 1, (4, 2, len(ops))))))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses, chosen = [], []
    for step in range(4):
        tau = 10 * (0.1 / 10) ** (step / 3)
        out, idx = model(x, g[step], tau)
        loss = F.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        chosen.append(idx)
    return dict(init=init, losses=losses, chosen=torch.stack(chosen), grads=grads(model),
                params=list(model.parameters()))


def test_gdas_hard_gumbel_straight_through(torch):
    both(torch, gdas)


# ---- DimeNet's radial basis: sin(n pi d / c) / d with a polynomial envelope, energies and forces ----------------
def bessel_rbf(torch, init):
    nn = torch.nn
    cutoff, p, n_rbf = 3.0, 5, 4

    class Envelope(nn.Module):
        def forward(self, x):
            a, b, c = -(p + 1) * (p + 2) / 2, p * (p + 2), -p * (p + 1) / 2
            env = 1 / x + a * x ** (p - 1) + b * x ** p + c * x ** (p + 1)
            return torch.where(x < 1, env, torch.zeros_like(x))

    class RadialBasis(nn.Module):
        def __init__(self):
            super().__init__()
            self.freq = nn.Parameter(math.pi * torch.arange(1, n_rbf + 1, dtype=torch.float64))
            self.envelope = Envelope()

        def forward(self, d):
            x = d.unsqueeze(-1) / cutoff
            return self.envelope(x) * torch.sin(self.freq * x)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.rbf = RadialBasis()
            self.mlp = nn.Sequential(nn.Linear(n_rbf, 6), nn.SiLU(), nn.Linear(6, 1))

        def forward(self, pos):
            i, j = torch.triu_indices(pos.shape[0], pos.shape[0], offset=1)
            d = torch.linalg.vector_norm(pos[i] - pos[j], dim=-1)
            return self.mlp(self.rbf(d)).sum()

    model = Model()
    init = start(model, init)
    rng = np.random.default_rng(201)
    pos = torch.tensor(rng.uniform(0, 1.8, (5, 3)), requires_grad=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        e = model(pos)
        (f,) = torch.autograd.grad(-e, pos, create_graph=True)
        loss = (e + 0.5) ** 2 + 0.1 * f.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, forces=f, grads=grads(model), params=list(model.parameters()))


def test_dimenet_bessel_basis_envelope_forces(torch):
    both(torch, bessel_rbf)


# ---- HMM posteriors by differentiating log Z (forward-backward through autograd), then a Baum-Welch M-step -------
def hmm_posteriors(torch, init):
    S, V, T = 3, 4, 6
    rng = np.random.default_rng(211)
    log_pi = torch.log_softmax(torch.tensor(rng.standard_normal(S)), -1)
    log_A = torch.log_softmax(torch.tensor(rng.standard_normal((S, S))), -1)
    emit = torch.distributions.Categorical(logits=torch.tensor(rng.standard_normal((S, V))))
    obs = torch.tensor(rng.integers(0, V, (2, T)))
    lls = []
    for _ in range(2):
        # log p(x_t | z_t = s) for every state; made a leaf so its gradient is the posterior marginals
        log_b = emit.log_prob(obs.unsqueeze(-1)).detach().requires_grad_(True)  # (batch, T, S)
        pair = torch.zeros(2, T - 1, S, S, dtype=torch.float64, requires_grad=True)
        alpha = log_pi + log_b[:, 0]
        for t in range(1, T):
            alpha = torch.logsumexp(alpha.unsqueeze(-1) + log_A + pair[:, t - 1], dim=1) + log_b[:, t]
        log_z = torch.logsumexp(alpha, -1).sum()
        gamma, xi = torch.autograd.grad(log_z, [log_b, pair])
        lls.append(log_z.item())
        # M-step from the expected counts
        log_pi = (gamma[:, 0].mean(0) + 1e-12).log()
        log_A = torch.log(xi.sum((0, 1)) / xi.sum((0, 1, 3)).unsqueeze(-1))
        counts = torch.zeros(S, V, dtype=torch.float64).index_add_(1, obs.flatten(), gamma.reshape(-1, S).T)
        emit = torch.distributions.Categorical(probs=counts / counts.sum(-1, keepdim=True))
    return dict(init=None, lls=lls, gamma=gamma, xi=xi, log_A=log_A, emit=emit.probs,
                entropy=emit.entropy(), check=gamma.sum(-1))


def test_hmm_posteriors_by_autograd_baum_welch(torch):
    theirs, _ = both(torch, hmm_posteriors)
    np.testing.assert_allclose(theirs["check"].numpy(), 1.0)


# ---- a float32 2-D FNO as the reference code writes it: cfloat weights from torch.rand, both corner mode blocks ---
def fno2d_float32(torch, init):
    nn, F = torch.nn, torch.nn.functional
    w, m1, m2, n = 3, 2, 3, 8

    class SpectralConv2d(nn.Module):
        def __init__(self):
            super().__init__()
            scale = 1 / (w * w)
            self.weights1 = nn.Parameter(scale * torch.rand(w, w, m1, m2, dtype=torch.cfloat))
            self.weights2 = nn.Parameter(scale * torch.rand(w, w, m1, m2, dtype=torch.cfloat))

        def forward(self, x):
            x_ft = torch.fft.rfft2(x)
            out_ft = torch.zeros(x.size(0), w, x.size(-2), x.size(-1) // 2 + 1, dtype=torch.cfloat)
            out_ft[:, :, :m1, :m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m1, :m2], self.weights1)
            out_ft[:, :, -m1:, :m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m1:, :m2], self.weights2)
            return torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc0 = nn.Linear(3, w)
            self.conv = SpectralConv2d()
            self.w0 = nn.Conv2d(w, w, 1)
            self.fc1 = nn.Linear(w, 1)

        def forward(self, a):
            gx = torch.linspace(0, 1, n).reshape(1, n, 1, 1).repeat(a.shape[0], 1, n, 1)
            gy = torch.linspace(0, 1, n).reshape(1, 1, n, 1).repeat(a.shape[0], n, 1, 1)
            h = self.fc0(torch.cat((a, gx, gy), dim=-1)).permute(0, 3, 1, 2)
            h = F.gelu(self.conv(h) + self.w0(h))
            return self.fc1(h.permute(0, 2, 3, 1))

    model = Net()
    if init is None:
        init = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    else:
        model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    rng = np.random.default_rng(221)
    a = torch.tensor(rng.standard_normal((2, n, n, 1)).astype(np.float32))
    u = torch.roll(a, 1, dims=1) * 0.5
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    losses = []
    for _ in range(2):
        loss = F.mse_loss(model(a), u, reduction="sum") / a.shape[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, out=model(a), w1=torch.view_as_real(model.conv.weights1.detach()),
                dtypes=[str(p.dtype).split(".")[-1] for p in model.parameters()])


def test_fno2d_float32_cfloat_weights_corner_modes(torch):
    both(torch, fno2d_float32, tol=dict(rtol=2e-5, atol=2e-6))


# ---- integrated gradients by vmap(grad) over alphas (a Riemann midpoint sum) against the batched version --------
def ig_vmap(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
    init = start(model, init)
    rng = np.random.default_rng(231)
    x = torch.tensor(rng.standard_normal(4))
    baseline = torch.tensor(rng.standard_normal(4)) * 0.1
    alphas = (torch.arange(8, dtype=torch.float64) + 0.5) / 8

    def score(inp):
        return model(inp).squeeze(-1)

    path = baseline + alphas.unsqueeze(-1) * (x - baseline)
    g = torch.func.vmap(torch.func.grad(score))(path)
    ig = (x - baseline) * g.mean(0)
    batched = path.clone().requires_grad_(True)
    (g2,) = torch.autograd.grad(score(batched).sum(), batched)
    gap = ig.sum() - (score(x) - score(baseline))
    return dict(init=init, ig=ig, same=g - g2, gap=gap)


def test_integrated_gradients_vmap_grad_midpoint(torch):
    both(torch, ig_vmap)


# ---- second-order DARTS: a virtual step on the weights, the architecture gradient corrected by a finite-difference
# Hessian-vector product (weights moved through .data, as the reference code does) ------------------------------
def darts_unrolled(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.ops = nn.ModuleList([nn.Linear(3, 4), nn.Sequential(nn.Linear(3, 4), nn.ReLU()),
                                      nn.Sequential(nn.Linear(3, 4, bias=False), nn.Tanh())])
            self.alpha = nn.Parameter(torch.zeros(3))
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            w = F.softmax(self.alpha, 0)
            return self.head(sum(wi * op(x) for wi, op in zip(w, self.ops)))

        def weights(self):
            return [p for n, p in self.named_parameters() if n != "alpha"]

    model = Mixed()
    init = start(model, init)
    rng = np.random.default_rng(241)
    xt, xv = torch.tensor(rng.standard_normal((6, 3))), torch.tensor(rng.standard_normal((6, 3)))
    yt, yv = torch.tensor(rng.integers(0, 2, 6)), torch.tensor(rng.integers(0, 2, 6))
    xi = 0.1
    a_opt = torch.optim.Adam([model.alpha], lr=3e-2)
    w_opt = torch.optim.SGD(model.weights(), lr=xi, momentum=0.9)
    hessians = []
    for _ in range(2):
        backup = [p.data.clone() for p in model.weights()]
        gw = torch.autograd.grad(F.cross_entropy(model(xt), yt), model.weights())
        for p, g in zip(model.weights(), gw):
            p.data.sub_(xi * g)
        dalpha, *dw = torch.autograd.grad(F.cross_entropy(model(xv), yv), [model.alpha] + model.weights())
        r = 1e-2 / torch.cat([d.flatten() for d in dw]).norm()
        sides = []
        for sign in (1, -1):
            for p, b, d in zip(model.weights(), backup, dw):
                p.data.copy_(b + sign * r * d)
            sides.append(torch.autograd.grad(F.cross_entropy(model(xt), yt), model.alpha)[0])
        for p, b in zip(model.weights(), backup):
            p.data.copy_(b)
        hessian = (sides[0] - sides[1]) / (2 * r)
        hessians.append(hessian)
        a_opt.zero_grad()
        model.alpha.grad = dalpha - xi * hessian
        a_opt.step()
        w_opt.zero_grad()
        F.cross_entropy(model(xt), yt).backward()
        w_opt.step()
    return dict(init=init, hessians=hessians, alpha=model.alpha, grads=grads(model), params=list(model.parameters()))


def test_darts_second_order_finite_difference_hessian(torch):
    both(torch, darts_unrolled, tol=dict(rtol=1e-7, atol=1e-9))
