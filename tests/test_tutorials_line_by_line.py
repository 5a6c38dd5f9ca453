"""PyTorch's first tutorials, followed step by step on minigrad and on PyTorch from the same numbers.

Each tutorial below is our own script in the order and style of one of PyTorch's (the polynomial
fits of "Learning PyTorch with Examples", "What is torch.nn really?", the Bi-LSTM CRF, the N-gram
and CBOW word models, the LeNet of "Neural Networks", "Saving and Loading Models", "A Gentle
Introduction to torch.autograd", the autograd-mechanics notes and the "Introduction to PyTorch"
series). It takes the framework as an argument and writes down everything the tutorial prints; the
two logs must agree entry by entry: values (float32 to rounding), dtypes, shapes, grad_fn names and
texts (with the framework's name taken out). Data are drawn with numpy in place of downloads, and
weights are set from numpy after each model is built, so both frameworks start from the same state.
"""
import math
import types

import numpy as np
import pytest

import minigrad
import minigrad.nn
import minigrad.nn.functional
import minigrad.optim
import minigrad.utils.data

torch = pytest.importorskip("torch")


def framework(lib):
    return types.SimpleNamespace(torch=lib, nn=lib.nn, F=lib.nn.functional, optim=lib.optim, data=lib.utils.data)


FRAMEWORKS = {"torch": framework(torch), "minigrad": framework(minigrad)}


def is_tensor(v):
    return isinstance(v, (torch.Tensor, minigrad.Tensor))


class Log:
    """What a tutorial prints, normalized so the two frameworks' logs compare entry by entry."""

    def __init__(self):
        self.entries = []

    def __call__(self, label, value):
        self.entries.append((label, self.norm(value)))

    def norm(self, v):
        if is_tensor(v):
            v = v.detach()
            return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), v.numpy().copy())
        if type(v).__name__ == "Size":
            return ("Size", tuple(v))
        if isinstance(v, (list, tuple)):
            return (type(v).__name__, [self.norm(x) for x in v])
        if isinstance(v, dict):
            return ("dict", [(k, self.norm(x)) for k, x in v.items()])
        if isinstance(v, str):
            return ("str", v.replace("minigrad", "torch"))
        if isinstance(v, (bool, int, float, type(None))):
            return (type(v).__name__, v)
        if isinstance(v, np.ndarray):
            return ("ndarray", str(v.dtype), v.shape, v.copy())
        return ("other", type(v).__name__)


def same(a, b, where, rtol, atol):
    assert a[0] == b[0], f"{where}: {a} != {b}"
    if a[0] == "tensor":
        assert a[1:3] == b[1:3], f"{where}: dtype/shape {a[1:3]} != {b[1:3]}"
        np.testing.assert_allclose(b[3], a[3], rtol=rtol, atol=atol, err_msg=where)
    elif a[0] == "ndarray":
        assert a[1:3] == b[1:3], f"{where}: {a[1:3]} != {b[1:3]}"
        np.testing.assert_allclose(b[3], a[3], rtol=rtol, atol=atol, err_msg=where)
    elif a[0] in ("list", "tuple", "dict"):
        assert len(a[1]) == len(b[1]), f"{where}: {a} != {b}"
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            if a[0] == "dict":
                assert x[0] == y[0], f"{where}: keys {x[0]} != {y[0]}"
                x, y = x[1], y[1]
            same(x, y, f"{where}[{i}]", rtol, atol)
    elif a[0] == "float":
        assert math.isclose(a[1], b[1], rel_tol=rtol, abs_tol=atol), f"{where}: {a[1]} != {b[1]}"
    else:
        assert a == b, f"{where}: {a} != {b}"


def run_both(tutorial, rtol=1e-5, atol=1e-6, **kw):
    logs = {}
    for name, fw in FRAMEWORKS.items():
        log = Log()
        tutorial(fw, log, **kw)
        logs[name] = log.entries
    ref, got = logs["torch"], logs["minigrad"]
    assert [label for label, _ in got] == [label for label, _ in ref]
    for (label, a), (_, b) in zip(ref, got):
        same(a, b, label, rtol, atol)
    return ref


def set_weights(fw, model, seed=0, scale=0.3):
    """Every state_dict entry drawn from numpy, so both frameworks' copies start equal."""
    rng = np.random.default_rng(seed)
    state = {}
    for k, v in model.state_dict().items():
        if "float" in str(v.dtype):
            state[k] = fw.torch.tensor((rng.standard_normal(tuple(v.shape)) * scale).astype(np.float32))
        else:
            state[k] = v
    model.load_state_dict(state)


def float32(fw, array):
    return fw.torch.tensor(np.asarray(array, dtype=np.float32))


# ---- Learning PyTorch with Examples: y = sin(x) by a third-order polynomial ----------------------------
def poly_inputs(fw):
    x = fw.torch.linspace(-math.pi, math.pi, 200, dtype=fw.torch.float)
    return x, fw.torch.sin(x)


def poly_tensors(fw, log):
    T = fw.torch
    x, y = poly_inputs(fw)
    rng = np.random.default_rng(1)
    a, b, c, d = (T.tensor(float(v), dtype=T.float) for v in rng.standard_normal(4))
    learning_rate = 1e-5
    for t in range(300):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        if t % 100 == 99:
            log(f"loss {t}", loss)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    log("result", f"Result: y = {a.item():.4f} + {b.item():.4f} x + {c.item():.4f} x^2 + {d.item():.4f} x^3")
    log("a", a)


def poly_autograd(fw, log):
    T = fw.torch
    x, y = poly_inputs(fw)
    rng = np.random.default_rng(1)
    a, b, c, d = (T.tensor(float(v), dtype=T.float, requires_grad=True) for v in rng.standard_normal(4))
    learning_rate = 1e-5
    for t in range(300):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            log(f"loss {t}", loss.item())
        loss.backward()
        with T.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    log("params", [a, b, c, d])
    log("grad after reset", a.grad)


