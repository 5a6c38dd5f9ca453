"""Autograd and torch.func as researchers use them, and optimizers and schedulers beyond Adam, in whole scripts (a
learned-step-size quantizer by a straight-through custom Function beside a non-differentiable argmax output; a
WGAN-GP critic's penalty by autograd.grad(create_graph=True); Jacobian regularisation by forward-mode dual tensors
against the double-backward trick; DP-SGD's clipped per-sample gradients by vmap(grad) under NAdam; a damped Newton
step from func.hessian, jacrev / jacfwd and autograd.functional; the optimizer fused into backward by
post-accumulate-grad hooks beside gradient-editing hooks and retain_grad; a deep equilibrium layer's implicit
gradient by a backward hook; maximize=True against the negated loss; each optimizer's foreach and for-loop paths;
their argument errors; scheduler chains, plateaus and cycles resumed from state_dicts mid-run; SWA with a custom
avg_fn, SWALR, update_bn and a param group added mid-training; a double-differentiable custom Function checked by
gradcheck / gradgradcheck; an ensemble stacked by stack_module_state under Adagrad's lr_decay), written once
against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses,
gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import copy
import math

import numpy as np
import pytest

from twins import both, grads, start


def data(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def error(fn):
    """(type name, message) of what fn() raises, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).split("\n")[0]
    return None


# ---- LSQ quantization: a straight-through custom Function with a learned step, and an argmax output -----------
def ste_quantizer(torch, init):
    nn, F = torch.nn, torch.nn.functional
    once_differentiable = torch.autograd.function.once_differentiable
    seen = []

    class LearnedStepQuant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, step):
            ctx.save_for_backward(x, step)
            return torch.round(x / step).clamp(-4, 3) * step

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, step = ctx.saved_tensors
            seen.append(tuple(ctx.needs_input_grad))
            v = x / step
            inside = (v >= -4) & (v <= 3)
            gx = g * inside if ctx.needs_input_grad[0] else None
            # d(step * clamp(round(x/step)))/dstep: round(v) - v inside the range, the clamp bound outside
            dstep = torch.where(inside, torch.round(v) - v, v.clamp(-4, 3).round())
            return gx, (g * dstep).sum().reshape(step.shape)

    class MaxWithIndex(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.max(dim=1)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            ctx.n = x.shape[1]
            return values, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            (idx,) = ctx.saved_tensors
            seen.append(float(g_idx.abs().sum()))
            return F.one_hot(idx, ctx.n).to(g.dtype) * g.unsqueeze(1)

    class QuantMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(4, 6), nn.Linear(6, 3)
            self.step = nn.Parameter(torch.tensor([0.3]))

        def forward(self, x):
            w = LearnedStepQuant.apply(self.fc1.weight, self.step)
            return self.fc2(F.relu(F.linear(x, w, self.fc1.bias)))

    model = QuantMLP()
    init = start(model, init)
    x, y = data(1, (12, 4), (12,))
    x, y = torch.tensor(x), torch.tensor(y)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    losses = []
    for _ in range(5):
        values, idx = MaxWithIndex.apply(model(x))
        loss = F.mse_loss(values, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    frozen = LearnedStepQuant.apply(model.fc1.weight.detach(), model.step)
    frozen.sum().backward()  # needs_input_grad (False, True): no weight gradient is computed
    q = LearnedStepQuant.apply(model.fc1.weight, model.step)
    (g_step,) = torch.autograd.grad(q.pow(2).sum(), model.step, create_graph=True)
    twice = error(lambda: g_step.sum().backward())  # once_differentiable: a second backward is refused
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model), seen=seen,
                idx=idx, idx_grad=idx.requires_grad, names=[type(q.grad_fn).__name__, type(values.grad_fn).__name__],
                frozen=frozen.detach(), levels=sorted(set((frozen / model.step).round().flatten().tolist())),
                twice=twice, delayed=type(g_step.grad_fn).__name__)


def test_learned_step_quantizer_straight_through_and_argmax_output(torch):
    both(torch, ste_quantizer)


# ---- WGAN-GP: the critic's gradient penalty at interpolates by autograd.grad(create_graph=True), n_critic steps --
def wgan_gp(torch, init):
    nn = torch.nn
    gen = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 2))
    critic = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    both_models = nn.ModuleDict(dict(gen=gen, critic=critic))
    init = start(both_models, init)
    rng = np.random.default_rng(2)
    g_opt = torch.optim.RAdam(gen.parameters(), lr=1e-2, betas=(0.5, 0.9))
    c_opt = torch.optim.Adamax(critic.parameters(), lr=2e-2, betas=(0.5, 0.9))
    c_losses, g_losses, penalties = [], [], []
    for _ in range(4):
        for _ in range(2):
            real = torch.tensor(rng.standard_normal((8, 2)) * 0.5 + 1.0)
            z = torch.tensor(rng.standard_normal((8, 2)))
            fake = gen(z).detach()
            eps = torch.tensor(rng.uniform(size=(8, 1)))
            mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
            out = critic(mix)
            (g,) = torch.autograd.grad(out, mix, grad_outputs=torch.ones_like(out), create_graph=True,
                                       retain_graph=True)
            penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
            c_loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
            c_opt.zero_grad()
            c_loss.backward()
            c_opt.step()
            c_losses.append(c_loss.item())
            penalties.append(penalty.item())
        for p in critic.parameters():
            p.requires_grad_(False)
        g_loss = -critic(gen(torch.tensor(rng.standard_normal((8, 2))))).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        for p in critic.parameters():
            p.requires_grad_(True)
        g_losses.append(g_loss.item())
    return dict(init=init, c_losses=c_losses, g_losses=g_losses, penalties=penalties,
                params=list(both_models.parameters()), critic_grads=grads(critic),
                critic_frozen_grad=[p.grad is None for p in critic.parameters()])


