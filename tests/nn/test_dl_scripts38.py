"""Scientific computing and differentiable simulation in plain torch (a pendulum's length and damping fitted through
RK4 with a leapfrog energy check, a neural ODE's discrete adjoint against backprop through the solver, viscous Burgers
by a dealiased pseudo-spectral IMEX step with a learned forcing, a rigid rotation by matrix_exp against Rodrigues'
formula, a 2-D Poisson solve on a Kronecker Laplacian built sparse then made dense, spectral clustering through eigh
with a learned affinity, weighted Procrustes by SVD with its determinant sign fix, a QR-parametrized orthogonal
recurrence, a Gaussian likelihood with a learned Cholesky factor, an information-form Kalman filter with an RTS
smoother, an implicit (equilibrium) layer differentiated by a solve in a tensor hook, Metropolis-adjusted Langevin on a
learned energy, Sinkhorn barycenters in the log domain, a soft triangle rasterizer, Gray-Scott reaction-diffusion by
circular conv2d stencils, a D2Q9 lattice Boltzmann flow streamed by torch.roll, single shooting under LBFGS, a mass-spring cloth with learned stiffness), written once against
a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients,
parameters and outputs must agree closely (float64 throughout; random draws made by numpy and passed to both runs)."""
import math

import numpy as np

from twins import both, grads, start


