"""Deep-learning scripts of more kinds again (BiLSTM-CRF tagging, graph attention, DP-SGD with torch.func,
pruning, ESPCN super-resolution, domain-adversarial training, Hamiltonian networks, hypernetworks, k-means and
Gaussian mixture EM, neural collaborative filtering with federated averaging), written once against a
`torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses,
gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import copy
import math

import numpy as np

from twins import both, grads, start


# ---- BiLSTM-CRF: emissions from a BiLSTM, the forward algorithm, the gold path score, Viterbi decoding -------
def bilstm_crf(torch, init):
    nn = torch.nn

    class CRFTagger(nn.Module):
        def __init__(self, vocab=9, tags=4, emb=5, hidden=3):
            super().__init__()
            self.embed = nn.Embedding(vocab, emb, padding_idx=0)
            self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
            self.emit = nn.Linear(2 * hidden, tags)
            self.transitions = nn.Parameter(torch.randn(tags, tags) * 0.1)  # [from, to]
            self.start_scores = nn.Parameter(torch.zeros(tags))
            self.end_scores = nn.Parameter(torch.zeros(tags))

        def emissions(self, words):
            return self.emit(self.lstm(self.embed(words))[0])

        def log_partition(self, em, mask):
            alpha = self.start_scores + em[:, 0]
            for t in range(1, em.size(1)):
                scores = alpha.unsqueeze(2) + self.transitions + em[:, t].unsqueeze(1)
                alpha = torch.where(mask[:, t].unsqueeze(1), torch.logsumexp(scores, dim=1), alpha)
            return torch.logsumexp(alpha + self.end_scores, dim=1)

        def gold_score(self, em, tags, mask):
            b, steps = tags.shape
            score = self.start_scores[tags[:, 0]] + em[:, 0].gather(1, tags[:, :1]).squeeze(1)
            for t in range(1, steps):
                step = self.transitions[tags[:, t - 1], tags[:, t]] + em[torch.arange(b), t, tags[:, t]]
                score = score + step * mask[:, t]
            last = tags.gather(1, (mask.long().sum(1) - 1).unsqueeze(1)).squeeze(1)
            return score + self.end_scores[last]

        def viterbi(self, em, mask):
            score, backpointers = self.start_scores + em[:, 0], []
            for t in range(1, em.size(1)):
                best, idx = (score.unsqueeze(2) + self.transitions).max(dim=1)
                score = torch.where(mask[:, t].unsqueeze(1), best + em[:, t], score)
                backpointers.append(idx)
            best_score, last = (score + self.end_scores).max(dim=1)
            paths = []
            for i, n in enumerate(mask.sum(1).tolist()):
                path = [last[i].item()]
                for bp in reversed(backpointers[:n - 1]):
                    path.append(int(bp[i, path[-1]]))
                paths.append(path[::-1])
            return best_score, paths

        def forward(self, words, tags, mask):
            em = self.emissions(words)
            return (self.log_partition(em, mask) - self.gold_score(em, tags, mask)).mean()

    model = CRFTagger()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(60)
    lengths = torch.tensor([5, 3, 4])
    mask = torch.arange(5).unsqueeze(0) < lengths.unsqueeze(1)
    words = torch.tensor(rng.integers(1, 9, (3, 5))).masked_fill(~mask, 0)
    tags = torch.tensor(rng.integers(0, 4, (3, 5))).masked_fill(~mask, 0)
    losses = []
    for _ in range(3):
        loss = model(words, tags, mask)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        em = model.emissions(words)
        best, paths = model.viterbi(em, mask)
        padded = torch.tensor([p + [0] * (5 - len(p)) for p in paths])
        rescored = model.gold_score(em, padded, mask)
        log_z = model.log_partition(em, mask)
    return dict(init=init, losses=losses, best=best, paths=paths, rescored=rescored, log_z=log_z,
                grads=grads(model), params=list(model.parameters()))


def test_bilstm_crf(torch):
    _, ours = both(torch, bilstm_crf)
    np.testing.assert_allclose(ours["rescored"].numpy(), ours["best"].numpy(), rtol=1e-12)
    assert (ours["best"] <= ours["log_z"]).all()


# ---- graph attention network: scores per edge, a softmax over each node's incoming edges, multi-head concat --
def gat(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class GATLayer(nn.Module):
        def __init__(self, fin, fout, heads, concat=True):
            super().__init__()
            self.heads, self.fout, self.concat = heads, fout, concat
            self.proj = nn.Linear(fin, heads * fout, bias=False)
            self.att_src = nn.Parameter(torch.empty(heads, fout))
            self.att_dst = nn.Parameter(torch.empty(heads, fout))
            nn.init.xavier_uniform_(self.att_src)
            nn.init.xavier_uniform_(self.att_dst)
            self.leaky = nn.LeakyReLU(0.2)
            self.dropout = nn.Dropout(0.0)

        def forward(self, x, edge_index):
            n, (src, dst) = x.size(0), edge_index
            h = self.proj(x).view(n, self.heads, self.fout)
            e = self.leaky((h * self.att_src).sum(-1)[src] + (h * self.att_dst).sum(-1)[dst])  # (edges, heads)
            top = torch.full((n, self.heads), float("-inf"), dtype=e.dtype).scatter_reduce(
                0, dst.unsqueeze(1).expand_as(e), e, reduce="amax", include_self=False)
            w = (e - top[dst]).exp()
            denom = torch.zeros(n, self.heads, dtype=e.dtype).index_add_(0, dst, w)
            alpha = self.dropout(w / denom[dst])
            out = torch.zeros(n, self.heads, self.fout, dtype=x.dtype).index_add_(0, dst, alpha.unsqueeze(-1) * h[src])
            return (out.reshape(n, -1) if self.concat else out.mean(dim=1)), alpha

    class GAT(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = GATLayer(3, 4, heads=2)
            self.l2 = GATLayer(8, 3, heads=2, concat=False)

        def forward(self, x, edge_index):
            h, _ = self.l1(x, edge_index)
            out, alpha = self.l2(F.elu(h), edge_index)
            return out, alpha

    model = GAT()
    init = start(model, init)
    rng = np.random.default_rng(61)
    n = 6
    edges = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 2], [1, 0, 2, 3, 4, 5, 3, 0]])
    loops = torch.arange(n).unsqueeze(0).repeat(2, 1)
    edge_index = torch.cat([edges, loops], dim=1)
    x = torch.tensor(rng.standard_normal((n, 3)))
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    train = torch.tensor([True, True, False, True, True, False])
    opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    losses = []
    for _ in range(3):
        out, alpha = model(x, edge_index)
        loss = F.cross_entropy(out[train], y[train])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        out, alpha = model(x, edge_index)
        sums = torch.zeros(n, 2, dtype=alpha.dtype).index_add_(0, edge_index[1], alpha)
        acc = (out.argmax(1)[~train] == y[~train]).double().mean()
    return dict(init=init, losses=losses, out=out, alpha=alpha, sums=sums, acc=acc, grads=grads(model),
                params=list(model.parameters()))


def test_graph_attention_network(torch):
    _, ours = both(torch, gat)
    np.testing.assert_allclose(ours["sums"].numpy(), 1.0, rtol=1e-12)


# ---- DP-SGD: per-sample gradients by vmap(grad(functional_call)), clipped per sample, Gaussian noise --------
def dp_sgd(torch, init):
    nn, F = torch.nn, torch.nn.functional
    functional_call, grad, vmap = torch.func.functional_call, torch.func.grad, torch.func.vmap

    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    init = start(model, init)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_fn(params, x, y):
        out = functional_call(model, (params, buffers), (x.unsqueeze(0),))
        return F.cross_entropy(out, y.unsqueeze(0))

    per_sample_grads = vmap(grad(loss_fn), in_dims=(None, 0, 0))
    rng = np.random.default_rng(62)
    clip, sigma, lr, b = 1.0, 0.5, 0.5, 5
    losses, norms_seen = [], []
    for _ in range(3):
        x, y = torch.tensor(rng.standard_normal((b, 3))), torch.tensor(rng.integers(0, 2, b))
        g = per_sample_grads(params, x, y)
        norms = torch.stack([v.reshape(b, -1).norm(dim=1) for v in g.values()]).norm(dim=0)
        factor = (clip / (norms + 1e-6)).clamp(max=1.0)
        with torch.no_grad():
            losses.append(F.cross_entropy(functional_call(model, params, (x,)), y))
        new = {}
        for k, v in g.items():
            clipped = torch.einsum("b,b...->...", factor, v)
            noise = torch.tensor(rng.standard_normal(tuple(v.shape[1:]))) * sigma * clip
            new[k] = params[k] - lr * (clipped + noise) / b
        params = new
        norms_seen.append(norms)
    # the per-sample gradients agree with one autograd.grad per sample
    x, y = torch.tensor(rng.standard_normal((2, 3))), torch.tensor([0, 1])
    batched = per_sample_grads(params, x, y)
    leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    looped = [torch.autograd.grad(loss_fn(leaves, x[i], y[i]), list(leaves.values())) for i in range(2)]
    with torch.no_grad():
        for k, v in params.items():
            model.get_parameter(k).copy_(v)
    return dict(init=init, losses=losses, norms=norms_seen, batched=list(batched.values()),
                looped=[torch.stack(gs) for gs in zip(*looped)], state=list(model.state_dict().values()))


def test_dp_sgd_per_sample_gradients(torch):
    _, ours = both(torch, dp_sgd)
    for a, b in zip(ours["batched"], ours["looped"]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


# ---- pruning: l1 / random / global unstructured, weight_orig and weight_mask, training with the mask, remove --
def pruning(torch, init):
    nn, F = torch.nn, torch.nn.functional
    prune = torch.nn.utils.prune

    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    init = start(model, init)
    prune.l1_unstructured(model[0], name="weight", amount=0.3)
    keys = list(model.state_dict())
    param_names = [n for n, _ in model.named_parameters()]
    buffer_names = [n for n, _ in model.named_buffers()]
    pruned_once = int((model[0].weight == 0).sum())
    prune.global_unstructured([(model[0], "weight"), (model[2], "weight")],
                              pruning_method=prune.L1Unstructured, amount=0.4)
    prune.l1_unstructured(model[2], name="bias", amount=1)
    masks = [model[0].weight_mask.clone(), model[2].weight_mask.clone(), model[2].bias_mask.clone()]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(63)
    losses = []
    for _ in range(3):
        x, y = torch.tensor(rng.standard_normal((4, 6))), torch.tensor(rng.integers(0, 3, 4))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    still_zero = [bool((model[0].weight[masks[0] == 0] == 0).all()), bool((model[2].weight[masks[1] == 0] == 0).all())]
    orig_grad_at_pruned = model[0].weight_orig.grad[masks[0] == 0]
    pruned = [prune.is_pruned(model), isinstance(model[0].weight, nn.Parameter)]
    prune.remove(model[0], "weight")
    prune.remove(model[2], "weight")
    prune.remove(model[2], "bias")
    pruned += [prune.is_pruned(model), isinstance(model[0].weight, nn.Parameter)]
    # random pruning: the same seed prunes the same entries, and the count is exact
    lin = nn.Linear(4, 5).double()
    twin = copy.deepcopy(lin)
    torch.manual_seed(3)
    prune.random_unstructured(lin, name="weight", amount=0.45)
    torch.manual_seed(3)
    prune.random_unstructured(twin, name="weight", amount=0.45)
    same_mask = bool(torch.equal(lin.weight_mask, twin.weight_mask))
    random_count = int(lin.weight_mask.sum())
    return dict(init=init, keys=keys, param_names=param_names, buffer_names=buffer_names,
                pruned_once=pruned_once, masks=masks, losses=losses, still_zero=still_zero,
                orig_grad_at_pruned=orig_grad_at_pruned, pruned=pruned, after=list(model.state_dict()),
                state=list(model.state_dict().values()), same_mask=same_mask, random_count=random_count)


def test_pruning(torch):
    import torch.nn.utils.prune  # noqa: F401 (a script imports it: minigrad's nn.utils binds it already)
    theirs, _ = both(torch, pruning)
    assert theirs["still_zero"] == [True, True] and theirs["same_mask"]


# ---- ESPCN super-resolution: sub-pixel convolution (PixelShuffle), a bicubic baseline, PSNR ---------------
def espcn(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class ESPCN(nn.Module):
        def __init__(self, r=2):
            super().__init__()
            self.r = r
            self.body = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.Tanh(), nn.Conv2d(6, 4, 3, padding=1),
                                      nn.Tanh(), nn.Conv2d(4, r * r, 3, padding=1))
            self.shuffle = nn.PixelShuffle(r)

        def forward(self, low):
            base = F.interpolate(low, scale_factor=self.r, mode="bicubic", align_corners=False)
            return base + self.shuffle(self.body(low)), base

    def psnr(a, b):
        return 10 * torch.log10(1.0 / F.mse_loss(a, b))

    model = ESPCN()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(64)
    grid = np.linspace(0, 1, 8)
    losses, scores = [], []
    for _ in range(3):
        phase = rng.uniform(0, 3, (2, 1, 1, 1))
        high = torch.tensor(0.5 + 0.4 * np.sin(6 * grid[None, None, :, None] + phase) * np.cos(4 * grid))
        low = F.interpolate(high, size=(4, 4), mode="bilinear", align_corners=False, antialias=False)
        sr, base = model(low)
        loss = F.mse_loss(sr, high)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        scores.append([psnr(sr.detach().clamp(0, 1), high), psnr(base.clamp(0, 1), high)])
    unshuffled = nn.PixelUnshuffle(2)(high)
    roundtrip = F.pixel_shuffle(unshuffled, 2)
    return dict(init=init, losses=losses, scores=scores, sr=sr, unshuffled=unshuffled, roundtrip=roundtrip,
                grads=grads(model), params=list(model.parameters()))


def test_espcn_super_resolution(torch):
    theirs, ours = both(torch, espcn)
    np.testing.assert_array_equal(ours["roundtrip"].numpy(), theirs["roundtrip"].numpy())


# ---- DANN: a gradient reversal layer (a custom Function) scaled by a schedule, label and domain heads -------
def dann(torch, init):
    nn = torch.nn

    class GradReverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lambd):
            ctx.lambd = lambd
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.neg() * ctx.lambd, None

    class DANN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
            self.label_head = nn.Linear(6, 3)
            self.domain_head = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 1))

        def forward(self, x, lambd):
            f = self.features(x)
            return self.label_head(f), self.domain_head(GradReverse.apply(f, lambd)).squeeze(1)

    model = DANN()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 / (1 + 10 * s / 4) ** 0.75)
    bce, ce = nn.BCEWithLogitsLoss(), nn.CrossEntropyLoss()
    rng = np.random.default_rng(65)
    steps, losses, lambdas = 4, [], []
    for step in range(steps):
        lambd = 2.0 / (1.0 + math.exp(-10 * step / steps)) - 1.0
        src = torch.tensor(rng.standard_normal((4, 4)))
        tgt = torch.tensor(rng.standard_normal((4, 4)) + 1.0)
        y = torch.tensor(rng.integers(0, 3, 4))
        x = torch.cat([src, tgt])
        domain = torch.cat([torch.zeros(4), torch.ones(4)]).double()
        logits, dom = model(x, lambd)
        loss = ce(logits[:4], y) + bce(dom, domain)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss)
        lambdas.append(lambd)
    # the reversal: feature gradients from the domain loss alone are -lambda times the plain ones
    x = torch.tensor(rng.standard_normal((3, 4)))
    f = model.features(x).detach().requires_grad_(True)
    g_rev, = torch.autograd.grad(model.domain_head(GradReverse.apply(f, 0.7)).sum(), f)
    g_plain, = torch.autograd.grad(model.domain_head(f).sum(), f)
    return dict(init=init, losses=losses, lambdas=lambdas, g_rev=g_rev, g_plain=g_plain, grads=grads(model),
                params=list(model.parameters()), lr=sched.get_last_lr())


def test_dann(torch):
    _, ours = both(torch, dann)
    np.testing.assert_allclose(ours["g_rev"].numpy(), -0.7 * ours["g_plain"].numpy(), rtol=1e-12)


# ---- Hamiltonian neural network: dH/d(q, p) with create_graph, a loss on the symplectic gradient ------------
def hnn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(2, 12), nn.Tanh(), nn.Linear(12, 12), nn.Softplus(), nn.Linear(12, 1))
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(66)

    def time_derivative(q, p, create_graph):
        h = model(torch.stack([q, p], dim=1)).sum()
        dh_dq, dh_dp = torch.autograd.grad(h, (q, p), create_graph=create_graph)
        return dh_dp, -dh_dq

    losses = []
    for _ in range(3):
        q = torch.tensor(rng.standard_normal(8), requires_grad=True)
        p = torch.tensor(rng.standard_normal(8), requires_grad=True)
        dq, dp = time_derivative(q, p, create_graph=True)
        loss = F.mse_loss(dq, p.detach()) + F.mse_loss(dp, -q.detach())  # the harmonic oscillator
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    q, p, dt, trajectory = torch.tensor([1.0], dtype=torch.float64), torch.zeros(1).double(), 0.1, []
    for _ in range(5):  # leapfrog on the learnt field
        q, p = q.requires_grad_(True), p.requires_grad_(True)
        _, dp = time_derivative(q, p, create_graph=False)
        p_half = (p + 0.5 * dt * dp).detach().requires_grad_(True)
        dq, _ = time_derivative(q, p_half, create_graph=False)
        q_new = (q + dt * dq).detach().requires_grad_(True)
        _, dp = time_derivative(q_new, p_half, create_graph=False)
        q, p = q_new.detach(), (p_half + 0.5 * dt * dp).detach()
        trajectory.append(torch.cat([q, p]))
    x = torch.tensor([[0.3, -0.2]], dtype=torch.float64, requires_grad=True)
    dh, = torch.autograd.grad(model(x).sum(), x, create_graph=True)
    hessian, = torch.autograd.grad(dh.squeeze(0), x, torch.eye(2, dtype=torch.float64), is_grads_batched=True)
    return dict(init=init, losses=losses, trajectory=torch.stack(trajectory), hessian=hessian, grads=grads(model),
                params=list(model.parameters()))


def test_hamiltonian_neural_network(torch):
    both(torch, hnn)


# ---- hypernetwork: a network whose output is another network's weights, through F.linear and functional_call
def hypernetwork(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class HyperNet(nn.Module):
        def __init__(self, tasks=3, z=3):
            super().__init__()
            self.target = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
            self.shapes = {k: tuple(v.shape) for k, v in self.target.named_parameters()}
            for p in self.target.parameters():
                p.requires_grad_(False)
            self.task_embedding = nn.Embedding(tasks, z)
            total = sum(math.prod(s) for s in self.shapes.values())
            self.generator = nn.Sequential(nn.Linear(z, 8), nn.ReLU(), nn.Linear(8, total))

        def weights(self, task):
            flat = self.generator(self.task_embedding(task))
            pieces = torch.split(flat, [math.prod(s) for s in self.shapes.values()])
            return {k: piece.view(s) for (k, s), piece in zip(self.shapes.items(), pieces)}

        def forward(self, task, x):
            return torch.func.functional_call(self.target, self.weights(task), (x,))

        def by_hand(self, task, x):
            w = self.weights(task)
            return F.linear(torch.tanh(F.linear(x, w["0.weight"], w["0.bias"])), w["2.weight"], w["2.bias"])

    model = HyperNet()
    init = start(model, init)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    rng = np.random.default_rng(67)
    slopes = torch.tensor([[1.0, -1.0], [0.5, 2.0], [-1.5, 0.3]], dtype=torch.float64)
    losses = []
    for step in range(4):
        task = torch.tensor(step % 3)
        x = torch.tensor(rng.standard_normal((6, 2)))
        y = (x @ slopes[task]).unsqueeze(1)
        loss = F.mse_loss(model(task, x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    x = torch.tensor(rng.standard_normal((3, 2)))
    outs = [model(torch.tensor(t), x) for t in range(3)]
    by_hand = [model.by_hand(torch.tensor(t), x) for t in range(3)]
    return dict(init=init, losses=losses, outs=outs, by_hand=by_hand, grads=grads(model),
                target=list(model.target.parameters()), params=list(model.parameters()))


def test_hypernetwork(torch):
    _, ours = both(torch, hypernetwork)
    for a, b in zip(ours["outs"], ours["by_hand"]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


# ---- k-means and a Gaussian mixture by EM: cdist, argmin, index_add_, bincount, logsumexp, MultivariateNormal
def clustering(torch, init):
    MultivariateNormal = torch.distributions.MultivariateNormal

    rng = np.random.default_rng(68)
    centres = np.array([[0.0, 0.0], [3.0, 3.0], [-3.0, 2.0]])
    x = torch.tensor(np.concatenate([c + rng.standard_normal((10, 2)) * 0.6 for c in centres]))
    k, n = 3, x.size(0)
    means = x[[0, 10, 20]].clone()
    inertias = []
    for _ in range(4):
        dist = torch.cdist(x, means)
        assign = dist.argmin(dim=1)
        counts = torch.bincount(assign, minlength=k).to(x.dtype)
        sums = torch.zeros_like(means).index_add_(0, assign, x)
        sums2 = torch.zeros(k, 2, dtype=x.dtype).scatter_add_(0, assign.unsqueeze(1).expand(-1, 2), x)
        assert torch.allclose(sums, sums2)
        means = sums / counts.clamp(min=1).unsqueeze(1)
        inertias.append(dist.min(dim=1).values.pow(2).sum())
    covs = torch.eye(2, dtype=x.dtype).repeat(k, 1, 1)
    weights = torch.full((k,), 1.0 / k, dtype=x.dtype)
    log_likelihoods = []
    for _ in range(3):
        log_p = MultivariateNormal(means, covariance_matrix=covs).log_prob(x.unsqueeze(1))  # (n, k)
        joint = log_p + weights.log()
        ll = torch.logsumexp(joint, dim=1)
        resp = (joint - ll.unsqueeze(1)).exp()
        nk = resp.sum(0)
        means = resp.T @ x / nk.unsqueeze(1)
        diff = x.unsqueeze(1) - means
        covs = torch.einsum("nk,nki,nkj->kij", resp, diff, diff) / nk[:, None, None] + 1e-6 * torch.eye(2)
        weights = nk / n
        log_likelihoods.append(ll.mean())
    means = means.clone().requires_grad_(True)
    mvn = [MultivariateNormal(means[j], covs[j]) for j in range(k)]
    score = torch.logsumexp(torch.stack([d.log_prob(x) for d in mvn], dim=1) + weights.log(), dim=1).mean()
    score.backward()
    return dict(init=None, assign=assign, counts=counts, inertias=inertias, log_likelihoods=log_likelihoods,
                means=means, covs=covs, weights=weights, score=score, grad=means.grad,
                labels=torch.argmax(resp, dim=1))


def test_kmeans_and_gaussian_mixture(torch):
    theirs, _ = both(torch, clustering)
    assert sorted(theirs["counts"].tolist()) == [10.0, 10.0, 10.0]


# ---- neural collaborative filtering with EmbeddingBag, trained by federated averaging over client copies ----
def federated_ncf(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class NCF(nn.Module):
        def __init__(self, users=5, items=8, tags=6, d=4):
            super().__init__()
            self.users = nn.Embedding(users, d)
            self.history = nn.EmbeddingBag(items, d, mode="mean")
            self.tags = nn.EmbeddingBag(tags, d, mode="sum")
            self.item = nn.Embedding(items, d)
            self.mlp = nn.Sequential(nn.Linear(3 * d, 8), nn.ReLU(), nn.Linear(8, 1))

        def forward(self, user, item, history, offsets, tags, tag_offsets, tag_weights):
            u = self.users(user) + self.history(history, offsets)
            t = self.tags(tags, tag_offsets, per_sample_weights=tag_weights)
            v = self.item(item)
            return self.mlp(torch.cat([u * v, t, v], dim=1)).squeeze(1) + (u * v).sum(1)

    global_model = NCF()
    init = start(global_model, init)
    clients = [copy.deepcopy(global_model) for _ in range(3)]
    rng = np.random.default_rng(69)
    bce = nn.BCEWithLogitsLoss()

    def batch(b=4):
        lengths = rng.integers(1, 4, b)
        tag_lengths = rng.integers(1, 3, b)
        return (torch.tensor(rng.integers(0, 5, b)), torch.tensor(rng.integers(0, 8, b)),
                torch.tensor(rng.integers(0, 8, int(lengths.sum()))),
                torch.tensor(np.concatenate([[0], np.cumsum(lengths)[:-1]])),
                torch.tensor(rng.integers(0, 6, int(tag_lengths.sum()))),
                torch.tensor(np.concatenate([[0], np.cumsum(tag_lengths)[:-1]])),
                torch.tensor(rng.uniform(0.5, 1.5, int(tag_lengths.sum()))),
                torch.tensor(rng.integers(0, 2, b)).double())

    losses = []
    for _ in range(2):
        for client in clients:
            client.load_state_dict(global_model.state_dict())
            opt = torch.optim.SGD(client.parameters(), lr=0.1)
            for _ in range(2):
                *inputs, label = batch()
                loss = bce(client(*inputs), label)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss)
        with torch.no_grad():
            states = [c.state_dict() for c in clients]
            averaged = {k: torch.stack([s[k] for s in states]).mean(dim=0) for k in states[0]}
            global_model.load_state_dict(averaged)
    *inputs, _ = batch()
    with torch.no_grad():
        scores = torch.sigmoid(global_model(*inputs))
        bags = global_model.history(torch.tensor([[1, 2], [3, 3]]))
        max_bags = F.embedding_bag(torch.tensor([0, 2, 4, 1]), global_model.item.weight, torch.tensor([0, 3]),
                                   mode="max")
    return dict(init=init, losses=losses, scores=scores, bags=bags, max_bags=max_bags,
                state=list(global_model.state_dict().values()), client_grads=[grads(c) for c in clients])


def test_federated_ncf_embedding_bag(torch):
    both(torch, federated_ncf)