def poly_function(fw, log):
    T = fw.torch

    class LegendrePolynomial3(T.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    x, y = poly_inputs(fw)
    a = T.full((), 0.0, dtype=T.float, requires_grad=True)
    b = T.full((), -1.0, dtype=T.float, requires_grad=True)
    c = T.full((), 0.0, dtype=T.float, requires_grad=True)
    d = T.full((), 0.3, dtype=T.float, requires_grad=True)
    learning_rate = 5e-6
    for t in range(300):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            log(f"loss {t}", loss.item())
        loss.backward()
        with T.no_grad():
            for p in (a, b, c, d):
                p -= learning_rate * p.grad
                p.grad = None
    log("grad_fn", type(y_pred.grad_fn).__name__)
    log("params", [a, b, c, d])


def poly_nn(fw, log, optimizer_name=None):
    T, nn = fw.torch, fw.nn
    x, y = poly_inputs(fw)
    p = T.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    log("xx", xx)
    model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))
    set_weights(fw, model, seed=2)
    loss_fn = nn.MSELoss(reduction="sum")
    optimizer = None
    if optimizer_name == "RMSprop":
        learning_rate = 1e-3
        optimizer = T.optim.RMSprop(model.parameters(), lr=learning_rate)
    else:
        learning_rate = 1e-6
    for t in range(200):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 50 == 49:
            log(f"loss {t}", loss.item())
        if optimizer is None:
            model.zero_grad()
            loss.backward()
            with T.no_grad():
                for param in model.parameters():
                    param -= learning_rate * param.grad
        else:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    linear_layer = model[0]
    log("result", f"Result: y = {linear_layer.bias.item():.5f} + {linear_layer.weight[:, 0].item():.5f} x + "
                  f"{linear_layer.weight[:, 1].item():.5f} x^2 + {linear_layer.weight[:, 2].item():.5f} x^3")
    log("weight", linear_layer.weight)
    log("y_pred grad_fn", type(y_pred.grad_fn).__name__)


