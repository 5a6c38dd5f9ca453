"""Scripts in the shape of PyTorch's own tutorials and popular course notebooks, in variants the earlier files leave
out (the quickstart's train/test functions over DataLoaders; fine-tuning with a frozen, eval-mode backbone and a
later unfrozen block; a volumetric spatial transformer; style transfer by forward hooks and a strong-Wolfe LBFGS;
targeted L2 PGD; structured, iterative and custom-mask pruning; the built-in parametrizations; the forward-mode AD
tutorial, also through a CNN; per-sample gradients with buffers and aux outputs; ensembles over different
minibatches, and one trained as a whole over stacked parameters and BatchNorm statistics; Jacobians, Hessians and
the empirical NTK, by Jacobian contraction and by vjp of jvp; checkpoints loaded through map_location; the data
tutorial's Dataset with transforms; the build-model tutorial's printout; the pruning tutorial's own method),
written once against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial
weights. Losses, gradients, parameters and outputs must agree closely (float64 throughout; random draws by
numpy)."""
import copy
import io

import numpy as np
import pytest

from twins import both, grads, start


def kind(t):
    return str(t.dtype).split(".")[-1]


# ---- quickstart: Flatten + Sequential, train/test functions over DataLoaders, accuracy by argmax, save/predict ----
def quickstart(torch, init):
    nn = torch.nn
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    rng = np.random.default_rng(240)
    classes = ["T-shirt", "Trouser", "Pullover"]
    training_data = TensorDataset(torch.tensor(rng.random((10, 1, 4, 4))), torch.tensor(rng.integers(0, 3, 10)))
    test_data = TensorDataset(torch.tensor(rng.random((6, 1, 4, 4))), torch.tensor(rng.integers(0, 3, 6)))
    train_dataloader = DataLoader(training_data, batch_size=4)
    test_dataloader = DataLoader(test_data, batch_size=4)
    shapes = [(list(X.shape), list(y.shape), kind(y)) for X, y in test_dataloader]
    device = "cpu"

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                                                   nn.Linear(8, 3))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    model = NeuralNetwork().to(device)
    init = start(model, init)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    log = []

    def train(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            loss, current = loss.item(), (batch + 1) * len(X)
            log.append(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test(dataloader, model, loss_fn):
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        log.append(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
        return test_loss, correct

    results = []
    for _t in range(3):
        train(train_dataloader, model, loss_fn, optimizer)
        results.append(test(test_dataloader, model, loss_fn))
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    model2 = NeuralNetwork().to(device).double()
    missing = model2.load_state_dict(torch.load(buf, weights_only=True))
    model2.eval()
    x, y = test_data[0][0], test_data[0][1]
    with torch.no_grad():
        x = x.to(device)
        pred = model2(x)
        predicted, actual = classes[pred[0].argmax(0)], classes[y]
    return dict(init=init, shapes=shapes, log=log, results=results, missing=str(missing), pred=pred,
                named=(predicted, actual), grads=[p.grad for p in model.parameters()], params=list(model.parameters()),
                n=len(train_dataloader))


def test_quickstart_train_test_functions_over_dataloaders(torch):
    both(torch, quickstart)


# ---- fine-tuning: a frozen backbone kept in eval mode by a train() override, a new head, a block unfrozen later ----
def finetune_in_stages(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU())
            self.block = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU())
            self.fc = nn.Linear(4, 10)

        def forward(self, x):
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.block(self.stem(x)), 1), 1))

    class Finetuned(nn.Module):
        def __init__(self, backbone):
            super().__init__()
            self.backbone = backbone
            self.backbone.fc = nn.Identity()
            self.head = nn.Linear(4, 3)

        def train(self, mode=True):
            super().train(mode)
            self.backbone.eval()  # frozen BatchNorm keeps its running statistics
            return self

        def forward(self, x):
            return self.head(self.backbone(x))

    model = Finetuned(Backbone())
    init = start(model, init)
    model.backbone.requires_grad_(False)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=0.05)
    rng = np.random.default_rng(241)
    stats_before = model.backbone.stem[1].running_mean.clone()
    losses, modes = [], []
    for step in range(4):
        if step == 2:  # unfreeze the last block, at a lower learning rate
            model.backbone.block.requires_grad_(True)
            optimizer.add_param_group({"params": model.backbone.block.parameters(), "lr": 0.01})
        model.train()
        modes.append((model.training, model.backbone.training, model.backbone.stem[1].training, model.head.training))
        x, y = torch.tensor(rng.standard_normal((4, 2, 5, 5))), torch.tensor(rng.integers(0, 3, 4))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        probs = F.softmax(model(torch.tensor(rng.standard_normal((2, 2, 5, 5)))), dim=1)
    stem_grads = [p.grad is None for p in model.backbone.stem.parameters()]
    return dict(init=init, trainable=trainable, losses=losses, modes=modes, probs=probs, stem_grads=stem_grads,
                same_stats=bool(torch.equal(stats_before, model.backbone.stem[1].running_mean)),
                groups=[(len(g["params"]), g["lr"]) for g in optimizer.param_groups],
                tracked=model.backbone.stem[1].num_batches_tracked, grads=grads(model), state=model.state_dict())


