"""Scientific and classical-ML scripts people port to PyTorch and run on small data (logistic and softmax regression
by strong-Wolfe LBFGS and Nesterov SGD, a linear SVM, k-means and a full-covariance Gaussian mixture by EM, PCA and
whitening, ridge regression by solves, Gaussian-process regression with ARD lengthscales, physics losses through
second derivatives, Bayesian linear regression with conjugate priors, a normalizing flow over TransformedDistribution,
polynomial chaos, sparse least squares by conjugate gradients), written once against a `torch`-like module and run
twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree
closely (float64 throughout; random draws by numpy where the two libraries' streams differ by design)."""
import math

import numpy as np

from twins import both, grads, start


def blobs(n_per, centers, seed, scale=0.6):
    rng = np.random.default_rng(seed)
    x = np.concatenate([c + scale * rng.standard_normal((n_per, len(c))) for c in centers])
    y = np.repeat(np.arange(len(centers)), n_per)
    return x, y


# ---- logistic regression by full-batch strong-Wolfe LBFGS; softmax regression by Nesterov SGD with weight decay ----
def logistic_softmax(torch, init):
    nn, F = torch.nn, torch.nn.functional
    xb, yb = blobs(10, [(-1.0, 0.5), (1.0, -0.5)], 1)
    x, y = torch.tensor(xb), torch.tensor(yb).double()
    logistic = nn.Linear(2, 1)
    init = start(logistic, init)
    opt = torch.optim.LBFGS(logistic.parameters(), lr=1, max_iter=15, history_size=5, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(logistic(x).squeeze(1), y) + 1e-2 * logistic.weight.pow(2).sum()
        loss.backward()
        return loss

    lbfgs_losses = [opt.step(closure).item() for _ in range(2)]
    prob = torch.sigmoid(logistic(x)).squeeze(1)
    state = opt.state[logistic.weight]
    facts = [state["func_evals"], state["n_iter"], ((prob > 0.5).double() == y).float().mean().item()]

    xs, ys = blobs(8, [(0.0, 2.0), (-2.0, -1.0), (2.0, -1.0)], 2)
    xs, ys = torch.tensor(xs), torch.tensor(ys)
    W = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        W.copy_(logistic.weight.detach().T.expand(2, 3) * torch.tensor([1.0, -0.5, 0.25], dtype=torch.float64))
    sgd = torch.optim.SGD([W, b], lr=0.3, momentum=0.9, nesterov=True, weight_decay=1e-3)
    losses = []
    for _ in range(6):
        logits = xs @ W + b
        loss = -torch.log_softmax(logits, dim=1).gather(1, ys[:, None]).mean()
        sgd.zero_grad()
        loss.backward()
        sgd.step()
        losses.append(loss.item())
    pred = (xs @ W + b).argmax(1)
    return dict(init=init, lbfgs_losses=lbfgs_losses, facts=facts, prob=prob, params=list(logistic.parameters()),
                losses=losses, W=W, b=b, pred=pred, momentum=sgd.state[W]["momentum_buffer"])


def test_logistic_lbfgs_strong_wolfe_softmax_nesterov(torch):
    both(torch, logistic_softmax)


# ---- linear SVM: squared-L2 plus hinge by hand, then a multi-class SVM by MultiMarginLoss (p=1 and p=2) ----------
def linear_svm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    xb, yb = blobs(8, [(-1.0, -1.0), (1.2, 0.8)], 3)
    x, y = torch.tensor(xb), torch.tensor(2 * yb - 1).double()
    svm = nn.Linear(2, 1)
    init = start(svm, init)
    opt = torch.optim.SGD(svm.parameters(), lr=0.1)
    C = 1.0
    losses = []
    for _ in range(5):
        margin = y * svm(x).squeeze(1)
        loss = 0.5 * svm.weight.pow(2).sum() + C * torch.clamp(1 - margin, min=0).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    support = (y * svm(x).squeeze(1) < 1).nonzero().squeeze(1)
    hinge = F.relu(1 - y * svm(x).squeeze(1))

    xm, ym = blobs(6, [(0.0, 1.5), (-1.5, -1.0), (1.5, -1.0)], 4)
    xm, ym = torch.tensor(xm), torch.tensor(ym)
    multi = nn.Linear(2, 3).double()
    with torch.no_grad():
        multi.weight.copy_(torch.tensor([[0.1, 0.4], [-0.3, -0.2], [0.3, -0.1]]))
        multi.bias.zero_()
    weight = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    crits = [nn.MultiMarginLoss(), nn.MultiMarginLoss(p=2, margin=0.5, weight=weight)]
    mopt = torch.optim.SGD(multi.parameters(), lr=0.2, weight_decay=1e-2)
    mlosses = []
    for step in range(4):
        loss = crits[step % 2](multi(xm), ym)
        mopt.zero_grad()
        loss.backward()
        mopt.step()
        mlosses.append(loss.item())
    per = F.multi_margin_loss(multi(xm), ym, reduction="none")
    return dict(init=init, losses=losses, params=list(svm.parameters()), support=support, hinge=hinge,
                mlosses=mlosses, per=per, mparams=list(multi.parameters()), grads=grads(multi))


def test_linear_svm_hinge_l2_multi_margin(torch):
    both(torch, linear_svm)


# ---- k-means by cdist/argmin/index_add_, then a full-covariance Gaussian mixture by EM (MultivariateNormal) -------
def kmeans_gmm(torch, init):
    xb, _ = blobs(7, [(0.0, 0.0), (3.0, 3.0), (-3.0, 2.5)], 5, scale=0.7)
    x = torch.tensor(xb)
    n, k = x.shape[0], 3
    centroids = x[torch.tensor([0, 7, 14])].clone()
    inertia = []
    for _ in range(4):
        d = torch.cdist(x, centroids)
        assign = d.argmin(dim=1)
        inertia.append(d.gather(1, assign[:, None]).pow(2).sum().item())
        sums = torch.zeros(k, 2, dtype=x.dtype).index_add_(0, assign, x)
        counts = torch.zeros(k, dtype=x.dtype).scatter_add_(0, assign, torch.ones(n, dtype=x.dtype))
        centroids = sums / counts.clamp(min=1)[:, None]

    means = centroids.clone()
    covs = torch.eye(2, dtype=x.dtype).repeat(k, 1, 1)
    log_pi = torch.full((k,), -math.log(k), dtype=x.dtype)
    lls = []
    for _ in range(3):
        mvn = torch.distributions.MultivariateNormal(means, scale_tril=torch.linalg.cholesky(covs))
        log_p = mvn.log_prob(x[:, None, :]) + log_pi
        ll = torch.logsumexp(log_p, dim=1)
        lls.append(ll.sum().item())
        resp = (log_p - ll[:, None]).exp()
        nk = resp.sum(0)
        means = resp.T @ x / nk[:, None]
        diff = x[:, None, :] - means
        covs = torch.einsum("nk,nki,nkj->kij", resp, diff, diff) / nk[:, None, None] + 1e-3 * torch.eye(2, dtype=x.dtype)
        log_pi = torch.log(nk / n)
    labels = resp.argmax(1)
    # a differentiable check: the mixture's log-likelihood gradient with respect to the data
    xg = x.clone().requires_grad_()
    mix = torch.distributions.MixtureSameFamily(torch.distributions.Categorical(logits=log_pi),
                                                torch.distributions.MultivariateNormal(means, covariance_matrix=covs))
    mix.log_prob(xg).sum().backward()
    return dict(init=None, inertia=inertia, centroids=centroids, lls=lls, means=means, covs=covs, log_pi=log_pi,
                labels=labels, grad=xg.grad)


def test_kmeans_index_add_then_full_covariance_gmm_em(torch):
    both(torch, kmeans_gmm)


# ---- PCA: eigh of the covariance with sign fixing against the SVD, whitening, and a reconstruction loss ------------
def pca_whiten(torch, init):
    rng = np.random.default_rng(6)
    mix = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.3]])
    x = torch.tensor(rng.standard_normal((20, 3)) @ mix)
    xc = x - x.mean(0, keepdim=True)
    cov = xc.T @ xc / (x.shape[0] - 1)
    evals, evecs = torch.linalg.eigh(cov)
    evals, evecs = evals.flip(0), evecs.flip(1)
    signs = torch.sign(evecs[evecs.abs().argmax(0), torch.arange(3)])
    evecs = evecs * signs
    U, S, Vh = torch.linalg.svd(xc, full_matrices=False)
    V = Vh.T * torch.sign(Vh.T[Vh.T.abs().argmax(0), torch.arange(3)])
    explained = evals / evals.sum()
    z = xc @ evecs[:, :2]
    white = xc @ evecs / torch.sqrt(evals + 1e-8)
    zca = white @ evecs.T
    wcov = white.T @ white / (x.shape[0] - 1)
    # learn a two-component linear autoencoder and compare its subspace with PCA's
    enc = torch.nn.Linear(3, 2, bias=False)
    init = start(enc, init)
    opt = torch.optim.Adam(enc.parameters(), lr=0.05)
    losses = []
    for _ in range(5):
        recon = enc(xc) @ enc.weight
        loss = torch.nn.functional.mse_loss(recon, xc)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    proj = torch.linalg.matrix_norm(evecs[:, :2].T @ torch.linalg.qr(enc.weight.T).Q)
    stats = [torch.cov(x.T), torch.corrcoef(torch.cat([x, 2 * x[:, :1]], 1).T), torch.cov(x.T, correction=0)]
    return dict(init=init, stats=stats, evals=evals, evecs=evecs, S2=S ** 2 / (x.shape[0] - 1), V=V, explained=explained, z=z,
                white=white, zca=zca, wcov=wcov, losses=losses, proj=proj, grads=grads(enc))