def test_wgan_gp_gradient_penalty_create_graph(torch):
    both(torch, wgan_gp)


# ---- Jacobian regularisation: ||J v||^2 by the double-backward trick, checked by dual tensors and functional.jvp --
def jacobian_regularised(torch, init):
    nn, F = torch.nn, torch.nn.functional
    fwAD = torch.autograd.forward_ad
    model = nn.Sequential(nn.Linear(3, 8), nn.Softplus(), nn.Linear(8, 4))
    init = start(model, init)
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((10, 3)))
    labels = torch.tensor(rng.integers(0, 4, 10))
    opt = torch.optim.NAdam(model.parameters(), lr=0.02, momentum_decay=4e-3)
    losses, checks = [], []
    for _ in range(4):
        v = torch.tensor(rng.standard_normal((10, 3)))
        v = v / v.norm(dim=1, keepdim=True)
        xi = x.clone().requires_grad_(True)
        out = model(xi)
        u = torch.zeros_like(out, requires_grad=True)
        (vjp_u,) = torch.autograd.grad(out, xi, u, create_graph=True)
        (jv,) = torch.autograd.grad(vjp_u, u, v, create_graph=True)
        with fwAD.dual_level():
            dual_out = model(fwAD.make_dual(x, v))
            tangent = fwAD.unpack_dual(dual_out).tangent
        _, jv_fn = torch.autograd.functional.jvp(model, x, v)
        checks.append((jv - tangent).abs().max().item() + (jv - jv_fn).abs().max().item())
        loss = F.cross_entropy(out, labels) + 0.1 * jv.pow(2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, checks=checks, params=list(model.parameters()), grads=grads(model),
                tangent=tangent, tangent_none=fwAD.unpack_dual(x).tangent is None)


def test_jacobian_regularisation_double_backward_against_forward_ad(torch):
    both(torch, jacobian_regularised, tol=dict(rtol=1e-9, atol=1e-9))


# ---- DP-SGD: per-sample gradients by vmap(grad(functional_call)), clipped per sample, noised, stepped by NAdam ---
def dp_sgd(torch, init):
    nn, F = torch.nn, torch.nn.functional
    from_func = torch.func
    model = nn.Sequential(nn.Linear(5, 6), nn.GELU(), nn.Linear(6, 2))
    init = start(model, init)
    rng = np.random.default_rng(4)
    x = torch.tensor(rng.standard_normal((9, 5)))
    y = torch.tensor(rng.integers(0, 2, 9))
    opt = torch.optim.NAdam(model.parameters(), lr=0.05, momentum_decay=2e-3, weight_decay=0.1,
                            decoupled_weight_decay=True)
    max_norm, sigma = 0.5, 0.3

    def loss_one(params, xi, yi):
        logits = from_func.functional_call(model, params, (xi.unsqueeze(0),))
        return F.cross_entropy(logits, yi.unsqueeze(0))

    per_sample = from_func.vmap(from_func.grad(loss_one), in_dims=(None, 0, 0))
    losses, clipped_fraction = [], []
    for _ in range(4):
        params = {k: v.detach() for k, v in model.named_parameters()}
        g = per_sample(params, x, y)
        norms = torch.stack([t.flatten(1).norm(dim=1) for t in g.values()]).norm(dim=0)
        factor = (max_norm / (norms + 1e-6)).clamp(max=1.0)
        clipped_fraction.append((factor < 1).double().mean().item())
        for name, p in model.named_parameters():
            noise = torch.tensor(rng.standard_normal(tuple(p.shape)))
            summed = torch.einsum("n,n...->...", factor, g[name])
            p.grad = (summed + sigma * max_norm * noise) / len(x)
        opt.step()
        with torch.no_grad():
            losses.append(F.cross_entropy(model(x), y).item())
    state = opt.state_dict()["state"][0]
    return dict(init=init, losses=losses, clipped=clipped_fraction, norms=norms, params=list(model.parameters()),
                mu_product=state["mu_product"], exp_avg=state["exp_avg"], groups=opt.state_dict()["param_groups"])


def test_dp_sgd_per_sample_clipping_vmap_grad_nadam(torch):
    both(torch, dp_sgd)