def poly_module(fw, log):
    T, nn = fw.torch, fw.nn

    class Polynomial3(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(T.randn(()))
            self.b = nn.Parameter(T.randn(()))
            self.c = nn.Parameter(T.randn(()))
            self.d = nn.Parameter(T.randn(()))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return f"y = {self.a.item():.4f} + {self.b.item():.4f} x + {self.c.item():.4f} x^2 + {self.d.item():.4f} x^3"

    x, y = poly_inputs(fw)
    model = Polynomial3()
    set_weights(fw, model, seed=3)
    log("names", [n for n, _ in model.named_parameters()])
    criterion = nn.MSELoss(reduction="sum")
    optimizer = T.optim.SGD(model.parameters(), lr=1e-5)
    for t in range(300):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            log(f"loss {t}", loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    log("result", f"Result: {model.string()}")


def poly_dynamic(fw, log):
    T, nn = fw.torch, fw.nn
    choices = np.random.default_rng(4)

    class DynamicNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(T.randn(()))
            self.b = nn.Parameter(T.randn(()))
            self.c = nn.Parameter(T.randn(()))
            self.d = nn.Parameter(T.randn(()))
            self.e = nn.Parameter(T.randn(()))

        def forward(self, x):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, int(choices.integers(4, 6)) + 1):  # the fourth and fifth terms share `e`
                y = y + self.e * x ** exp
            return y

    x, y = poly_inputs(fw)
    model = DynamicNet()
    set_weights(fw, model, seed=5, scale=0.01)
    criterion = nn.MSELoss(reduction="sum")
    optimizer = T.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for t in range(300):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            log(f"loss {t}", loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    log("params", list(model.parameters()))


@pytest.mark.parametrize("tutorial", [poly_tensors, poly_autograd, poly_function, poly_module, poly_dynamic])
def test_polynomial_fits(tutorial):
    run_both(tutorial, rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("optimizer_name", [None, "RMSprop"])
def test_polynomial_fit_nn(optimizer_name):
    run_both(poly_nn, rtol=2e-4, atol=1e-5, optimizer_name=optimizer_name)


# ---- What is torch.nn really? ----------------------------------------------------------------------
def digits(n_train=96, n_valid=64, seed=6):
    """28x28 'digits' whose class a fixed random teacher decides, standing in for MNIST."""
    rng = np.random.default_rng(seed)
    x = rng.random((n_train + n_valid, 784)).astype(np.float32)
    teacher = rng.standard_normal((784, 10))
    y = (x @ teacher).argmax(1).astype(np.int64)
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


def nn_really_from_scratch(fw, log):
    T = fw.torch
    x_train, y_train, x_valid, y_valid = map(T.tensor, digits())
    n, c = x_train.shape
    log("shapes", [x_train.shape, y_train.min(), y_train.max(), n, c])
    rng = np.random.default_rng(7)
    weights = float32(fw, rng.standard_normal((784, 10))) / math.sqrt(784)
    weights.requires_grad_()
    bias = T.zeros(10, requires_grad=True)
    log("weights", [weights.requires_grad, weights.is_leaf, bias.dtype == T.float32])

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    bs = 32
    xb = x_train[0:bs]
    preds = model(xb)
    log("preds[0], preds.shape", [preds[0], preds.shape])

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll
    yb = y_train[0:bs]
    log("loss", loss_func(preds, yb))

    def accuracy(out, yb):
        preds = T.argmax(out, dim=1)
        return (preds == yb).float().mean()

    log("accuracy", accuracy(preds, yb))
    lr, epochs = 0.5, 2
    for _epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with T.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    log("after", [loss_func(model(xb), yb), accuracy(model(xb), yb)])
    log("grad_fn", type(loss.grad_fn).__name__)

    # F.cross_entropy in place of log_softmax + nll
    F = fw.F

    def model2(xb):
        return xb @ weights + bias

    log("cross_entropy", [F.cross_entropy(model2(xb), yb), accuracy(model2(xb), yb)])


def nn_really_refactored(fw, log, stage):
    T, nn, F, optim, data = fw.torch, fw.nn, fw.F, fw.optim, fw.data
    x_train, y_train, x_valid, y_valid = map(T.tensor, digits())
    n = x_train.shape[0]
    bs, lr, epochs = 32, 0.1, 2
    loss_func = F.cross_entropy

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(T.randn(784, 10) / math.sqrt(784))
            self.bias = nn.Parameter(T.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    class Mnist_LinearLogistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)

    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(4, 4, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(4, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x, y):
        return x.view(-1, 1, 28, 28), y

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl = dl
            self.func = func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            for b in self.dl:
                yield self.func(*b)

    def get_model():
        if stage == "module":
            model = Mnist_Logistic()
        elif stage == "cnn":
            model = Mnist_CNN()
        elif stage == "sequential":
            model = nn.Sequential(
                nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1), nn.ReLU(),
                nn.Conv2d(4, 4, kernel_size=3, stride=2, padding=1), nn.ReLU(),
                nn.Conv2d(4, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
                nn.AdaptiveAvgPool2d(1),
                Lambda(lambda x: x.view(x.size(0), -1)))
        else:
            model = Mnist_LinearLogistic()
        set_weights(fw, model, seed=8, scale=0.05)
        momentum = 0.9 if stage in ("cnn", "sequential") else 0
        return model, optim.SGD(model.parameters(), lr=lr, momentum=momentum)

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with T.no_grad():
                losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            log(f"epoch {epoch}", [type(val_loss).__name__, float(val_loss), nums])

    def get_data(train_ds, valid_ds, bs):
        # the tutorial shuffles the training set; the two frameworks' shuffles draw differently
        return (data.DataLoader(train_ds, batch_size=bs, shuffle=False),
                data.DataLoader(valid_ds, batch_size=bs * 2))

    model, opt = get_model()
    xb, yb = x_train[:bs], y_train[:bs]
    if stage == "sequential":
        xb, yb = preprocess(xb, yb)
    log("before", loss_func(model(xb), yb))
    if stage in ("module", "linear"):  # the manual loop over slices, then the Dataset form of it
        for _epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                xb, yb = x_train[i * bs:i * bs + bs], y_train[i * bs:i * bs + bs]
                loss = loss_func(model(xb), yb)
                loss.backward()
                opt.step()
                opt.zero_grad()
        log("after", loss_func(model(xb), yb))
        train_ds = data.TensorDataset(x_train, y_train)
        xb, yb = train_ds[0:bs]
        log("dataset slice", [len(train_ds), xb, yb])
    train_ds = data.TensorDataset(x_train, y_train)
    valid_ds = data.TensorDataset(x_valid, y_valid)
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    log("lens", [len(train_dl), len(valid_dl)])
    if stage == "sequential":
        train_dl = WrappedDataLoader(train_dl, preprocess)
        valid_dl = WrappedDataLoader(valid_dl, preprocess)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    log("state", model.state_dict())
    shuffled = data.DataLoader(train_ds, batch_size=bs, shuffle=True)
    seen = T.cat([yb for _, yb in shuffled])
    log("one epoch sees every sample once", sorted(seen.tolist()) == sorted(y_train.tolist()))


def test_nn_really_from_scratch():
    run_both(nn_really_from_scratch, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("stage", ["module", "linear", "cnn", "sequential"])
def test_nn_really_refactored(stage):
    run_both(nn_really_refactored, rtol=1e-4, atol=1e-5, stage=stage)


# ---- Advanced: Making Dynamic Decisions and the Bi-LSTM CRF ------------------------------------------
def bilstm_crf(fw, log):
    T, nn, optim = fw.torch, fw.nn, fw.optim
    noise = np.random.default_rng(9)

    def argmax(vec):
        _, idx = T.max(vec, 1)
        return idx.item()

    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return T.tensor(idxs, dtype=T.long)

    def log_sum_exp(vec):
        max_score = vec[0, argmax(vec)]
        max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
        return max_score + T.log(T.sum(T.exp(vec - max_score_broadcast)))

    START_TAG, STOP_TAG = "<START>", "<STOP>"

    class BiLSTM_CRF(nn.Module):
        def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim):
            super().__init__()
            self.embedding_dim = embedding_dim
            self.hidden_dim = hidden_dim
            self.vocab_size = vocab_size
            self.tag_to_ix = tag_to_ix
            self.tagset_size = len(tag_to_ix)
            self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
            self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)
            self.transitions = nn.Parameter(T.randn(self.tagset_size, self.tagset_size))
            self.transitions.data[tag_to_ix[START_TAG], :] = -10000
            self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000
            self.hidden = self.init_hidden()

        def init_hidden(self):
            shape = (2, 1, self.hidden_dim // 2)
            return (float32(fw, noise.standard_normal(shape)), float32(fw, noise.standard_normal(shape)))

        def _forward_alg(self, feats):
            init_alphas = T.full((1, self.tagset_size), -10000.)
            init_alphas[0][self.tag_to_ix[START_TAG]] = 0.
            forward_var = init_alphas
            for feat in feats:
                alphas_t = []
                for next_tag in range(self.tagset_size):
                    emit_score = feat[next_tag].view(1, -1).expand(1, self.tagset_size)
                    trans_score = self.transitions[next_tag].view(1, -1)
                    next_tag_var = forward_var + trans_score + emit_score
                    alphas_t.append(log_sum_exp(next_tag_var).view(1))
                forward_var = T.cat(alphas_t).view(1, -1)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            return log_sum_exp(terminal_var)

        def _get_lstm_features(self, sentence):
            self.hidden = self.init_hidden()
            embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
            lstm_out, self.hidden = self.lstm(embeds, self.hidden)
            lstm_out = lstm_out.view(len(sentence), self.hidden_dim)
            return self.hidden2tag(lstm_out)

        def _score_sentence(self, feats, tags):
            score = T.zeros(1)
            tags = T.cat([T.tensor([self.tag_to_ix[START_TAG]], dtype=T.long), tags])
            for i, feat in enumerate(feats):
                score = score + self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
            return score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]

        def _viterbi_decode(self, feats):
            backpointers = []
            init_vvars = T.full((1, self.tagset_size), -10000.)
            init_vvars[0][self.tag_to_ix[START_TAG]] = 0
            forward_var = init_vvars
            for feat in feats:
                bptrs_t = []
                viterbivars_t = []
                for next_tag in range(self.tagset_size):
                    next_tag_var = forward_var + self.transitions[next_tag]
                    best_tag_id = argmax(next_tag_var)
                    bptrs_t.append(best_tag_id)
                    viterbivars_t.append(next_tag_var[0][best_tag_id].view(1))
                forward_var = (T.cat(viterbivars_t) + feat).view(1, -1)
                backpointers.append(bptrs_t)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            best_tag_id = argmax(terminal_var)
            path_score = terminal_var[0][best_tag_id]
            best_path = [best_tag_id]
            for bptrs_t in reversed(backpointers):
                best_tag_id = bptrs_t[best_tag_id]
                best_path.append(best_tag_id)
            start = best_path.pop()
            assert start == self.tag_to_ix[START_TAG]
            best_path.reverse()
            return path_score, best_path

        def neg_log_likelihood(self, sentence, tags):
            feats = self._get_lstm_features(sentence)
            forward_score = self._forward_alg(feats)
            gold_score = self._score_sentence(feats, tags)
            return forward_score - gold_score

        def forward(self, sentence):
            lstm_feats = self._get_lstm_features(sentence)
            score, tag_seq = self._viterbi_decode(lstm_feats)
            return score, tag_seq

    training_data = [("the wall street journal reported today that apple corporation made money".split(),
                      "B I I I O O O B I O O".split()),
                     ("georgia tech is a university in georgia".split(), "B I O O O O B".split())]
    word_to_ix = {}
    for sentence, _tags in training_data:
        for word in sentence:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}
    model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, 5, 4)
    set_weights(fw, model, seed=10)
    with T.no_grad():
        model.transitions.data[tag_to_ix[START_TAG], :] = -10000
        model.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000
    optimizer = optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
    with T.no_grad():
        precheck_sent = prepare_sequence(training_data[0][0], word_to_ix)
        precheck_tags = T.tensor([tag_to_ix[t] for t in training_data[0][1]], dtype=T.long)
        log("precheck tags", precheck_tags)
        log("before", model(precheck_sent))
    for epoch in range(3):
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = T.tensor([tag_to_ix[t] for t in tags], dtype=T.long)
            loss = model.neg_log_likelihood(sentence_in, targets)
            log(f"loss {epoch}", loss)
            loss.backward()
            optimizer.step()
    log("loss grad_fn", type(loss.grad_fn).__name__)
    with T.no_grad():
        log("after", model(precheck_sent))
    log("transitions", model.transitions)


def test_bilstm_crf():
    run_both(bilstm_crf, rtol=1e-4, atol=1e-4)


# ---- Word Embeddings: Encoding Lexical Semantics (N-gram language model, CBOW) ----------------------
SONNET = """When forty winters shall besiege thy brow, And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now, Will be a totter'd weed of small worth held:""".split()


def ngram(fw, log):
    T, nn, F, optim = fw.torch, fw.nn, fw.F, fw.optim
    word_to_ix = {"hello": 0, "world": 1}
    embeds = nn.Embedding(2, 5)
    set_weights(fw, embeds, seed=11)
    lookup_tensor = T.tensor([word_to_ix["hello"]], dtype=T.long)
    hello_embed = embeds(lookup_tensor)
    log("hello_embed", hello_embed)
    log("hello grad_fn", type(hello_embed.grad_fn).__name__)

    CONTEXT_SIZE, EMBEDDING_DIM = 2, 10
    ngrams = [([SONNET[i - j - 1] for j in range(CONTEXT_SIZE)], SONNET[i]) for i in range(CONTEXT_SIZE, len(SONNET))]
    log("first ngrams", ngrams[:3])
    vocab = sorted(set(SONNET))  # the tutorial's set() order differs from run to run
    word_to_ix = {word: i for i, word in enumerate(vocab)}

    class NGramLanguageModeler(nn.Module):
        def __init__(self, vocab_size, embedding_dim, context_size):
            super().__init__()
            self.embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.linear1 = nn.Linear(context_size * embedding_dim, 16)
            self.linear2 = nn.Linear(16, vocab_size)

        def forward(self, inputs):
            embeds = self.embeddings(inputs).view((1, -1))
            out = F.relu(self.linear1(embeds))
            out = self.linear2(out)
            return F.log_softmax(out, dim=1)

    losses = []
    loss_function = nn.NLLLoss()
    model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
    set_weights(fw, model, seed=12)
    optimizer = optim.SGD(model.parameters(), lr=0.001)
    for _epoch in range(3):
        total_loss = 0
        for context, target in ngrams:
            context_idxs = T.tensor([word_to_ix[w] for w in context], dtype=T.long)
            model.zero_grad()
            log_probs = model(context_idxs)
            loss = loss_function(log_probs, T.tensor([word_to_ix[target]], dtype=T.long))
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        losses.append(total_loss)
    log("losses", losses)
    log("beauty", model.embeddings.weight[word_to_ix["beauty's"]])
    log("loss grad_fn", type(loss.grad_fn).__name__)


def cbow(fw, log):
    T, nn, F, optim = fw.torch, fw.nn, fw.F, fw.optim
    CONTEXT_SIZE = 2
    raw_text = """We are about to study the idea of a computational process. Computational processes are abstract
beings that inhabit computers.""".split()
    vocab = sorted(set(raw_text))
    word_to_ix = {word: i for i, word in enumerate(vocab)}
    data = []
    for i in range(CONTEXT_SIZE, len(raw_text) - CONTEXT_SIZE):
        context = ([raw_text[i - j - 1] for j in range(CONTEXT_SIZE)] + [raw_text[i + j + 1] for j in range(CONTEXT_SIZE)])
        data.append((context, raw_text[i]))

    class CBOW(nn.Module):
        def __init__(self, vocab_size, embedding_dim):
            super().__init__()
            self.embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.linear = nn.Linear(embedding_dim, vocab_size)

        def forward(self, inputs):
            embeds = self.embeddings(inputs).sum(dim=0).view(1, -1)
            return F.log_softmax(self.linear(embeds), dim=-1)

    def make_context_vector(context, word_to_ix):
        return T.tensor([word_to_ix[w] for w in context], dtype=T.long)

    log("context vector", make_context_vector(data[0][0], word_to_ix))
    model = CBOW(len(vocab), 8)
    set_weights(fw, model, seed=13)
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    loss_function = nn.NLLLoss()
    for epoch in range(4):
        total_loss = 0.0
        for context, target in data:
            model.zero_grad()
            log_probs = model(make_context_vector(context, word_to_ix))
            loss = loss_function(log_probs, T.tensor([word_to_ix[target]]))
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        log(f"epoch {epoch}", total_loss)
    log("embeddings", model.embeddings.weight)


@pytest.mark.parametrize("tutorial", [ngram, cbow])
def test_word_embeddings(tutorial):
    run_both(tutorial, rtol=1e-5, atol=1e-6)


# ---- Neural Networks (LeNet) ------------------------------------------------------------------------
def lenet(fw, log):
    T, nn, F, optim = fw.torch, fw.nn, fw.F, fw.optim
    rng = np.random.default_rng(14)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, input):
            c1 = F.relu(self.conv1(input))
            s2 = F.max_pool2d(c1, (2, 2))
            c3 = F.relu(self.conv2(s2))
            s4 = F.max_pool2d(c3, 2)
            s4 = T.flatten(s4, 1)
            f5 = F.relu(self.fc1(s4))
            f6 = F.relu(self.fc2(f5))
            return self.fc3(f6)

    net = Net()
    set_weights(fw, net, seed=15, scale=0.1)
    log("print(net)", repr(net))
    params = list(net.parameters())
    log("len(params)", len(params))
    log("params[0].size()", params[0].size())
    input = float32(fw, rng.standard_normal((1, 1, 32, 32)))
    out = net(input)
    log("out", out)
    net.zero_grad()
    out.backward(float32(fw, rng.standard_normal((1, 10))))
    log("conv1.bias.grad after backward(v)", net.conv1.bias.grad)

    output = net(input)
    target = float32(fw, rng.standard_normal(10))
    target = target.view(1, -1)
    criterion = nn.MSELoss()
    loss = criterion(output, target)
    log("loss", loss)
    log("loss.grad_fn", type(loss.grad_fn).__name__)
    log("next 1", type(loss.grad_fn.next_functions[0][0]).__name__)
    # (the tutorial follows one more edge, [0][0] of AddmmBackward0: PyTorch's addmm lists the bias, the
    # input, then weight.t()'s TBackward0; minigrad's one Linear node lists input, weight, bias)

    net.zero_grad()
    log("conv1.bias.grad before backward", net.conv1.bias.grad)
    loss.backward()
    log("conv1.bias.grad after backward", net.conv1.bias.grad)

    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)
    log("after manual SGD", net(input))

    optimizer = optim.SGD(net.parameters(), lr=0.01)
    for _ in range(2):
        optimizer.zero_grad()
        output = net(input)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        log("loss", loss.item())
    log("state", net.state_dict())