def test_pca_eigh_svd_sign_fixed_whitening(torch):
    both(torch, pca_whiten)


# ---- ridge regression: normal equations by linalg.solve, by cholesky + cholesky_solve, a path over lambdas ---------
def ridge(torch, init):
    rng = np.random.default_rng(7)
    X = torch.tensor(rng.standard_normal((15, 4)))
    w_true = torch.tensor([1.0, -2.0, 0.5, 0.0], dtype=torch.float64)
    y = X @ w_true + 0.1 * torch.tensor(rng.standard_normal(15))
    lam = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    A = X.T @ X + lam * torch.eye(4, dtype=X.dtype)
    w_solve = torch.linalg.solve(A, X.T @ y)
    L = torch.linalg.cholesky(A)
    w_chol = torch.cholesky_solve((X.T @ y).unsqueeze(1), L).squeeze(1)
    U = torch.linalg.cholesky(A, upper=True)
    w_upper = torch.cholesky_solve((X.T @ y)[:, None], U, upper=True)[:, 0]
    w_inv = torch.cholesky_inverse(L) @ X.T @ y
    # leave-one-out error from the hat matrix, differentiated with respect to lambda
    H = X @ torch.linalg.solve(A, X.T)
    loo = (((y - H @ y) / (1 - torch.diagonal(H))) ** 2).mean()
    loo.backward()
    path = torch.stack([torch.linalg.solve(X.T @ X + l * torch.eye(4, dtype=X.dtype), X.T @ y)
                        for l in (0.01, 0.1, 1.0, 10.0)])
    Yb = torch.stack([y, 2 * y], dim=1)
    batched = torch.linalg.solve(torch.stack([A.detach(), 2 * A.detach()]), X.T @ Yb)
    return dict(init=None, w_solve=w_solve, w_chol=w_chol, w_upper=w_upper, w_inv=w_inv, loo=loo, dlam=lam.grad,
                path=path, batched=batched, L=L)