# ---- a damped Newton step on a tiny net's flat parameters: func.hessian, jacrev vs jacfwd, functional.hvp/vhp ---
def newton_step(torch, init):
    nn, F = torch.nn, torch.nn.functional
    fn = torch.func
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    init = start(model, init)
    x, y = data(5, (16, 2), (16, 1))
    x, y = torch.tensor(x), torch.tensor(y)
    names = [n for n, _ in model.named_parameters()]
    shapes = [p.shape for p in model.parameters()]
    sizes = [p.numel() for p in model.parameters()]

    def loss_flat(theta):
        params = {n: t.view(s) for n, t, s in zip(names, theta.split(sizes), shapes)}
        return F.mse_loss(fn.functional_call(model, params, (x,)), y)

    theta = torch.cat([p.detach().flatten() for p in model.parameters()])
    history = []
    for _ in range(3):
        g = fn.grad(loss_flat)(theta)
        h = fn.hessian(loss_flat)(theta)
        h_rev = fn.jacrev(fn.jacrev(loss_flat))(theta)
        h_fwd = fn.jacfwd(fn.jacrev(loss_flat))(theta)
        h_af = torch.autograd.functional.hessian(loss_flat, theta)
        v = g / g.norm()
        _, hv = torch.autograd.functional.hvp(loss_flat, theta, v)
        _, vh = torch.autograd.functional.vhp(loss_flat, theta, v)
        checks = [(h - h_rev).abs().max(), (h - h_fwd).abs().max(), (h - h_af).abs().max(),
                  (hv - h @ v).abs().max(), (vh - v @ h).abs().max()]
        damped = h + 0.1 * torch.eye(len(theta), dtype=theta.dtype)
        theta = theta - torch.linalg.solve(damped, g)
        history.append(dict(loss=loss_flat(theta).item(), gnorm=g.norm().item(), checks=[c.item() for c in checks],
                            eig=torch.linalg.eigvalsh(h)))
    torch.nn.utils.vector_to_parameters(theta, model.parameters())
    return dict(init=init, history=history, params=list(model.parameters()), theta=theta)


def test_damped_newton_hessian_jacrev_jacfwd_functional(torch):
    both(torch, newton_step, tol=dict(rtol=1e-8, atol=1e-9))


# ---- the optimizer fused into backward: post-accumulate-grad hooks step each parameter, hooks edit gradients ----
def optimizer_in_backward(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    init = start(model, init)
    x, = data(6, (10, 4))
    x = torch.tensor(x)
    y = torch.tensor(np.random.default_rng(6).integers(0, 3, 10))
    opts = {p: torch.optim.Adagrad([p], lr=0.1, lr_decay=0.01) for p in model.parameters()}
    order = []

    def step_in_backward(p):
        order.append(tuple(p.shape))
        opts[p].step()
        opts[p].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step_in_backward) for p in model.parameters()]
    # a bias's gradient halved, a weight's clipped elementwise, on the way to accumulation
    handles.append(model[2].bias.register_hook(lambda g: g * 0.5))
    handles.append(model[0].weight.register_hook(lambda g: g.clamp(-0.05, 0.05)))
    losses, hidden_grads = [], []
    for _ in range(4):
        h = model[1](model[0](x))
        h.retain_grad()
        h.register_hook(lambda g: g + 0.01)
        loss = F.cross_entropy(model[2](h), y)
        loss.backward()
        losses.append(loss.item())
        hidden_grads.append(h.grad.clone())
    for handle in handles:
        handle.remove()
    left = [p.grad for p in model.parameters()]
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return dict(init=init, losses=losses, hidden_grads=hidden_grads, order=order, params=list(model.parameters()),
                left=[g is None for g in left], after=grads(model),
                sums=[opts[p].state[p]["sum"] for p in model.parameters()])


def test_optimizer_step_in_post_accumulate_grad_hooks(torch):
    both(torch, optimizer_in_backward)


