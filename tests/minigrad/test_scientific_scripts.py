"""Scientific-computing scripts written as PyTorch users write them, run on minigrad and on PyTorch from the
same inputs: the same values, gradients, dtypes, grad_fn names where both are one op, and the same errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as mg_nn

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
X = rng.standard_normal(3)
V = rng.standard_normal(3)
A3 = rng.standard_normal((3, 3))
XS = rng.standard_normal((4, 3))
A4 = rng.standard_normal((4, 4))
B42 = rng.standard_normal((4, 2))
W53 = rng.standard_normal((5, 3))
SPD = A4 @ A4.T + 4 * np.eye(4)
PTS = rng.standard_normal((40, 2))
YS = np.sin(PTS[:, 0]) + 0.1 * rng.standard_normal(40)
NOISE = rng.standard_normal((20, 3))
OBS = rng.standard_normal((15, 1))


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for item in out for leaf in _leaves(item)]
    if isinstance(out, dict):
        return [leaf for k in sorted(out) for leaf in _leaves(out[k])]
    return [out]


def _same(script, tol=1e-7, nn=None):
    """Runs script(torch-like module) on minigrad and on PyTorch and compares every output."""
    ours = _leaves(script(mg, mg_nn) if nn else script(mg))
    theirs = _leaves(script(torch, torch.nn) if nn else script(torch))
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if not isinstance(b, torch.Tensor):
            assert a == b, i
            continue
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1], i
        if b.grad_fn is not None and type(b.grad_fn).__name__ in ("CloneBackward0", "LinalgQrBackward0"):
            assert a.grad_fn.name() == b.grad_fn.name(), i
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol, err_msg=str(i))


def _same_error(script):
    with pytest.raises(Exception) as theirs:
        script(torch)
    with pytest.raises(Exception) as ours:
        script(mg)
    assert (type(ours.value).__name__, str(ours.value)) == (type(theirs.value).__name__, str(theirs.value))


def _f64(t, arr, grad=False):
    return t.tensor(arr, dtype=t.float64, requires_grad=grad)


# ---- autograd.functional and torch.func ------------------------------------------------------------------

def test_autograd_functional_create_graph_vectorize_forward_mode():
    def script(t):
        F = t.autograd.functional
        x, v = _f64(t, X), _f64(t, V)

        def f(x):
            return t.sin(x) * x.pow(2).sum()

        def g(x):
            return (x.exp() * x).sum()

        out = [F.jacobian(f, x, vectorize=True, strategy="forward-mode"), F.hessian(g, x, vectorize=True),
               F.jvp(f, x, v), F.vjp(f, x, v), F.hvp(g, x, v), F.vhp(g, x, v)]
        xr = _f64(t, X, True)
        F.jacobian(f, xr, create_graph=True).sum().backward()
        xr2 = _f64(t, X, True)
        F.hvp(g, xr2, v, create_graph=True)[1].sum().backward()
        out += [xr.grad, xr2.grad, F.hessian(lambda a, b: (a * a * b).sum(), (x, _f64(t, V)))]
        return out
    _same(script)


def test_jacobian_unknown_strategy_is_pytorchs_assertion():
    _same_error(lambda t: t.autograd.functional.jacobian(lambda x: x * 2, _f64(t, X), strategy="bad"))


def test_func_transforms_nested():
    def script(t):
        fn = t.func
        x, a, xs = _f64(t, X), _f64(t, A3), _f64(t, XS)

        def loss(w, x):
            return t.tanh(a @ w).dot(x) + (w ** 3).sum()

        return [fn.grad(loss, argnums=(0, 1))(x, x), fn.grad_and_value(loss)(x, x),
                fn.jacfwd(lambda w: t.tanh(a @ w))(x), fn.hessian(lambda w: loss(w, x))(x),
                fn.vmap(fn.grad(loss), in_dims=(0, None))(xs, x), fn.vmap(lambda r: r * 2, out_dims=1)(xs),
                fn.vmap(lambda r: r.exp(), chunk_size=2)(xs), fn.vmap(fn.vmap(lambda s, u: s * u), in_dims=(0, None))(xs, x),
                fn.vmap(fn.jacrev(lambda w: t.tanh(a @ w)))(xs),
                fn.jacfwd(fn.jacrev(lambda w: (w.sin() ** 2).sum()))(x),
                fn.grad(lambda w: ((w ** 2).sum(), w.mean()), has_aux=True)(x)]
    _same(script)


def test_functional_call_with_tied_weights():
    def script(t, nn):
        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(3, 3, bias=False)
                self.b = nn.Linear(3, 3, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(t.tanh(self.a(x)))

        m = Tied().double()
        W, x = _f64(t, A3), _f64(t, X)
        g = t.func.grad(lambda p: t.func.functional_call(m, p, (x,)).sum())({"a.weight": W})
        return [t.func.functional_call(m, {"a.weight": W}, (x,)),
                t.func.functional_call(m, {"a.weight": W, "b.weight": W * 2}, (x,), tie_weights=False), g]
    _same(script, nn=True)


# ---- integrators, samplers, estimators --------------------------------------------------------------------

def test_rk4_and_euler_maruyama_gradients_through_the_solve():
    def script(t):
        k = _f64(t, [0.7, 1.3], True)
        y0 = _f64(t, [1.0, 0.0], True)

        def f(time, y):
            return t.stack([y[1], -k[0] * y[0] - k[1] * t.sin(y[1]) * time])
        y, h, time, traj = y0, 0.05, 0.0, [y0]
        for _ in range(20):
            k1 = f(time, y)
            k2 = f(time + h / 2, y + h / 2 * k1)
            k3 = f(time + h / 2, y + h / 2 * k2)
            k4 = f(time + h, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            time += h
            traj.append(y)
        traj = t.stack(traj)
        (traj[:, 0] ** 2).mean().backward()
        noise, x, theta = _f64(t, NOISE), t.zeros(3, dtype=t.float64), _f64(t, 0.5, True)
        for i in range(20):
            x = x - theta * x * 0.1 + 0.3 * 0.1 ** 0.5 * noise[i]
        x.pow(2).sum().backward()
        return [traj, k.grad, y0.grad, x, theta.grad]
    _same(script)


def test_hamiltonian_monte_carlo_leapfrog():
    def script(t):
        prec = t.linalg.inv(_f64(t, [[1.0, 0.8, 0.0], [0.8, 1.0, 0.3], [0.0, 0.3, 1.0]]))

        def U(q):
            return 0.5 * q @ prec @ q

        def grad_U(q):
            q = q.detach().requires_grad_(True)
            return t.autograd.grad(U(q), q)[0]
        q, samples, accepts = t.zeros(3, dtype=t.float64), [], []
        momenta, us = _f64(t, NOISE), _f64(t, np.linspace(0.05, 0.95, 20))
        for i in range(20):
            p = momenta[i]
            qn, pn = q.clone(), p - 0.05 * grad_U(q)
            for _ in range(5):
                qn = qn + 0.1 * pn
                pn = pn - 0.1 * grad_U(qn)
            pn = pn + 0.05 * grad_U(qn)
            accept = t.exp(t.clamp(U(q) + 0.5 * p.dot(p) - U(qn) - 0.5 * pn.dot(pn), max=0.0))
            accepts.append(accept)
            if us[i] < accept:
                q = qn
            samples.append(q)
        return [t.stack(samples), t.stack(accepts)]
    _same(script)


def test_gaussian_mixture_em_with_logsumexp():
    def script(t):
        x = _f64(t, PTS)
        mu, var = x[:3].clone(), t.ones(3, 2, dtype=t.float64)
        logpi = t.full((3,), -np.log(3), dtype=t.float64)
        for _ in range(10):
            d = x[:, None, :] - mu[None]
            logp = -0.5 * (d ** 2 / var).sum(-1) - 0.5 * t.log(var).sum(-1) - np.log(2 * np.pi) + logpi
            ll = t.logsumexp(logp, dim=1, keepdim=True)
            r = t.exp(logp - ll)
            nk = r.sum(0)
            mu = (r.T @ x) / nk[:, None]
            var = (r.T @ x ** 2) / nk[:, None] - mu ** 2 + 1e-6
            logpi = t.log(nk / x.shape[0])
        return [mu, var, logpi, ll.sum(), r.argmax(1)]
    _same(script)


def test_gp_marginal_likelihood_and_kernel_ridge():
    def script(t):
        x, y = _f64(t, PTS), _f64(t, YS)
        log_ls, log_sn = _f64(t, 0.0, True), _f64(t, -1.0, True)
        K = t.exp(-0.5 * t.cdist(x, x).pow(2) / t.exp(log_ls) ** 2)
        L = t.linalg.cholesky(K + t.exp(log_sn) ** 2 * t.eye(40, dtype=t.float64))
        alpha = t.cholesky_solve(y[:, None], L)
        nll = 0.5 * (y[:, None] * alpha).sum() + t.log(t.diagonal(L)).sum() + 20 * np.log(2 * np.pi)
        nll.backward()
        coef = t.linalg.solve(K.detach() + 0.1 * t.eye(40, dtype=t.float64), y)
        pred = t.exp(-0.5 * t.cdist(x[:5] + 0.1, x) ** 2) @ coef
        return [nll, log_ls.grad, log_sn.grad, coef, pred, t.cholesky_inverse(L)[:3, :3]]
    _same(script)


def test_kalman_filter_likelihood_gradient():
    def script(t):
        F = _f64(t, [[1.0, 0.1], [0.0, 1.0]])
        H = _f64(t, [[1.0, 0.0]])
        q = _f64(t, 0.01, True)
        Q, R = q * t.eye(2, dtype=t.float64), _f64(t, [[0.5]])
        x, P, ll, xs = t.zeros(2, 1, dtype=t.float64), t.eye(2, dtype=t.float64), 0, []
        for z in _f64(t, OBS):
            x, P = F @ x, F @ P @ F.T + Q
            S = H @ P @ H.T + R
            K = P @ H.T @ t.linalg.inv(S)
            innov = z[:, None] - H @ x
            ll = ll + t.distributions.MultivariateNormal(t.zeros(1, dtype=t.float64), S).log_prob(innov.T).sum()
            x, P = x + K @ innov, (t.eye(2, dtype=t.float64) - K @ H) @ P
            xs.append(x)
        ll.backward()
        return [t.cat(xs, 1), ll, q.grad, P]
    _same(script)


def test_heat_equation_with_a_sparse_laplacian():
    def script(t):
        n = 8
        h = 1.0 / (n + 1)
        rows, cols, vals = [], [], []
        for i in range(n):
            for j, v in ((i - 1, -1.0), (i, 2.0), (i + 1, -1.0)):
                if 0 <= j < n:
                    rows.append(i)
                    cols.append(j)
                    vals.append(v / h ** 2)
        A = t.sparse_coo_tensor(t.tensor([rows, cols]), _f64(t, vals), (n, n)).coalesce()
        u = t.sin(t.linspace(h, 1 - h, n, dtype=t.float64) * np.pi)[:, None]
        for _ in range(10):
            u = u - 0.0005 * t.sparse.mm(A, u)
        implicit = t.linalg.solve(t.eye(n, dtype=t.float64) + 0.0005 * A.to_dense(), u)
        w = t.ones(n, 1, dtype=t.float64, requires_grad=True)
        t.sparse.mm(A, w).sum().backward()
        return [u, implicit, A.indices(), A.values(), A._nnz(), A @ u, w.grad, A.t().to_dense()]
    _same(script)


def test_variational_inference_with_rsample_and_kl():
    def script(t):
        D = t.distributions
        mu, log_s = _f64(t, [0.3, -0.2], True), _f64(t, [-0.5, 0.1], True)
        p = D.Normal(t.zeros(2, dtype=t.float64), t.ones(2, dtype=t.float64))
        kl = D.kl_divergence(D.Normal(mu, log_s.exp()), p).sum()
        z = mu + log_s.exp() * _f64(t, NOISE[:5, :2])  # the reparametrized sample rsample draws
        elbo = D.Normal(z, 1.0).log_prob(_f64(t, [0.5, 0.5])).sum() / 5 - kl
        (-elbo).backward()
        mv = D.MultivariateNormal(mu, scale_tril=t.diag(log_s.exp()))
        std = D.MultivariateNormal(t.zeros(2, dtype=t.float64), t.eye(2, dtype=t.float64))
        return [kl, elbo, mu.grad, log_s.grad, D.kl_divergence(D.Independent(D.Normal(mu, log_s.exp()), 1),
                                                               D.Independent(p, 1)),
                D.kl_divergence(mv, std),
                D.kl_divergence(D.Beta(t.tensor(2.0), t.tensor(3.0)), D.Beta(t.tensor(1.5), t.tensor(1.0))),
                D.kl_divergence(D.Exponential(t.tensor(2.0)), D.Gamma(t.tensor(1.5), t.tensor(1.0))),
                D.kl_divergence(D.Uniform(0.0, 1.0), D.Normal(0.0, 1.0)),
                D.kl_divergence(D.Poisson(t.tensor(2.0)), D.Poisson(t.tensor(3.0)))]
    _same(script, tol=1e-6)


def test_special_functions_in_a_likelihood():
    def script(t):
        x = _f64(t, np.abs(YS[:10]) + 0.5, True)
        S = t.special
        ll = (S.gammaln(x) + S.digamma(x) + S.erfcx(x) + S.log_ndtr(x - 1) + S.ndtri(t.sigmoid(x))
              + S.xlogy(x, x) + S.xlog1py(x, x) + S.i0e(x) + S.i1(x) + S.entr(x / 3) + S.polygamma(1, x)
              + S.multigammaln(x + 2, 2) + S.sinc(x) + S.zeta(_f64(t, 3.0), x + 1) + S.bessel_j0(x)
              + S.erfinv(x / 10) + S.i1e(x) + S.log_softmax(x, 0)).sum()
        return [ll, t.autograd.grad(ll, x)]
    _same(script)


def test_data_pipeline_binning_and_running_statistics():
    def script(t):
        x = _f64(t, YS)
        xi = (x * 3).round().to(t.int64) + 4
        edges = t.linspace(-1, 1, 5, dtype=t.float64)
        xm = x.clone().requires_grad_(True)
        cmax, cmin, lcse = t.cummax(xm, 0), t.cummin(xm, 0), t.logcumsumexp(xm, 0)
        return [t.histc(x, bins=4, min=-1, max=1), t.bincount(xi, weights=x, minlength=12),
                t.bucketize(x, edges, right=True), t.searchsorted(edges, x, side="right"),
                t.bucketize(x, edges, out_int32=True), t.unique(xi, return_inverse=True, return_counts=True),
                t.unique_consecutive(t.sort(xi).values, return_inverse=True, return_counts=True),
                cmax, cmin, lcse, t.autograd.grad((cmax.values * 2 + lcse + cmin.values).sum(), xm),
                t.histogram(x, bins=edges, density=True).hist]
    _same(script)


# ---- linear algebra ----------------------------------------------------------------------------------------

def _grads(t, outs, *inputs):
    total = sum(((i + 1) * o).sum() for i, o in enumerate(outs))
    return t.autograd.grad(total, inputs)


def test_least_squares_triangular_and_ex_solves():
    def script(t):
        a, b = _f64(t, W53, True), _f64(t, B42[:, :1].repeat(2, 0)[:5], True)
        out = [t.linalg.lstsq(a, b, driver=d).solution for d in ("gels", "gelsy", "gelsd", "gelss")]
        r = t.linalg.lstsq(a, b, driver="gelsd")
        out += [r.residuals, r.rank, r.singular_values, _grads(t, [r.solution], a, b)]
        tri, rhs = _f64(t, np.triu(A4) + 3 * np.eye(4), True), _f64(t, B42, True)
        for upper in (True, False):
            for left in (True, False):
                x = t.linalg.solve_triangular(tri if upper else tri.mT, rhs if left else rhs.mT, upper=upper,
                                              left=left, unitriangular=not left)
                out += [x, _grads(t, [x], tri, rhs)]
        s = _f64(t, SPD, True)
        out += [t.linalg.cholesky_ex(s), t.linalg.cholesky_ex(_f64(t, np.stack([SPD, -SPD]))).info,
                t.linalg.inv_ex(s), t.linalg.solve_ex(s, rhs), t.linalg.inv_ex(t.zeros(3, 3)).info]
        return out
    _same(script)


def test_solve_triangular_without_upper_is_pytorchs_error():
    _same_error(lambda t: t.linalg.solve_triangular(_f64(t, A4), _f64(t, B42)))


def test_lu_family_values_and_gradients():
    def script(t):
        a, b = _f64(t, A4, True), _f64(t, B42, True)
        LU, piv = t.linalg.lu_factor(a)
        x = t.linalg.lu_solve(LU, piv, b, adjoint=True)
        P, L, U = t.linalg.lu(a)
        return [LU, piv, x, _grads(t, [x], a, b), t.linalg.lu_solve(*t.linalg.lu_factor(a), b.mT, left=False),
                P, L, U, _grads(t, [L, U], a), t.lu_unpack(*t.linalg.lu_factor(a)), t.linalg.lu(_f64(t, W53))]
    _same(script)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 3, 5), (4, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_backward_tall_wide_and_complete(shape, mode):
    arr = np.random.default_rng(3).standard_normal(shape)

    def script(t):
        a = _f64(t, arr, True)
        Q, R = t.linalg.qr(a, mode=mode)
        return [Q, R, _grads(t, [Q, R], a)]
    if mode == "complete" and shape[-2] > shape[-1]:
        _same_error(lambda t: _grads(t, t.linalg.qr(_f64(t, arr, True), mode=mode), ))
        return
    _same(script)


def test_qr_mode_r_backward_is_pytorchs_error():
    _same_error(lambda t: _grads(t, [t.linalg.qr(_f64(t, W53, True), mode="r").R]))


def test_pinv_tolerances_and_hermitian():
    rank2 = W53[:, :2] @ A3[:2]  # a 5 x 3 matrix of rank 2

    def script(t):
        a, s, d = _f64(t, W53, True), _f64(t, SPD, True), _f64(t, rank2, True)
        herm = t.linalg.pinv(s, hermitian=True)
        low = t.linalg.pinv(d)
        return [t.linalg.pinv(a), herm, _grads(t, [herm], s), low, _grads(t, [low], d),
                t.linalg.pinv(a, rtol=0.5), t.linalg.pinv(a, atol=1.0), t.linalg.pinv(s, hermitian=True, atol=5.0)]
    _same(script)


def test_matrix_power_one_is_a_new_tensor():
    def script(t):
        a = _f64(t, A4, True)
        p = t.linalg.matrix_power(a, 1)
        with t.no_grad():
            p.detach().zero_()  # (writes through p's storage: a keeps its values only when p has its own)
        return [p, a, t.linalg.matrix_power(a, -2), _grads(t, [t.linalg.matrix_power(a, 3)], a)]
    _same(script)


def test_matrix_functions_and_products_backward():
    def script(t):
        a, s = _f64(t, A4 * 0.5, True), _f64(t, SPD, True)
        u, w = _f64(t, A3[0], True), _f64(t, A3[1], True)
        e, (sign, lad), ld = t.linalg.matrix_exp(a), t.linalg.slogdet(a), t.logdet(s)
        md = t.linalg.multi_dot([_f64(t, W53), a[:3, :3], s[:3, :2]])
        hh = t.linalg.householder_product(_f64(t, W53, True), _f64(t, [1.2, 0.7, 0.3], True))
        c, vd = t.linalg.cross(u, w), t.linalg.vecdot(u, w)
        ts = t.linalg.tensorsolve(_f64(t, (np.eye(6) * 3 + A4[0, 0]).reshape(2, 3, 6)), _f64(t, np.arange(6.).reshape(2, 3)))
        return [e, sign, lad, ld, md, hh, c, vd, ts, _grads(t, [e, lad, md, ld], a, s),
                _grads(t, [c, vd], u, w), t.linalg.vander(u, N=4), t.linalg.eigvalsh(s), t.linalg.svdvals(a)]
    _same(script)


def test_householder_product_batched_and_orgqr_forms():
    arr, tau = np.random.default_rng(4).standard_normal((2, 4, 3)), np.random.default_rng(5).standard_normal((2, 2))

    def script(t):
        a, tt = _f64(t, arr, True), _f64(t, tau, True)
        q = t.linalg.householder_product(a, tt)
        return [q, _grads(t, [q * q.detach()], a, tt), t.orgqr(a, tt), a.orgqr(tt)]
    _same(script)


@pytest.mark.parametrize("shapes", [((3,), (1,)), ((2, 3), (1,)), ((3, 2), (3,)), ((3, 2), (2, 2)),
                                    ((2, 3, 2), (3, 2))])
def test_householder_product_errors(shapes):
    _same_error(lambda t: t.linalg.householder_product(t.ones(shapes[0]), t.ones(shapes[1])))
    _same_error(lambda t: t.linalg.householder_product(t.ones(3, 2), t.ones(2, dtype=t.float64)))