def test_finetune_frozen_eval_backbone_then_unfrozen_block(torch):
    both(torch, finetune_in_stages)


# ---- a volumetric spatial transformer: 5-D affine_grid + grid_sample, a localisation net regressing theta ----------
def volumetric_stn(torch, init, align_corners, mode):
    nn, F = torch.nn, torch.nn.functional

    class STN3d(nn.Module):
        def __init__(self):
            super().__init__()
            self.localization = nn.Sequential(nn.Conv3d(1, 2, 3), nn.MaxPool3d(2), nn.ReLU())
            self.fc_loc = nn.Sequential(nn.Linear(2, 12))
            self.classify = nn.Linear(4 * 4 * 4, 2)

        def stn(self, x):
            xs = self.localization(x).view(-1, 2)
            theta = self.fc_loc(xs).view(-1, 3, 4)
            grid = F.affine_grid(theta, x.size(), align_corners=align_corners)
            return F.grid_sample(x, grid, mode=mode, align_corners=align_corners), theta

        def forward(self, x):
            x, theta = self.stn(x)
            return self.classify(x.flatten(1)), x, theta

    model = STN3d()
    init = start(model, init)
    with torch.no_grad():  # start from the identity transform, as the tutorial does
        model.fc_loc[0].weight.mul_(0.1)
        model.fc_loc[0].bias.copy_(torch.tensor([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0], dtype=torch.float64))
    rng = np.random.default_rng(242)
    x, y = torch.tensor(rng.random((2, 1, 4, 4, 4))), torch.tensor([0, 1])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        out, warped, theta = model(x)
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    ident = torch.tensor([[[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]], dtype=torch.float64)
    grid = F.affine_grid(ident, (1, 1, 2, 3, 4), align_corners=align_corners)
    return dict(init=init, losses=losses, warped=warped, theta=theta, grid=grid, grads=grads(model),
                params=list(model.parameters()))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_volumetric_spatial_transformer(torch, align_corners, mode):
    both(torch, volumetric_stn, align_corners=align_corners, mode=mode)


# ---- style transfer by forward hooks on a frozen CNN, Gram matrices, LBFGS with strong Wolfe, clamp_ in closure ----
def style_by_hooks(torch, init):
    nn, F = torch.nn, torch.nn.functional
    cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                        nn.AvgPool2d(2), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU())
    init = start(cnn, init)
    cnn.eval().requires_grad_(False)
    feats = {}

    def save_to(name):
        def hook(module, inputs, output):
            feats[name] = output
        return hook

    handles = [cnn[i].register_forward_hook(save_to(f"conv_{i}")) for i in (0, 2, 5)]
    style_layers, content_layers = ["conv_0", "conv_2", "conv_5"], ["conv_2"]
    mean = torch.tensor([0.485, 0.456, 0.406], dtype=torch.float64).view(-1, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], dtype=torch.float64).view(-1, 1, 1)

    def gram_matrix(x):
        a, b, c, d = x.size()
        features = x.view(a * b, c * d)
        return torch.mm(features, features.t()).div(a * b * c * d)

    def features_of(img):
        cnn((img - mean) / std)
        return dict(feats)

    rng = np.random.default_rng(243)
    style_img, content_img = torch.tensor(rng.random((1, 3, 6, 6))), torch.tensor(rng.random((1, 3, 6, 6)))
    style_targets = {k: gram_matrix(v).detach() for k, v in features_of(style_img).items() if k in style_layers}
    content_targets = {k: v.detach() for k, v in features_of(content_img).items() if k in content_layers}
    input_img = content_img.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([input_img], lr=0.5, max_iter=4, line_search_fn="strong_wolfe")
    scores = []

    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        f = features_of(input_img)
        style_score = sum(F.mse_loss(gram_matrix(f[k]), style_targets[k]) for k in style_layers)
        content_score = sum(F.mse_loss(f[k], content_targets[k]) for k in content_layers)
        loss = 1e4 * style_score + content_score
        loss.backward()
        scores.append((style_score.item(), content_score.item()))
        return loss

    final = [optimizer.step(closure) for _ in range(2)]
    with torch.no_grad():
        input_img.clamp_(0, 1)
    for h in handles:
        h.remove()
    cnn(input_img)
    state = optimizer.state[input_img]
    return dict(init=init, scores=scores, final=final, img=input_img, n_iter=state["n_iter"],
                func_evals=state["func_evals"], hooks_left=len(cnn[0]._forward_hooks),
                weight_grads=[p.grad for p in cnn.parameters()])


def test_style_transfer_forward_hooks_strong_wolfe_lbfgs(torch):
    both(torch, style_by_hooks, tol=dict(rtol=1e-7, atol=1e-9))