# ---- a deep equilibrium layer: the fixed point solved without a graph, its implicit gradient by a backward hook --
def deq(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class DEQ(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(3, 5)
            self.w = nn.Linear(5, 5, bias=False)
            self.head = nn.Linear(5, 2)

        def f(self, z, xe):
            return torch.tanh(self.w(z) + xe)

        def forward(self, x, iters=60):
            xe = self.inp(x)
            with torch.no_grad():
                z = torch.zeros_like(xe)
                for _ in range(iters):
                    z = self.f(z, xe)
            z = self.f(z, xe)  # one step with a graph to the parameters
            z0 = z.detach().requires_grad_()
            f0 = self.f(z0, xe)

            def implicit(g):
                # y = g + J^T y solved by iteration: the gradient through the infinite unrolling
                y = g
                for _ in range(iters):
                    y = torch.autograd.grad(f0, z0, y, retain_graph=True)[0] + g
                return y

            if z.requires_grad:
                z.register_hook(implicit)
            return self.head(z), (z - self.f(z, xe)).norm().item()

    model = DEQ()
    init = start(model, init)
    with torch.no_grad():
        model.w.weight.mul_(0.3)
    x, y = data(7, (6, 3), (6, 2))
    x, y = torch.tensor(x), torch.tensor(y)
    opt = torch.optim.Rprop(model.parameters(), lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-5, 0.1))
    losses, residuals = [], []
    for _ in range(4):
        out, res = model(x)
        loss = F.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        residuals.append(res)
    return dict(init=init, losses=losses, residuals=residuals, params=list(model.parameters()), grads=grads(model),
                step_size=opt.state[model.w.weight]["step_size"])


def test_deep_equilibrium_implicit_gradient_by_hook(torch):
    both(torch, deq, tol=dict(rtol=1e-8, atol=1e-10))


# ---- maximize=True: each optimizer climbing a log-likelihood equals it descending the negated one ------------------
MAXIMIZERS = {
    "asgd": lambda o, p, m: o.ASGD(p, lr=0.05, t0=2, lambd=1e-3, maximize=m),
    "adadelta": lambda o, p, m: o.Adadelta(p, lr=0.5, weight_decay=0.01, maximize=m),
    "adagrad": lambda o, p, m: o.Adagrad(p, lr=0.1, lr_decay=0.05, maximize=m),
    "adamax": lambda o, p, m: o.Adamax(p, lr=0.05, weight_decay=0.01, maximize=m),
    "nadam": lambda o, p, m: o.NAdam(p, lr=0.05, maximize=m),
    "radam": lambda o, p, m: o.RAdam(p, lr=0.05, weight_decay=0.01, maximize=m),
    "rprop": lambda o, p, m: o.Rprop(p, lr=0.02, maximize=m),
    "sgd": lambda o, p, m: o.SGD(p, lr=0.05, momentum=0.5, dampening=0.1, maximize=m),
}


def maximize_likelihood(torch, init, name):
    nn = torch.nn
    rng = np.random.default_rng(8)
    obs = torch.tensor(rng.standard_normal(20) * 1.5 + 0.7)
    runs, given = {}, init
    for maximize in (True, False):
        model = nn.ParameterDict(dict(mu=nn.Parameter(torch.zeros(1)), log_sigma=nn.Parameter(torch.zeros(1))))
        init = start(model, given)
        opt = MAXIMIZERS[name](torch.optim, model.parameters(), maximize)
        trace = []
        for _ in range(6):
            dist = torch.distributions.Normal(model["mu"], model["log_sigma"].exp())
            ll = dist.log_prob(obs).mean()
            opt.zero_grad()
            (ll if maximize else -ll).backward()
            opt.step()
            trace.append(ll.item())
        runs[maximize] = dict(trace=trace, params=[p.detach().clone() for p in model.parameters()],
                              maximize=opt.param_groups[0]["maximize"])
    gap = max((a - b).abs().max().item() for a, b in zip(runs[True]["params"], runs[False]["params"]))
    return dict(init=init, up=runs[True], down=runs[False], gap=gap)


@pytest.mark.parametrize("name", list(MAXIMIZERS))
def test_maximize_equals_descending_the_negation(torch, name):
    theirs, _ = both(torch, maximize_likelihood, name=name)
    assert theirs["gap"] < 1e-12


# ---- each optimizer's foreach and for-loop paths on a stacked ensemble trained by vmap over functional_call ------
FOREACH = {
    "radam": lambda o, p, f: o.RAdam(p, lr=0.03, weight_decay=0.01, foreach=f),
    "nadam_decoupled": lambda o, p, f: o.NAdam(p, lr=0.03, weight_decay=0.02, decoupled_weight_decay=True, foreach=f),
    "adamax": lambda o, p, f: o.Adamax(p, lr=0.03, foreach=f),
    "asgd": lambda o, p, f: o.ASGD(p, lr=0.03, t0=1, foreach=f),
    "rprop": lambda o, p, f: o.Rprop(p, lr=0.01, foreach=f),
    "adadelta": lambda o, p, f: o.Adadelta(p, lr=0.8, foreach=f),
    "adagrad_lr_decay": lambda o, p, f: o.Adagrad(p, lr=0.1, lr_decay=0.1, initial_accumulator_value=0.05,
                                                  foreach=f),
}


def stacked_ensemble_foreach(torch, init, name):
    nn, F = torch.nn, torch.nn.functional
    fn = torch.func
    members = nn.ModuleList([nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)) for _ in range(3)])
    init = start(members, init)
    rng = np.random.default_rng(9)
    x = torch.tensor(rng.standard_normal((3, 8, 3)))  # a minibatch per member
    y = torch.tensor(rng.standard_normal((3, 8, 1)))
    base = copy.deepcopy(members[0])  # a skeleton: functional_call supplies the weights

    def one(params, xb):
        return fn.functional_call(base, params, (xb,))

    out = {}
    for foreach in (False, True):
        params, _ = fn.stack_module_state(list(members))
        leaves = list(params.values())
        opt = FOREACH[name](torch.optim, leaves, foreach)
        losses = []
        for _ in range(5):
            pred = fn.vmap(one)(params, x)
            loss = F.mse_loss(pred, y, reduction="none").mean(dim=(1, 2)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        out[foreach] = dict(losses=losses, params=[p.detach().clone() for p in leaves])
    diff = max((a - b).abs().max().item() for a, b in zip(out[True]["params"], out[False]["params"]))
    return dict(init=init, loop=out[False], foreach=out[True], diff=diff,
                keys=sorted(opt.state_dict()["state"][0]))


@pytest.mark.parametrize("name", list(FOREACH))
def test_stacked_ensemble_foreach_and_for_loop_agree(torch, name):
    theirs, _ = both(torch, stacked_ensemble_foreach, name=name)
    assert theirs["diff"] < 1e-10  # (ASGD's two paths round apart by ~1e-11 in PyTorch too)


# ---- optimizer and scheduler arguments a script gets wrong: PyTorch's errors, caught and reported --------------------
def argument_errors(torch, init):
    nn, optim = torch.nn, torch.optim
    model = nn.Linear(3, 2)
    init = start(model, init)
    S = optim.lr_scheduler
    ps = list(model.parameters())
    sgd = optim.SGD(ps[:1], lr=0.1)
    cases = [
        lambda: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, dampening=0.1),
        lambda: optim.SGD(ps, lr=0.1, nesterov=True),
        lambda: optim.SGD(ps, lr=-0.1),
        lambda: optim.SGD(ps, lr=0.1, momentum=-0.5),
        lambda: optim.SGD(ps, lr=0.1, weight_decay=-1.0),
        lambda: optim.SGD([], lr=0.1),
        lambda: optim.NAdam(ps, momentum_decay=-1.0),
        lambda: optim.NAdam(ps, betas=(1.0, 0.9)),
        lambda: optim.RAdam(ps, betas=(0.9, -0.1)),
        lambda: optim.Adamax(ps, eps=-1e-8),
        lambda: optim.Adagrad(ps, lr_decay=-0.1),
        lambda: optim.Adagrad(ps, initial_accumulator_value=-1.0),
        lambda: optim.Adadelta(ps, rho=1.5),
        lambda: optim.Rprop(ps, etas=(1.5, 1.2)),
        lambda: optim.ASGD(ps, weight_decay=-0.1),
        lambda: sgd.add_param_group({"params": ps[:1]}),
        lambda: sgd.add_param_group({"params": ps[1], "lr": 0.2}) or sgd.add_param_group({"params": ps[1]}),
        lambda: S.SequentialLR(sgd, [S.ConstantLR(sgd), S.ExponentialLR(sgd, 0.9)], milestones=[2, 4]),
        lambda: S.ReduceLROnPlateau(sgd, factor=1.0),
        lambda: S.ReduceLROnPlateau(sgd, mode="up"),
        lambda: S.ReduceLROnPlateau(sgd, min_lr=[0.1, 0.2, 0.3]),
        lambda: S.CyclicLR(sgd, base_lr=0.1, max_lr=0.2, mode="square"),
        lambda: S.PolynomialLR(sgd, total_iters=4).get_lr() and S.LambdaLR(sgd, [lambda e: 1.0] * 5),
    ]
    errors = [error(c) for c in cases]
    return dict(init=init, errors=errors, groups=len(sgd.param_groups))