def test_lenet():
    run_both(lenet, rtol=1e-5, atol=1e-6)


# ---- A Gentle Introduction to torch.autograd --------------------------------------------------------
def autograd_intro(fw, log):
    T, nn, optim = fw.torch, fw.nn, fw.optim
    rng = np.random.default_rng(16)

    class SmallNet(nn.Module):  # stands in for resnet18: a body and a `fc` head
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.bn = nn.BatchNorm2d(4)
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(4, 7)

        def forward(self, x):
            return self.fc(T.flatten(self.pool(T.relu(self.bn(self.conv(x)))), 1))

    model = SmallNet()
    set_weights(fw, model, seed=17)
    data = float32(fw, rng.random((2, 3, 8, 8)))
    labels = float32(fw, rng.random((2, 7)))
    prediction = model(data)
    loss = (prediction - labels).sum()
    loss.backward()
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    optimizer.step()
    log("after one step", model.state_dict())

    a = T.tensor([2., 3.], requires_grad=True)
    b = T.tensor([6., 4.], requires_grad=True)
    Q = 3 * a ** 3 - b ** 2
    external_grad = T.tensor([1., 1.])
    Q.backward(gradient=external_grad)
    log("9*a**2 == a.grad", 9 * a ** 2 == a.grad)
    log("-2*b == b.grad", -2 * b == b.grad)
    log("Q.grad_fn", type(Q.grad_fn).__name__)

    x = float32(fw, rng.random((5, 5)))
    y = float32(fw, rng.random((5, 5)))
    z = float32(fw, rng.random((5, 5))).requires_grad_()
    a = x + y
    log("a", f"Does `a` require gradients?: {a.requires_grad}")
    b = x + z
    log("b", f"Does `b` require gradients?: {b.requires_grad}")

    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(4, 10)
    set_weights(fw, model.fc, seed=18)
    log("requires_grad", [(n, p.requires_grad) for n, p in model.named_parameters()])
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    labels = float32(fw, rng.random((2, 10)))
    loss = (model(data) - labels).pow(2).sum()
    loss.backward()
    optimizer.step()
    log("grads", [p.grad for p in model.parameters()])
    log("changed", [k for k, v in model.state_dict().items() if not T.equal(v, before[k])])
    log("state", model.state_dict())