def test_ridge_solve_cholesky_solve_loo_gradient(torch):
    both(torch, ridge)


# ---- GP regression: ARD RBF kernel by cdist**2, MultivariateNormal marginal likelihood, solve_triangular variance --
def gp_ard(torch, init):
    nn = torch.nn

    class ARDGP(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_ls = nn.Parameter(torch.zeros(2))
            self.log_sf = nn.Parameter(torch.tensor(0.0))
            self.log_sn = nn.Parameter(torch.tensor(-1.5))

        def k(self, a, b):
            ls = self.log_ls.exp()
            return self.log_sf.exp() ** 2 * torch.exp(-0.5 * torch.cdist(a / ls, b / ls) ** 2)

        def chol(self, x):
            K = self.k(x, x) + (self.log_sn.exp() ** 2 + 1e-6) * torch.eye(x.shape[0], dtype=x.dtype)
            return torch.linalg.cholesky(K)

        def forward(self, x, y):
            mvn = torch.distributions.MultivariateNormal(torch.zeros_like(y), scale_tril=self.chol(x))
            return -mvn.log_prob(y) / x.shape[0]

        def predict(self, x, y, xs):
            L = self.chol(x)
            alpha = torch.cholesky_solve(y[:, None], L)
            ks = self.k(x, xs)
            v = torch.linalg.solve_triangular(L, ks, upper=False)
            w = torch.linalg.solve_triangular(L.T, v, upper=True)
            return (ks.T @ alpha).squeeze(1), self.log_sf.exp() ** 2 - (v * v).sum(0), w

    rng = np.random.default_rng(8)
    x = torch.tensor(rng.uniform(-2, 2, (10, 2)))
    y = torch.sin(x[:, 0]) * torch.cos(2 * x[:, 1]) + 0.05 * torch.tensor(rng.standard_normal(10))
    gp = ARDGP()
    init = start(gp, init)
    opt = torch.optim.Adam(gp.parameters(), lr=0.1)
    losses = []
    for _ in range(4):
        loss = gp(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    xs = torch.tensor(rng.uniform(-2, 2, (4, 2)))
    mean, var, w = gp.predict(x, y, xs)
    (mean.sum() + var.sum()).backward()
    return dict(init=init, losses=losses, mean=mean, var=var, w=w, grads=grads(gp), params=list(gp.parameters()))


def test_gp_ard_cdist_multivariate_normal_solve_triangular(torch):
    both(torch, gp_ard)


# ---- physics-informed: a damped oscillator's residual x'' + c x' + k x through autograd.grad(create_graph=True),
# ---- and a Hamiltonian network's energy drift under symplectic Euler ----------------------------------------------
def physics(torch, init):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
            self.log_c = nn.Parameter(torch.tensor(-1.0))

        def forward(self, t):
            return self.f(t)

    net = Net()
    init = start(net, init)
    t = torch.linspace(0, 2, 9, dtype=torch.float64).unsqueeze(1).requires_grad_()
    t0 = torch.zeros(1, 1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    losses = []
    for _ in range(3):
        x = net(t)
        (dx,) = torch.autograd.grad(x.sum(), t, create_graph=True)
        (ddx,) = torch.autograd.grad(dx, t, grad_outputs=torch.ones_like(dx), create_graph=True)
        residual = ddx + net.log_c.exp() * dx + 4.0 * x
        x0 = net(t0)
        (v0,) = torch.autograd.grad(x0, t0, torch.ones_like(x0), create_graph=True)
        loss = residual.pow(2).mean() + (x0 - 1).pow(2).sum() + v0.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    H = nn.Sequential(nn.Linear(2, 6), nn.Softplus(), nn.Linear(6, 1)).double()
    with torch.no_grad():
        for p, v in zip(H.parameters(), [np.linspace(-1, 1, 12).reshape(6, 2), np.linspace(-.5, .5, 6),
                                          np.linspace(.3, -.3, 6).reshape(1, 6), np.zeros(1)]):
            p.copy_(torch.tensor(v))
    q = torch.tensor([[0.5], [1.0]], dtype=torch.float64, requires_grad=True)
    pm = torch.tensor([[0.0], [-0.3]], dtype=torch.float64, requires_grad=True)
    energies = []
    qs, ps = q, pm
    for _ in range(4):
        e = H(torch.cat([qs, ps], 1)).sum()
        dq, dp = torch.autograd.grad(e, (qs, ps), create_graph=True)
        ps = ps - 0.1 * dq
        e2 = H(torch.cat([qs, ps], 1)).sum()
        (dp2,) = torch.autograd.grad(e2, ps, create_graph=True)
        qs = qs + 0.1 * dp2
        energies.append(e)
    drift = (torch.stack(energies) - energies[0]).pow(2).sum()
    drift.backward()
    return dict(init=init, losses=losses, grads=grads(net), params=list(net.parameters()), qs=qs, ps=ps,
                drift=drift, dq0=q.grad, dp0=pm.grad, hgrads=grads(H))


def test_oscillator_residual_and_symplectic_hamiltonian_second_derivatives(torch):
    both(torch, physics)


# ---- Bayesian linear regression: Normal-Gamma prior, closed-form posterior, KL terms and a reparameterised ELBO ---
def bayes_linreg(torch, init):
    D = torch.distributions
    rng = np.random.default_rng(9)
    X = torch.tensor(rng.standard_normal((12, 3)))
    y = X @ torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64) + 0.3 * torch.tensor(rng.standard_normal(12))
    alpha, a0, b0 = 1.0, 2.0, 1.0
    prec = alpha * torch.eye(3, dtype=X.dtype) + X.T @ X
    cov = torch.linalg.inv(prec)
    mean = cov @ X.T @ y
    an = a0 + X.shape[0] / 2
    bn = b0 + 0.5 * (y @ y - mean @ prec @ mean)
    noise_prec = D.Gamma(torch.tensor(an, dtype=X.dtype), bn)
    facts = [noise_prec.mean, noise_prec.variance, noise_prec.log_prob(torch.tensor(1.5, dtype=X.dtype)),
             noise_prec.entropy()]
    post = D.MultivariateNormal(mean, covariance_matrix=cov / noise_prec.mean)
    prior = D.MultivariateNormal(torch.zeros(3, dtype=X.dtype), torch.eye(3, dtype=X.dtype) / alpha)
    kl_post = D.kl_divergence(post, prior)

    # a mean-field variational fit by the reparameterisation trick with given noise
    mu = torch.zeros(3, dtype=X.dtype, requires_grad=True)
    rho = torch.full((3,), -1.0, dtype=X.dtype, requires_grad=True)
    log_a = torch.tensor(0.0, dtype=X.dtype, requires_grad=True)
    log_b = torch.tensor(0.0, dtype=X.dtype, requires_grad=True)
    opt = torch.optim.Adam([mu, rho, log_a, log_b], lr=0.1)
    eps = torch.tensor(rng.standard_normal((4, 5, 3)))
    gammas = torch.tensor(rng.uniform(0.5, 2.0, (4, 5)))
    elbos = []
    for step in range(4):
        q = D.Normal(mu, torch.nn.functional.softplus(rho))
        w = mu + q.scale * eps[step]
        q_tau = D.Gamma(log_a.exp(), log_b.exp())
        tau = gammas[step]
        lik = D.Normal(w @ X.T, (1 / tau.sqrt())[:, None]).log_prob(y).sum(-1).mean()
        kl = D.kl_divergence(q, D.Normal(torch.zeros_like(mu), torch.ones_like(mu))).sum()
        kl_tau = D.kl_divergence(q_tau, D.Gamma(torch.tensor(a0, dtype=X.dtype), torch.tensor(b0, dtype=X.dtype)))
        elbo = lik - kl - kl_tau + q_tau.log_prob(tau).mean()
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
        elbos.append(elbo.item())
    return dict(init=None, mean=mean, cov=cov, bn=bn, facts=facts, kl_post=kl_post, elbos=elbos, mu=mu, rho=rho,
                log_a=log_a, log_b=log_b, gmu=mu.grad, grho=rho.grad)


def test_bayesian_linear_regression_normal_gamma_kl_reparameterised(torch):
    both(torch, bayes_linreg)


# ---- a normalizing flow: masked affine couplings, log-det by summed log-scales, then TransformedDistribution ------
def coupling_flow(torch, init):
    nn, D = torch.nn, torch.distributions
    T = D.transforms

    class Coupling(nn.Module):
        def __init__(self, mask):
            super().__init__()
            self.register_buffer("mask", mask)
            self.net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))

        def forward(self, x):
            s, t = self.net(x * self.mask).chunk(2, dim=1)
            s = torch.tanh(s) * (1 - self.mask)
            t = t * (1 - self.mask)
            return x * torch.exp(s) + t, s.sum(1)

        def inverse(self, z):
            s, t = self.net(z * self.mask).chunk(2, dim=1)
            s = torch.tanh(s) * (1 - self.mask)
            return (z - t * (1 - self.mask)) * torch.exp(-s)

    layers = nn.ModuleList([Coupling(torch.tensor([1.0, 0.0])), Coupling(torch.tensor([0.0, 1.0])),
                            Coupling(torch.tensor([1.0, 0.0]))])
    init = start(layers, init)
    base = D.Normal(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64))
    rng = np.random.default_rng(10)
    x = torch.tensor(np.stack([rng.uniform(-1, 1, 16), rng.uniform(-1, 1, 16) ** 2], 1))

    def log_prob(x):
        log_det = torch.zeros(x.shape[0], dtype=x.dtype)
        for layer in layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return base.log_prob(x).sum(1) + log_det

    opt = torch.optim.Adam(layers.parameters(), lr=0.01)
    losses = []
    for _ in range(4):
        loss = -log_prob(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    z = torch.tensor(rng.standard_normal((5, 2)))
    samples = z
    for layer in reversed(layers):
        samples = layer.inverse(samples)
    # a bounded variable: sigmoid of an affine map of a standard normal, the library's own log-det bookkeeping
    loc = torch.tensor([0.2, -0.1], dtype=torch.float64, requires_grad=True)
    scale = torch.tensor([1.5, 0.7], dtype=torch.float64, requires_grad=True)
    bounded = D.TransformedDistribution(D.Independent(base, 1),
                                        [T.AffineTransform(loc, scale), T.SigmoidTransform()])
    u = torch.tensor(rng.uniform(0.05, 0.95, (6, 2)))
    lp = bounded.log_prob(u)
    lp.sum().backward()
    pushed = bounded.transforms[1](bounded.transforms[0](z))
    facts = [bounded.event_shape == (2,), bounded.batch_shape == ()]
    return dict(init=init, losses=losses, grads=grads(layers), samples=samples, lp=lp, gloc=loc.grad,
                gscale=scale.grad, pushed=pushed, facts=facts)


def test_affine_coupling_flow_and_transformed_distribution(torch):
    both(torch, coupling_flow)


# ---- polynomial chaos: Legendre and Hermite bases fitted by least squares, moments from the coefficients ---------
def polynomial_chaos(torch, init):
    sp = torch.special
    rng = np.random.default_rng(11)
    u = torch.tensor(rng.uniform(-1, 1, 30))
    g = torch.tensor(rng.standard_normal(30))
    f_u = torch.exp(0.5 * u) + u ** 3
    f_g = torch.sin(g) + 0.5 * g ** 2
    P = torch.stack([sp.legendre_polynomial_p(u, n) for n in range(5)], 1)
    He = torch.stack([sp.hermite_polynomial_he(g, n) for n in range(5)], 1)
    Hp = torch.stack([sp.hermite_polynomial_h(g, torch.tensor(n)) for n in range(4)], 1)
    c_leg = torch.linalg.lstsq(P, f_u[:, None]).solution.squeeze(1)
    c_her = torch.linalg.lstsq(He, f_g[:, None]).solution.squeeze(1)
    norms_leg = 1.0 / (2 * torch.arange(5, dtype=torch.float64) + 1)
    norms_her = torch.exp(torch.lgamma(torch.arange(5, dtype=torch.float64) + 1))
    mean_u, var_u = c_leg[0], (c_leg[1:] ** 2 * norms_leg[1:]).sum()
    mean_g, var_g = c_her[0], (c_her[1:] ** 2 * norms_her[1:]).sum()
    # a learned surrogate: coefficients by gradient descent on the same basis
    coef = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([coef], lr=0.2, momentum=0.5)
    losses = []
    for _ in range(5):
        loss = ((P @ coef - f_u) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    n_int = torch.tensor([0, 1, 2, 3])
    ints = sp.legendre_polynomial_p(torch.tensor([0.5, -0.25]), n_int[:, None])
    return dict(init=None, P=P, He=He, Hp=Hp, c_leg=c_leg, c_her=c_her, moments=[mean_u, var_u, mean_g, var_g],
                losses=losses, coef=coef, ints=ints)


def test_polynomial_chaos_legendre_hermite_lstsq(torch):
    both(torch, polynomial_chaos)


# ---- sparse least squares: a COO design matrix, CG on the normal equations by torch.sparse.mm, and its gradient ---
def sparse_cg(torch, init):
    rng = np.random.default_rng(12)
    m, n = 14, 6
    rows = np.repeat(np.arange(m), 2)
    cols = np.concatenate([[i % n, (3 * i + 1) % n] for i in range(m)])
    vals = rng.uniform(0.5, 1.5, 2 * m)
    A = torch.sparse_coo_tensor(torch.tensor(np.stack([rows, cols])), torch.tensor(vals), (m, n)).coalesce()
    b = torch.tensor(rng.standard_normal((m, 1)))
    lam = 0.1
    At = A.t()

    def normal(v):
        return torch.sparse.mm(At, torch.sparse.mm(A, v)) + lam * v

    x = torch.zeros(n, 1, dtype=torch.float64)
    r = torch.sparse.mm(At, b) - normal(x)
    p = r.clone()
    rs = (r * r).sum()
    residuals = []
    for _ in range(n):
        Ap = normal(p)
        alpha = rs / (p * Ap).sum()
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = (r * r).sum()
        residuals.append(rs_new.sqrt().item())
        if rs_new.sqrt() < 1e-12:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    dense = A.to_dense()
    direct = torch.linalg.solve(dense.T @ dense + lam * torch.eye(n, dtype=torch.float64), dense.T @ b)
    # learned weights through sparse.mm: the gradient of a loss with respect to the dense operand
    w = torch.zeros(n, 1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    losses = []
    for _ in range(4):
        loss = (torch.sparse.mm(A, w) - b).pow(2).mean() + lam * w.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    facts = [A.is_sparse, A._nnz(), A.is_coalesced(), list(A.indices().shape)]
    # the same solve with vectors: torch.mv of the sparse matrix and of its transpose, a fixed number of steps
    xv = torch.zeros(n, dtype=torch.float64)
    r = torch.mv(At, b.squeeze(1)) - lam * xv - torch.mv(At, torch.mv(A, xv))
    p = r.clone()
    for _ in range(3):
        Ap = At.mv(A.mv(p)) + lam * p
        alpha = (r @ r) / (p @ Ap)
        xv, r_new = xv + alpha * p, r - alpha * Ap
        p, r = r_new + (r_new @ r_new) / (r @ r) * p, r_new
    return dict(init=None, x=x, direct=direct, residuals=residuals, losses=losses, w=w, facts=facts,
                values=A.values(), xv=xv)


def test_sparse_least_squares_conjugate_gradient(torch):
    both(torch, sparse_cg)


# ---- a continuous normalizing flow: RK4 over (z, log p) with the exact trace of jacrev, vmapped over the batch ---
def cnf_rk4(torch, init):
    nn = torch.nn
    functional_call, jacrev, vmap = torch.func.functional_call, torch.func.jacrev, torch.func.vmap

    class Field(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))

        def forward(self, z, t):
            return self.net(torch.cat([z, t.expand(*z.shape[:-1], 1)], -1))

    field = Field()
    init = start(field, init)
    params = dict(field.named_parameters())

    def one(p, z, t):  # a single point's velocity, for jacrev
        return functional_call(field, p, (z, t))

    def dynamics(z, t, p):
        v = field(z, t)
        jac = vmap(jacrev(one, argnums=1), in_dims=(None, 0, None))(p, z, t)
        return v, -torch.diagonal(jac, dim1=-2, dim2=-1).sum(-1)

    def integrate(z, steps=2):
        logdet = torch.zeros(z.shape[0], dtype=z.dtype)
        h = 1.0 / steps
        for i in range(steps):
            t = torch.tensor([i * h], dtype=z.dtype)
            k1, l1 = dynamics(z, t, params)
            k2, l2 = dynamics(z + h / 2 * k1, t + h / 2, params)
            k3, l3 = dynamics(z + h / 2 * k2, t + h / 2, params)
            k4, l4 = dynamics(z + h * k3, t + h, params)
            z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            logdet = logdet + h / 6 * (l1 + 2 * l2 + 2 * l3 + l4)
        return z, logdet

    rng = np.random.default_rng(13)
    x = torch.tensor(np.stack([rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4) ** 2], 1))
    base = torch.distributions.Normal(0.0, 1.0)
    opt = torch.optim.Adam(field.parameters(), lr=0.02)
    losses = []
    for _ in range(2):
        z, dlog = integrate(x)
        # the flow runs data to noise: log p(x) = log N(z) - (integral of the divergence)
        loss = -(base.log_prob(z).sum(1) - dlog).mean()
        # a kinetic-energy and Jacobian-norm regulariser at the data points
        jac = vmap(jacrev(one, argnums=1), in_dims=(None, 0, None))(params, x, torch.zeros(1, dtype=x.dtype))
        loss = loss + 0.01 * jac.pow(2).sum((1, 2)).mean() + 0.01 * field(x, torch.zeros(1, dtype=x.dtype)).pow(2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        z, dlog = integrate(x)
    return dict(init=init, losses=losses, z=z, dlog=dlog, grads=grads(field), params=list(field.parameters()))


def test_continuous_flow_rk4_exact_trace_by_vmapped_jacrev(torch):
    both(torch, cnf_rk4)


# ---- Monte-Carlo with given samples: importance sampling from a Student-t, control variates, score vs pathwise ----
def monte_carlo(torch, init):
    D = torch.distributions
    rng = np.random.default_rng(14)
    n = 200
    u = torch.tensor(rng.standard_t(4, n))
    target, proposal = D.Normal(torch.tensor(0.5, dtype=torch.float64), 0.8), D.StudentT(4.0, torch.tensor(0.0, dtype=torch.float64), 1.2)
    x = 1.2 * u
    log_w = target.log_prob(x) - proposal.log_prob(x)
    w = torch.softmax(log_w, 0)
    f = torch.sin(x) + x ** 2
    is_est = (w * f).sum()
    ess = 1 / (w ** 2).sum()
    raw = (log_w.exp() * f).mean()
    # control variate: E[x] under the target is known
    cv = log_w.exp() * x
    beta = torch.cov(torch.stack([log_w.exp() * f, cv]))[0, 1] / cv.var()
    cv_est = raw - beta * (cv.mean() - 0.5)
    # gradients of E_{N(mu, sigma)}[g(x)] by the pathwise and by the score-function estimator, the same noise
    mu = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    log_sigma = torch.tensor(-0.2, dtype=torch.float64, requires_grad=True)
    eps = torch.tensor(rng.standard_normal(n))
    q = D.Normal(mu, log_sigma.exp())
    xs = q.loc + q.scale * eps
    pathwise = torch.autograd.grad((xs ** 2 + torch.cos(3 * xs)).mean(), (mu, log_sigma))
    q = D.Normal(mu, log_sigma.exp())  # (the first graph was freed by the pathwise grad)
    xd = xs.detach()
    g = xd ** 2 + torch.cos(3 * xd)
    surrogate = ((g - g.mean()) * q.log_prob(xd)).mean()
    score = torch.autograd.grad(surrogate, (mu, log_sigma))
    # antithetic pairs and a quasi-grid by hand for a 1-d integral
    anti = 0.5 * (torch.exp(0.3 * eps) + torch.exp(-0.3 * eps)).mean()
    grid = (torch.arange(64, dtype=torch.float64) + 0.5) / 64
    qmc = torch.exp(torch.special.ndtri(grid) * 0.3).mean()
    return dict(init=None, is_est=is_est, ess=ess, raw=raw, beta=beta, cv_est=cv_est, pathwise=list(pathwise),
                score=list(score), anti=anti, qmc=qmc, w=w)


def test_monte_carlo_importance_control_variates_score_pathwise(torch):
    both(torch, monte_carlo)


# ---- logistic regression by Newton / IRLS with the deprecated torch.cholesky, then a Laplace approximation -------
def irls_laplace(torch, init):
    import warnings

    D = torch.distributions
    xb, yb = blobs(12, [(-0.8, 0.3), (0.9, -0.4)], 15, scale=0.9)
    X = torch.cat([torch.ones(24, 1, dtype=torch.float64), torch.tensor(xb)], 1)
    y = torch.tensor(yb).double()
    w = torch.zeros(3, dtype=torch.float64)
    prior_prec = 0.5
    nll = []
    for _ in range(5):
        p = torch.sigmoid(X @ w)
        grad = X.T @ (p - y) + prior_prec * w
        H = X.T @ (X * (p * (1 - p))[:, None]) + prior_prec * torch.eye(3, dtype=torch.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.cholesky is deprecated (its warning is PyTorch's, tested elsewhere)
            L = torch.cholesky(H)
        w = w - torch.cholesky_solve(grad[:, None], L)[:, 0]
        nll.append(torch.nn.functional.binary_cross_entropy_with_logits(X @ w, y, reduction="sum").item())
    cov = torch.cholesky_inverse(L)
    post = D.MultivariateNormal(w, scale_tril=torch.linalg.cholesky(cov))
    xt = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, -1.0]], dtype=torch.float64)
    mean_logit = xt @ w
    var_logit = (xt @ cov * xt).sum(1)
    probit = torch.sigmoid(mean_logit / torch.sqrt(1 + math.pi * var_logit / 8))
    evidence = (-torch.nn.functional.binary_cross_entropy_with_logits(X @ w, y, reduction="sum")
                + D.Normal(torch.tensor(0.0, dtype=torch.float64), prior_prec ** -0.5).log_prob(w).sum() + 1.5 * math.log(2 * math.pi)
                - torch.log(torch.diagonal(L)).sum())
    return dict(init=None, nll=nll, w=w, cov=cov, entropy=post.entropy(), probit=probit, evidence=evidence)


def test_irls_newton_deprecated_cholesky_laplace(torch):
    both(torch, irls_laplace)