def test_optimizer_and_scheduler_argument_errors(torch):
    theirs, _ = both(torch, argument_errors)
    assert all(e is not None for e in theirs["errors"])


def plain_model(torch, init, seed):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 1))
    init = start(model, init)
    x, y = data(seed, (12, 3), (12, 1))
    return model, init, torch.tensor(x), torch.tensor(y)


# ---- warmup then cosine by SequentialLR, stopped at step 5 and resumed by state_dicts into fresh objects ----------
def sequential_resumed(torch, init):
    F, S = torch.nn.functional, torch.optim.lr_scheduler
    model, init, x, y = plain_model(torch, init, 10)

    def build(m):
        opt = torch.optim.SGD([{"params": m[0].parameters()}, {"params": m[2].parameters(), "lr": 0.05}],
                              lr=0.1, momentum=0.9, weight_decay=1e-3)
        warm = S.LinearLR(opt, start_factor=0.1, total_iters=3)
        cos = S.CosineAnnealingLR(opt, T_max=6, eta_min=1e-3)
        return opt, S.SequentialLR(opt, [warm, cos], milestones=[3])

    def train(m, opt, sched, steps, lrs):
        for _ in range(steps):
            opt.zero_grad()
            F.mse_loss(m(x), y).backward()
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())

    opt, sched = build(model)
    whole = copy.deepcopy(model)
    w_opt, w_sched = build(whole)
    whole_lrs, lrs = [], []
    train(whole, w_opt, w_sched, 10, whole_lrs)
    train(model, opt, sched, 5, lrs)
    saved = dict(model=copy.deepcopy(model.state_dict()), opt=copy.deepcopy(opt.state_dict()),
                 sched=sched.state_dict())
    fresh = copy.deepcopy(model)
    torch.nn.init.zeros_(fresh[0].weight)
    fresh.load_state_dict(saved["model"])
    f_opt, f_sched = build(fresh)
    f_opt.load_state_dict(saved["opt"])
    f_sched.load_state_dict(saved["sched"])
    train(fresh, f_opt, f_sched, 5, lrs)
    return dict(init=init, lrs=lrs, whole_lrs=whole_lrs, params=list(fresh.parameters()),
                whole=list(whole.parameters()), sched_keys=sorted(saved["sched"]),
                milestones=saved["sched"]["_milestones"], last_epoch=f_sched.last_epoch)


def test_sequential_lr_warmup_cosine_resumed_mid_run(torch):
    theirs, _ = both(torch, sequential_resumed)
    np.testing.assert_allclose(theirs["lrs"], theirs["whole_lrs"], rtol=1e-12)


# ---- ChainedScheduler of a stateful LambdaLR object and MultiplicativeLR, per-group lambdas, resumed mid-run ------
class WarmupLambda:
    """An lr_lambda as an object, so LambdaLR's state_dict carries its fields."""

    def __init__(self, warmup, decay):
        self.warmup, self.decay, self.calls = warmup, decay, 0

    def __call__(self, epoch):
        self.calls += 1
        return (epoch + 1) / self.warmup if epoch < self.warmup else self.decay ** (epoch - self.warmup)