# ---- adversarial examples: targeted FGSM, targeted L2 PGD with projection onto the ball, a denormalised image -----
def targeted_attacks(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 4))
    init = start(model, init)
    model.eval()
    rng = np.random.default_rng(244)
    mean, std = 0.1307, 0.3081

    def denorm(batch):
        return batch * std + mean

    data = (torch.tensor(rng.random((5, 1, 6, 6))) - mean) / std
    target = torch.tensor(rng.integers(0, 4, 5))
    goal = (target + 1) % 4
    # targeted FGSM: step *against* the gradient of the loss towards the goal class
    x = data.clone().requires_grad_(True)
    F.cross_entropy(model(x), goal).backward()
    fgsm = torch.clamp(denorm(x) - 0.1 * x.grad.sign(), 0, 1)
    fgsm_hits = (model((fgsm - mean) / std).argmax(1) == goal).sum().item()

    def project_l2(delta, eps):
        norms = delta.flatten(1).norm(p=2, dim=1).clamp_min(1e-12).view(-1, 1, 1, 1)
        return delta * torch.clamp(eps / norms, max=1.0)

    eps, alpha = 0.5, 0.2
    images = denorm(data)
    delta = project_l2(torch.tensor(rng.standard_normal(images.shape)) * 0.1, eps)
    losses, norms = [], []
    for _ in range(4):
        delta.requires_grad_(True)
        loss = F.cross_entropy(model(((images + delta).clamp(0, 1) - mean) / std), goal)
        (g,) = torch.autograd.grad(loss, delta)
        g = g / g.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, 1, 1, 1)
        delta = project_l2(delta.detach() - alpha * g, eps)
        delta = (images + delta).clamp(0, 1) - images
        losses.append(loss.item())
        norms.append(delta.flatten(1).norm(dim=1))
    with torch.no_grad():
        logits = model(((images + delta) - mean) / std)
    renormed = torch.renorm(delta.detach().flatten(1), p=2, dim=0, maxnorm=0.3)
    return dict(init=init, fgsm=fgsm, fgsm_hits=fgsm_hits, losses=losses, norms=norms, delta=delta, logits=logits,
                renormed=renormed, requires=(delta.requires_grad, delta.grad_fn is None),
                weight_grads=[p.grad for p in model.parameters()])


def test_targeted_fgsm_and_l2_pgd_projection(torch):
    both(torch, targeted_attacks)


# ---- pruning beyond L1: ln_structured, custom_from_mask, identity, iterative pruning in a container, scores -------
def structured_pruning(torch, init):
    nn, F = torch.nn, torch.nn.functional
    prune = torch.nn.utils.prune
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 3 * 3, 3))
    init = start(model, init)
    conv, fc = model[0], model[3]
    prune.ln_structured(conv, name="weight", amount=0.5, n=2, dim=0)
    facts = [[n for n, _ in conv.named_parameters()], [n for n, _ in conv.named_buffers()],
             int((conv.weight.flatten(1).abs().sum(1) == 0).sum())]
    prune.l1_unstructured(conv, name="weight", amount=3)  # a second pass: a container over both
    hooks = list(conv._forward_pre_hooks.values())
    facts += [type(hooks[0]).__name__, [type(m).__name__ for m in hooks[0]._pruning_methods], len(hooks),
              int(conv.weight_mask.sum())]
    mask = torch.tensor(np.random.default_rng(245).integers(0, 2, (4,)).astype(np.float64))
    prune.custom_from_mask(conv, name="bias", mask=mask)
    prune.identity(fc, "bias")
    scores = torch.tensor(np.abs(np.random.default_rng(246).standard_normal((3, 36))))
    prune.ln_structured(fc, "weight", amount=1, n=1, dim=0, importance_scores=scores)
    facts += [list(model.state_dict()), int(fc.weight_mask.sum()), bool(torch.equal(fc.bias_mask, torch.ones(3,
              dtype=fc.bias_mask.dtype)))]
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(247)
    losses = []
    for _ in range(3):
        x, y = torch.tensor(rng.standard_normal((4, 1, 5, 5))), torch.tensor(rng.integers(0, 3, 4))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    sparsity = [100.0 * float(torch.sum(m.weight == 0)) / float(m.weight.nelement()) for m in (conv, fc)]
    masks = [b.clone() for _, b in model.named_buffers()]
    for module, name in [(conv, "weight"), (conv, "bias"), (fc, "weight"), (fc, "bias")]:
        prune.remove(module, name)
    return dict(init=init, facts=facts, losses=losses, sparsity=sparsity, masks=masks, after=list(model.state_dict()),
                state=model.state_dict(), orig_grads=grads(model), hooks=len(conv._forward_pre_hooks))


def test_structured_iterative_and_custom_mask_pruning(torch):
    pytest.importorskip("torch.nn.utils.prune")  # (PyTorch's tutorial imports it by name)
    both(torch, structured_pruning)


