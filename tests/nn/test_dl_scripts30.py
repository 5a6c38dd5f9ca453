"""Recommender, tabular, statistics and reinforcement-learning scripts as people write them (a factorization machine
and DeepFM over field embeddings, wide & deep with a summed EmbeddingBag, LightGCN over a normalized sparse adjacency
with BPR, node2vec-style skip-gram over given walks, GloVe's weighted least squares under Adagrad, a Cox partial
likelihood by logcumsumexp, CORAL ordinal regression beside learned uncertainty weights, split conformal prediction,
a dueling Double DQN with prioritized weights and polyak lerp_, C51's projected target, TD3's twin critics with
delayed actor updates, LinUCB over batched per-arm solves), written once against a `torch`-like module and run
twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must
agree closely (float64 throughout; random draws by numpy where the two libraries' streams differ by design)."""
import copy
import math

import numpy as np

from twins import both, grads, start


def categorical(seed, n, vocab):
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, v, n) for v in vocab], axis=1)


# ---- a factorization machine and DeepFM: field offsets, the pairwise trick 0.5*((sum v)^2 - sum v^2) -----------
def deepfm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    vocab, k = [4, 5, 3], 4
    fields = categorical(1, 16, vocab)
    y = torch.tensor((fields[:, 0] == fields[:, 2]) | (fields[:, 1] > 2)).double()

    class DeepFM(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offsets", torch.tensor(np.cumsum([0] + vocab[:-1])), persistent=False)
            self.linear = nn.Embedding(sum(vocab), 1)
            self.bias = nn.Parameter(torch.zeros(1))
            self.v = nn.Embedding(sum(vocab), k)
            self.mlp = nn.Sequential(nn.Linear(len(vocab) * k, 8), nn.ReLU(), nn.Dropout(0.0), nn.Linear(8, 1))
            nn.init.xavier_uniform_(self.v.weight)

        def forward(self, x, deep=True):
            x = x + self.offsets.unsqueeze(0)
            first = self.linear(x).sum(dim=1).squeeze(1) + self.bias
            v = self.v(x)  # (batch, fields, k)
            square_of_sum = v.sum(dim=1).pow(2)
            sum_of_square = (v * v).sum(dim=1)
            second = 0.5 * (square_of_sum - sum_of_square).sum(dim=1)
            out = first + second
            if deep:
                out = out + self.mlp(v.flatten(1)).squeeze(-1)
            return out

    model = DeepFM()
    init = start(model, init)
    x = torch.from_numpy(fields)
    opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=1e-4)
    crit = nn.BCEWithLogitsLoss()
    losses = []
    for step in range(4):
        logits = model(x, deep=step % 2 == 1)
        loss = crit(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # the trick equals the explicit sum over field pairs
    with torch.no_grad():
        v = model.v(x + model.offsets)
        pairs = sum((v[:, i] * v[:, j]).sum(-1) for i in range(3) for j in range(i + 1, 3))
        trick = 0.5 * (v.sum(1).pow(2) - v.pow(2).sum(1)).sum(1)
        prob = torch.sigmoid(model(x))
    logloss = F.binary_cross_entropy(prob, y)
    return dict(init=init, losses=losses, pairs=pairs, trick=trick, prob=prob, logloss=logloss,
                params=list(model.parameters()), grads=grads(model))


def test_factorization_machine_deepfm(torch):
    both(torch, deepfm)


# ---- wide & deep: crossed features summed by EmbeddingBag (flat ids + offsets, per-sample weights), a deep tower --
def wide_deep(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(2)
    n, n_cross = 10, 12
    cats = categorical(3, n, [3, 4])
    numeric = torch.tensor(rng.standard_normal((n, 2)))
    bags = [rng.choice(n_cross, size=int(rng.integers(1, 4)), replace=False) for _ in range(n)]
    flat = torch.tensor(np.concatenate(bags))
    offsets = torch.tensor(np.cumsum([0] + [len(b) for b in bags[:-1]]))
    weights = torch.tensor(rng.uniform(0.5, 1.5, len(flat)))
    y = torch.tensor(rng.integers(0, 2, n)).double()

    class WideDeep(nn.Module):
        def __init__(self):
            super().__init__()
            self.wide = nn.EmbeddingBag(n_cross, 1, mode="sum")
            self.emb = nn.ModuleList([nn.Embedding(3, 3), nn.Embedding(4, 3)])
            self.deep = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))

        def forward(self, flat, offsets, weights, cats, numeric):
            wide = self.wide(flat, offsets, per_sample_weights=weights)
            deep_in = torch.cat([e(cats[:, i]) for i, e in enumerate(self.emb)] + [numeric], dim=1)
            return (wide + self.deep(deep_in)).squeeze(1)

    model = WideDeep()
    init = start(model, init)
    wide_opt = torch.optim.Adagrad(model.wide.parameters(), lr=0.1, initial_accumulator_value=0.1)
    deep_params = [p for name, p in model.named_parameters() if not name.startswith("wide")]
    deep_opt = torch.optim.Adam(deep_params, lr=0.02)
    c = torch.from_numpy(cats)
    losses = []
    for _ in range(4):
        loss = F.binary_cross_entropy_with_logits(model(flat, offsets, weights, c, numeric), y,
                                                  pos_weight=torch.tensor(1.5, dtype=torch.float64))
        wide_opt.zero_grad()
        deep_opt.zero_grad()
        loss.backward()
        wide_opt.step()
        deep_opt.step()
        losses.append(loss.item())
    # the same wide part as a 2-D padded batch with max bag length
    width = max(len(b) for b in bags)
    padded = torch.tensor(np.stack([np.pad(b, (0, width - len(b)), constant_values=n_cross) for b in bags]))
    wide_pad = nn.EmbeddingBag(n_cross + 1, 1, mode="sum", padding_idx=n_cross).double()
    with torch.no_grad():
        wide_pad.weight[:n_cross] = model.wide.weight
        same = wide_pad(padded) - model.wide(flat, offsets)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model), same=same,
                sum=state_sum(wide_opt, model.wide.weight))


