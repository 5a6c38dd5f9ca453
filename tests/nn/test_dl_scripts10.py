"""Deep-learning scripts of more kinds again (a training step wrapped in torch.compile's spellings, 1-d Grad-CAM
through hooks with kwargs, user parametrizations with right_inverse and caching, activation checkpointing with
dropout, a packed GRU encoder with a GRUCell additive-attention decoder, a switch-style mixture of experts with
capacity, a pre-norm nn.Transformer copy task, a checkerboard RealNVP on images, a neural ODE by RK4 with a
Jacobian penalty, a spectrogram audio classifier), written once against a `torch`-like module and run twice: on
PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree
closely (float64 throughout; random draws by numpy)."""
import types

import numpy as np
import pytest

from twins import both, grads, start


def eager(torch):
    """PyTorch with torch.compile as the identity (and torch._dynamo's two names as no-ops): its compilers take
    many seconds here, and the point is that minigrad.compile accepts these spellings and gives eager's numbers."""
    def compile(model=None, **kw):
        return (lambda f: f) if model is None else model
    dynamo = types.SimpleNamespace(reset=lambda: None, config=types.SimpleNamespace(suppress_errors=False))
    names = {k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")}
    return types.SimpleNamespace(**{**names, "compile": compile, "_dynamo": dynamo})


# ---- a training step under torch.compile's spellings ---------------------------------------------------------
def compiled(torch, init):
    nn, F = torch.nn, torch.nn.functional
    torch._dynamo.reset()
    torch._dynamo.config.suppress_errors = True
    model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.LayerNorm(12), nn.Linear(12, 3))
    init = start(model, init)
    model = torch.compile(model, fullgraph=True, dynamic=False, backend="inductor")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)

    @torch.compile(mode="reduce-overhead")
    def loss_of(x, y):
        return F.cross_entropy(model(x), y, label_smoothing=0.05)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        return loss.detach()

    step = torch.compile(step, backend="inductor", dynamic=False)
    rng = np.random.default_rng(100)
    losses = []
    for i in range(4):
        n = 5 if i < 3 else 3  # a new shape: a new capture on minigrad
        x, y = torch.tensor(rng.standard_normal((n, 6))), torch.tensor(rng.integers(0, 3, n))
        losses.append(step(x, y))
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor(rng.standard_normal((2, 6))))
    torch._dynamo.reset()
    torch._dynamo.config.suppress_errors = False
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), out=out)


def test_compiled_training_step(torch):
    theirs = compiled(eager(torch), None)
    import minigrad
    from twins import agree
    ours = compiled(minigrad, theirs["init"])
    for k in theirs:
        if k != "init":
            agree(ours[k], theirs[k], k)