# ---- the built-in parametrizations: orthogonal maps, spectral_norm, weight_norm, cached(), removal ----------------
def builtin_parametrizations(torch, init, orthogonal_map):
    nn, F = torch.nn, torch.nn.functional
    P, PZ = torch.nn.utils.parametrize, torch.nn.utils.parametrizations

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 3), nn.Linear(3, 3))
    init = start(model, init)
    PZ.orthogonal(model[0], orthogonal_map=orthogonal_map)
    PZ.spectral_norm(model[2])
    sn = model[2].parametrizations.weight[0]
    rng = np.random.default_rng(248)
    with torch.no_grad():  # the power iteration's start from numpy's numbers (the libraries' draws differ)
        sn._u.copy_(F.normalize(torch.tensor(rng.standard_normal(4)), dim=0))
        sn._v.copy_(F.normalize(torch.tensor(rng.standard_normal(4)), dim=0))
    PZ.weight_norm(model[4])
    P.register_parametrization(model[5], "weight", Symmetric())
    q = model[0].weight
    facts = [list(model.state_dict()), [n for n, _ in model.named_parameters()],
             type(model[0].parametrizations.weight[0]).__name__, type(model[0]).__name__,
             torch.allclose(q @ q.T, torch.eye(4, dtype=q.dtype)), P.is_parametrized(model[5], "weight"),
             list(model[4].parametrizations.weight.original0.shape), type(sn).__name__]
    x, y = torch.tensor(rng.standard_normal((6, 4))), torch.tensor(rng.integers(0, 3, 6))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        with P.cached():
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        sigma = torch.linalg.matrix_norm(model[2].weight, ord=2)
        q = model[0].weight
        ortho = (q @ q.T - torch.eye(4, dtype=q.dtype)).abs().max().item() < 1e-10
        sym = bool(torch.equal(model[5].weight, model[5].weight.T))
        out = model(x)
    with torch.no_grad():  # assigning through weight_norm's right_inverse
        model[4].weight = torch.eye(3, 4, dtype=torch.float64) * 2
    assigned = [model[4].parametrizations.weight.original0.clone(), model[4].parametrizations.weight.original1.clone()]
    P.remove_parametrizations(model[0], "weight", leave_parametrized=True)
    P.remove_parametrizations(model[4], "weight")
    P.remove_parametrizations(model[5], "weight", leave_parametrized=False)
    return dict(init=init, facts=facts, losses=losses, sigma=sigma, ortho=ortho, sym=sym, out=out,
                assigned=assigned, after=list(model.state_dict()), state=model.state_dict(),
                kinds=[type(m).__name__ for m in model], grads=grads(model))


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "householder"])
def test_orthogonal_spectral_weight_norm_parametrizations(torch, orthogonal_map):
    both(torch, builtin_parametrizations, orthogonal_map=orthogonal_map)


# ---- the forward-mode AD tutorial: dual_level, make_dual/unpack_dual, a module's dual parameters, func.jvp --------
def forward_mode(torch, init):
    nn, F = torch.nn, torch.nn.functional
    fwAD = torch.autograd.forward_ad
    from_func = torch.func
    rng = np.random.default_rng(249)
    primal, tangent = torch.tensor(rng.standard_normal((3, 4))), torch.tensor(rng.standard_normal((3, 4)))

    def fn(x, y):
        return x ** 2 + y ** 2

    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        plain = torch.tensor(rng.standard_normal((3, 4)))
        dual_output = fn(dual_input, plain)
        unpacked = fwAD.unpack_dual(dual_output)
        first = (unpacked.primal, unpacked.tangent, fwAD.unpack_dual(plain).tangent is None,
                 isinstance(unpacked, tuple))

    model = nn.Linear(4, 3)
    init = start(model, init)
    inp = torch.tensor(rng.standard_normal((5, 4)))
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.tensor(rng.standard_normal(tuple(p.shape))) for name, p in params.items()}
    with fwAD.dual_level():
        dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        out = torch.func.functional_call(model, dual_params, (inp,))
        jvp_module = fwAD.unpack_dual(out).tangent

    def func(params, x):
        return from_func.functional_call(model, params, (x,))

    detached = {k: v.detach() for k, v in params.items()}
    _, jvp_out = from_func.jvp(lambda p: func(p, inp), (detached,), (tangents,))

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    x = torch.tensor(rng.standard_normal(4))
    with fwAD.dual_level():
        y = Fn.apply(fwAD.make_dual(x, torch.ones_like(x)))
        custom = fwAD.unpack_dual(y).tangent
    # forward-over-reverse: a Hessian-vector product
    w = torch.tensor(rng.standard_normal(4), requires_grad=True)
    v = torch.tensor(rng.standard_normal(4))
    with fwAD.dual_level():
        wd = fwAD.make_dual(w, v)
        (g,) = torch.autograd.grad(F.softplus(wd).pow(3).sum(), wd, create_graph=True)
        hvp = fwAD.unpack_dual(g).tangent
    return dict(init=init, first=first, jvp_module=jvp_module, jvp_func=jvp_out, custom=custom, hvp=hvp)