def state_sum(opt, p):
    return opt.state[p]["sum"]


def test_wide_and_deep_embedding_bag_sum(torch):
    both(torch, wide_deep)


# ---- LightGCN: symmetric-normalized bipartite adjacency as sparse COO, sparse.mm layers averaged, BPR loss -------
def lightgcn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(4)
    n_users, n_items, d, layers = 5, 6, 4, 2
    inter = np.array(sorted({(int(u), int(i)) for u, i in zip(rng.integers(0, n_users, 14),
                                                              rng.integers(0, n_items, 14))}))
    u, i = torch.tensor(inter[:, 0]), torch.tensor(inter[:, 1]) + n_users
    rows, cols = torch.cat([u, i]), torch.cat([i, u])
    n = n_users + n_items
    deg = torch.zeros(n, dtype=torch.float64).index_add_(0, rows, torch.ones(len(rows), dtype=torch.float64))
    d_inv_sqrt = deg.pow(-0.5)
    d_inv_sqrt[torch.isinf(d_inv_sqrt)] = 0.0
    vals = d_inv_sqrt[rows] * d_inv_sqrt[cols]
    adj = torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (n, n)).coalesce()

    emb = nn.Embedding(n, d)
    nn.init.normal_(emb.weight, std=0.1)
    init = start(emb, init)

    def propagate():
        x = emb.weight
        layers_out = [x]
        for _ in range(layers):
            x = torch.sparse.mm(adj, x)
            layers_out.append(x)
        final = torch.stack(layers_out, dim=1).mean(dim=1)
        return torch.split(final, [n_users, n_items])

    neg = torch.tensor(rng.integers(0, n_items, (3, len(inter))))
    opt = torch.optim.Adam(emb.parameters(), lr=0.05)
    losses = []
    for step in range(3):
        users, items = propagate()
        pos_score = (users[u] * items[i - n_users]).sum(-1)
        neg_score = (users[u] * items[neg[step]]).sum(-1)
        ego = emb.weight
        reg = 1e-3 * 0.5 * (ego[u].norm(dim=1).pow(2) + ego[i].norm(dim=1).pow(2)).mean()
        loss = -F.logsigmoid(pos_score - neg_score).mean() + reg
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        users, items = propagate()
        scores = users @ items.T
        seen = torch.zeros(n_users, n_items, dtype=torch.bool)
        seen[u, i - n_users] = True
        scores = scores.masked_fill(seen, float("-inf"))
        top, top_idx = torch.topk(scores, k=2, dim=1)
    return dict(init=init, adj=adj.to_dense(), losses=losses, weight=emb.weight, top=top, top_idx=top_idx,
                nnz=adj._nnz(), grad=emb.weight.grad)