# ---- 1-d Grad-CAM: activations and their gradients by hooks, kwargs rewritten by a pre-hook -------------------
def gradcam(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv1d(2, 4, 3, padding=1), nn.Conv1d(4, 5, 3, padding=1)
            self.head = nn.Linear(5, 3)

        def forward(self, x, scale=1.0):
            h = F.relu(self.conv2(F.relu(self.conv1(x * scale))))
            return self.head(h.mean(-1))

    model = Net()
    init = start(model, init)
    store, log = {}, []

    def forward_hook(module, args, output):
        store["act"] = output
        output.register_hook(lambda g: store.__setitem__("grad", g.clone()))

    def pre_hook(module, args, kwargs):
        log.append(("pre", sorted(kwargs)))
        return args, {**kwargs, "scale": kwargs.get("scale", 1.0) * 2}

    def backward_hook(module, grad_input, grad_output):
        log.append(("backward", tuple(grad_output[0].shape), grad_input[0] is None))

    handles = [model.conv2.register_forward_hook(forward_hook),
               model.register_forward_pre_hook(pre_hook, with_kwargs=True),
               model.conv1.register_full_backward_hook(backward_hook),
               model.head.register_forward_hook(lambda m, a, o: log.append("head first"), prepend=True)]
    x = torch.tensor(np.random.default_rng(101).standard_normal((2, 2, 7)), requires_grad=True)
    logits = model(x, scale=0.5)
    logits.retain_grad()
    cls = logits.argmax(-1)
    logits.gather(1, cls[:, None]).sum().backward()
    weights = store["grad"].mean(-1, keepdim=True)
    cam = F.relu((weights * store["act"]).sum(1))
    cam = cam / cam.amax(-1, keepdim=True).clamp_min(1e-12)
    out = dict(init=init, logits=logits, logits_grad=logits.grad, cls=cls, cam=cam, x_grad=x.grad.clone(),
               grads=grads(model), log=list(log), is_leaf=(logits.is_leaf, store["act"].is_leaf))
    for h in handles:
        h.remove()
    log.clear()
    store.clear()
    model.zero_grad()
    model(x).sum().backward()
    return dict(out, after=(list(log), sorted(store)), grads_after=grads(model))


def test_grad_cam_1d_hooks_with_kwargs(torch):
    both(torch, gradcam)


# ---- user parametrizations: symmetric, positive (with right_inverse), cached, removed ------------------------
def parametrizations(torch, init):
    nn, P = torch.nn, torch.nn.utils.parametrize

    class Symmetric(nn.Module):
        def forward(self, w):
            return w.triu() + w.triu(1).transpose(-1, -2)

        def right_inverse(self, w):
            return w.triu()

    class Positive(nn.Module):
        def forward(self, w):
            return w.exp()

        def right_inverse(self, w):
            return w.clamp_min(1e-3).log()

    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 3), nn.Linear(3, 3, bias=False))
    init = start(model, init)
    P.register_parametrization(model[0], "weight", Symmetric())
    P.register_parametrization(model[2], "bias", Positive())
    torch.nn.utils.parametrizations.orthogonal(model[3], orthogonal_map="cayley")
    model[0].weight = model[0].weight.detach() + 0.1  # assigned through right_inverse
    rng = np.random.default_rng(102)
    x = torch.tensor(rng.standard_normal((6, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(3):
        with P.cached():
            loss = (model(x) - 0.3).pow(2).mean() + model[0].weight.abs().sum() * 1e-3
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    w0, b2 = model[0].weight, model[2].bias
    keys = list(model.state_dict())
    flags = (P.is_parametrized(model[0]), P.is_parametrized(model[2], "weight"), P.is_parametrized(model[3]))
    P.remove_parametrizations(model[0], "weight", leave_parametrized=True)
    P.remove_parametrizations(model[2], "bias", leave_parametrized=False)
    return dict(init=init, losses=losses, grads=grads(model), w0=w0, sym=bool((w0 == w0.T).all()), b2=b2,
                keys=keys, flags=flags, after=list(model.state_dict()), gram=model[3].weight.T @ model[3].weight,
                out=model(x), plain=(type(model[0].weight).__name__, model[2].bias.shape))


def test_user_parametrizations_cached_and_removed(torch):
    both(torch, parametrizations)


# ---- activation checkpointing through dropout, checkpoint_sequential ------------------------------------------
def checkpointed(torch, init, reentrant):
    nn = torch.nn
    cp = torch.utils.checkpoint
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(6, 6), nn.Tanh(), nn.Dropout(0.3))],
                          nn.Linear(6, 2))
    init = start(model, init)
    x = torch.tensor(np.random.default_rng(103).standard_normal((5, 6)), requires_grad=True)

    def run(how, seed):
        torch.manual_seed(seed)
        model.zero_grad()
        x.grad = None
        if how == "plain":
            y = model(x)
        elif how == "checkpoint":
            h = x
            for i in range(0, 12, 3):
                h = cp.checkpoint(model[i:i + 3], h, use_reentrant=reentrant, preserve_rng_state=True)
            y = model[12](h)
        else:
            y = cp.checkpoint_sequential(model, 3, x, use_reentrant=reentrant)
        y.pow(2).sum().backward()
        return y.detach(), x.grad.clone(), grads(model)

    train = [run(how, 7) for how in ("plain", "checkpoint", "sequential")]
    same = [all(bool(torch.equal(a, b)) for a, b in zip([t[0], t[1], *t[2]], [train[0][0], train[0][1],
                                                                              *train[0][2]])) for t in train]
    model.eval()  # without dropout the two libraries agree number for number
    evals = [run(how, 0) for how in ("plain", "checkpoint", "sequential")]
    return dict(init=init, same=same, evals=evals)


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_dropout_deep_mlp(torch, reentrant):
    theirs, _ = both(torch, checkpointed, reentrant=reentrant)
    assert theirs["same"] == [True, True, True]