def test_autograd_intro():
    run_both(autograd_intro, rtol=1e-5, atol=1e-6)


# ---- Saving and Loading Models ----------------------------------------------------------------------
def make_classifier(fw, seed=19):
    nn, F = fw.nn, fw.F

    class TheModelClass(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.fc1 = nn.Linear(6 * 2 * 2, 12)
            self.fc2 = nn.Linear(12, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = x.view(-1, 6 * 2 * 2)
            return self.fc2(F.relu(self.fc1(x)))

    model = TheModelClass()
    set_weights(fw, model, seed=seed)
    return model


def saving_loading(fw, log, tmp_path):
    T, nn, optim = fw.torch, fw.nn, fw.optim
    tag = fw.torch.__name__
    x = float32(fw, np.random.default_rng(20).random((2, 3, 8, 8)))
    model = make_classifier(fw)
    optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    for param_tensor in model.state_dict():
        log(f"state {param_tensor}", f"{param_tensor}\t{model.state_dict()[param_tensor].size()}")
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    for var_name in optimizer.state_dict():  # (the momentum buffers' printed digits round apart: their values)
        value = optimizer.state_dict()[var_name]
        log(f"optimizer {var_name}", value if var_name == "state" else f"{var_name}\t{value}")

    PATH = tmp_path / f"{tag}_model.pt"
    T.save(model.state_dict(), PATH)
    model2 = make_classifier(fw, seed=21)
    log("load_state_dict", str(model2.load_state_dict(T.load(PATH, weights_only=True))))
    model2.eval()
    log("loaded", model2(x))

    # a general checkpoint for inference and/or resuming training
    EPOCH = 5
    T.save({"epoch": EPOCH, "model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict(),
            "loss": loss}, PATH)
    model3 = make_classifier(fw, seed=22)
    optimizer3 = optim.SGD(model3.parameters(), lr=0.001, momentum=0.9)
    checkpoint = T.load(PATH, weights_only=True)
    model3.load_state_dict(checkpoint["model_state_dict"])
    optimizer3.load_state_dict(checkpoint["optimizer_state_dict"])
    log("epoch, loss", [checkpoint["epoch"], checkpoint["loss"], type(checkpoint["epoch"]).__name__])
    model3.train()
    for opt, m in ((optimizer, model), (optimizer3, model3)):
        opt.zero_grad()
        m(x).pow(2).mean().backward()
        opt.step()
    log("resumed equals the original", [T.equal(a, b) for a, b in zip(model.parameters(), model3.parameters())])

    # several models in one file
    modelA, modelB = make_classifier(fw, seed=23), make_classifier(fw, seed=24)
    optimizerA = optim.SGD(modelA.parameters(), lr=0.001, momentum=0.9)
    optimizerB = optim.SGD(modelB.parameters(), lr=0.001, momentum=0.9)
    T.save({"modelA_state_dict": modelA.state_dict(), "modelB_state_dict": modelB.state_dict(),
            "optimizerA_state_dict": optimizerA.state_dict(), "optimizerB_state_dict": optimizerB.state_dict()}, PATH)
    checkpoint = T.load(PATH, weights_only=True)
    log("keys", list(checkpoint))
    modelB2 = make_classifier(fw, seed=25)
    modelB2.load_state_dict(checkpoint["modelB_state_dict"])
    log("model B", modelB2(x))

    # warmstarting a different model: strict=False
    class Bigger(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.fc1 = nn.Linear(24, 12)
            self.head = nn.Linear(12, 3)

    T.save(modelA.state_dict(), PATH)
    bigger = Bigger()
    set_weights(fw, bigger, seed=26)
    result = bigger.load_state_dict(T.load(PATH, weights_only=True), strict=False)
    log("strict=False", [result.missing_keys, result.unexpected_keys, str(result)])
    log("warm conv1", bigger.conv1.weight)
    with pytest.raises(RuntimeError) as info:
        bigger.load_state_dict(T.load(PATH, weights_only=True))
    log("strict=True", str(info.value))


def test_saving_and_loading(tmp_path):
    # outputs of float32 conv and linear layers whose terms reach ~3 (an ulp there is 2.4e-7): each library's BLAS
    # sums in its own order, which differs by CPU (AMD's OpenBLAS kernels against Intel's), so an output near 0
    # agrees to the terms' ulps, not its own; the loaded weights themselves are compared exactly (T.equal)
    run_both(saving_loading, rtol=1e-6, atol=1e-6, tmp_path=tmp_path)


def test_saved_files_cross_frameworks(tmp_path):
    """A state_dict that PyTorch saved loads into minigrad's copy of the model, and back."""
    tm, mm = make_classifier(FRAMEWORKS["torch"], seed=27), make_classifier(FRAMEWORKS["minigrad"], seed=28)
    torch.save(tm.state_dict(), tmp_path / "t.pt")
    mm.load_state_dict(minigrad.load(tmp_path / "t.pt", weights_only=True))
    x = np.random.default_rng(29).random((2, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(mm(minigrad.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-7)
    minigrad.save(mm.state_dict(), tmp_path / "m.pt")
    tm2 = make_classifier(FRAMEWORKS["torch"], seed=30)
    tm2.load_state_dict(torch.load(tmp_path / "m.pt", weights_only=True))
    assert all(torch.equal(a, b) for a, b in zip(tm.parameters(), tm2.parameters()))


class WholeTorchModel(torch.nn.Module):  # (a whole module pickles by its class's name: at module level)
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc1(x)


class WholeMinigradModel(minigrad.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = minigrad.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc1(x)


def test_saving_a_whole_model(tmp_path):
    """torch.save(model, PATH): the default (weights_only) load refuses it in one line naming the class and
    the way out; weights_only=False rebuilds it (minigrad without running code from the file)."""
    x = np.random.default_rng(31).random((2, 4)).astype(np.float32)
    outs = {}
    for lib, cls in ((torch, WholeTorchModel), (minigrad, WholeMinigradModel)):
        model = cls()
        set_weights(FRAMEWORKS[lib.__name__], model, seed=32)
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(model, path)
        with pytest.raises(Exception) as info:
            lib.load(path)
        assert type(info.value).__name__ == "UnpicklingError"
        assert str(info.value).startswith("Weights only load failed")
        assert f"{__name__}.{cls.__name__}" in str(info.value)
        loaded = lib.load(path, weights_only=False)
        loaded.eval()
        assert type(loaded) is cls and loaded is not model
        outs[lib.__name__] = loaded(lib.tensor(x)).detach().numpy()
    np.testing.assert_allclose(outs["minigrad"], outs["torch"], rtol=1e-6, atol=1e-7)


# ---- Autograd mechanics (notes) and the Introduction to PyTorch series (tensors, autograd, models) ---
def autograd_mechanics(fw, log):
    T = fw.torch
    rng = np.random.default_rng(33)
    x = float32(fw, rng.standard_normal(5)).requires_grad_()
    y = x.pow(2)
    log("saved self equal", x.equal(y.grad_fn._saved_self))
    log("saved self is x", x is y.grad_fn._saved_self)
    y = x.exp()
    log("saved result equal", y.equal(y.grad_fn._saved_result))
    log("saved result is y", y is y.grad_fn._saved_result)
    log("leaf", [x.is_leaf, y.is_leaf, x.grad_fn is None])
    with T.no_grad():
        z = x * 2
    log("no_grad", [z.requires_grad, z.grad_fn is None])
    with T.inference_mode():
        w = x * 2
    log("inference_mode", [w.requires_grad, w.is_inference()])


def intro_tensors(fw, log):
    T = fw.torch
    log("zeros", T.zeros(2, 3))
    log("ones int16", T.ones((2, 3), dtype=T.int16))
    log("rand like shape", T.empty_like(T.empty(2, 2, 3)).shape)
    some_constants = T.tensor([[3.1415926, 2.71828], [1.61803, 0.0072897]])
    log("constants", some_constants)
    log("tuple", T.tensor((2, 3, 5, 7, 11, 13, 17, 19)))
    log("nested", T.tensor(((2, 4, 6), [3, 6, 9])))
    a = T.ones((2, 3), dtype=T.int16)
    b = float32(fw, np.random.default_rng(34).random((2, 3))) * 20.
    log("b.to(int32)", b.to(T.int32))
    ones = T.zeros(2, 2) + 1
    twos = T.ones(2, 2) * 2
    threes = (T.ones(2, 2) * 7 - 1) / 2
    fours = twos ** 2
    sqrt2s = twos ** 0.5
    log("arithmetic", [ones, twos, threes, fours, sqrt2s, a.dtype])
    rand = float32(fw, np.random.default_rng(35).random((2, 4)))
    doubled = rand * (T.ones(1, 4) * 2)
    log("broadcast", doubled)
    a = T.ones(4, 3, 2)
    log("broadcasts", [a * float32(fw, np.arange(6.).reshape(3, 2)), a * float32(fw, [[1.], [2.], [3.]]),
                       a * float32(fw, [[1., 2.]])])
    a = float32(fw, np.random.default_rng(36).random((2, 4))) * 2 - 1
    log("abs ceil floor clamp", [T.abs(a), T.ceil(a), T.floor(a), T.clamp(a, -0.5, 0.5)])
    angles = T.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
    sines = T.sin(angles)
    log("trig", [sines, T.asin(sines)])
    b = T.tensor([1, 5, 11])
    c = T.tensor([2, 7, 10])
    log("bitwise_xor", T.bitwise_xor(b, c))
    d = T.tensor([[1., 2.], [3., 4.]])
    e = T.ones(1, 2)
    log("eq", T.eq(d, e))
    log("reductions", [T.max(d), T.max(d).item(), T.mean(d), T.std(d), T.prod(d), T.unique(T.tensor([1, 2, 1, 2, 1, 2]))])
    v1 = T.tensor([1., 0., 0.])
    v2 = T.tensor([0., 1., 0.])
    m1 = T.tensor([[2., 0.], [0., 3.]])
    m3 = T.matmul(m1, float32(fw, [[1., 2.], [3., 4.]]))
    log("linear algebra", [T.linalg.cross(v2, v1), T.linalg.cross(v1, v2), m1 * 3, m3])
    a = T.tensor([0., math.pi / 4, math.pi / 2])
    log("sin_", [T.sin(a), a, a.sin_(), a])
    a = T.ones(2, 2)
    b = T.tensor([[1., 2.], [3., 4.]])
    log("add_ mul_", [a.add_(b), b.mul_(b)])
    c = T.zeros(2, 2)
    old_id = id(c)
    d = T.matmul(a, b, out=c)
    log("out=", [c, id(c) == old_id, id(d) == old_id])
    a = T.ones(2, 2)
    b = a
    a[0][1] = 561
    log("alias", b)
    b = a.clone()
    a[0][1] = 562
    log("clone", [b, T.eq(a, b)])
    a = T.ones(2, 2, requires_grad=True)
    b = a.clone()
    c = a.detach().clone()
    log("clone grad", [b.requires_grad, c.requires_grad, type(b.grad_fn).__name__])
    a = T.ones(3, 226, 226)
    b = a.unsqueeze(0)
    c = T.ones(1, 1, 1, 1, 1)
    log("unsqueeze", [a.shape, b.shape, c.shape, c.squeeze().shape])
    a = T.ones(1, 20)
    log("squeeze", [a.squeeze(0).shape, T.ones(2, 2).squeeze(0).shape])
    a = T.ones(4, 3, 2)
    c = a * T.ones(3, 1)
    log("unsqueeze broadcast", [c.shape, (a * T.ones(3).unsqueeze(1)).shape])
    output3d = T.ones(6, 20, 20)
    input1d = output3d.reshape(6 * 20 * 20)
    log("reshape", [input1d.shape, T.reshape(output3d, (6 * 20 * 20,)).shape])
    numpy_array = np.ones((2, 3))
    pytorch_tensor = T.from_numpy(numpy_array)
    numpy_array[1, 1] = 23
    log("from_numpy shares", pytorch_tensor)
    pytorch_rand = T.ones(2, 3) * 0.5
    numpy_rand = pytorch_rand.numpy()
    pytorch_rand[1, 1] = 17
    log("numpy shares", numpy_rand)


def intro_autograd(fw, log):
    T, nn = fw.torch, fw.nn
    a = T.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
    b = T.sin(a)
    c = 2 * b
    d = c + 1
    out = d.sum()
    log("d.grad_fn", type(d.grad_fn).__name__)
    chain = []
    fn = d.grad_fn
    while fn is not None:
        chain.append(type(fn).__name__)
        fn = fn.next_functions[0][0] if fn.next_functions else None
    log("chain", chain)
    log("a.grad_fn", a.grad_fn)
    out.backward()
    log("a.grad", a.grad)

    class TinyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = nn.Linear(32, 20)
            self.relu = nn.ReLU()
            self.layer2 = nn.Linear(20, 4)

        def forward(self, x):
            return self.layer2(self.relu(self.layer1(x)))

    model = TinyModel()
    set_weights(fw, model, seed=37)
    rng = np.random.default_rng(38)
    some_input = float32(fw, rng.standard_normal((4, 32)))
    ideal_output = float32(fw, rng.standard_normal((4, 4)))
    log("layer2.weight[0][0:10]", model.layer2.weight[0][0:10])
    log("grad before", model.layer2.weight.grad)
    optimizer = T.optim.SGD(model.parameters(), lr=0.001)
    prediction = model(some_input)
    loss = (ideal_output - prediction).pow(2).sum()
    log("loss", loss)
    loss.backward()
    log("grad", model.layer2.weight.grad[0][0:10])
    optimizer.step()
    log("after step", model.layer2.weight[0][0:10])
    for _ in range(0, 5):
        prediction = model(some_input)
        loss = (ideal_output - prediction).pow(2).sum()
        loss.backward()
    log("accumulated", model.layer2.weight.grad[0][0:10])
    optimizer.zero_grad(set_to_none=False)
    log("zeroed", model.layer2.weight.grad[0][0:10])

    a = T.ones(2, 3, requires_grad=True)
    b1 = 2 * a
    log("b1", b1)
    c1 = a.detach()
    log("detach", [c1.requires_grad, a.requires_grad])
    a.requires_grad = False
    log("off", (2 * a).requires_grad)
    x = T.ones(2, 3, requires_grad=True) * 2
    with T.no_grad():
        y = x * 3
    log("no_grad", y.requires_grad)

    def add_tensors1(x, y):
        return x + y

    @T.no_grad()
    def add_tensors2(x, y):
        return x + y

    a = T.ones(2, 3, requires_grad=True) * 2
    b = T.ones(2, 3, requires_grad=True) * 3
    log("decorator", [add_tensors1(a, b).requires_grad, add_tensors2(a, b).requires_grad])

    x = T.ones(3, requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    v = T.tensor([0.1, 1.0, 0.0001], dtype=T.float)
    y.backward(v)
    log("vector-Jacobian", x.grad)

    def exp_adder(x, y):
        return 2 * x.exp() + 3 * y

    inputs = (float32(fw, rng.random(1)), float32(fw, rng.random(1)))
    log("jacobian", T.autograd.functional.jacobian(exp_adder, inputs))
    inputs = (float32(fw, rng.random(3)), float32(fw, rng.random(3)))
    log("jacobian 3", T.autograd.functional.jacobian(exp_adder, inputs))

    def do_some_doubling(x):
        y = x * 2
        while y.data.norm() < 1000:
            y = y * 2
        return y

    inputs = float32(fw, rng.standard_normal(3))
    my_gradients = T.tensor([0.1, 1.0, 0.0001])
    log("vjp", T.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients))


@pytest.mark.parametrize("tutorial", [autograd_mechanics, intro_tensors, intro_autograd])
def test_autograd_notes_and_intro_series(tutorial):
    run_both(tutorial, rtol=1e-6, atol=1e-6)