def test_forward_mode_ad_tutorial(torch):
    both(torch, forward_mode)


# ---- per-sample gradients with buffers, grad_and_value, has_aux, vmap's chunk_size ------------------------------
def per_sample_with_buffers(torch, init):
    nn, F = torch.nn, torch.nn.functional
    fc = torch.func

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)
            self.bn = nn.BatchNorm2d(2)
            self.fc = nn.Linear(2 * 3 * 3, 3)

        def forward(self, x):
            return self.fc(F.relu(self.bn(self.conv(x))).flatten(1))

    model = Net()
    init = start(model, init)
    rng = np.random.default_rng(250)
    with torch.no_grad():  # give BatchNorm some running statistics first
        model(torch.tensor(rng.standard_normal((6, 1, 5, 5))))
    model.eval()
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    data, targets = torch.tensor(rng.standard_normal((4, 1, 5, 5))), torch.tensor(rng.integers(0, 3, 4))

    def compute_loss(params, buffers, sample, target):
        batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
        predictions = fc.functional_call(model, (params, buffers), (batch,))
        loss = F.cross_entropy(predictions, targets)
        return loss, predictions.squeeze(0)

    ft = fc.vmap(fc.grad_and_value(compute_loss, has_aux=True), in_dims=(None, None, 0, 0), chunk_size=3)
    (per_grads, (per_loss, per_pred)) = ft(params, buffers, data, targets)
    loop = []
    for i in range(4):
        model.zero_grad()
        F.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
        loop.append([p.grad.clone() for p in model.parameters()])
    agree_loop = all(torch.allclose(per_grads[k][i], loop[i][j]) for i in range(4)
                     for j, k in enumerate(params))
    g_only = fc.vmap(fc.grad(lambda p, s, t: compute_loss(p, buffers, s, t)[0]), in_dims=(None, 0, 0))(
        params, data, targets)
    return dict(init=init, per_grads=per_grads, per_loss=per_loss, per_pred=per_pred, agree_loop=agree_loop,
                g_only=g_only, keys=list(per_grads), buffers=list(buffers))


def test_per_sample_gradients_with_buffers_and_aux(torch):
    both(torch, per_sample_with_buffers)


# ---- ensembling over different minibatches, then Jacobians, Hessians and the empirical NTK ----------------------
def ensemble_and_ntk(torch, init):
    nn, F = torch.nn, torch.nn.functional
    fc = torch.func
    rng = np.random.default_rng(251)

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 5)
            self.fc2 = nn.Linear(5, 2)

        def forward(self, x):
            return self.fc2(torch.tanh(self.fc1(x)))

    holder = nn.ModuleList([SimpleMLP() for _ in range(3)])
    init = start(holder, init)
    models = list(holder)
    params, buffers = fc.stack_module_state(models)
    base = copy.deepcopy(models[0])

    def fmodel(params, buffers, x):
        return fc.functional_call(base, (params, buffers), (x,))

    minibatches = torch.tensor(rng.standard_normal((3, 6, 4)))
    per_batch = fc.vmap(fmodel, in_dims=(0, 0, 0))(params, buffers, minibatches)
    same_batch = fc.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatches[0])
    loop = torch.stack([m(b) for m, b in zip(models, minibatches)])
    ensemble = [list(params), list(params["fc1.weight"].shape), params["fc1.weight"].requires_grad,
                torch.allclose(per_batch, loop)]
    (per_batch.pow(2).sum() + same_batch.sum()).backward()
    stacked_grad = params["fc2.weight"].grad

    net = models[0]
    p0 = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return fc.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    x1, x2 = torch.tensor(rng.standard_normal((3, 4))), torch.tensor(rng.standard_normal((2, 4)))
    jac1 = fc.vmap(fc.jacrev(fnet_single), (None, 0))(p0, x1)
    jac2 = fc.vmap(fc.jacrev(fnet_single), (None, 0))(p0, x2)
    jac1 = [j.flatten(2) for j in jac1.values()]
    jac2 = [j.flatten(2) for j in jac2.values()]
    ntk_full = torch.stack([torch.einsum("Naf,Mbf->NMab", j1, j2) for j1, j2 in zip(jac1, jac2)]).sum(0)
    ntk_trace = torch.stack([torch.einsum("Naf,Maf->NM", j1, j2) for j1, j2 in zip(jac1, jac2)]).sum(0)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    w, b = torch.tensor(rng.standard_normal((3, 4))), torch.tensor(rng.standard_normal(3))
    x = torch.tensor(rng.standard_normal(4))
    jr = fc.jacrev(predict, argnums=2)(w, b, x)
    jf = fc.jacfwd(predict, argnums=2)(w, b, x)
    jw, jb = fc.jacrev(predict, argnums=(0, 1))(w, b, x)
    batched = fc.vmap(fc.jacrev(predict, argnums=2), in_dims=(None, None, 0))(w, b, x1)
    hess = fc.hessian(lambda x: predict(w, b, x).sum())(x)
    hess_fr = fc.jacfwd(fc.jacrev(lambda x: predict(w, b, x).sum()))(x)
    out, vjp_fn = fc.vjp(lambda x: predict(w, b, x), x)
    (vjp_x,) = vjp_fn(torch.ones(3, dtype=torch.float64))
    _, jvp_x = fc.jvp(lambda x: predict(w, b, x), (x,), (torch.ones(4, dtype=torch.float64),))
    return dict(init=init, per_batch=per_batch, same_batch=same_batch, ensemble=ensemble, stacked_grad=stacked_grad,
                ntk_full=ntk_full, ntk_trace=ntk_trace, jr=jr, jf=jf, jw=jw, jb=jb, batched=batched, hess=hess,
                hess_fr=hess_fr, out=out, vjp_x=vjp_x, jvp_x=jvp_x, base_device=str(next(base.parameters()).device))