def test_lightgcn_sparse_mm_layer_average_bpr(torch):
    both(torch, lightgcn)


# ---- node2vec-style skip-gram over given walks: window pairs, given negatives, two tables, logsigmoid -------------
def node2vec(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(5)
    n_nodes, d, window, n_neg = 7, 4, 2, 3
    walks = torch.tensor(rng.integers(0, n_nodes, (4, 6)))
    centers, contexts = [], []
    for off in range(1, window + 1):
        centers += [walks[:, :-off].reshape(-1), walks[:, off:].reshape(-1)]
        contexts += [walks[:, off:].reshape(-1), walks[:, :-off].reshape(-1)]
    centers, contexts = torch.cat(centers), torch.cat(contexts)
    freq = torch.bincount(walks.flatten(), minlength=n_nodes).double().pow(0.75)
    noise = freq / freq.sum()
    negatives = torch.tensor(rng.choice(n_nodes, size=(len(centers), n_neg), p=noise.numpy()))

    model = nn.ModuleDict({"inp": nn.Embedding(n_nodes, d, sparse=True), "out": nn.Embedding(n_nodes, d, sparse=True)})
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for batch in torch.arange(len(centers)).chunk(3):
        c, o, ng = centers[batch], contexts[batch], negatives[batch]
        v = model["inp"](c)
        pos = F.logsigmoid((v * model["out"](o)).sum(-1))
        neg = F.logsigmoid(-torch.bmm(model["out"](ng), v.unsqueeze(2)).squeeze(2)).sum(-1)
        loss = -(pos + neg).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    emb = F.normalize(model["inp"].weight.detach(), dim=1)
    sim = emb @ emb.T
    sim.fill_diagonal_(-2.0)
    nearest = sim.argmax(dim=1)
    return dict(init=init, noise=noise, losses=losses, params=list(model.parameters()), sim=sim, nearest=nearest)


def test_node2vec_skipgram_given_walks_sparse_sgd(torch):
    both(torch, node2vec)


# ---- GloVe: weighted least squares on log co-occurrences, f(x) = min(1, (x/x_max)^alpha), Adagrad --------------
def glove(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(6)
    vocab, d = 6, 3
    tokens = torch.tensor(rng.integers(0, vocab, 40))
    cooc = torch.zeros(vocab, vocab, dtype=torch.float64)
    for off in (1, 2):
        cooc.index_put_((tokens[:-off], tokens[off:]), torch.full((40 - off,), 1.0 / off, dtype=torch.float64),
                        accumulate=True)
    cooc = cooc + cooc.T
    i, j = cooc.nonzero(as_tuple=True)
    x = cooc[i, j]
    x_max, alpha = 4.0, 0.75
    weight = torch.clamp(x / x_max, max=1.0).pow(alpha)

    class GloVe(nn.Module):
        def __init__(self):
            super().__init__()
            self.w, self.c = nn.Embedding(vocab, d), nn.Embedding(vocab, d)
            self.bw, self.bc = nn.Embedding(vocab, 1), nn.Embedding(vocab, 1)
            for e in (self.w, self.c):
                nn.init.uniform_(e.weight, -0.5 / d, 0.5 / d)
            for e in (self.bw, self.bc):
                nn.init.zeros_(e.weight)

        def forward(self, i, j):
            return (self.w(i) * self.c(j)).sum(1) + self.bw(i).squeeze(1) + self.bc(j).squeeze(1)

    model = GloVe()
    init = start(model, init)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    losses = []
    for _ in range(5):
        loss = (weight * (model(i, j) - torch.log(x)).pow(2)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    vectors = model.w.weight + model.c.weight
    return dict(init=init, cooc=cooc, weight=weight, losses=losses, vectors=vectors, grads=grads(model),
                sums=[opt.state[p]["sum"] for p in model.parameters()])


def test_glove_weighted_least_squares_adagrad(torch):
    both(torch, glove)


# ---- Cox proportional hazards: sort by time descending, risk sets by logcumsumexp, events mask, C-index ----------
def cox(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(7)
    n = 14
    xs = rng.standard_normal((n, 3))
    times = torch.tensor(rng.exponential(np.exp(-xs[:, 0] + 0.5 * xs[:, 1])))
    events = torch.tensor(rng.random(n) < 0.7)
    x = torch.tensor(xs)
    model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1, bias=False))
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)

    def neg_partial_log_likelihood(risk, times, events):
        order = torch.argsort(times, descending=True)
        risk, ev = risk[order], events[order].double()
        log_risk_set = torch.logcumsumexp(risk, dim=0)
        return -((risk - log_risk_set) * ev).sum() / ev.sum()

    losses = []
    for _ in range(5):
        loss = neg_partial_log_likelihood(model(x).squeeze(-1), times, events)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        risk = model(x).squeeze(-1)
        comparable = (times[:, None] < times[None, :]) & events[:, None]
        concordant = (risk[:, None] > risk[None, :]) & comparable
        c_index = concordant.sum() / comparable.sum()
        sorted_times, order = torch.sort(times)
        baseline = torch.cumsum(events[order].double() / torch.flip(torch.cumsum(torch.flip(risk[order].exp(), [0]),
                                                                                    0), [0]), 0)
    return dict(init=init, losses=losses, params=list(model.parameters()), c_index=c_index,
                sorted_times=sorted_times, baseline=baseline, grads=grads(model))


def test_cox_partial_likelihood_logcumsumexp(torch):
    both(torch, cox)


# ---- CORAL ordinal regression (shared weight, K-1 biases, BCEWithLogits) with a regression head under learned
# log-variance weights ----------------------------------------------------------------------------------------------
def coral_uncertainty(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(8)
    n, levels = 12, 4
    x = torch.tensor(rng.standard_normal((n, 3)))
    score = x[:, 0] + 0.5 * x[:, 1]
    y_rank = torch.bucketize(score, torch.tensor([-0.7, 0.0, 0.7], dtype=torch.float64))
    y_reg = (2 * x[:, 2] - score).unsqueeze(1)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(3, 8), nn.GELU())
            self.rank = nn.Linear(8, 1, bias=False)
            self.rank_bias = nn.Parameter(torch.arange(levels - 1, 0, -1).double() / (levels - 1))
            self.reg = nn.Linear(8, 1)
            self.log_vars = nn.Parameter(torch.zeros(2))

        def forward(self, x):
            h = self.body(x)
            return self.rank(h) + self.rank_bias, self.reg(h)

    model = Net()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    targets = (y_rank.unsqueeze(1) > torch.arange(levels - 1)).double()
    losses = []
    for _ in range(4):
        logits, pred = model(x)
        task = torch.stack([F.binary_cross_entropy_with_logits(logits, targets), F.mse_loss(pred, y_reg)])
        loss = (torch.exp(-model.log_vars) * task + model.log_vars).sum() * 0.5
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append([loss, task])
    with torch.no_grad():
        logits, _ = model(x)
        probs = torch.sigmoid(logits)
        rank = (probs > 0.5).sum(dim=1)
        mae = (rank - y_rank).abs().double().mean()
    return dict(init=init, y_rank=y_rank, losses=losses, params=list(model.parameters()), rank=rank, mae=mae,
                probs=probs, sigma=model.log_vars.exp().sqrt())


def test_coral_ordinal_with_uncertainty_weights(torch):
    both(torch, coral_uncertainty)


# ---- split conformal prediction: a classifier's prediction sets and a regressor's intervals from calibration ----
def conformal(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(9)
    x = torch.tensor(rng.standard_normal((30, 2)))
    y_cls = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    y_reg = x[:, 0] * 1.5 + torch.tensor(rng.standard_normal(30)) * 0.3
    train, calib, test = torch.arange(30).split([12, 10, 8])
    clf, reg = nn.Linear(2, 3), nn.Linear(2, 1)
    model = nn.ModuleDict({"clf": clf, "reg": reg})
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.5)
    for _ in range(4):
        loss = F.cross_entropy(clf(x[train]), y_cls[train]) + F.l1_loss(reg(x[train]).squeeze(1), y_reg[train])
        opt.zero_grad()
        loss.backward()
        opt.step()
    alpha = 0.2
    with torch.no_grad():
        probs = F.softmax(clf(x[calib]), dim=1)
        scores = 1 - probs.gather(1, y_cls[calib].unsqueeze(1)).squeeze(1)
        n = len(calib)
        level = math.ceil((n + 1) * (1 - alpha)) / n
        qhat = torch.quantile(scores, level, interpolation="higher")
        test_probs = F.softmax(clf(x[test]), dim=1)
        sets = test_probs >= 1 - qhat
        covered = sets[torch.arange(len(test)), y_cls[test]].double().mean()
        residual = (y_reg[calib] - reg(x[calib]).squeeze(1)).abs()
        q_reg = torch.quantile(residual, torch.tensor([level, 0.5], dtype=torch.float64), interpolation="higher")
        pred = reg(x[test]).squeeze(1)
        lower, upper = pred - q_reg[0], pred + q_reg[0]
        inside = ((y_reg[test] >= lower) & (y_reg[test] <= upper)).double().mean()
    return dict(init=init, loss=loss, params=list(model.parameters()), scores=scores, qhat=qhat, sets=sets,
                sizes=sets.sum(1), covered=covered, q_reg=q_reg, lower=lower, upper=upper, inside=inside)


def test_split_conformal_quantile_higher(torch):
    both(torch, conformal)


# ---- a dueling Double DQN: prioritized-replay weights on a per-sample Huber loss, clip_grad_norm_, lerp_ polyak ---
def dueling_double_dqn(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Dueling(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 12), nn.ReLU())
            self.value, self.adv = nn.Linear(12, 1), nn.Linear(12, 3)

        def forward(self, s):
            h = self.body(s)
            a = self.adv(h)
            return self.value(h) + a - a.mean(dim=1, keepdim=True)

    online = Dueling()
    init = start(online, init)
    target = copy.deepcopy(online)
    target.requires_grad_(False)
    opt = torch.optim.RMSprop(online.parameters(), lr=5e-3, alpha=0.95, eps=1e-6)
    rng = np.random.default_rng(10)
    size, batch, gamma, tau, beta = 16, 6, 0.95, 0.2, 0.4
    s, s2 = torch.tensor(rng.standard_normal((size, 4))), torch.tensor(rng.standard_normal((size, 4)))
    a, r = torch.tensor(rng.integers(0, 3, size)), torch.tensor(rng.standard_normal(size))
    done = torch.tensor(rng.random(size) < 0.25)
    priorities = torch.ones(size, dtype=torch.float64)
    losses, norms = [], []
    for _ in range(4):
        p = priorities.pow(0.6)
        p = p / p.sum()
        idx = torch.tensor(rng.choice(size, batch, p=p.numpy()))
        w = (size * p[idx]).pow(-beta)
        w = w / w.max()
        q = online(s[idx]).gather(1, a[idx].unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            best = online(s2[idx]).argmax(dim=1, keepdim=True)
            y = r[idx] + gamma * target(s2[idx]).gather(1, best).squeeze(1) * (~done[idx])
        td = y - q
        loss = (w * F.smooth_l1_loss(q, y, reduction="none", beta=0.5)).mean()
        opt.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(online.parameters(), max_norm=1.0))
        opt.step()
        priorities[idx] = td.detach().abs() + 1e-3
        with torch.no_grad():
            for tp, op in zip(target.parameters(), online.parameters()):
                tp.lerp_(op, tau)
        losses.append(loss.item())
    return dict(init=init, losses=losses, norms=norms, priorities=priorities, online=list(online.parameters()),
                target=list(target.parameters()))


def test_dueling_double_dqn_prioritized_huber_lerp(torch):
    both(torch, dueling_double_dqn)


# ---- C51: the categorical target projected onto fixed atoms (floor / ceil, index_add_ into the flat bins) -------
def c51(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_actions, atoms, v_min, v_max, gamma = 3, 11, -2.0, 2.0, 0.9
    support = torch.linspace(v_min, v_max, atoms, dtype=torch.float64)
    dz = (v_max - v_min) / (atoms - 1)
    net = nn.Sequential(nn.Linear(3, 10), nn.ReLU(), nn.Linear(10, n_actions * atoms))
    init = start(net, init)
    target = copy.deepcopy(net)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    rng = np.random.default_rng(11)
    b = 5

    def dist(model, s):
        return F.softmax(model(s).view(-1, n_actions, atoms), dim=-1)

    losses = []
    for _ in range(3):
        s, s2 = torch.tensor(rng.standard_normal((b, 3))), torch.tensor(rng.standard_normal((b, 3)))
        a, r = torch.tensor(rng.integers(0, n_actions, b)), torch.tensor(rng.uniform(-1.5, 1.5, b))
        done = torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0], dtype=torch.float64)
        with torch.no_grad():
            next_dist = dist(target, s2)
            best = (next_dist * support).sum(-1).argmax(1)
            p = next_dist[torch.arange(b), best]
            tz = (r.unsqueeze(1) + gamma * (1 - done).unsqueeze(1) * support).clamp(v_min, v_max)
            pos = (tz - v_min) / dz
            lo, hi = pos.floor().long(), pos.ceil().long()
            lo[(hi > 0) & (lo == hi)] -= 1
            hi[(lo < atoms - 1) & (lo == hi)] += 1
            offset = (torch.arange(b) * atoms).unsqueeze(1).expand(b, atoms)
            m = torch.zeros(b * atoms, dtype=torch.float64)
            m.index_add_(0, (lo + offset).view(-1), (p * (hi.double() - pos)).view(-1))
            m.index_add_(0, (hi + offset).view(-1), (p * (pos - lo.double())).view(-1))
            m = m.view(b, atoms)
        log_p = F.log_softmax(net(s).view(b, n_actions, atoms), dim=-1)[torch.arange(b), a]
        loss = -(m * log_p).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        # the same projection by scatter_add_ on a 2-D tensor
        m2 = torch.zeros(b, atoms, dtype=torch.float64)
        m2.scatter_add_(1, lo, p * (hi.double() - pos)).scatter_add_(1, hi, p * (pos - lo.double()))
    q = (dist(net, s) * support).sum(-1)
    return dict(init=init, losses=losses, m=m, m2=m2, mass=m.sum(1), q=q, params=list(net.parameters()))


