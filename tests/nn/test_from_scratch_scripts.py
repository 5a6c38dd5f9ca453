"""Textbook-style scripts written from raw tensor ops, then in their concise nn form, run twice with nothing
changed but the library: on PyTorch, then on minigrad from the same initial values (PyTorch's random draws,
recorded as numpy arrays and copied over). Losses, gradients, parameters and predictions must agree."""
import math
import random

import numpy as np
import pytest

import minigrad
from twins import SCRIPT_TOL, agree, both  # noqa: F401

F32_TOL = dict(rtol=2e-5, atol=1e-6)


@pytest.fixture
def f64(torch):
    """Both libraries with float64 as the default dtype (the scripts' torch.normal/randn/zeros), reset after."""
    torch.set_default_dtype(torch.float64)
    minigrad.set_default_dtype(minigrad.float64)
    try:
        yield torch
    finally:
        torch.set_default_dtype(torch.float32)
        minigrad.set_default_dtype(minigrad.float32)


def share(torch, init, **things):
    """PyTorch's run records these tensors' (and modules') values in `init`; minigrad's overwrites its own
    random draws with them, so both start from the same numbers."""
    for key, t in things.items():
        if hasattr(t, "state_dict"):
            if key in init:
                t.load_state_dict({k: torch.tensor(v) for k, v in init[key].items()})
            else:
                init[key] = {k: v.detach().numpy().copy() for k, v in t.state_dict().items()}
        elif key in init:
            with torch.no_grad():
                t.copy_(torch.tensor(init[key]))
        else:
            init[key] = t.detach().numpy().copy()
    return init


class Draws:
    """torch.rand as recorded by PyTorch's run and replayed in minigrad's (dropout masks)."""

    def __init__(self, torch, init):
        self.torch, self.init, self.n = torch, init, 0

    def rand(self, shape):
        key, self.n = f"rand{self.n}", self.n + 1
        if key in self.init:
            return self.torch.tensor(self.init[key])
        t = self.torch.rand(shape)
        self.init[key] = t.numpy().copy()
        return t


def classes(n=48, d=16, k=5, seed=0):
    """A separable-ish synthetic classification set: images (n, 1, 4, 4) and int64 labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    centers = rng.standard_normal((k, d))
    X = centers[y] + 0.7 * rng.standard_normal((n, d))
    return X.reshape(n, 1, 4, 4), y


def batches(torch, X, y, batch_size):
    """Python's random orders them, the same on both runs (seeded by the script)."""
    indices = list(range(len(X)))
    random.shuffle(indices)
    for i in range(0, len(X), batch_size):
        batch_indices = torch.tensor(indices[i: min(i + batch_size, len(X))])
        yield X[batch_indices], y[batch_indices]


# ---- linear regression from scratch, then with nn.Linear / MSELoss / optim.SGD ------------------------------
def linear_regression(torch, init):
    init, nn = {} if init is None else init, torch.nn
    random.seed(0)

    def synthetic_data(w, b, num_examples):
        X = torch.normal(0, 1, (num_examples, len(w)))
        y = torch.matmul(X, w) + b
        y += torch.normal(0, 0.01, y.shape)
        return X, y.reshape((-1, 1))

    true_w = torch.tensor([2, -3.4])
    true_b = 4.2
    features, labels = synthetic_data(true_w, true_b, 100)
    w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    share(torch, init, features=features, labels=labels, w=w)

    def data_iter(batch_size, features, labels):
        num_examples = len(features)
        indices = list(range(num_examples))
        random.shuffle(indices)
        for i in range(0, num_examples, batch_size):
            batch_indices = torch.tensor(indices[i: min(i + batch_size, num_examples)])
            yield features[batch_indices], labels[batch_indices]

    def linreg(X, w, b):
        return torch.matmul(X, w) + b

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    lr, num_epochs, batch_size = 0.03, 3, 10
    losses, grads = [], []
    for _ in range(num_epochs):
        for X, y in data_iter(batch_size, features, labels):
            l = squared_loss(linreg(X, w, b), y)  # noqa: E741
            l.sum().backward()
            grads.append(w.grad.clone())
            sgd([w, b], lr, batch_size)
        with torch.no_grad():
            train_l = squared_loss(linreg(features, w, b), labels)
            losses.append(float(train_l.mean()))

    net = nn.Sequential(nn.Linear(2, 1))
    net[0].weight.data.normal_(0, 0.01)
    net[0].bias.data.fill_(0)
    share(torch, init, net=net)
    loss = nn.MSELoss()
    trainer = torch.optim.SGD(net.parameters(), lr=0.03)
    concise = []
    for _ in range(num_epochs):
        for X, y in data_iter(batch_size, features, labels):
            l = loss(net(X), y)  # noqa: E741
            trainer.zero_grad()
            l.backward()
            trainer.step()
        concise.append(loss(net(features), labels).item())
    return dict(init=init, losses=losses, grads=grads, w=w, b=b, concise=concise,
                w_error=true_w - net[0].weight.data.reshape(true_w.shape), b_error=true_b - net[0].bias.data)