def test_ensemble_minibatches_jacobians_hessians_ntk(torch):
    both(torch, ensemble_and_ntk)


# ---- deployment: a checkpoint dict through BytesIO, loaded with each map_location form, then resumed -------------
def checkpoint_map_location(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    init = start(model, init)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    rng = np.random.default_rng(252)
    batches = [(torch.tensor(rng.standard_normal((5, 3))), torch.tensor(rng.integers(0, 2, 5))) for _ in range(4)]

    def step(model, optimizer, x, y):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    losses = [step(model, optimizer, *batches[i]) for i in range(2)]
    buf = io.BytesIO()
    torch.save({"epoch": 2, "model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict(),
                "loss": losses[-1]}, buf)
    loaded = []
    for where in ["cpu", torch.device("cpu"), lambda storage, loc: storage, {"cuda:0": "cpu"}]:
        buf.seek(0)
        ck = torch.load(buf, map_location=where, weights_only=True)
        loaded.append((ck["epoch"], ck["loss"], str(ck["model_state_dict"]["0.weight"].device),
                       kind(ck["model_state_dict"]["1.num_batches_tracked"])))
    resumed = copy.deepcopy(model)
    with torch.no_grad():
        for p in resumed.parameters():
            p.zero_()
    opt2 = torch.optim.AdamW(resumed.parameters(), lr=0.5)
    resumed.load_state_dict(ck["model_state_dict"])
    opt2.load_state_dict(ck["optimizer_state_dict"])
    start_epoch = ck["epoch"]
    resumed.train()
    more = [step(model, optimizer, *batches[i]) for i in range(2, 4)]
    more_resumed = [step(resumed, opt2, *batches[i]) for i in range(2, 4)]
    resumed.eval()
    with torch.no_grad():
        preds = resumed(batches[0][0]).argmax(dim=1)
    one = io.BytesIO()
    torch.save(model[0].weight, one)
    one.seek(0)
    alone = torch.load(one, map_location="cpu", weights_only=True)
    return dict(init=init, losses=losses, loaded=loaded, start_epoch=start_epoch, more=more, more_resumed=more_resumed,
                preds=preds, alone=alone, alone_kind=type(alone).__name__, lr=opt2.param_groups[0]["lr"],
                state=resumed.state_dict())


def test_checkpoint_dict_through_each_map_location(torch):
    both(torch, checkpoint_map_location)


# ---- the data tutorial: a Dataset subclass with transform / target_transform, a one-hot by scatter_ --------------
def custom_dataset(torch, init):
    nn, F = torch.nn, torch.nn.functional
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader
    rng = np.random.default_rng(253)
    images, labels = rng.integers(0, 256, (7, 4, 4)).astype(np.uint8), [int(v) for v in rng.integers(0, 5, 7)]

    class CustomImageDataset(Dataset):
        def __init__(self, images, labels, transform=None, target_transform=None):
            self.images, self.img_labels = images, labels
            self.transform, self.target_transform = transform, target_transform

        def __len__(self):
            return len(self.img_labels)

        def __getitem__(self, idx):
            image, label = torch.from_numpy(self.images[idx]).unsqueeze(0), self.img_labels[idx]
            if self.transform:
                image = self.transform(image)
            if self.target_transform:
                label = self.target_transform(label)
            return image, label

    def to_tensor(img):  # ToTensor's arithmetic: uint8 [0, 255] to float [0, 1]
        return img.to(torch.float64).div(255)

    def one_hot(y):
        return torch.zeros(5, dtype=torch.float64).scatter_(0, torch.tensor(y), value=1)

    data = CustomImageDataset(images, labels, transform=to_tensor, target_transform=one_hot)
    first = data[0]
    facts = [len(data), list(first[0].shape), kind(first[0]), first[1].tolist(), kind(first[1])]
    loader = DataLoader(data, batch_size=3)
    train_features, train_labels = next(iter(loader))
    facts += [list(train_features.size()), list(train_labels.size()), len(loader),
              [list(x.shape) for x, _ in loader]]
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 5))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for X, Y in loader:
        loss = F.cross_entropy(model(X), Y)  # probabilities as targets
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    plain = DataLoader(CustomImageDataset(images, labels), batch_size=4)
    raw = [(x.dtype == torch.uint8, y.tolist(), kind(y)) for x, y in plain]
    return dict(init=init, facts=facts, first=first, features=train_features, labels=train_labels, losses=losses,
                raw=raw, grads=grads(model), params=list(model.parameters()))