def test_c51_projection_index_add(torch):
    both(torch, c51)


# ---- TD3: twin critics, target policy smoothing with clamped given noise, delayed actor and polyak updates -------
def td3(torch, init):
    nn, F = torch.nn, torch.nn.functional
    s_dim, a_dim, max_action = 3, 2, 1.5

    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(s_dim, 8), nn.ReLU(), nn.Linear(8, a_dim), nn.Tanh())

        def forward(self, s):
            return max_action * self.net(s)

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.q1 = nn.Sequential(nn.Linear(s_dim + a_dim, 8), nn.ReLU(), nn.Linear(8, 1))
            self.q2 = nn.Sequential(nn.Linear(s_dim + a_dim, 8), nn.ReLU(), nn.Linear(8, 1))

        def forward(self, s, a):
            sa = torch.cat([s, a], 1)
            return self.q1(sa), self.q2(sa)

    model = nn.ModuleDict({"actor": Actor(), "critic": Critic()})
    init = start(model, init)
    actor, critic = model["actor"], model["critic"]
    actor_t, critic_t = copy.deepcopy(actor), copy.deepcopy(critic)
    a_opt = torch.optim.Adam(actor.parameters(), lr=3e-3)
    c_opt = torch.optim.Adam(critic.parameters(), lr=3e-3)
    rng = np.random.default_rng(12)
    gamma, tau, policy_noise, noise_clip, delay, b = 0.9, 0.05, 0.2, 0.5, 2, 6
    c_losses, a_losses = [], []
    for it in range(4):
        s, s2 = torch.tensor(rng.standard_normal((b, s_dim))), torch.tensor(rng.standard_normal((b, s_dim)))
        a = torch.tensor(rng.uniform(-max_action, max_action, (b, a_dim)))
        r, not_done = torch.tensor(rng.standard_normal((b, 1))), torch.tensor(rng.random((b, 1)) > 0.2).double()
        eps = torch.tensor(rng.standard_normal((b, a_dim)))
        with torch.no_grad():
            noise = (eps * policy_noise).clamp(-noise_clip, noise_clip)
            a2 = (actor_t(s2) + noise).clamp(-max_action, max_action)
            tq1, tq2 = critic_t(s2, a2)
            y = r + not_done * gamma * torch.min(tq1, tq2)
        q1, q2 = critic(s, a)
        c_loss = F.mse_loss(q1, y) + F.mse_loss(q2, y)
        c_opt.zero_grad()
        c_loss.backward()
        c_opt.step()
        c_losses.append(c_loss.item())
        if it % delay == delay - 1:
            a_loss = -critic(s, actor(s))[0].mean()
            a_opt.zero_grad()
            a_loss.backward()
            a_opt.step()
            a_losses.append(a_loss.item())
            with torch.no_grad():
                for net, tnet in ((actor, actor_t), (critic, critic_t)):
                    for p, tp in zip(net.parameters(), tnet.parameters()):
                        tp.mul_(1 - tau).add_(tau * p)
    return dict(init=init, c_losses=c_losses, a_losses=a_losses, params=list(model.parameters()),
                target=list(actor_t.parameters()) + list(critic_t.parameters()), critic_grads=grads(critic))