def test_linear_regression_from_scratch_and_concise(f64):
    both(f64, linear_regression)


# ---- softmax regression from scratch, then nn.Flatten + nn.Linear + CrossEntropyLoss -----------------------
def softmax_regression(torch, init):
    init, nn = {} if init is None else init, torch.nn
    random.seed(1)
    Xs, ys = classes()
    features, labels = torch.tensor(Xs), torch.tensor(ys)
    num_inputs, num_outputs = 16, 5
    W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
    b = torch.zeros(num_outputs, requires_grad=True)
    share(torch, init, W=W)

    def softmax(X):
        X_exp = torch.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition

    def net(X):
        return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)

    def cross_entropy(y_hat, y):
        return -torch.log(y_hat[range(len(y_hat)), y])

    def accuracy(y_hat, y):
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    class Accumulator:
        def __init__(self, n):
            self.data = [0.0] * n

        def add(self, *args):
            self.data = [a + float(b) for a, b in zip(self.data, args)]

        def __getitem__(self, idx):
            return self.data[idx]

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    def train_epoch(net, loss, updater):
        if isinstance(net, torch.nn.Module):
            net.train()
        metric = Accumulator(3)
        for X, y in batches(torch, features, labels, 10):
            y_hat = net(X)
            l = loss(y_hat, y)  # noqa: E741
            if isinstance(updater, torch.optim.Optimizer):
                updater.zero_grad()
                l.mean().backward()
                updater.step()
            else:
                l.sum().backward()
                updater(X.shape[0])
            metric.add(float(l.sum()), accuracy(y_hat, y), y.numel())
        return metric[0] / metric[2], metric[1] / metric[2]

    y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    picks = [y_hat[[0, 1], torch.tensor([0, 2])], cross_entropy(y_hat, torch.tensor([0, 2])),
             accuracy(y_hat, torch.tensor([0, 2])), softmax(torch.tensor([[1.0, 2.0], [3.0, -1.0]]))]
    scratch = [train_epoch(net, cross_entropy, lambda batch_size: sgd([W, b], 0.1, batch_size)) for _ in range(3)]

    concise_net = nn.Sequential(nn.Flatten(), nn.Linear(num_inputs, num_outputs))

    def init_weights(m):
        if type(m) == nn.Linear:  # noqa: E721 (as the textbook writes it)
            nn.init.normal_(m.weight, std=0.01)

    concise_net.apply(init_weights)
    share(torch, init, net=concise_net)
    loss = nn.CrossEntropyLoss(reduction="none")
    trainer = torch.optim.SGD(concise_net.parameters(), lr=0.1)
    concise = [train_epoch(concise_net, loss, trainer) for _ in range(3)]
    return dict(init=init, picks=picks, scratch=scratch, W=W, b=b, concise=concise,
                params=list(concise_net.parameters()))


def test_softmax_regression_from_scratch_and_concise(f64):
    both(f64, softmax_regression)