def chained_resumed(torch, init):
    F, S = torch.nn.functional, torch.optim.lr_scheduler
    model, init, x, y = plain_model(torch, init, 11)

    def build(m):
        opt = torch.optim.Adadelta([{"params": m[0].parameters()}, {"params": m[2].parameters(), "lr": 0.5}],
                                   lr=1.0)
        lam = S.LambdaLR(opt, [WarmupLambda(3, 0.8), lambda e: 1.0 / (1 + e)])
        mult = S.MultiplicativeLR(opt, lambda e: 0.95)
        return opt, S.ChainedScheduler([lam, mult]), lam

    opt, sched, lam = build(model)
    lrs, losses = [], []
    for step in range(8):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        losses.append(loss.item())
        if step == 3:
            state = copy.deepcopy(sched.state_dict())
            o_state = copy.deepcopy(opt.state_dict())
            resumed = copy.deepcopy(model)
    lam_state = lam.state_dict()["lr_lambdas"]
    r_opt, r_sched, _ = build(resumed)
    r_opt.load_state_dict(o_state)
    r_sched.load_state_dict(state)
    r_lrs = []
    for _ in range(4):
        r_opt.zero_grad()
        F.mse_loss(resumed(x), y).backward()
        r_opt.step()
        r_sched.step()
        r_lrs.append(r_sched.get_last_lr())
    return dict(init=init, lrs=lrs, losses=losses, r_lrs=r_lrs, lam_state=lam_state,
                params=list(model.parameters()), resumed=list(resumed.parameters()),
                acc=opt.state[model[0].weight]["acc_delta"])


def test_chained_lambda_object_and_multiplicative_resumed(torch):
    theirs, _ = both(torch, chained_resumed)
    np.testing.assert_allclose(theirs["r_lrs"], theirs["lrs"][4:], rtol=1e-12)


# ---- ReduceLROnPlateau on a validation accuracy (mode max), abs threshold, cooldown, per-group min_lr, resumed ----
def plateau_resumed(torch, init):
    F, S = torch.nn.functional, torch.optim.lr_scheduler
    model, init, x, y = plain_model(torch, init, 12)
    # a validation curve that stalls, given rather than measured so that the plateaus land on known epochs
    curve = [0.50, 0.60, 0.61, 0.612, 0.60, 0.70, 0.70, 0.69, 0.70, 0.71, 0.705, 0.70, 0.70, 0.72]

    def build(m):
        opt = torch.optim.Adamax([{"params": m[0].parameters()}, {"params": m[2].parameters(), "lr": 0.02}],
                                 lr=0.05)
        return opt, S.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=1, threshold=0.01,
                                        threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.008], eps=1e-4)

    opt, sched = build(model)
    lrs, counters = [], []
    for epoch, acc in enumerate(curve):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
        sched.step(acc)
        lrs.append([g["lr"] for g in opt.param_groups])
        counters.append((sched.num_bad_epochs, sched.cooldown_counter, float(sched.best)))
        if epoch == 6:
            state, o_state, resumed = sched.state_dict(), copy.deepcopy(opt.state_dict()), copy.deepcopy(model)
    r_opt, r_sched = build(resumed)
    r_opt.load_state_dict(o_state)
    r_sched.load_state_dict(state)
    r_lrs = []
    for acc in curve[7:]:
        r_opt.zero_grad()
        F.mse_loss(resumed(x), y).backward()
        r_opt.step()
        r_sched.step(acc)
        r_lrs.append([g["lr"] for g in r_opt.param_groups])
    return dict(init=init, lrs=lrs, counters=counters, r_lrs=r_lrs, last=sched.get_last_lr(),
                params=list(model.parameters()), resumed=list(resumed.parameters()),
                keys=sorted(k for k in state if k != "optimizer"))


def test_reduce_on_plateau_max_abs_cooldown_min_lr_resumed(torch):
    theirs, _ = both(torch, plateau_resumed)
    assert theirs["r_lrs"] == theirs["lrs"][7:]


# ---- CyclicLR cycling Adam's beta1 with a custom scale_fn per iteration, then PolynomialLR, resumed mid-cycle ------
def cyclic_adam_resumed(torch, init):
    F, S = torch.nn.functional, torch.optim.lr_scheduler
    model, init, x, y = plain_model(torch, init, 13)

    def build(m):
        opt = torch.optim.Adam(m.parameters(), lr=0.01, betas=(0.9, 0.99))
        cyc = S.CyclicLR(opt, base_lr=0.005, max_lr=0.05, step_size_up=2, step_size_down=3,
                         scale_fn=lambda k: 0.8 ** k, scale_mode="iterations", cycle_momentum=True,
                         base_momentum=0.8, max_momentum=0.9)
        return opt, cyc

    opt, cyc = build(model)
    lrs, betas = [], []
    for step in range(12):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
        cyc.step()
        lrs.append(cyc.get_last_lr()[0])
        betas.append(opt.param_groups[0]["betas"])
        if step == 6:
            # (PyTorch's CyclicLR.load_state_dict pops '_scale_fn_custom' from the dict it is given; minigrad's
            # leaves the caller's dict alone, as PyTorch's other schedulers do: the script keeps its own copy)
            state, o_state, resumed = (copy.deepcopy(cyc.state_dict()), copy.deepcopy(opt.state_dict()),
                                       copy.deepcopy(model))
    r_opt, r_cyc = build(resumed)
    r_opt.load_state_dict(o_state)
    r_cyc.load_state_dict(state)
    r_lrs = []
    for _ in range(5):
        r_opt.zero_grad()
        F.mse_loss(resumed(x), y).backward()
        r_opt.step()
        r_cyc.step()
        r_lrs.append(r_cyc.get_last_lr()[0])
    poly = S.PolynomialLR(opt, total_iters=4, power=0.5)
    tail = []
    for _ in range(6):
        opt.step()
        poly.step()
        tail.append(poly.get_last_lr()[0])
    return dict(init=init, lrs=lrs, betas=betas, r_lrs=r_lrs, tail=tail, params=list(model.parameters()),
                resumed=list(resumed.parameters()), state_keys=sorted(cyc.state_dict()),
                custom=cyc.state_dict()["_scale_fn_custom"])