def test_td3_twin_critics_delayed_actor(torch):
    both(torch, td3)


# ---- LinUCB: per-arm design matrices (K, d, d), batched solves and inverses, outer-product updates ---------------
def linucb(torch, init):
    rng = np.random.default_rng(13)
    k, d, steps, alpha = 3, 4, 12, 0.8
    theta_true = torch.tensor(rng.standard_normal((k, d)))
    contexts = torch.tensor(rng.standard_normal((steps, d)))
    noise = torch.tensor(rng.standard_normal((steps, k))) * 0.1
    A = torch.eye(d, dtype=torch.float64).repeat(k, 1, 1)
    b = torch.zeros(k, d, dtype=torch.float64)
    chosen, ucbs, regret = [], [], []
    for t in range(steps):
        x = contexts[t]
        theta = torch.linalg.solve(A, b.unsqueeze(-1)).squeeze(-1)
        A_inv = torch.linalg.inv(A)
        bonus = alpha * torch.sqrt(torch.einsum("i,kij,j->k", x, A_inv, x))
        ucb = theta @ x + bonus
        arm = int(torch.argmax(ucb))
        reward = theta_true[arm] @ x + noise[t, arm]
        A[arm] += torch.outer(x, x)
        b[arm] += reward * x
        chosen.append(arm)
        ucbs.append(ucb)
        regret.append((theta_true @ x).max() - theta_true[arm] @ x)
    theta = torch.linalg.solve(A, b.unsqueeze(-1)).squeeze(-1)
    cum_regret = torch.cumsum(torch.stack(regret), 0)
    return dict(init=None, chosen=chosen, ucbs=ucbs, theta=theta, A=A, b=b, cum_regret=cum_regret,
                logdet=torch.linalg.slogdet(A)[1])


def test_linucb_batched_solve_inverse(torch):
    both(torch, linucb)