# ---- MLP from scratch (a hand-written ReLU), dropout from scratch (shared masks), weight decay ------------------
def mlp(torch, init):
    init, nn = {} if init is None else init, torch.nn
    random.seed(2)
    Xs, ys = classes(seed=1)
    features, labels = torch.tensor(Xs), torch.tensor(ys)
    num_inputs, num_outputs, num_hiddens = 16, 5, 32
    W1 = nn.Parameter(torch.randn(num_inputs, num_hiddens) * 0.01)
    b1 = nn.Parameter(torch.zeros(num_hiddens, requires_grad=True))
    W2 = nn.Parameter(torch.randn(num_hiddens, num_outputs) * 0.01)
    b2 = nn.Parameter(torch.zeros(num_outputs, requires_grad=True))
    params = [W1, b1, W2, b2]
    share(torch, init, W1=W1, W2=W2)

    def relu(X):
        a = torch.zeros_like(X)
        return torch.max(X, a)

    def net(X):
        X = X.reshape((-1, num_inputs))
        H = relu(X @ W1 + b1)
        return H @ W2 + b2

    loss = nn.CrossEntropyLoss(reduction="none")
    updater = torch.optim.SGD(params, lr=0.5)
    losses = []
    for _ in range(3):
        for X, y in batches(torch, features, labels, 16):
            l = loss(net(X), y)  # noqa: E741
            updater.zero_grad()
            l.mean().backward()
            updater.step()
            losses.append(l.mean().item())
    x = torch.tensor([-1.0, 0.0, 2.0, 0.0], requires_grad=True)
    relus = relu(x)
    (relus * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()

    # dropout from scratch: masks drawn by PyTorch, replayed on minigrad
    draws = Draws(torch, init)
    dropout1, dropout2 = 0.2, 0.5

    def dropout_layer(X, dropout):
        assert 0 <= dropout <= 1
        if dropout == 1:
            return torch.zeros_like(X)
        if dropout == 0:
            return X
        mask = (draws.rand(X.shape) > dropout).float()
        return mask * X / (1.0 - dropout)

    class Net(nn.Module):
        def __init__(self, num_inputs, num_outputs, num_hiddens1, num_hiddens2, is_training=True):
            super().__init__()
            self.num_inputs = num_inputs
            self.training = is_training
            self.lin1 = nn.Linear(num_inputs, num_hiddens1)
            self.lin2 = nn.Linear(num_hiddens1, num_hiddens2)
            self.lin3 = nn.Linear(num_hiddens2, num_outputs)
            self.relu = nn.ReLU()

        def forward(self, X):
            H1 = self.relu(self.lin1(X.reshape((-1, self.num_inputs))))
            if self.training:
                H1 = dropout_layer(H1, dropout1)
            H2 = self.relu(self.lin2(H1))
            if self.training:
                H2 = dropout_layer(H2, dropout2)
            return self.lin3(H2)

    X = torch.arange(16, dtype=torch.float32).reshape((2, 8))
    dropped = [dropout_layer(X, 0.0), dropout_layer(X, 0.5), dropout_layer(X, 1.0)]
    dnet = Net(num_inputs, num_outputs, 24, 12)
    share(torch, init, dnet=dnet)
    trainer = torch.optim.SGD(dnet.parameters(), lr=0.5)
    dlosses = []
    for X, y in batches(torch, features, labels, 16):
        l = loss(dnet(X), y)  # noqa: E741
        trainer.zero_grad()
        l.mean().backward()
        trainer.step()
        dlosses.append(l.mean().item())
    dnet.eval()
    evaluated = dnet(features)

    # weight decay: an L2 penalty by hand, then weight_decay in a parameter group
    n_train, wd_inputs, batch_size = 20, 50, 5
    true_w, true_b = torch.ones((wd_inputs, 1)) * 0.01, 0.05
    train_X = torch.normal(0, 1, (n_train, wd_inputs))
    train_y = torch.matmul(train_X, true_w) + true_b + torch.normal(0, 0.01, (n_train, 1))
    w = torch.normal(0, 1, size=(wd_inputs, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    share(torch, init, train_X=train_X, train_y=train_y, w=w)

    def l2_penalty(w):
        return torch.sum(w.pow(2)) / 2

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    wd_losses, lambd = [], 3
    for _ in range(4):
        for X, y in batches(torch, train_X, train_y, batch_size):
            l = squared_loss(torch.matmul(X, w) + b, y) + lambd * l2_penalty(w)  # noqa: E741
            l.sum().backward()
            with torch.no_grad():
                for param in [w, b]:
                    param -= 0.003 * param.grad / batch_size
                    param.grad.zero_()
        wd_losses.append(float(l2_penalty(w)))
    lin = nn.Sequential(nn.Linear(wd_inputs, 1))
    for param in lin.parameters():
        param.data.normal_()
    share(torch, init, lin=lin)
    trainer = torch.optim.SGD([{"params": lin[0].weight, "weight_decay": lambd}, {"params": lin[0].bias}],
                              lr=0.003)
    for _ in range(4):
        for X, y in batches(torch, train_X, train_y, batch_size):
            trainer.zero_grad()
            l = nn.MSELoss(reduction="none")(lin(X), y)  # noqa: E741
            l.mean().backward()
            trainer.step()
        wd_losses.append(lin[0].weight.norm().item())
    return dict(init=init, losses=losses, params=params, relu=(relus, x.grad),
                dropped=dropped, dlosses=dlosses, evaluated=evaluated, dparams=list(dnet.parameters()),
                wd_losses=wd_losses, w=w, b=b, lin=list(lin.parameters()))


def test_mlp_dropout_and_weight_decay_from_scratch(f64):
    both(f64, mlp)


# ---- batch norm from scratch inside a LeNet, then a LeNet of lazy layers with xavier init and a residual block ----
def batch_norm_lenet(torch, init):
    init, nn = {} if init is None else init, torch.nn
    random.seed(3)
    rng = np.random.default_rng(3)
    features, labels = torch.tensor(rng.standard_normal((12, 1, 28, 28))), torch.tensor(rng.integers(0, 10, 12))

    def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
        if not torch.is_grad_enabled():
            X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
        else:
            assert len(X.shape) in (2, 4)
            if len(X.shape) == 2:
                mean = X.mean(dim=0)
                var = ((X - mean) ** 2).mean(dim=0)
            else:
                mean = X.mean(dim=(0, 2, 3), keepdim=True)
                var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
            X_hat = (X - mean) / torch.sqrt(var + eps)
            moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
            moving_var = (1.0 - momentum) * moving_var + momentum * var
        Y = gamma * X_hat + beta
        return Y, moving_mean.data, moving_var.data

    class BatchNorm(nn.Module):
        def __init__(self, num_features, num_dims):
            super().__init__()
            shape = (1, num_features) if num_dims == 2 else (1, num_features, 1, 1)
            self.gamma = nn.Parameter(torch.ones(shape))
            self.beta = nn.Parameter(torch.zeros(shape))
            self.moving_mean = torch.zeros(shape)
            self.moving_var = torch.ones(shape)

        def forward(self, X):
            if self.moving_mean.device != X.device:
                self.moving_mean = self.moving_mean.to(X.device)
                self.moving_var = self.moving_var.to(X.device)
            Y, self.moving_mean, self.moving_var = batch_norm(
                X, self.gamma, self.beta, self.moving_mean, self.moving_var, eps=1e-5, momentum=0.1)
            return Y

    net = nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=5), BatchNorm(6, num_dims=4), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Conv2d(6, 16, kernel_size=5), BatchNorm(16, num_dims=4), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
        nn.Linear(16 * 4 * 4, 120), BatchNorm(120, num_dims=2), nn.Sigmoid(),
        nn.Linear(120, 84), BatchNorm(84, num_dims=2), nn.Sigmoid(),
        nn.Linear(84, 10))
    share(torch, init, bn_net=net)
    loss = nn.CrossEntropyLoss()
    trainer = torch.optim.SGD(net.parameters(), lr=0.9)
    losses = []
    for _ in range(2):
        for X, y in batches(torch, features, labels, 6):
            l = loss(net(X), y)  # noqa: E741
            trainer.zero_grad()
            l.backward()
            trainer.step()
            losses.append(l.item())
    with torch.no_grad():
        evaluated = net(features)
    moving = [net[1].moving_mean, net[1].moving_var, net[10].moving_mean, net[13].moving_var]

    lenet = nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.LazyLinear(120), nn.Sigmoid(),
        nn.LazyLinear(84), nn.Sigmoid(),
        nn.LazyLinear(10))
    X = torch.rand(size=(1, 1, 28, 28), dtype=torch.float64)
    shapes = []
    for layer in lenet:
        X = layer(X)
        shapes.append((layer.__class__.__name__, tuple(X.shape)))

    def init_cnn(module):
        if type(module) == nn.Linear or type(module) == nn.Conv2d:  # noqa: E721
            nn.init.xavier_uniform_(module.weight)

    kinds = [type(m) == nn.Linear for m in lenet]  # noqa: E721 (lazy layers become nn.Linear)
    lenet.apply(init_cnn)
    share(torch, init, lenet=lenet)
    trainer = torch.optim.SGD(lenet.parameters(), lr=0.9)
    for X, y in batches(torch, features, labels, 6):
        l = loss(lenet(X), y)  # noqa: E741
        trainer.zero_grad()
        l.backward()
        trainer.step()
        losses.append(l.item())

    F = nn.functional

    class Residual(nn.Module):
        def __init__(self, num_channels, use_1x1conv=False, strides=1):
            super().__init__()
            self.conv1 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1, stride=strides)
            self.conv2 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1)
            if use_1x1conv:
                self.conv3 = nn.LazyConv2d(num_channels, kernel_size=1, stride=strides)
            else:
                self.conv3 = None
            self.bn1 = nn.LazyBatchNorm2d()
            self.bn2 = nn.LazyBatchNorm2d()

        def forward(self, X):
            Y = F.relu(self.bn1(self.conv1(X)))
            Y = self.bn2(self.conv2(Y))
            if self.conv3:
                X = self.conv3(X)
            Y += X
            return F.relu(Y)

    X = features[:4, :, :8, :8].repeat(1, 3, 1, 1)
    blk = Residual(3)
    blk2 = Residual(6, use_1x1conv=True, strides=2)
    res_shapes = [tuple(blk(X).shape), tuple(blk2(X).shape)]
    share(torch, init, blk=blk, blk2=blk2)
    res_net = nn.Sequential(blk, blk2, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.LazyLinear(10))
    res_net(X)
    share(torch, init, head=res_net[4])
    trainer = torch.optim.SGD(res_net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        l = loss(res_net(X), labels[:4])  # noqa: E741
        trainer.zero_grad()
        l.backward()
        trainer.step()
        losses.append(l.item())
    res_net.eval()
    return dict(init=init, losses=losses, evaluated=evaluated, moving=moving, shapes=shapes, kinds=kinds,
                params=list(net.parameters()), lenet=list(lenet.parameters()), res_shapes=res_shapes,
                res=list(res_net.parameters()), buffers=list(res_net.buffers()), res_eval=res_net(X))


def test_batch_norm_from_scratch_lenet_and_residual(f64):
    both(f64, batch_norm_lenet)


# ---- RNN, GRU and LSTM from scratch on one-hot inputs, with hand-written gradient clipping (float32) ---------
def recurrent(torch, init, cell):
    init, nn = {} if init is None else init, torch.nn
    F = nn.functional
    vocab_size, num_hiddens, num_steps, batch_size = 7, 12, 5, 3
    corpus = torch.tensor(np.random.default_rng(4).integers(0, vocab_size, 200))

    def normal(shape):
        return torch.randn(size=shape) * 0.01

    def three():
        return (normal((vocab_size, num_hiddens)), normal((num_hiddens, num_hiddens)), torch.zeros(num_hiddens))

    def get_params():
        if cell == "rnn":
            params = list(three())
        elif cell == "gru":
            params = [*three(), *three(), *three()]
        else:
            params = [*three(), *three(), *three(), *three()]
        params += [normal((num_hiddens, vocab_size)), torch.zeros(vocab_size)]
        for param in params:
            param.requires_grad_(True)
        return params

    def init_state(batch_size, num_hiddens):
        if cell == "lstm":
            return (torch.zeros((batch_size, num_hiddens)), torch.zeros((batch_size, num_hiddens)))
        return (torch.zeros((batch_size, num_hiddens)), )

    def rnn(inputs, state, params):
        W_xh, W_hh, b_h, W_hq, b_q = params
        H, = state
        outputs = []
        for X in inputs:
            H = torch.tanh(torch.mm(X, W_xh) + torch.mm(H, W_hh) + b_h)
            Y = torch.mm(H, W_hq) + b_q
            outputs.append(Y)
        return torch.cat(outputs, dim=0), (H,)

    def gru(inputs, state, params):
        W_xz, W_hz, b_z, W_xr, W_hr, b_r, W_xh, W_hh, b_h, W_hq, b_q = params
        H, = state
        outputs = []
        for X in inputs:
            Z = torch.sigmoid((X @ W_xz) + (H @ W_hz) + b_z)
            R = torch.sigmoid((X @ W_xr) + (H @ W_hr) + b_r)
            H_tilda = torch.tanh((X @ W_xh) + ((R * H) @ W_hh) + b_h)
            H = Z * H + (1 - Z) * H_tilda
            outputs.append(H @ W_hq + b_q)
        return torch.cat(outputs, dim=0), (H,)

    def lstm(inputs, state, params):
        [W_xi, W_hi, b_i, W_xf, W_hf, b_f, W_xo, W_ho, b_o, W_xc, W_hc, b_c, W_hq, b_q] = params
        (H, C) = state
        outputs = []
        for X in inputs:
            I = torch.sigmoid((X @ W_xi) + (H @ W_hi) + b_i)  # noqa: E741
            F_ = torch.sigmoid((X @ W_xf) + (H @ W_hf) + b_f)
            O = torch.sigmoid((X @ W_xo) + (H @ W_ho) + b_o)  # noqa: E741
            C_tilda = torch.tanh((X @ W_xc) + (H @ W_hc) + b_c)
            C = F_ * C + I * C_tilda
            H = O * torch.tanh(C)
            outputs.append((H @ W_hq) + b_q)
        return torch.cat(outputs, dim=0), (H, C)

    class RNNModelScratch:
        def __init__(self, forward_fn):
            self.vocab_size, self.num_hiddens = vocab_size, num_hiddens
            self.params = get_params()
            self.forward_fn = forward_fn

        def __call__(self, X, state):
            X = F.one_hot(X.T, self.vocab_size).type(torch.float32)
            return self.forward_fn(X, state, self.params)

        def begin_state(self, batch_size):
            return init_state(batch_size, self.num_hiddens)

    def grad_clipping(net, theta):
        params = [p for p in net.params if p.requires_grad]
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > theta:
            for p in params:
                p.grad[:] *= theta / norm
        return norm

    net = RNNModelScratch(dict(rnn=rnn, gru=gru, lstm=lstm)[cell])
    share(torch, init, **{f"p{i}": p for i, p in enumerate(net.params)})
    loss = nn.CrossEntropyLoss()
    updater = torch.optim.SGD(net.params, lr=1.0)
    state, losses, norms = None, [], []
    for start in range(0, 150, num_steps * batch_size):
        X = corpus[start: start + num_steps * batch_size].reshape(batch_size, num_steps)
        Y = corpus[start + 1: start + 1 + num_steps * batch_size].reshape(batch_size, num_steps)
        if state is None:
            state = net.begin_state(batch_size=X.shape[0])
        else:
            for s in state:
                s.detach_()
        y = Y.T.reshape(-1)
        y_hat, state = net(X, state)
        l = loss(y_hat, y.long()).mean()  # noqa: E741
        updater.zero_grad()
        l.backward()
        norms.append(grad_clipping(net, 0.05))
        updater.step()
        losses.append(l.item())

    def predict(prefix, num_preds):
        state = net.begin_state(batch_size=1)
        outputs = [prefix[0]]
        get_input = lambda: torch.tensor([outputs[-1]]).reshape((1, 1))  # noqa: E731
        for y in prefix[1:]:
            _, state = net(get_input(), state)
            outputs.append(y)
        for _ in range(num_preds):
            y, state = net(get_input(), state)
            outputs.append(int(y.argmax(dim=1).reshape(1)))
        return outputs

    return dict(init=init, losses=losses, norms=norms, params=net.params, state=state,
                predicted=predict([1, 2, 3], 6))


@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm"])
def test_recurrent_nets_from_scratch(torch, cell):
    both(torch, recurrent, tol=F32_TOL, cell=cell)


# ---- masked softmax, additive and multi-head attention, positional encoding -------------------------------
def attention(torch, init):
    init, nn = {} if init is None else init, torch.nn

    def sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    def masked_softmax(X, valid_lens):
        if valid_lens is None:
            return nn.functional.softmax(X, dim=-1)
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)

    class AdditiveAttention(nn.Module):
        def __init__(self, num_hiddens, dropout):
            super().__init__()
            self.W_k = nn.LazyLinear(num_hiddens, bias=False)
            self.W_q = nn.LazyLinear(num_hiddens, bias=False)
            self.w_v = nn.LazyLinear(1, bias=False)
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens):
            queries, keys = self.W_q(queries), self.W_k(keys)
            features = queries.unsqueeze(2) + keys.unsqueeze(1)
            features = torch.tanh(features)
            scores = self.w_v(features).squeeze(-1)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class DotProductAttention(nn.Module):
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_hiddens, num_heads, dropout, bias=False):
            super().__init__()
            self.num_heads = num_heads
            self.attention = DotProductAttention(dropout)
            self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

        def transpose_qkv(self, X):
            X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
            X = X.permute(0, 2, 1, 3)
            return X.reshape(-1, X.shape[2], X.shape[3])

        def transpose_output(self, X):
            X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
            X = X.permute(0, 2, 1, 3)
            return X.reshape(X.shape[0], X.shape[1], -1)

        def forward(self, queries, keys, values, valid_lens):
            queries = self.transpose_qkv(self.W_q(queries))
            keys = self.transpose_qkv(self.W_k(keys))
            values = self.transpose_qkv(self.W_v(values))
            if valid_lens is not None:
                valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
            output = self.attention(queries, keys, values, valid_lens)
            return self.W_o(self.transpose_output(output))

    class PositionalEncoding(nn.Module):
        def __init__(self, num_hiddens, dropout, max_len=1000):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.P = torch.zeros((1, max_len, num_hiddens))
            X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
                10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
            self.P[:, :, 0::2] = torch.sin(X)
            self.P[:, :, 1::2] = torch.cos(X)

        def forward(self, X):
            X = X + self.P[:, :X.shape[1], :].to(X.device)
            return self.dropout(X)

    rng = np.random.default_rng(5)
    probe = torch.tensor(rng.random((2, 2, 4)))
    masked = [masked_softmax(probe, torch.tensor([2, 3])), masked_softmax(probe, torch.tensor([[1, 3], [2, 4]])),
              masked_softmax(probe, None)]

    queries = torch.tensor(rng.standard_normal((2, 1, 20)), requires_grad=True)
    keys = torch.tensor(rng.standard_normal((2, 10, 2)), requires_grad=True)
    values = torch.arange(40, dtype=torch.float64).reshape(1, 10, 4).repeat(2, 1, 1).requires_grad_(True)
    valid_lens = torch.tensor([2, 6])
    add = AdditiveAttention(num_hiddens=8, dropout=0.1)
    add.eval()
    add(queries, keys, values, valid_lens)
    share(torch, init, add=add)
    out = add(queries, keys, values, valid_lens)
    (out * torch.tensor(rng.standard_normal(tuple(out.shape)))).sum().backward()
    additive = [out, add.attention_weights, queries.grad, keys.grad, values.grad, add.W_q.weight.grad]

    num_hiddens, num_heads = 12, 3
    mha = MultiHeadAttention(num_hiddens, num_heads, 0.0)
    X = torch.tensor(rng.standard_normal((2, 4, num_hiddens)))
    Y = torch.tensor(rng.standard_normal((2, 6, num_hiddens)))
    mha(X, Y, Y, torch.tensor([3, 2]))
    share(torch, init, mha=mha)
    pos = PositionalEncoding(num_hiddens, 0)
    opt = torch.optim.SGD(mha.parameters(), lr=0.5, momentum=0.9)
    losses = []
    for valid in (torch.tensor([3, 2]), torch.tensor([[1, 2, 3, 4], [6, 5, 4, 3]]), None):
        out = mha(pos(X), Y, Y, valid)
        l = (out ** 2).mean()  # noqa: E741
        opt.zero_grad()
        l.backward()
        opt.step()
        losses.append(l.item())
    return dict(init=init, masked=masked, additive=additive, losses=losses, mha=list(mha.parameters()),
                weights=mha.attention.attention_weights, P=pos.P[:, :8])


def test_masked_softmax_attention_and_positional_encoding(f64):
    # the encoding table is computed in float32 as written (pow, sin, cos): libm implementations round
    # those a last bit apart, so everything downstream agrees to float32's precision, not float64's
    both(f64, attention, tol=dict(rtol=1e-6, atol=2.5e-7))