def test_custom_dataset_transforms_and_scatter_one_hot(torch):
    both(torch, custom_dataset)


# ---- the build-the-model tutorial: the model's printout, named parameters with slices, Softmax(dim=1) ------------
def model_printout(torch, init):
    nn = torch.nn

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 5), nn.ReLU(),
                                                   nn.Linear(5, 3))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    model = NeuralNetwork()
    init = start(model, init)
    lib = torch.__name__
    printed = [str(model).replace(lib, "LIB")]
    X = torch.tensor(np.random.default_rng(254).random((2, 2, 3)))
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    input_image = torch.tensor(np.random.default_rng(255).random((3, 2, 3)))
    flat_image = nn.Flatten()(input_image)
    hidden1 = nn.ReLU()(nn.Linear(in_features=6, out_features=4).double()(flat_image))
    printed.append(f"Predicted class: {y_pred}".replace(lib, "LIB"))
    printed.append(str(flat_image.size()).replace(lib, "LIB"))
    printed.append(str(hidden1.shape).replace(lib, "LIB"))
    for name, param in model.named_parameters():
        printed.append(f"Layer: {name} | Size: {param.size()} | Requires grad: {param.requires_grad}".replace(lib, "LIB"))
    sliced = [param[:2] for param in model.parameters()]
    names = [type(p.grad_fn).__name__ for p in sliced]
    return dict(init=init, printed=printed, logits=logits, probs=pred_probab, y_pred=y_pred, sliced=sliced,
                names=names, modules=[type(m).__name__ for m in model.modules()], children=len(list(model.children())))


def test_build_model_printout_and_named_parameters(torch):
    both(torch, model_printout)


# ---- forward-mode through a small CNN: jacfwd against jacrev, a dual input through conv, norms and softmax ------
def forward_mode_cnn(torch, init):
    nn = torch.nn
    fwAD, fc = torch.autograd.forward_ad, torch.func
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.GELU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.LayerNorm(8), nn.Linear(8, 3), nn.LogSoftmax(dim=1))
    init = start(model, init)
    model.eval()
    rng = np.random.default_rng(256)
    x, v = torch.tensor(rng.standard_normal((1, 1, 4, 4))), torch.tensor(rng.standard_normal((1, 1, 4, 4)))
    with fwAD.dual_level():
        out = model(fwAD.make_dual(x, v))
        primal, tangent = fwAD.unpack_dual(out)
    jf = fc.jacfwd(model)(x)
    jr = fc.jacrev(model)(x)
    _, jvp_out = fc.jvp(model, (x,), (v,))
    lin_out, jvp_fn = fc.linearize(model, x)
    lin_tangent = jvp_fn(v)
    params = {k: p.detach() for k, p in model.named_parameters()}
    buffers = {k: b for k, b in model.named_buffers()}

    def loss_of(bias, x):
        return fc.functional_call(model, ({**params, "6.bias": bias}, buffers), (x,)).sum() ** 2

    hess = fc.hessian(loss_of)(params["6.bias"], x)
    (g, aux) = fc.jacrev(lambda x: (model(x).exp().sum(1), model(x)), has_aux=True)(x)
    outs = fc.vmap(model, in_dims=1, out_dims=1)(torch.tensor(rng.standard_normal((1, 3, 1, 4, 4))))
    return dict(init=init, primal=primal, tangent=tangent, jf=jf, jr=jr, jvp_out=jvp_out, lin_out=lin_out,
                lin_tangent=lin_tangent, hess=hess, g=g, aux=aux, outs=outs)


def test_forward_mode_through_a_cnn_jacfwd_linearize_hessian(torch):
    both(torch, forward_mode_cnn)


# ---- the pruning tutorial's own method: a BasePruningMethod subclass, PRUNING_TYPE, a container over it ---------
def custom_pruning_method(torch, init):
    nn, F = torch.nn, torch.nn.functional
    prune = torch.nn.utils.prune

    class FooBarPruningMethod(prune.BasePruningMethod):
        """Prune every other entry of a tensor."""
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    def foobar_unstructured(module, name):
        FooBarPruningMethod.apply(module, name)
        return module

    model = nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 3))
    init = start(model, init)
    foobar_unstructured(model[2], name="bias")
    first = model[2].bias_mask.clone()
    prune.ln_structured(model[0], "weight", amount=0.25, n=float("inf"), dim=1)
    foobar_unstructured(model[0], name="weight")
    hook = next(iter(model[0]._forward_pre_hooks.values()))
    facts = [type(hook).__name__, [type(m).__name__ for m in hook], hook._tensor_name,
             int(model[0].weight_mask.sum()), list(dict(model.named_buffers())),
             [n for n, _ in model.named_parameters()]]
    rng = np.random.default_rng(257)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        x, y = torch.tensor(rng.standard_normal((4, 5))), torch.tensor(rng.integers(0, 3, 4))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    masks = [model[0].weight_mask.clone(), model[2].bias_mask.clone()]
    prune.remove(model[0], "weight")
    return dict(init=init, first=first, facts=facts, losses=losses, masks=masks, weight=model[0].weight,
                bias=model[2].bias, state=list(model.state_dict()), pruned=prune.is_pruned(model))