def f64(torch, a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


# ---- a pendulum's length and damping fitted from a noisy trajectory through RK4; leapfrog's energy with the fit ---
def pendulum(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(1)
    g, h, steps = 9.81, 0.05, 30

    def field(s, length, damping):
        theta, omega = s[..., 0], s[..., 1]
        return torch.stack([omega, -g / length * torch.sin(theta) - damping * omega], dim=-1)

    def rollout(s, length, damping):
        out = [s]
        for _ in range(steps):
            k1 = field(s, length, damping)
            k2 = field(s + 0.5 * h * k1, length, damping)
            k3 = field(s + 0.5 * h * k2, length, damping)
            k4 = field(s + h * k3, length, damping)
            s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            out.append(s)
        return torch.stack(out, dim=1)

    class Pendulum(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_length = nn.Parameter(torch.zeros(()))
            self.damping = nn.Parameter(torch.full((), 0.05))

        def forward(self, s0):
            return rollout(s0, self.log_length.exp(), self.damping)

    s0 = f64(torch, [[0.8, 0.0], [-0.3, 1.0], [1.5, -0.5]])
    with torch.no_grad():
        observed = rollout(s0, 1.3, 0.2)[..., 0] + f64(torch, 0.01 * rng.standard_normal((3, steps + 1)))
    model = Pendulum()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        loss = (model(s0)[..., 0] - observed).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # leapfrog (kick-drift-kick) without damping keeps the energy bounded; its gradient w.r.t. the length
    length = model.log_length.exp()
    theta, omega = s0[:, 0], s0[:, 1]
    energies = []
    for _ in range(steps):
        omega = omega - 0.5 * h * g / length * torch.sin(theta)
        theta = theta + h * omega
        omega = omega - 0.5 * h * g / length * torch.sin(theta)
        energies.append(0.5 * omega ** 2 - g / length * torch.cos(theta))
    energies = torch.stack(energies, dim=1)
    drift = (energies - energies[:, :1]).abs().max()
    d_length, = torch.autograd.grad(energies[:, -1].sum(), model.log_length)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model),
                energies=energies, drift=drift, d_length=d_length)


def test_pendulum_rk4_fit_leapfrog_energy(torch):
    theirs, _ = both(torch, pendulum)
    assert theirs["losses"][-1] < theirs["losses"][0]
    assert theirs["drift"].item() < 0.05


# ---- a neural ODE by explicit Euler: the discrete adjoint run backwards with autograd.grad vector-Jacobian
# products equals backprop through the solver; the adjoint's gradients then drive an SGD step -------------------------
def ode_adjoint(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(2)
    h, steps = 0.1, 12
    f = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
    init = start(f, init)
    z0 = f64(torch, rng.standard_normal((5, 2)))
    target = f64(torch, rng.standard_normal((5, 2)))

    def solve(z):
        states = [z]
        for _ in range(steps):
            z = z + h * f(z)
            states.append(z)
        return states

    states = solve(z0)
    loss = (states[-1] - target).pow(2).sum()
    loss.backward()
    backprop = [p.grad.clone() for p in f.parameters()]
    params = list(f.parameters())
    with torch.no_grad():
        kept = [s.detach() for s in states]
        a = 2 * (kept[-1] - target)
    adjoint = [torch.zeros_like(p) for p in params]
    for k in range(steps - 1, -1, -1):
        z = kept[k].clone().requires_grad_(True)
        vjp = torch.autograd.grad(f(z), [z] + params, grad_outputs=a)
        a = a + h * vjp[0]
        adjoint = [g + h * v for g, v in zip(adjoint, vjp[1:])]
    opt = torch.optim.SGD(f.parameters(), lr=0.05, momentum=0.9)
    opt.zero_grad()
    for p, g in zip(params, adjoint):
        p.grad = g
    opt.step()
    after = (solve(z0)[-1] - target).pow(2).sum()
    return dict(init=init, loss=loss, backprop=backprop, adjoint=adjoint, a0=a, after=after,
                params=list(f.parameters()))


def test_neural_ode_discrete_adjoint_vs_backprop(torch):
    theirs, ours = both(torch, ode_adjoint)
    for r in (theirs, ours):
        for g, b in zip(r["adjoint"], r["backprop"]):
            np.testing.assert_allclose(g.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    assert theirs["after"].item() < theirs["loss"].item()


# ---- viscous Burgers by a pseudo-spectral IMEX step: rfft, the 2/3 dealiasing mask, irfft; a learned forcing ------
def burgers(torch, init):
    nn = torch.nn
    n, nu, dt, steps = 32, 0.05, 0.02, 15
    x = f64(torch, np.arange(n) * 2 * math.pi / n)
    k = torch.fft.rfftfreq(n, d=1.0 / n).double()
    keep = (k <= n / 3).double()
    u0 = torch.sin(x) + 0.5 * torch.cos(2 * x)

    def step(u, forcing):
        u_hat = torch.fft.rfft(u)
        nonlinear = -0.5j * k * torch.fft.rfft(u * u) * keep
        u_hat = (u_hat + dt * (nonlinear + torch.fft.rfft(forcing))) / (1 + nu * dt * k ** 2)
        return torch.fft.irfft(u_hat, n=n)

    def run(forcing):
        u = u0
        for _ in range(steps):
            u = step(u, forcing)
        return u

    with torch.no_grad():
        target = run(0.8 * torch.sin(3 * x) - 0.3 * torch.cos(x))

    class Forcing(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(torch.zeros(n))

        def forward(self):
            return run(self.a)

    model = Forcing()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        u = model()
        loss = (u - target).pow(2).mean() + 1e-3 * model.a.pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    spectrum = torch.fft.rfft(u.detach()).abs() ** 2
    mass = u.detach().mean()
    return dict(init=init, losses=losses, u=u, spectrum=spectrum, mass=mass, params=list(model.parameters()),
                grads=grads(model))


def test_burgers_pseudo_spectral_dealiased_learned_forcing(torch):
    theirs, _ = both(torch, burgers)
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- a rigid rotation: matrix_exp of a skew matrix against Rodrigues' formula, an axis-angle fitted by Adam --------
def rotation(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(3)
    points = f64(torch, rng.standard_normal((3, 10)))

    def skew(w):
        zero = w.new_zeros(())
        return torch.stack([torch.stack([zero, -w[2], w[1]]), torch.stack([w[2], zero, -w[0]]),
                            torch.stack([-w[1], w[0], zero])])

    def rodrigues(w):
        theta = torch.linalg.vector_norm(w)
        k = skew(w)
        eye = torch.eye(3, dtype=w.dtype)
        return eye + torch.sin(theta) / theta * k + (1 - torch.cos(theta)) / theta ** 2 * (k @ k)

    true_w = f64(torch, [0.4, -0.9, 0.3])
    observed = torch.matrix_exp(skew(true_w)) @ points + f64(torch, 0.01 * rng.standard_normal((3, 10)))

    class Rotation(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.full((3,), 0.1))

    model = Rotation()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for i in range(10):
        opt.zero_grad()
        r = torch.matrix_exp(skew(model.w)) if i % 2 == 0 else rodrigues(model.w)
        loss = (r @ points - observed).pow(2).sum(0).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    r_exp, r_rod = torch.matrix_exp(skew(model.w)), rodrigues(model.w)
    orthogonality = (r_exp.mT @ r_exp - torch.eye(3, dtype=torch.float64)).abs().max()
    # the orbit exp(tK) of a rigid body and the angular velocity read back by the cross product
    orbit = torch.stack([torch.matrix_exp(t * skew(model.w)) @ points[:, 0] for t in (0.0, 0.5, 1.0)])
    velocity = torch.linalg.cross(model.w.expand(10, 3), points.T, dim=-1)
    return dict(init=init, losses=losses, r_exp=r_exp, r_rod=r_rod, orthogonality=orthogonality, orbit=orbit,
                velocity=velocity, det=torch.linalg.det(r_exp), params=list(model.parameters()), grads=grads(model))


def test_rigid_rotation_matrix_exp_rodrigues(torch):
    theirs, _ = both(torch, rotation)
    np.testing.assert_allclose(theirs["r_exp"].detach().numpy(), theirs["r_rod"].detach().numpy(), atol=1e-12)
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- a 2-D Poisson problem: the 1-D Laplacian built as a sparse COO tensor, made dense, kron'd to 2-D; a learned
# source fitted through linalg.solve, checked by cholesky_solve on the negated (positive definite) operator ----------
def poisson(torch, init):
    nn = torch.nn
    n = 5
    h2 = 1.0 / (n + 1) ** 2
    rows = np.concatenate([np.arange(n), np.arange(n - 1), np.arange(1, n)])
    cols = np.concatenate([np.arange(n), np.arange(1, n), np.arange(n - 1)])
    vals = np.concatenate([np.full(n, -2.0), np.ones(n - 1), np.ones(2 * (n - 1) - (n - 1))])
    lap1 = torch.sparse_coo_tensor(torch.tensor(np.stack([rows, cols])), f64(torch, vals / h2), (n, n)).to_dense()
    eye = torch.eye(n, dtype=torch.float64)
    lap = torch.kron(eye, lap1) + torch.kron(lap1, eye)
    grid = np.linspace(0, 1, n + 2)[1:-1]
    xx, yy = np.meshgrid(grid, grid, indexing="ij")
    # a target with no symmetry: symmetric ones make some gradient entries zero but for rounding, which Adam's
    # normalization then turns into full steps of either sign
    bump = np.sin(math.pi * xx) * np.sin(2 * math.pi * yy) + 0.3 * xx * yy ** 2
    target = f64(torch, bump.reshape(-1) + 0.05 * np.random.default_rng(4).standard_normal(n * n))

    class Source(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = nn.Parameter(torch.zeros(n * n))

    model = Source()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=2.0)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        u = torch.linalg.solve(lap, model.f)
        smooth = (model.f.view(n, n).diff(dim=0).pow(2).sum() + model.f.view(n, n).diff(dim=1).pow(2).sum())
        loss = (u - target).pow(2).sum() + 1e-6 * smooth
        loss.backward()
        opt.step()
        losses.append(loss.item())
    chol = torch.linalg.cholesky(-lap)
    u_chol = -torch.cholesky_solve(model.f.unsqueeze(1), chol).squeeze(1)
    residual = lap @ u_chol - model.f
    return dict(init=init, losses=losses, u=u, u_chol=u_chol, residual=residual, lap=lap,
                params=list(model.parameters()), grads=grads(model))


def test_poisson_2d_sparse_built_kron_laplacian_solve(torch):
    theirs, _ = both(torch, poisson)
    assert theirs["residual"].abs().max().item() < 1e-8
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- spectral clustering with a learned affinity: a Gaussian kernel on learned feature scales, the normalized
# Laplacian's lowest eigenvectors by eigh, their projector pulled toward the labels' -------------------------------
def spectral_clustering(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(5)
    centers = np.array([[0.0, 0.0, 0.0], [2.5, 0.5, 0.0], [0.5, 2.5, 0.0]])
    labels = np.repeat(np.arange(3), 4)
    pts = f64(torch, centers[labels] + 0.9 * rng.standard_normal((12, 3)) * np.array([1.0, 1.0, 3.0]))
    onehot = torch.nn.functional.one_hot(torch.tensor(labels), 3).double()
    onehot = onehot / onehot.sum(0).sqrt()
    ideal = onehot @ onehot.T

    class Affinity(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_scale = nn.Parameter(torch.zeros(3))
            self.log_bandwidth = nn.Parameter(torch.zeros(()))

        def forward(self, x):
            d2 = torch.cdist(x * self.log_scale.exp(), x * self.log_scale.exp()).pow(2)
            w = torch.exp(-d2 / (2 * self.log_bandwidth.exp() ** 2)) * (1 - torch.eye(len(x), dtype=x.dtype))
            d = w.sum(1).rsqrt()
            return torch.eye(len(x), dtype=x.dtype) - d[:, None] * w * d[None, :]

    model = Affinity()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses, spectra = [], []
    for _ in range(5):
        opt.zero_grad()
        evals, evecs = torch.linalg.eigh(model(pts))
        u = evecs[:, :3]
        loss = (u @ u.T - ideal).pow(2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        spectra.append(evals.detach())
    with torch.no_grad():
        evals, evecs = torch.linalg.eigh(model(pts))
        embed = torch.nn.functional.normalize(evecs[:, :3], dim=1)
        assignment = (embed @ embed.T).gt(0.5).long().sum(1)
    gap = evals[3] - evals[2]
    return dict(init=init, losses=losses, spectra=spectra, gap=gap, assignment=assignment,
                params=list(model.parameters()), grads=grads(model))


def test_spectral_clustering_eigh_learned_affinity(torch):
    theirs, _ = both(torch, spectral_clustering, tol=dict(rtol=1e-8, atol=1e-9))
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- weighted Procrustes: the best rotation by SVD of the cross-covariance with the determinant's sign fixed;
# per-point weights learned (softmax of logits) so outliers stop pulling the fit ----------------------------------
def procrustes(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 3))
    true_r = np.linalg.qr(a)[0]
    true_r = true_r * np.sign(np.linalg.det(true_r))
    src = rng.standard_normal((10, 3))
    dst = src @ true_r.T + np.array([0.5, -1.0, 0.2]) + 0.01 * rng.standard_normal((10, 3))
    dst[:3] += 3 * rng.standard_normal((3, 3))  # three outliers
    src, dst = f64(torch, src), f64(torch, dst)

    def align(x, y, w):
        w = w / w.sum()
        mx, my = (w[:, None] * x).sum(0), (w[:, None] * y).sum(0)
        cov = (x - mx).T @ (w[:, None] * (y - my))
        u, s, vh = torch.linalg.svd(cov)
        sign = torch.sign(torch.linalg.det(vh.T @ u.T))
        fix = torch.diag(torch.cat([torch.ones(2, dtype=x.dtype), sign.reshape(1)]))
        r = vh.T @ fix @ u.T
        return r, my - r @ mx, s

    class Weights(nn.Module):
        def __init__(self):
            super().__init__()
            self.logits = nn.Parameter(torch.zeros(10))

    model = Weights()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.3)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        r, t, _ = align(src, dst, torch.softmax(model.logits, 0))
        residual = (src @ r.T + t - dst).norm(dim=1)
        loss = torch.nn.functional.huber_loss(residual, torch.zeros_like(residual), delta=0.1) \
            + 0.01 * model.logits.pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    r, t, s = align(src, dst, torch.softmax(model.logits, 0))
    # a reflected copy of the points: the sign fix still returns a proper rotation
    mirror = f64(torch, np.diag([1.0, 1.0, -1.0]))
    r_mirror, _, _ = align(src, src @ mirror, torch.ones(10, dtype=torch.float64))
    return dict(init=init, losses=losses, r=r, t=t, s=s, det=torch.linalg.det(r),
                det_mirror=torch.linalg.det(r_mirror), error=(r - f64(torch, true_r)).abs().max(),
                params=list(model.parameters()), grads=grads(model))


def test_weighted_procrustes_svd_det_sign_fix(torch):
    theirs, _ = both(torch, procrustes)
    assert abs(theirs["det_mirror"].item() - 1) < 1e-12
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- a QR-parametrized orthogonal recurrence: Q with the signs of diag(R) folded in, a tall reduced QR for a
# Stiefel read-out, trained on recalling the first input after a few steps ---------------------------------------
def qr_orthogonal(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(7)
    hidden, steps = 6, 5

    def orthogonal(a):
        q, r = torch.linalg.qr(a)
        return q * torch.sign(torch.diagonal(r)).unsqueeze(0)

    class OrthoRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.raw = nn.Parameter(torch.randn(hidden, hidden))
            self.inp = nn.Linear(2, hidden)
            self.readout = nn.Parameter(torch.randn(hidden, 2))

        def forward(self, x):
            w = orthogonal(self.raw)
            v = orthogonal(self.readout)  # (hidden, 2), orthonormal columns
            h = x.new_zeros(x.shape[1], hidden)
            for t in range(x.shape[0]):
                h = torch.tanh(h @ w.T + self.inp(x[t]))
            return h @ v

    x = f64(torch, rng.standard_normal((steps, 8, 2)))
    x[1:] = 0.1 * x[1:]
    model = OrthoRNN()
    init = start(model, init)
    opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), x[0])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    w = orthogonal(model.raw)
    eye = torch.eye(hidden, dtype=torch.float64)
    vec = f64(torch, rng.standard_normal(hidden))
    return dict(init=init, losses=losses, w=w, gram=(w.T @ w - eye).abs().max(),
                norm_kept=torch.linalg.vector_norm(w @ vec) - torch.linalg.vector_norm(vec),
                stiefel=orthogonal(model.readout).T @ orthogonal(model.readout), params=list(model.parameters()),
                grads=grads(model))


def test_qr_orthogonal_parametrization_rnn(torch):
    theirs, _ = both(torch, qr_orthogonal)
    assert theirs["gram"].item() < 1e-12


# ---- a Gaussian likelihood with a learned covariance: the Cholesky factor filled through tril_indices with a
# softplus diagonal; logdet three ways, the Mahalanobis term by solve_triangular, against MultivariateNormal -----
def gaussian_cholesky(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(8)
    d = 3
    true_l = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.4, 0.3, 0.5]])
    data = f64(torch, rng.standard_normal((40, d)) @ true_l.T + np.array([1.0, -2.0, 0.5]))
    rows, cols = torch.tril_indices(d, d, offset=-1)

    class Gaussian(nn.Module):
        def __init__(self):
            super().__init__()
            self.mu = nn.Parameter(torch.zeros(d))
            self.off = nn.Parameter(torch.zeros(len(rows)))
            self.raw_diag = nn.Parameter(torch.zeros(d))

        def scale_tril(self):
            lower = torch.zeros(d, d, dtype=self.off.dtype).index_put((rows, cols), self.off)
            return lower + torch.diag_embed(F.softplus(self.raw_diag) + 1e-3)

        def forward(self, x):
            chol = self.scale_tril()
            z = torch.linalg.solve_triangular(chol, (x - self.mu).T, upper=False)
            logdet = 2 * torch.diagonal(chol).log().sum()
            return -0.5 * (z.pow(2).sum(0) + logdet + d * math.log(2 * math.pi))

    model = Gaussian()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = -model(data).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    chol = model.scale_tril()
    cov = chol @ chol.T
    sign, logabs = torch.linalg.slogdet(cov)
    reference = torch.distributions.MultivariateNormal(model.mu, scale_tril=chol).log_prob(data)
    return dict(init=init, losses=losses, logp=model(data), reference=reference, sign=sign, logabs=logabs,
                logdet=torch.logdet(cov), cov=cov, params=list(model.parameters()), grads=grads(model))


def test_gaussian_likelihood_learned_cholesky_tril_indices(torch):
    theirs, _ = both(torch, gaussian_cholesky)
    np.testing.assert_allclose(theirs["logp"].detach().numpy(), theirs["reference"].detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(theirs["logabs"].item(), theirs["logdet"].item(), rtol=1e-10)


# ---- a Kalman filter in information form (Y = P^-1, y = Y x) beside the covariance form, its innovation likelihood
# fitting the process and observation noises, then a Rauch-Tung-Striebel smoother over the filtered states --------
def information_kalman(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(9)
    dt, steps = 0.5, 12
    fmat = f64(torch, [[1.0, dt], [0.0, 1.0]])
    hmat = f64(torch, [[1.0, 0.0]])
    truth = np.cumsum(np.cumsum(0.2 * rng.standard_normal(steps)) * dt)
    obs = f64(torch, truth + 0.5 * rng.standard_normal(steps)).unsqueeze(1)

    class Noise(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_q = nn.Parameter(torch.zeros(()))
            self.log_r = nn.Parameter(torch.zeros(()))

    def q_of(log_q):
        g = f64(torch, [[0.5 * dt ** 2], [dt]])
        return log_q.exp() * (g @ g.T) + 1e-6 * torch.eye(2, dtype=torch.float64)

    def covariance_filter(log_q, log_r):
        x, p = torch.zeros(2, dtype=torch.float64), 10.0 * torch.eye(2, dtype=torch.float64)
        r = log_r.exp().reshape(1, 1)
        loglik, means, covs, preds = 0.0, [], [], []
        for t in range(steps):
            x, p = fmat @ x, fmat @ p @ fmat.T + q_of(log_q)
            preds.append((x, p))
            s = hmat @ p @ hmat.T + r
            innov = obs[t] - hmat @ x
            gain = p @ hmat.T @ torch.linalg.inv(s)
            x, p = x + gain @ innov, (torch.eye(2, dtype=torch.float64) - gain @ hmat) @ p
            loglik = loglik - 0.5 * (torch.logdet(2 * math.pi * s) + innov @ torch.linalg.solve(s, innov))
            means.append(x)
            covs.append(p)
        return loglik, means, covs, preds

    def information_filter(log_q, log_r):
        info = torch.linalg.inv(10.0 * torch.eye(2, dtype=torch.float64))
        y = torch.zeros(2, dtype=torch.float64)
        r_inv = (-log_r).exp()
        out = []
        for t in range(steps):
            p = torch.cholesky_inverse(torch.linalg.cholesky(info))
            x = p @ y
            p = fmat @ p @ fmat.T + q_of(log_q)
            info = torch.linalg.inv(p)
            y = info @ (fmat @ x)
            info = info + r_inv * hmat.T @ hmat
            y = y + r_inv * (hmat.T @ obs[t])
            out.append(torch.linalg.solve(info, y))
        return torch.stack(out)

    model = Noise()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loglik, _, _, _ = covariance_filter(model.log_q, model.log_r)
        loss = -loglik
        loss.backward()
        opt.step()
        losses.append(loss.item())
    loglik, means, covs, preds = covariance_filter(model.log_q, model.log_r)
    info_means = information_filter(model.log_q, model.log_r)
    smoothed, smoothed_cov = [means[-1]], [covs[-1]]
    for t in range(steps - 2, -1, -1):
        x_pred, p_pred = preds[t + 1]
        c = covs[t] @ fmat.T @ torch.linalg.inv(p_pred)
        smoothed.insert(0, means[t] + c @ (smoothed[0] - x_pred))
        smoothed_cov.insert(0, covs[t] + c @ (smoothed_cov[0] - p_pred) @ c.T)
    smoothed = torch.stack(smoothed)
    d_smooth = torch.autograd.grad(smoothed[:, 0].pow(2).sum(), [model.log_q, model.log_r])
    return dict(init=init, losses=losses, means=torch.stack(means), info_means=info_means, smoothed=smoothed,
                smoothed_cov=torch.stack(smoothed_cov), d_smooth=list(d_smooth), params=list(model.parameters()),
                grads=grads(model))


def test_information_kalman_filter_rts_smoother(torch):
    theirs, _ = both(torch, information_kalman)
    np.testing.assert_allclose(theirs["info_means"].detach().numpy(), theirs["means"].detach().numpy(), atol=1e-9)
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- an implicit (equilibrium) layer: the fixed point found without a graph, one step re-attached, and the
# implicit-function gradient applied by a tensor hook that solves (I - J)^T g' = g; against unrolled backprop -----
def implicit_layer(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(10)
    d, batch = 4, 6

    class Equilibrium(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(d, d))
            self.inp = nn.Linear(3, d)

        def weight(self):
            return 0.6 * self.w / torch.linalg.matrix_norm(self.w, ord=2)  # a contraction

        def cell(self, z, x):
            return torch.tanh(z @ self.weight().T + self.inp(x))

        def forward(self, x, unrolled=False):
            z = x.new_zeros(len(x), d)
            if unrolled:
                for _ in range(60):
                    z = self.cell(z, x)
                return z
            with torch.no_grad():
                for _ in range(60):
                    z = self.cell(z, x)
            z = self.cell(z, x)
            if z.requires_grad:
                z0 = z.detach()
                jac = (1 - z0 ** 2).unsqueeze(2) * self.weight().detach()  # d cell / d z, per sample
                eye = torch.eye(d, dtype=z.dtype)
                z.register_hook(lambda g: torch.linalg.solve((eye - jac).mT, g.unsqueeze(2)).squeeze(2))
            return z

    x = f64(torch, rng.standard_normal((batch, 3)))
    y = f64(torch, rng.standard_normal((batch, d)))
    model = Equilibrium()
    init = start(model, init)
    torch.nn.functional.mse_loss(model(x, unrolled=True), y).backward()
    unrolled = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses, implicit = [], None
    for _ in range(4):
        opt.zero_grad()
        z = model(x)
        loss = torch.nn.functional.mse_loss(z, y)
        loss.backward()
        if implicit is None:
            implicit = [p.grad.clone() for p in model.parameters()]
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        z = model(x)
        residual = (model.cell(z, x) - z).abs().max()
    return dict(init=init, losses=losses, unrolled=unrolled, implicit=implicit, z=z, residual=residual,
                params=list(model.parameters()), grads=grads(model))


def test_implicit_layer_hook_solve_vs_unrolled(torch):
    theirs, _ = both(torch, implicit_layer)
    for a, b in zip(theirs["implicit"], theirs["unrolled"]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-9)
    assert theirs["residual"].item() < 1e-10


# ---- Metropolis-adjusted Langevin on a learned energy: gradients of the energy by autograd.grad, the proposal's
# Gaussian densities both ways, acceptance by given uniforms; contrastive divergence trains the energy ------------
def mala(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(11)
    n, step, sweeps = 16, 0.1, 4
    data = f64(torch, np.concatenate([rng.normal(-1.5, 0.3, (n // 2, 2)), rng.normal(1.5, 0.3, (n // 2, 2))]))
    energy = nn.Sequential(nn.Linear(2, 16), nn.SiLU(), nn.Linear(16, 1), nn.Flatten(0))
    init = start(energy, init)
    opt = torch.optim.Adam(energy.parameters(), lr=0.01, betas=(0.0, 0.999))

    def grad_energy(x):
        x = x.detach().requires_grad_(True)
        e = energy(x)
        return e.detach(), torch.autograd.grad(e.sum(), x)[0]

    def log_q(to, frm, g_frm):  # log N(to; frm - step g, 2 step), up to a constant
        return -(to - frm + step * g_frm).pow(2).sum(1) / (4 * step)

    losses, rates = [], []
    x = f64(torch, rng.standard_normal((n, 2)))
    for _ in range(3):
        for _ in range(sweeps):
            e, g = grad_energy(x)
            proposal = x - step * g + math.sqrt(2 * step) * f64(torch, rng.standard_normal((n, 2)))
            e_new, g_new = grad_energy(proposal)
            log_alpha = -e_new + e + log_q(x, proposal, g_new) - log_q(proposal, x, g)
            accept = f64(torch, np.log(rng.uniform(size=n))) < log_alpha
            x = torch.where(accept.unsqueeze(1), proposal, x)
            rates.append(accept.double().mean())
        opt.zero_grad()
        pos, neg = energy(data), energy(x.detach())
        loss = pos.mean() - neg.mean() + 0.1 * (pos.pow(2).mean() + neg.pow(2).mean())
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, samples=x, rates=torch.stack(rates), params=list(energy.parameters()),
                grads=grads(energy))


def test_mala_learned_energy_contrastive_divergence(torch):
    theirs, _ = both(torch, mala)
    assert 0 < theirs["rates"].mean().item() <= 1


# ---- Sinkhorn barycenters in the log domain on a 1-D grid (iterative Bregman projections), the mixing weights
# learned through the unrolled iterations so the barycenter matches a target histogram ---------------------------
def sinkhorn_barycenter(torch, init):
    nn = torch.nn
    m, eps, iters = 24, 0.01, 40
    grid = np.linspace(0, 1, m)

    def bump(mu, sd):
        p = np.exp(-0.5 * ((grid - mu) / sd) ** 2) + 1e-6
        return p / p.sum()

    hists = f64(torch, np.stack([bump(0.2, 0.05), bump(0.5, 0.08), bump(0.8, 0.04)]))
    target = f64(torch, bump(0.45, 0.06))
    log_k = -f64(torch, (grid[:, None] - grid[None, :]) ** 2) / eps

    def barycenter(weights):
        log_a = hists.log()
        log_v = torch.zeros_like(hists)
        for _ in range(iters):
            log_u = log_a - torch.logsumexp(log_k[None] + log_v[:, None, :], dim=2)
            log_kt_u = torch.logsumexp(log_k.T[None] + log_u[:, None, :], dim=2)
            log_b = (weights[:, None] * log_kt_u).sum(0)
            log_v = log_b[None] - log_kt_u
        return log_b.exp()

    class Mixing(nn.Module):
        def __init__(self):
            super().__init__()
            self.logits = nn.Parameter(torch.zeros(3))

    model = Mixing()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.2)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        b = barycenter(torch.softmax(model.logits, 0))
        loss = (b - target).pow(2).sum() * 1e3
        loss.backward()
        opt.step()
        losses.append(loss.item())
    weights = torch.softmax(model.logits, 0)
    b = barycenter(weights)
    mean = (b * f64(torch, grid)).sum() / b.sum()
    return dict(init=init, losses=losses, b=b, mean=mean, weights=weights, params=list(model.parameters()),
                grads=grads(model))


def test_sinkhorn_barycenter_log_domain_learned_weights(torch):
    theirs, _ = both(torch, sinkhorn_barycenter, tol=dict(rtol=1e-8, atol=1e-10))
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- a soft rasterizer: a triangle's coverage as the product of sigmoids of signed edge distances over a meshgrid,
# composited over a soft disk; the vertices fitted to a target image ------------------------------------------------
def rasterizer(torch, init):
    nn = torch.nn
    res, sigma = 16, 0.02
    coords = torch.linspace(0, 1, res, dtype=torch.float64)
    py, px = torch.meshgrid(coords, coords, indexing="ij")
    pixels = torch.stack([px, py], dim=-1)  # (res, res, 2)

    def triangle(v):
        area = (v[1, 0] - v[0, 0]) * (v[2, 1] - v[0, 1]) - (v[1, 1] - v[0, 1]) * (v[2, 0] - v[0, 0])
        cover = torch.ones(res, res, dtype=v.dtype)
        for i in range(3):
            a, b = v[i], v[(i + 1) % 3]
            edge = b - a
            rel = pixels - a
            dist = (edge[0] * rel[..., 1] - edge[1] * rel[..., 0]) / torch.linalg.vector_norm(edge)
            cover = cover * torch.sigmoid(torch.sign(area) * dist / sigma)
        return cover

    def disk(center, radius):
        return torch.sigmoid((radius - (pixels - center).norm(dim=-1)) / sigma)

    def render(v, center, radius):
        tri = triangle(v)
        return tri * 0.9 + (1 - tri) * 0.4 * disk(center, radius)

    with torch.no_grad():
        target = render(f64(torch, [[0.2, 0.2], [0.8, 0.3], [0.4, 0.85]]), f64(torch, [0.7, 0.7]), 0.2)

    class Scene(nn.Module):
        def __init__(self):
            super().__init__()
            self.v = nn.Parameter(torch.tensor([[0.3, 0.3], [0.7, 0.35], [0.45, 0.7]]))
            self.center = nn.Parameter(torch.tensor([0.6, 0.6]))
            self.radius = nn.Parameter(torch.tensor(0.15))

    model = Scene()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        image = render(model.v, model.center, model.radius)
        loss = (image - target).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, image=image, params=list(model.parameters()), grads=grads(model))


def test_soft_rasterizer_signed_edge_sigmoids(torch):
    theirs, _ = both(torch, rasterizer)
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- Gray-Scott reaction-diffusion on a torus: the 5-point Laplacian as a fixed conv2d stencil after circular
# F.pad (and as a Conv2d with padding_mode="circular"), the feed and kill rates fitted to a later state ------------
def gray_scott(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(12)
    size, dt, steps = 12, 1.0, 10
    stencil = f64(torch, [[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]).reshape(1, 1, 3, 3).repeat(2, 1, 1, 1)
    diffusion = f64(torch, [0.16, 0.08]).reshape(1, 2, 1, 1)
    u0 = np.ones((size, size))
    v0 = np.zeros((size, size))
    u0[4:8, 4:8], v0[4:8, 4:8] = 0.5, 0.25
    state0 = f64(torch, np.stack([u0, v0])[None] + 0.02 * rng.standard_normal((1, 2, size, size)))

    def laplacian(s):
        return F.conv2d(F.pad(s, (1, 1, 1, 1), mode="circular"), stencil, groups=2)

    def run(feed, kill, lap=laplacian):
        s = state0
        for _ in range(steps):
            u, v = s[:, :1], s[:, 1:]
            uvv = u * v * v
            react = torch.cat([-uvv + feed * (1 - u), uvv - (feed + kill) * v], dim=1)
            s = s + dt * (diffusion * lap(s) + react)
        return s

    with torch.no_grad():
        target = run(0.04, 0.06)

    class Rates(nn.Module):
        def __init__(self):
            super().__init__()
            self.logit_feed = nn.Parameter(torch.tensor(-3.0))
            self.logit_kill = nn.Parameter(torch.tensor(-3.0))

    model = Rates()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        s = run(torch.sigmoid(model.logit_feed), torch.sigmoid(model.logit_kill))
        loss = (s - target).pow(2).mean() * 1e4
        loss.backward()
        opt.step()
        losses.append(loss.item())
    conv = nn.Conv2d(2, 2, 3, padding=1, padding_mode="circular", groups=2, bias=False).double()
    with torch.no_grad():
        conv.weight.copy_(stencil)
    feed, kill = torch.sigmoid(model.logit_feed), torch.sigmoid(model.logit_kill)
    state, by_module = run(feed, kill), run(feed, kill, lap=conv)
    return dict(init=init, losses=losses, state=state, by_module=by_module, params=list(model.parameters()),
                grads=grads(model))


def test_gray_scott_circular_conv_stencil_rates(torch):
    theirs, _ = both(torch, gray_scott)
    np.testing.assert_allclose(theirs["by_module"].detach().numpy(), theirs["state"].detach().numpy(), atol=1e-12)
    assert theirs["losses"][-1] < theirs["losses"][0]



# ---- a D2Q9 lattice Boltzmann flow on a periodic box: BGK collision toward the quadratic equilibrium, streaming by
# one torch.roll per direction, a body force by Guo's shift; the relaxation time and force fitted to a later field -
def lattice_boltzmann(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(13)
    size, steps = 8, 8
    c = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, 1], [-1, -1], [1, -1]])
    w = f64(torch, [4 / 9] + [1 / 9] * 4 + [1 / 36] * 4).reshape(9, 1, 1)
    cx, cy = f64(torch, c[:, 0]).reshape(9, 1, 1), f64(torch, c[:, 1]).reshape(9, 1, 1)

    def equilibrium(rho, ux, uy):
        cu = 3 * (cx * ux + cy * uy)
        return w * rho * (1 + cu + 0.5 * cu ** 2 - 1.5 * (ux ** 2 + uy ** 2))

    rho0 = f64(torch, 1 + 0.05 * rng.standard_normal((size, size)))
    ux0 = f64(torch, 0.05 * np.sin(2 * math.pi * np.arange(size) / size)[None, :].repeat(size, 0))
    f0 = equilibrium(rho0, ux0, torch.zeros_like(ux0))

    def run(tau, force):
        f = f0
        for _ in range(steps):
            rho = f.sum(0)
            ux = (f * cx).sum(0) / rho + force / (2 * rho)
            uy = (f * cy).sum(0) / rho
            f = f - (f - equilibrium(rho, ux, uy)) / tau
            f = torch.stack([torch.roll(f[i], shifts=(int(c[i, 1]), int(c[i, 0])), dims=(0, 1)) for i in range(9)])
        rho = f.sum(0)
        return f, rho, (f * cx).sum(0) / rho, (f * cy).sum(0) / rho

    with torch.no_grad():
        _, _, target_ux, target_uy = run(0.8, 2e-3)

    class Fluid(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_tau_shift = nn.Parameter(torch.tensor(0.0))  # tau = 0.5 + exp(.): stays stable
            self.force = nn.Parameter(torch.tensor(0.0))  # in units of 1e-3

    model = Fluid()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        _, rho, ux, uy = run(0.5 + model.log_tau_shift.exp(), 1e-3 * model.force)
        loss = ((ux - target_ux).pow(2) + (uy - target_uy).pow(2)).sum() * 1e4
        loss.backward()
        opt.step()
        losses.append(loss.item())
    f, rho, ux, uy = run(0.5 + model.log_tau_shift.exp(), 1e-3 * model.force)
    return dict(init=init, losses=losses, mass=(rho.sum() - rho0.sum()).detach(), ux=ux, uy=uy, f=f,
                params=list(model.parameters()), grads=grads(model))


def test_lattice_boltzmann_d2q9_roll_streaming(torch):
    theirs, _ = both(torch, lattice_boltzmann)
    assert abs(theirs["mass"].item()) < 1e-10  # collision and streaming conserve mass
    assert theirs["losses"][-1] < theirs["losses"][0]

# ---- single shooting: a cart with quadratic drag driven by a control sequence to rest at a goal, the controls
# optimized by LBFGS with a closure (strong Wolfe), the rollout differentiated end to end ---------------------------
def shooting(torch, init):
    nn = torch.nn
    horizon, h = 15, 0.1

    class Controls(nn.Module):
        def __init__(self):
            super().__init__()
            self.u = nn.Parameter(torch.zeros(horizon))

        def forward(self):
            x, v = torch.zeros((), dtype=self.u.dtype), torch.zeros((), dtype=self.u.dtype)
            path = []
            for t in range(horizon):
                a = self.u[t] - 0.3 * v * v.abs() - 0.5 * torch.sin(x)
                v = v + h * a
                x = x + h * v
                path.append(torch.stack([x, v]))
            return torch.stack(path)

    model = Controls()
    init = start(model, init)
    opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=15, history_size=5, line_search_fn="strong_wolfe")
    evaluations = []

    def closure():
        opt.zero_grad()
        path = model()
        loss = 10 * (path[-1, 0] - 1.0) ** 2 + 10 * path[-1, 1] ** 2 + 1e-2 * model.u.pow(2).sum()
        loss.backward()
        evaluations.append(loss.item())
        return loss

    first = opt.step(closure)
    second = opt.step(closure)
    path = model()
    return dict(init=init, first=first, second=second, evaluations=evaluations, path=path,
                n_iter=opt.state[model.u]["n_iter"], params=list(model.parameters()), grads=grads(model))


def test_single_shooting_lbfgs_strong_wolfe(torch):
    theirs, _ = both(torch, shooting, tol=dict(rtol=1e-8, atol=1e-10))
    assert theirs["evaluations"][-1] < 0.1 * theirs["evaluations"][0]


# ---- a mass-spring cloth: springs on a 4x4 grid (structural and shear), forces gathered by index_add_, pinned
# corners by a mask, semi-implicit Euler; the log-stiffness per spring family fitted to an observed drape ----------
def cloth(torch, init):
    nn = torch.nn
    side, h, steps = 4, 0.02, 15
    ids = np.arange(side * side).reshape(side, side)
    structural = np.concatenate([np.stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()], 1),
                                 np.stack([ids[:-1].ravel(), ids[1:].ravel()], 1)])
    shear = np.concatenate([np.stack([ids[:-1, :-1].ravel(), ids[1:, 1:].ravel()], 1),
                            np.stack([ids[:-1, 1:].ravel(), ids[1:, :-1].ravel()], 1)])
    springs = torch.tensor(np.concatenate([structural, shear]))
    family = torch.tensor(np.r_[np.zeros(len(structural)), np.ones(len(shear))].astype(np.int64))
    gx, gy = np.meshgrid(np.arange(side) * 0.25, np.arange(side) * 0.25, indexing="ij")
    rest_pos = f64(torch, np.stack([gx.ravel(), gy.ravel(), np.zeros(side * side)], 1))
    rest = (rest_pos[springs[:, 0]] - rest_pos[springs[:, 1]]).norm(dim=1)
    free = torch.ones(side * side, 1, dtype=torch.float64)
    free[[0, side - 1]] = 0.0
    gravity = f64(torch, [0.0, 0.0, -9.81])

    def simulate(log_k):
        k = log_k.exp()[family]
        x, v = rest_pos, torch.zeros_like(rest_pos)
        for _ in range(steps):
            d = x[springs[:, 0]] - x[springs[:, 1]]
            length = torch.linalg.vector_norm(d, dim=1, keepdim=True)
            f = -(k * (length.squeeze(1) - rest)).unsqueeze(1) * d / length
            force = torch.zeros_like(x).index_add_(0, springs[:, 0], f).index_add_(0, springs[:, 1], -f)
            v = (v + h * (force + gravity) - 0.1 * h * v) * free
            x = x + h * v
        return x

    with torch.no_grad():
        observed = simulate(f64(torch, [math.log(300.0), math.log(60.0)]))

    class Stiffness(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_k = nn.Parameter(torch.tensor([math.log(100.0), math.log(100.0)]))

    model = Stiffness()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        x = simulate(model.log_k)
        loss = (x - observed).pow(2).sum() * 1e3
        loss.backward()
        opt.step()
        losses.append(loss.item())
    stretch = ((x[springs[:, 0]] - x[springs[:, 1]]).norm(dim=1) / rest).detach()
    return dict(init=init, losses=losses, x=x, stretch=stretch, params=list(model.parameters()), grads=grads(model))


def test_mass_spring_cloth_index_add_learned_stiffness(torch):
    theirs, _ = both(torch, cloth)
    assert theirs["losses"][-1] < theirs["losses"][0]