def test_cyclic_lr_adam_beta1_custom_scale_then_polynomial(torch):
    theirs, _ = both(torch, cyclic_adam_resumed)
    np.testing.assert_allclose(theirs["r_lrs"], theirs["lrs"][7:], rtol=1e-12)


# ---- SWA: an EMA AveragedModel by a custom avg_fn, SWALR's linear anneal, update_bn, a param group added later -----
def swa_with_new_group(torch, init):
    nn, F = torch.nn, torch.nn.functional
    swa_utils = torch.optim.swa_utils
    model = nn.Sequential(nn.Linear(3, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
    head = nn.Linear(3, 1)
    both_models = nn.ModuleList([model, head])
    init = start(both_models, init)
    rng = np.random.default_rng(14)
    xs = torch.tensor(rng.standard_normal((24, 3)))
    ys = torch.tensor(rng.standard_normal((24, 1)))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs, ys), batch_size=6, shuffle=False)

    def ema(avg, cur, n):
        return 0.7 * avg + 0.3 * cur if n > 0 else cur

    averaged = swa_utils.AveragedModel(model, avg_fn=ema)
    swa = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    swalr = swa_utils.SWALR(opt, swa_lr=0.02, anneal_epochs=3, anneal_strategy="linear")
    losses, lrs = [], []
    for epoch in range(6):
        if epoch == 2:
            # SWALR reads each group's swa_lr: a group added after it must bring its own
            opt.add_param_group({"params": head.parameters(), "lr": 0.05, "momentum": 0.0, "swa_lr": 0.01})
        for xb, yb in loader:
            loss = F.mse_loss(model(xb) + (head(xb) if epoch >= 2 else 0), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        averaged.update_parameters(model)
        if epoch >= 3:
            swa.update_parameters(model)
            swalr.step()
        lrs.append([g["lr"] for g in opt.param_groups])
    swa_utils.update_bn(loader, swa)
    with torch.no_grad():
        swa.eval()
        averaged.eval()
        preds = [swa(xs), averaged(xs)]
    bn = swa.module[1]
    return dict(init=init, losses=losses, lrs=lrs, preds=preds, n_averaged=[averaged.n_averaged, swa.n_averaged],
                bn=[bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.momentum],
                ema=list(averaged.module.parameters()), groups=[sorted(g) for g in opt.param_groups],
                params=list(both_models.parameters()))


def test_swa_custom_avg_fn_swalr_update_bn_param_group_added(torch):
    both(torch, swa_with_new_group)


# ---- a softplus-gated unit as a custom Function whose backward is itself differentiable: gradcheck, gradgradcheck,
# ---- a gradient penalty through it, materialize_grads off for an unused second output ----------------------------
def double_diff_function(torch, init):
    nn, F = torch.nn, torch.nn.functional
    calls = []

    class GatedSoftplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, gate):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x, gate)
            return F.softplus(x) * torch.sigmoid(gate), gate.detach().sign()

        @staticmethod
        def backward(ctx, g, g_sign):
            calls.append(g_sign is None)
            x, gate = ctx.saved_tensors
            if g is None:
                return None, None
            s = torch.sigmoid(gate)
            # written with differentiable ops, so create_graph=True gets a second derivative
            return g * torch.sigmoid(x) * s, g * F.softplus(x) * s * (1 - s)

    rng = np.random.default_rng(15)
    a = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    b = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    fn = lambda u, v: GatedSoftplus.apply(u, v)[0]  # noqa: E731
    checks = [torch.autograd.gradcheck(fn, (a, b)), torch.autograd.gradgradcheck(fn, (a, b))]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.out = nn.Linear(2, 4), nn.Linear(2, 4), nn.Linear(4, 1)

        def forward(self, x):
            return self.out(GatedSoftplus.apply(self.a(x), self.b(x))[0])

    net = Net()
    init = start(net, init)
    x = torch.tensor(rng.standard_normal((7, 2)), requires_grad=True)
    y = torch.tensor(rng.standard_normal((7, 1)))
    opt = torch.optim.Adagrad(net.parameters(), lr=0.1, lr_decay=0.02, weight_decay=1e-3)
    losses = []
    for _ in range(4):
        out = net(x)
        (gx,) = torch.autograd.grad(out.sum(), x, create_graph=True)
        loss = F.mse_loss(out, y) + 0.1 * gx.pow(2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    h = torch.autograd.functional.hessian(lambda u: fn(u, b.detach()).sum(), a.detach())
    return dict(init=init, checks=checks, losses=losses, params=list(net.parameters()), grads=grads(net),
                x_grad=x.grad, calls=calls[-3:], h=h, name=type(GatedSoftplus.apply(a, b)[0].grad_fn).__name__)


def test_double_differentiable_custom_function_gradgradcheck_penalty(torch):
    both(torch, double_diff_function)


# ---- Levenberg-Marquardt on a tiny net's residuals: autograd.functional.jacobian (vectorized, forward-mode), vjp --
def levenberg_marquardt(torch, init):
    nn, fn = torch.nn, torch.func
    AF = torch.autograd.functional
    model = nn.Sequential(nn.Linear(1, 4), nn.Tanh(), nn.Linear(4, 1))
    init = start(model, init)
    t = torch.linspace(-2, 2, 15, dtype=torch.float64).unsqueeze(1)
    target = torch.sin(1.5 * t) + 0.1 * torch.tensor(np.random.default_rng(16).standard_normal((15, 1)))
    names = [n for n, _ in model.named_parameters()]
    shapes = [p.shape for p in model.parameters()]
    sizes = [p.numel() for p in model.parameters()]

    def residuals(theta):
        params = {n: w.view(s) for n, w, s in zip(names, theta.split(sizes), shapes)}
        return (fn.functional_call(model, params, (t,)) - target).squeeze(1)

    theta = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    damping, history = 1e-2, []
    for _ in range(5):
        r = residuals(theta)
        j = AF.jacobian(residuals, theta, vectorize=True)
        j_fwd = AF.jacobian(residuals, theta, vectorize=True, strategy="forward-mode")
        j_loop = AF.jacobian(residuals, theta)
        _, jtr = AF.vjp(residuals, theta, r)
        _, jv = AF.jvp(residuals, theta, torch.ones_like(theta))
        checks = [(j - j_fwd).abs().max().item(), (j - j_loop).abs().max().item(),
                  (jtr - j.T @ r).abs().max().item(), (jv - j.sum(1)).abs().max().item()]
        jtj = j.T @ j
        step = torch.linalg.solve(jtj + damping * torch.diag(torch.diagonal(jtj)), -(j.T @ r))
        candidate = theta + step
        if residuals(candidate).pow(2).sum() < r.pow(2).sum():
            theta, damping = candidate, damping / 3
        else:
            damping = damping * 4
        history.append(dict(cost=r.pow(2).sum().item(), damping=damping, checks=checks))
    torch.nn.utils.vector_to_parameters(theta, model.parameters())
    return dict(init=init, history=history, params=list(model.parameters()), jacobian=j)


def test_levenberg_marquardt_functional_jacobian_strategies(torch):
    both(torch, levenberg_marquardt, tol=dict(rtol=1e-8, atol=1e-9))


# ---- hypergradients: a per-layer log learning rate and a weight decay learned through unrolled differentiable SGD --
def unrolled_hyperparameters(torch, init):
    nn, F, fn = torch.nn, torch.nn.functional, torch.func
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    init = start(model, init)
    rng = np.random.default_rng(17)
    xt, yt = torch.tensor(rng.standard_normal((12, 3))), torch.tensor(rng.standard_normal((12, 1)))
    xv, yv = torch.tensor(rng.standard_normal((8, 3))), torch.tensor(rng.standard_normal((8, 1)))
    log_lr = torch.full((2,), math.log(0.1), dtype=torch.float64, requires_grad=True)
    log_wd = torch.tensor(math.log(1e-2), dtype=torch.float64, requires_grad=True)
    meta = torch.optim.Adamax([log_lr, log_wd], lr=0.05)
    layer = {n: int(n.split(".")[0]) // 2 for n, _ in model.named_parameters()}
    val_losses, hypers = [], []
    for _ in range(4):
        params = {n: p for n, p in model.named_parameters()}
        for _ in range(3):
            loss = F.mse_loss(fn.functional_call(model, params, (xt,)), yt)
            loss = loss + log_wd.exp() * sum(p.pow(2).sum() for p in params.values())
            gs = torch.autograd.grad(loss, list(params.values()), create_graph=True)
            params = {n: p - log_lr[layer[n]].exp() * g for (n, p), g in zip(params.items(), gs)}
        val = F.mse_loss(fn.functional_call(model, params, (xv,)), yv)
        meta.zero_grad()
        model.zero_grad()
        val.backward()
        hypers.append((log_lr.grad.clone(), log_wd.grad.clone()))
        meta.step()
        with torch.no_grad():  # keep the unrolled weights as the next start
            for n, p in model.named_parameters():
                p.copy_(params[n])
        val_losses.append(val.item())
    return dict(init=init, val=val_losses, hypers=hypers, log_lr=log_lr, log_wd=log_wd,
                params=list(model.parameters()), grads=grads(model), exp_inf=meta.state[log_lr]["exp_inf"])


def test_unrolled_differentiable_sgd_hypergradients(torch):
    both(torch, unrolled_hyperparameters)