def test_custom_pruning_method_subclass_in_a_container(torch):
    pytest.importorskip("torch.nn.utils.prune")
    both(torch, custom_pruning_method)


# ---- the NTK tutorial's second method: NTK-vector products by vjp of jvp, vmapped twice, against the Jacobians ---
def ntk_by_vector_products(torch, init):
    nn = torch.nn
    fc = torch.func
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    init = start(model, init)
    params = {k: v.detach() for k, v in model.named_parameters()}
    rng = np.random.default_rng(258)
    x1, x2 = torch.tensor(rng.standard_normal((3, 3))), torch.tensor(rng.standard_normal((2, 3)))

    def fnet_single(params, x):
        return fc.functional_call(model, params, (x.unsqueeze(0),)).squeeze(0)

    def empirical_ntk_ntk_vps(func, params, x1, x2):
        def get_ntk(x1, x2):
            def func_x1(params):
                return func(params, x1)

            def func_x2(params):
                return func(params, x2)

            output, vjp_fn = fc.vjp(func_x1, params)

            def get_ntk_slice(vec):
                vjps = vjp_fn(vec)
                _, jvps = fc.jvp(func_x2, (params,), vjps)
                return jvps

            basis = torch.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
            return fc.vmap(get_ntk_slice)(basis)

        result = fc.vmap(fc.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
        return result

    def empirical_ntk_jacobian_contraction(func, params, x1, x2):
        jac1 = fc.vmap(fc.jacrev(func), (None, 0))(params, x1)
        jac1 = [j.flatten(2) for j in jac1.values()]
        jac2 = fc.vmap(fc.jacrev(func), (None, 0))(params, x2)
        jac2 = [j.flatten(2) for j in jac2.values()]
        return torch.stack([torch.einsum("Naf,Mbf->NMab", j1, j2) for j1, j2 in zip(jac1, jac2)]).sum(0)

    by_vps = empirical_ntk_ntk_vps(fnet_single, params, x1, x2)
    by_jac = empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2)
    return dict(init=init, by_vps=by_vps, by_jac=by_jac, close=torch.allclose(by_vps, by_jac.transpose(-1, -2)),
                shape=list(by_vps.shape))


def test_ntk_by_vjp_of_jvp_vmapped_twice(torch):
    both(torch, ntk_by_vector_products)


# ---- an ensemble trained as one: stacked parameters as leaves of one optimizer, BatchNorm's stacked statistics ----
def ensemble_trained_stacked(torch, init):
    nn, F = torch.nn, torch.nn.functional
    fc = torch.func
    holder = nn.ModuleList([nn.Sequential(nn.Linear(3, 4, bias=False), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
                            for _ in range(3)])
    init = start(holder, init)
    params, buffers = fc.stack_module_state(list(holder))
    base = copy.deepcopy(holder[0])
    opt = torch.optim.Adam(params.values(), lr=0.05)
    rng = np.random.default_rng(259)

    def loss_of(p, b, x, y):
        return F.cross_entropy(fc.functional_call(base, (p, b), (x,)), y)

    losses = []
    for _ in range(3):
        x = torch.tensor(rng.standard_normal((3, 5, 3)))  # a minibatch per member
        y = torch.tensor(rng.integers(0, 2, (3, 5)))
        per_model = fc.vmap(loss_of)(params, buffers, x, y)
        opt.zero_grad()
        per_model.sum().backward()
        opt.step()
        losses.append(per_model.detach())
    base.eval()
    with torch.no_grad():
        test = torch.tensor(rng.standard_normal((4, 3)))
        votes = fc.vmap(fc.functional_call, in_dims=(None, 0, None))(base, (params, buffers), (test,))
        mean_prob = votes.softmax(-1).mean(0)
    try:  # statistics every member would share are refused in training
        base.train()
        fc.vmap(lambda p, x: fc.functional_call(base, p, (x,)))(params, x)
        refused = None
    except RuntimeError as e:
        refused = str(e).split("\n")[0]
    return dict(init=init, losses=losses, buffers=buffers, params=params, votes=votes, mean_prob=mean_prob,
                refused=refused, tracked=buffers["1.num_batches_tracked"])


def test_ensemble_trained_stacked_with_batch_norm_statistics(torch):
    both(torch, ensemble_trained_stacked)
