"""Scripts in the shape of the pytorch/examples repository and similar reference collections, on small synthetic
data (sine waves predicted by two LSTMCells under LBFGS; the forward-forward algorithm; a siamese pair classifier;
a GCN over a dense and a sparse normalised adjacency; PixelShuffle / PixelUnshuffle super-resolution with PSNR;
fast neural style's transformer net and a frozen loss net; SNLI-style pair classification by a bidirectional LSTM;
a word-level nn.TransformerEncoder language model; a DCGAN training loop; a minimal actor-critic; hogwild training
in one process; the MNIST example's train / test functions; the regression example's polynomial fit), each written
once against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights.
Losses, gradients, parameters and outputs must agree closely (float64 throughout; random draws given by numpy where
the two libraries' streams differ by design)."""
import collections
import contextlib
import io
import math
import types

import numpy as np

from twins import both, grads, start


def kind(t):
    """A tensor's dtype by name ('int64'), comparable across the two libraries."""
    return str(t.dtype).split(".")[-1]


# ---- time_sequence_prediction: two stacked LSTMCells on sine waves, LBFGS with a closure, future steps ------------
def sine_lstmcells_lbfgs(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(260)
    T, L, N = 20, 12, 5
    x = np.empty((N, L), np.float64)
    x[:] = np.arange(L) + rng.integers(-4 * T, 4 * T, N).reshape(N, 1)
    data = torch.from_numpy(np.sin(x / T))
    inp, target = data[2:, :-1], data[2:, 1:]
    test_input, test_target = data[:2, :-1], data[:2, 1:]

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTMCell(1, 7)
            self.lstm2 = nn.LSTMCell(7, 7)
            self.linear = nn.Linear(7, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), 7, dtype=torch.double)
            c_t = torch.zeros(input.size(0), 7, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), 7, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), 7, dtype=torch.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for _ in range(future):  # the prediction feeds itself
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            return torch.cat(outputs, dim=1)

    seq = Sequence()
    init = start(seq, init)
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=3)
    closure_losses, step_losses, tests = [], [], []
    for _ in range(2):
        def closure():
            optimizer.zero_grad()
            out = seq(inp)
            loss = criterion(out, target)
            closure_losses.append(loss.item())
            loss.backward()
            return loss
        step_losses.append(optimizer.step(closure))
        with torch.no_grad():
            future = 5
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            tests.append(loss.item())
            y = pred.detach().numpy()
    state = optimizer.state[optimizer._params[0]]
    return dict(init=init, closure_losses=closure_losses, step_losses=step_losses, tests=tests, y=y,
                pred=pred, n_iter=state["n_iter"], func_evals=state["func_evals"], shapes=[list(pred.shape)],
                params=list(seq.parameters()))


def test_time_sequence_prediction_lstmcells_lbfgs(torch):
    both(torch, sine_lstmcells_lbfgs, tol=dict(rtol=1e-7, atol=1e-9))


# ---- the forward-forward algorithm: label overlay, layer-local goodness losses, one Adam per layer --------------
def forward_forward(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(261)
    x = torch.tensor(rng.normal(size=(12, 16)))
    y = torch.tensor(rng.integers(0, 4, 12))
    wrong = (y + torch.tensor(rng.integers(1, 4, 12))) % 4

    def overlay_y_on_x(x, y):
        x_ = x.clone()
        x_[:, :4] *= 0.0
        x_[range(x.shape[0]), y] = x.max()
        return x_

    class Layer(nn.Linear):
        def __init__(self, in_features, out_features, threshold=2.0):
            super().__init__(in_features, out_features)
            self.relu = nn.ReLU()
            self.opt = None
            self.threshold = threshold

        def forward(self, x):
            x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

        def train_step(self, x_pos, x_neg):
            g_pos = self(x_pos).pow(2).mean(1)
            g_neg = self(x_neg).pow(2).mean(1)
            loss = torch.log(1 + torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()  # local: the layer's input is detached
            self.opt.step()
            return self(x_pos).detach(), self(x_neg).detach(), loss.item()

    class Net(nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.layers = nn.ModuleList([Layer(dims[d], dims[d + 1]) for d in range(len(dims) - 1)])

        def predict(self, x):
            goodness_per_label = []
            for label in range(4):
                h = overlay_y_on_x(x, torch.full((x.shape[0],), label))
                goodness = []
                for layer in self.layers:
                    h = layer(h)
                    goodness += [h.pow(2).sum(1)]  # goodness = sum of squares
                goodness_per_label += [sum(goodness).unsqueeze(1)]
            return torch.cat(goodness_per_label, 1).argmax(1), torch.cat(goodness_per_label, 1)

    net = Net([16, 10, 10])
    init = start(net, init)
    for layer in net.layers:
        layer.opt = torch.optim.Adam(layer.parameters(), lr=0.03)
    h_pos, h_neg = overlay_y_on_x(x, y), overlay_y_on_x(x, wrong)
    losses = []
    for layer in net.layers:
        for _ in range(4):
            a, b, loss = layer.train_step(h_pos, h_neg)
            losses.append(loss)
        h_pos, h_neg = a, b
    pred, goodness = net.predict(x)
    error = 1.0 - pred.eq(y).float().mean().item()
    grads_local = [p.grad is not None for p in net.parameters()]
    return dict(init=init, losses=losses, pred=pred, goodness=goodness, error=error, h_pos=h_pos,
                grads_local=grads_local, overlay=overlay_y_on_x(x, y), params=list(net.parameters()))


def test_forward_forward_layer_local_losses(torch):
    both(torch, forward_forward)


# ---- a siamese network on pairs: shared CNN tower, concatenated features, BCE head; a contrastive-loss variant ----
def siamese_pairs(torch, init, head):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(262)
    images = torch.tensor(rng.normal(size=(10, 1, 8, 8)))
    labels = rng.integers(0, 3, 10)
    pairs = [(i, j) for i in range(10) for j in range(i + 1, 10)]
    chosen = [pairs[k] for k in rng.choice(len(pairs), 8, replace=False)]
    idx1 = torch.tensor([i for i, _ in chosen])
    idx2 = torch.tensor([j for _, j in chosen])
    same = torch.tensor([float(labels[i] == labels[j]) for i, j in chosen], dtype=torch.float64)

    class SiameseNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.tower = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                                       nn.Flatten(), nn.Linear(36, 8))
            self.fc = nn.Sequential(nn.Linear(16, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
            self.sigmoid = nn.Sigmoid()
            self.tower.apply(self.init_weights)

        def init_weights(self, m):
            if isinstance(m, nn.Linear):
                torch.nn.init.xavier_uniform_(m.weight)
                m.bias.data.fill_(0.01)

        def forward_once(self, x):
            return self.tower(x).view(x.size()[0], -1)

        def forward(self, input1, input2):
            output1, output2 = self.forward_once(input1), self.forward_once(input2)
            return self.sigmoid(self.fc(torch.cat((output1, output2), 1))), output1, output2

    def contrastive(o1, o2, label, margin=2.0):
        d = F.pairwise_distance(o1, o2, keepdim=True)
        return torch.mean(label * torch.pow(d, 2) + (1 - label) * torch.pow(torch.clamp(margin - d, min=0.0), 2))

    model = SiameseNetwork()
    init = start(model, init)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    criterion = nn.BCELoss()
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        prob, o1, o2 = model(images[idx1], images[idx2])
        if head == "bce":
            loss = criterion(prob.squeeze(), same)
        else:
            loss = contrastive(o1, o2, same.unsqueeze(1))
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        prob, o1, o2 = model(images[idx1], images[idx2])
        pred = torch.where(prob > 0.5, 1, 0).squeeze()
        correct = pred.eq(same.view_as(pred)).sum().item()
        cos = F.cosine_similarity(o1, o2)
    return dict(init=init, losses=losses, prob=prob, pred=pred, correct=correct, cos=cos,
                lr=scheduler.get_last_lr(), grads=grads(model), params=list(model.parameters()))


def test_siamese_bce_head_adadelta_steplr(torch):
    both(torch, siamese_pairs, head="bce")


def test_siamese_contrastive_pairwise_distance(torch):
    both(torch, siamese_pairs, head="contrastive")


# ---- GCN: D^-1/2 (A + I) D^-1/2 dense and as a sparse COO tensor, torch.sparse.mm, node masks -----------------
def gcn(torch, init, sparse):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(263)
    n, f, c = 9, 5, 3
    edges = {(int(a), int(b)) for a, b in rng.integers(0, n, (14, 2)) if a != b}
    edge_index = torch.tensor(sorted(edges | {(b, a) for a, b in edges})).t()
    features = torch.tensor(rng.normal(size=(n, f)))
    labels = torch.tensor(rng.integers(0, c, n))
    train_mask = torch.zeros(n, dtype=torch.bool)
    train_mask[:5] = True
    val_mask = ~train_mask
    A = torch.zeros(n, n, dtype=torch.float64)
    A[edge_index[0], edge_index[1]] = 1.0
    A_hat = A + torch.eye(n, dtype=torch.float64)
    deg = A_hat.sum(1)
    d_inv_sqrt = deg.pow(-0.5)
    d_inv_sqrt[torch.isinf(d_inv_sqrt)] = 0.0
    adj = torch.diag(d_inv_sqrt) @ A_hat @ torch.diag(d_inv_sqrt)
    facts = [list(edge_index.shape), kind(edge_index), int(train_mask.sum()), kind(deg)]
    if sparse:
        loops = torch.arange(n).repeat(2, 1)
        idx = torch.cat([edge_index, loops], dim=1)
        vals = d_inv_sqrt[idx[0]] * d_inv_sqrt[idx[1]]
        adj = torch.sparse_coo_tensor(idx, vals, (n, n)).coalesce()
        facts += [adj.is_sparse, adj.is_coalesced(), adj._nnz(), list(adj.indices().shape), kind(adj.values())]

    class GraphConv(nn.Module):
        def __init__(self, in_f, out_f):
            super().__init__()
            self.weight = nn.Parameter(torch.empty(in_f, out_f))
            self.bias = nn.Parameter(torch.zeros(out_f))
            stdv = 1.0 / math.sqrt(out_f)
            self.weight.data.uniform_(-stdv, stdv)

        def forward(self, x, adj):
            support = torch.mm(x, self.weight)
            out = torch.sparse.mm(adj, support) if adj.is_sparse else torch.mm(adj, support)
            return out + self.bias

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.gc1, self.gc2 = GraphConv(f, 8), GraphConv(8, c)

        def forward(self, x, adj):
            x = F.relu(self.gc1(x, adj))
            x = F.dropout(x, 0.5, training=False)
            return F.log_softmax(self.gc2(x, adj), dim=1)

    model = GCN()
    init = start(model, init)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses, accs = [], []
    for _ in range(4):
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[train_mask], labels[train_mask])
        loss_train.backward()
        optimizer.step()
        model.eval()
        output = model(features, adj)
        loss_val = F.nll_loss(output[val_mask], labels[val_mask])
        preds = output.max(1)[1].type_as(labels)
        accs.append((preds[val_mask].eq(labels[val_mask]).double().sum() / val_mask.sum()).item())
        losses.append((loss_train.item(), loss_val.item()))
    dense = adj.to_dense() if sparse else adj
    rows = torch.mm(features.t(), adj)  # X^T A, features as rows: dense @ sparse in the sparse variant
    return dict(init=init, facts=facts, dense=dense, rows=rows, rows_node=type(rows.grad_fn).__name__, losses=losses, accs=accs, output=output,
                grads=grads(model), params=list(model.parameters()))


def test_gcn_dense_normalised_adjacency(torch):
    both(torch, gcn, sparse=False)


def test_gcn_sparse_coo_adjacency_sparse_mm(torch):
    both(torch, gcn, sparse=True)


# ---- super-resolution: PixelUnshuffle to make the low-res input, a sub-pixel net with orthogonal_ init, PSNR ------
def super_resolution(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(264)
    hr = torch.tensor(rng.uniform(0, 1, (3, 1, 8, 8)))
    lr_img = nn.PixelUnshuffle(2)(hr).mean(1, keepdim=True)  # a box-filtered 4x4 input
    facts = [list(nn.PixelUnshuffle(2)(hr).shape), list(lr_img.shape),
             bool(torch.equal(nn.PixelShuffle(2)(nn.PixelUnshuffle(2)(hr)), hr))]

    class Net(nn.Module):
        def __init__(self, upscale_factor):
            super().__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 8, (5, 5), (1, 1), (2, 2))
            self.conv2 = nn.Conv2d(8, 8, (3, 3), (1, 1), (1, 1))
            self.conv3 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
            nn.init.orthogonal_(self.conv1.weight, nn.init.calculate_gain("relu"))
            nn.init.orthogonal_(self.conv2.weight, nn.init.calculate_gain("relu"))
            nn.init.orthogonal_(self.conv3.weight)

        def forward(self, x):
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            return self.pixel_shuffle(self.conv3(x))

    model = Net(upscale_factor=2)
    init = start(model, init)
    # orthogonal_'s promise, checked on the weights both sides start from
    w = model.conv2.weight.detach().reshape(8, -1)
    ortho = (w @ w.T / nn.init.calculate_gain("relu") ** 2 - torch.eye(8, dtype=torch.float64)).abs().max().item() < 1e-9
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses, psnrs = [], []
    for _ in range(3):
        optimizer.zero_grad()
        loss = criterion(model(lr_img), hr)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        with torch.no_grad():
            mse = criterion(model(lr_img), hr)
            psnrs.append(10 * math.log10(1 / mse.item()))
    with torch.no_grad():
        out = model(lr_img).clamp(0, 1)
        nearest = F.interpolate(lr_img, scale_factor=2, mode="nearest")
        psnr_t = 10 * torch.log10(1 / F.mse_loss(out, hr, reduction="none").mean((1, 2, 3)))
        psnr_nearest = 10 * torch.log10(1 / ((nearest - hr) ** 2).mean())
        img = (out[0, 0] * 255.0).round().clip(0, 255).to(torch.uint8)
    return dict(init=init, facts=facts, ortho=ortho, losses=losses, psnrs=psnrs, psnr_t=psnr_t,
                psnr_nearest=psnr_nearest, img=img, grads=grads(model), params=list(model.parameters()))


def test_super_resolution_pixel_unshuffle_orthogonal_psnr(torch):
    both(torch, super_resolution)


# ---- fast neural style: ReflectionPad2d convs, InstanceNorm2d(affine), nearest upsampling, a frozen loss net ------
def fast_neural_style(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(265)
    content = torch.tensor(rng.uniform(0, 255, (2, 3, 8, 8)))
    style = torch.tensor(rng.uniform(0, 255, (1, 3, 8, 8)))

    class ConvLayer(nn.Module):
        def __init__(self, cin, cout, kernel_size, stride):
            super().__init__()
            self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
            self.conv2d = nn.Conv2d(cin, cout, kernel_size, stride)

        def forward(self, x):
            return self.conv2d(self.reflection_pad(x))

    class ResidualBlock(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.conv1, self.in1 = ConvLayer(channels, channels, 3, 1), nn.InstanceNorm2d(channels, affine=True)
            self.conv2, self.in2 = ConvLayer(channels, channels, 3, 1), nn.InstanceNorm2d(channels, affine=True)
            self.relu = nn.ReLU()

        def forward(self, x):
            out = self.relu(self.in1(self.conv1(x)))
            return self.in2(self.conv2(out)) + x

    class UpsampleConvLayer(nn.Module):
        def __init__(self, cin, cout, kernel_size, stride, upsample=None):
            super().__init__()
            self.upsample = upsample
            self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
            self.conv2d = nn.Conv2d(cin, cout, kernel_size, stride)

        def forward(self, x):
            if self.upsample:
                x = F.interpolate(x, mode="nearest", scale_factor=self.upsample)
            return self.conv2d(self.reflection_pad(x))

    class TransformerNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.in1 = ConvLayer(3, 4, 5, 1), nn.InstanceNorm2d(4, affine=True)
            self.conv2, self.in2 = ConvLayer(4, 6, 3, 2), nn.InstanceNorm2d(6, affine=True)
            self.res1, self.res2 = ResidualBlock(6), ResidualBlock(6)
            self.deconv1, self.in4 = UpsampleConvLayer(6, 4, 3, 1, upsample=2), nn.InstanceNorm2d(4, affine=True)
            self.deconv3 = ConvLayer(4, 3, 5, 1)
            self.relu = nn.ReLU()

        def forward(self, X):
            y = self.relu(self.in1(self.conv1(X)))
            y = self.relu(self.in2(self.conv2(y)))
            y = self.res2(self.res1(y))
            y = self.relu(self.in4(self.deconv1(y)))
            return self.deconv3(y)

    class LossNet(nn.Module):  # a VGG-like feature net, frozen
        def __init__(self):
            super().__init__()
            self.slice1 = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True))
            self.slice2 = nn.Sequential(nn.MaxPool2d(2, 2), nn.Conv2d(4, 5, 3, padding=1), nn.ReLU(inplace=True))
            for param in self.parameters():
                param.requires_grad = False

        def forward(self, X):
            h1 = self.slice1(X)
            h2 = self.slice2(h1)
            return collections.namedtuple("Outputs", ["relu1_2", "relu2_2"])(h1, h2)

    def gram_matrix(y):
        b, ch, h, w = y.size()
        features = y.view(b, ch, w * h)
        return features.bmm(features.transpose(1, 2)) / (ch * h * w)

    def normalize_batch(batch):
        mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
        std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
        return (batch.div_(255.0) - mean) / std

    transformer, vgg = TransformerNet(), LossNet()
    holder = nn.ModuleDict(dict(transformer=transformer, vgg=vgg))
    init = start(holder, init)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-2)
    mse_loss = nn.MSELoss()
    features_style = vgg(normalize_batch(style.clone()))
    gram_style = [gram_matrix(y) for y in features_style]
    frozen = [p.requires_grad for p in vgg.parameters()]
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        x = content.clone()
        y = normalize_batch(transformer(x))
        x = normalize_batch(x)
        features_y, features_x = vgg(y), vgg(x)
        content_loss = 1e1 * mse_loss(features_y.relu2_2, features_x.relu2_2)
        style_loss = 0.0
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:x.size(0), :, :].expand_as(gm_y))  # a style batch of one, expanded
        style_loss *= 1e3
        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()
        losses.append((content_loss.item(), style_loss.item()))
    vgg_grads = [p.grad is None for p in vgg.parameters()]
    with torch.no_grad():
        output = transformer(content).clamp(0, 255)
    return dict(init=init, losses=losses, frozen=frozen, vgg_grads=vgg_grads, output=output, gram=gram_style,
                fields=list(features_style._fields), grads=grads(transformer), params=list(transformer.parameters()))


def test_fast_neural_style_transformer_net_frozen_loss_net(torch):
    both(torch, fast_neural_style)


# ---- SNLI-style pairs: a shared bidirectional LSTM encoder, h_n of both directions, [u, v, |u-v|, u*v] ---------
def snli_bilstm(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(266)
    V, B, Lp, Lh = 15, 6, 7, 5
    premise = torch.tensor(rng.integers(1, V, (Lp, B)))  # time-first, as the SNLI example batches
    hypothesis = torch.tensor(rng.integers(1, V, (Lh, B)))
    label = torch.tensor(rng.integers(0, 3, B))
    config = types.SimpleNamespace(n_embed=V, d_embed=5, d_hidden=4, n_layers=1, birnn=True, d_out=3, dp_ratio=0.0)
    config.n_cells = config.n_layers * (2 if config.birnn else 1)

    class Encoder(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.rnn = nn.LSTM(input_size=config.d_embed, hidden_size=config.d_hidden, num_layers=config.n_layers,
                               dropout=0, bidirectional=config.birnn)

        def forward(self, inputs):
            batch_size = inputs.size()[1]
            state_shape = self.config.n_cells, batch_size, self.config.d_hidden
            h0 = c0 = inputs.new_zeros(state_shape)
            outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
            return ht[-1] if not self.config.birnn else ht[-2:].transpose(0, 1).contiguous().view(batch_size, -1)

    class SNLIClassifier(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.embed = nn.Embedding(config.n_embed, config.d_embed)
            self.projection = nn.Linear(config.d_embed, config.d_embed)
            self.encoder = Encoder(config)
            self.dropout = nn.Dropout(p=config.dp_ratio)
            self.relu = nn.ReLU()
            seq_in_size = 2 * config.d_hidden * (2 if config.birnn else 1)
            self.out = nn.Sequential(nn.Linear(2 * seq_in_size, 8), self.relu, self.dropout,
                                     nn.Linear(8, config.d_out))

        def forward(self, premise, hypothesis):
            prem_embed = self.relu(self.projection(self.embed(premise).detach()))  # fixed embeddings
            hypo_embed = self.relu(self.projection(self.embed(hypothesis).detach()))
            u, v = self.encoder(prem_embed), self.encoder(hypo_embed)
            return self.out(torch.cat([u, v, torch.abs(u - v), u * v], 1))

    model = SNLIClassifier(config)
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    losses, accs = [], []
    for _ in range(3):
        model.train()
        opt.zero_grad()
        answer = model(premise, hypothesis)
        n_correct = (torch.max(answer, 1)[1].view(label.size()) == label).sum().item()
        loss = criterion(answer, label)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        accs.append(100.0 * n_correct / B)
    emb_grad = model.embed.weight.grad
    model.eval()
    with torch.no_grad():
        dev = model(premise.flip(0), hypothesis)
    return dict(init=init, losses=losses, accs=accs, emb_grad=emb_grad is None, dev=dev,
                grads=grads(model), params=list(model.parameters()))


def test_snli_bidirectional_lstm_pair_features(torch):
    both(torch, snli_bilstm)


# ---- word_language_model's TransformerModel: PositionalEncoding buffer, a square subsequent mask, clipping -------
def transformer_word_lm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(267)
    ntoken, ninp, nhead, nhid, nlayers, bptt = 17, 8, 2, 12, 2, 5
    corpus = torch.tensor(rng.integers(0, ntoken, 41))

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        return data.view(bsz, -1).t().contiguous()

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=64):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer("pe", pe)

        def forward(self, x):
            return self.dropout(x + self.pe[:x.size(0), :])

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.0):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers,
                             dropout=dropout)
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def _generate_square_subsequent_mask(self, sz):
            return torch.log(torch.tril(torch.ones(sz, sz)))

        def forward(self, src, has_mask=True):
            if has_mask:
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    self.src_mask = self._generate_square_subsequent_mask(len(src)).to(src.device)
            else:
                self.src_mask = None
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask.double() if has_mask else None)
            return F.log_softmax(self.decoder(output), dim=-1)

    train_data = batchify(corpus, 4)
    model = TransformerModel(ntoken, ninp, nhead, nhid, nlayers)
    init = start(model, init)
    facts = [list(train_data.shape), kind(model.pos_encoder.pe), "pe" in model.state_dict(),
             [n for n, _ in model.named_buffers()], model.decoder.weight.abs().max().item() <= 0.1,
             torch.equal(nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64),
                         model._generate_square_subsequent_mask(4).double())]
    criterion = nn.NLLLoss()
    lr, losses, norms = 5.0, [], []
    model.train()
    for i in range(0, train_data.size(0) - 1, bptt):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        output = model(data)
        loss = criterion(output.view(-1, ntoken), targets)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25))
        for p in model.parameters():
            if p.grad is not None:
                p.data.add_(p.grad, alpha=-lr)
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        total = 0.0
        for i in range(0, train_data.size(0) - 1, bptt):
            data, targets = get_batch(train_data, i)
            total += len(data) * criterion(model(data).view(-1, ntoken), targets).item()
        val_loss = total / (len(train_data) - 1)
        unmasked = model(train_data[:3], has_mask=False)
        word_weights = model(train_data[:3])[-1].squeeze().exp()
    return dict(init=init, facts=facts, losses=losses, norms=norms, val_loss=val_loss, ppl=math.exp(val_loss),
                unmasked=unmasked, word_weights=word_weights, grads=grads(model), params=list(model.parameters()))


def test_word_language_model_transformer_encoder(torch):
    both(torch, transformer_word_lm)


# ---- DCGAN's training loop: ConvTranspose2d generator, BatchNorm2d, LeakyReLU, weights_init, betas=(0.5, 0.999) ---
def dcgan_loop(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(268)
    nz, ngf, ndf, nc, B = 4, 4, 4, 1, 3
    real = torch.tensor(rng.uniform(-1, 1, (B, nc, 8, 8)))
    noises = [torch.tensor(rng.normal(size=(B, nz, 1, 1))) for _ in range(2)]
    fixed_noise = torch.tensor(rng.normal(size=(2, nz, 1, 1)))

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            torch.nn.init.normal_(m.weight, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            torch.nn.init.normal_(m.weight, 1.0, 0.02)
            torch.nn.init.zeros_(m.bias)

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False), nn.Tanh())

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False), nn.Sigmoid())

        def forward(self, input):
            return self.main(input).view(-1, 1).squeeze(1)

    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    holder = nn.ModuleDict(dict(G=netG, D=netD))
    init = start(holder, init)
    criterion = nn.BCELoss()
    real_label, fake_label = 1, 0
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    log = []
    for noise in noises:
        netD.zero_grad()
        label = torch.full((B,), real_label, dtype=real.dtype)
        output = netD(real)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        log.append("Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f"
                   % (errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
        log.append([errD.item(), errG.item(), D_x, D_G_z1, D_G_z2])
    with torch.no_grad():
        netG.eval()
        fixed = netG(fixed_noise).detach()
    return dict(init=init, log=log, fake=fake, fixed=fixed, label=label, state=holder.state_dict(),
                grads=grads(holder), params=list(holder.parameters()))


def test_dcgan_training_loop_betas(torch):
    both(torch, dcgan_loop)


# ---- a minimal actor-critic: a shared body, Categorical from logits, normalised discounted returns, smooth_l1 ----
def actor_critic(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(269)
    Categorical = torch.distributions.Categorical
    SavedAction = collections.namedtuple("SavedAction", ["log_prob", "value"])
    gamma, eps = 0.99, np.finfo(np.float32).eps.item()

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 16)
            self.action_head = nn.Linear(16, 2)
            self.value_head = nn.Linear(16, 1)
            self.saved_actions, self.rewards = [], []

        def forward(self, x):
            x = F.relu(self.affine1(x))
            return self.action_head(x), self.value_head(x)

    model = Policy()
    init = start(model, init)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)

    def select_action(state, u):
        state = torch.from_numpy(state).double()
        logits, state_value = model(state)
        m = Categorical(logits=logits)
        action = torch.tensor(int(u > m.probs[0].item()))  # the draw from a shared uniform: streams differ
        model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        return action.item(), m.entropy()

    def finish_episode():
        R, policy_losses, value_losses, returns = 0, [], [], []
        for r in model.rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for (log_prob, value), R in zip(model.saved_actions, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
        optimizer.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        del model.rewards[:]
        del model.saved_actions[:]
        return loss.item(), returns

    running_reward, episodes = 10, []
    for i_episode in range(3):
        state, ep_reward, entropies = rng.normal(size=4), 0, []
        for t in range(1, 7):
            action, entropy = select_action(state, rng.uniform())
            entropies.append(entropy)
            state = state * 0.9 + (0.1 if action else -0.1)
            reward = 1.0 if abs(state[0]) < 1.0 + 0.05 * t else 0.0
            model.rewards.append(reward)
            ep_reward += reward
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        loss, returns = finish_episode()
        episodes.append((i_episode, t, ep_reward, loss, running_reward, kind(returns)))
        episodes.append(torch.stack(entropies).detach())
    return dict(init=init, episodes=episodes, returns=returns, grads=grads(model), params=list(model.parameters()))


def test_actor_critic_categorical_logits_smooth_l1(torch):
    # torch.tensor(returns) is float32, as in the example: its mean and std round in each library's summation order
    both(torch, actor_critic, tol=dict(rtol=1e-5, atol=1e-6))


# ---- hogwild in one process: model.share_memory(), each "worker" a train() over its own shard, then test() --------
def hogwild_one_process(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(270)
    X = torch.tensor(rng.normal(size=(24, 6)))
    Y = torch.tensor(rng.integers(0, 3, 24))
    dataset = torch.utils.data.TensorDataset(X, Y)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(6, 8), nn.Linear(8, 3)

        def forward(self, x):
            return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)

    def train(rank, args, model):
        loader = torch.utils.data.DataLoader(torch.utils.data.Subset(dataset, range(rank, 24, args["num_processes"])),
                                             batch_size=args["batch_size"], shuffle=False)
        optimizer = torch.optim.SGD(model.parameters(), lr=args["lr"], momentum=args["momentum"])
        model.train()
        losses = []
        for epoch in range(1, args["epochs"] + 1):
            for batch_idx, (data, target) in enumerate(loader):
                optimizer.zero_grad()
                loss = F.nll_loss(model(data), target)
                loss.backward()
                optimizer.step()
                losses.append((rank, epoch, batch_idx, loss.item()))
        return losses

    def test(model):
        model.eval()
        loader = torch.utils.data.DataLoader(dataset, batch_size=8)
        test_loss, correct = 0, 0
        with torch.no_grad():
            for data, target in loader:
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction="sum").item()
                pred = output.max(1)[1]
                correct += pred.eq(target.view_as(pred)).sum().item()
        return test_loss / len(loader.dataset), correct

    args = dict(num_processes=2, batch_size=4, lr=0.05, momentum=0.5, epochs=2)
    model = Net()
    init = start(model, init)
    shared = model.share_memory()  # gradients are allocated lazily by the optimizers
    facts = [shared is model, all(p.is_shared() for p in model.parameters()), model.fc1.weight.grad is None]
    losses = []
    for rank in range(args["num_processes"]):  # the workers, one after another
        losses += train(rank, args, model)
    return dict(init=init, facts=facts, losses=losses, test=test(model), params=list(model.parameters()))


def test_hogwild_share_memory_in_one_process(torch):
    both(torch, hogwild_one_process)


# ---- the MNIST example: Conv/Dropout net, Adadelta, StepLR(gamma=0.7), log_softmax, nll_loss(reduction="sum") -------
def mnist_example(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(271)
    images = torch.tensor(rng.uniform(0, 1, (12, 1, 12, 12)))
    images = (images - 0.1307) / 0.3081
    targets = torch.tensor(rng.integers(0, 10, 12))
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[:8], targets[:8]), batch_size=4)
    test_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[8:], targets[8:]), batch_size=2)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 6, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(6 * 4 * 4, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            return F.log_softmax(self.fc2(x), dim=1)

    def train(model, train_loader, optimizer, epoch, log):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            log.append("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))

    def test(model, test_loader, log):
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for data, target in test_loader:
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction="sum").item()
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        log.append("Test set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)".format(
            test_loss, correct, len(test_loader.dataset), 100. * correct / len(test_loader.dataset)))
        return test_loss

    model = Net()
    init = start(model, init)
    # dropout draws differ between the libraries by design: the training steps run with p = 0, the test in eval
    model.dropout1.p = model.dropout2.p = 0.0
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    log, test_losses, lrs = [], [], []
    for epoch in range(1, 3):
        train(model, train_loader, optimizer, epoch, log)
        test_losses.append(test(model, test_loader, log))
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    model.dropout1.p, model.dropout2.p = 0.25, 0.5
    with torch.no_grad():
        model.eval()
        eval_out = model(images)
        model.train()
        dropped = (model.dropout2(torch.ones(400, dtype=torch.float64)) == 0).double().mean().item()
    return dict(init=init, log=log, test_losses=test_losses, lrs=lrs, eval_out=eval_out,
                dropped=0.35 < dropped < 0.65, repr=repr(model), grads=grads(model), params=list(model.parameters()))


def test_mnist_example_train_test_steplr(torch):
    both(torch, mnist_example)


# ---- the regression example: fit a random polynomial batch by batch until the loss is small, poly_desc printed -------
def regression_example(torch, init):
    F = torch.nn.functional
    rng = np.random.default_rng(272)
    POLY_DEGREE = 3
    W_target = torch.tensor(rng.normal(size=(POLY_DEGREE, 1))) * 0.5
    b_target = torch.tensor(rng.normal(size=1)) * 0.5

    def make_features(x):
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

    def f(x):
        return x.mm(W_target) + b_target.item()

    def poly_desc(W, b):
        result = "y = "
        for i, w in enumerate(W):
            result += "{:+.2f} x^{} ".format(w, i + 1)
        result += "{:+.2f}".format(b[0])
        return result

    def get_batch(batch_size=8):
        random = torch.from_numpy(rng.normal(size=batch_size))
        x = make_features(random)
        return x, f(x)

    fc = torch.nn.Linear(W_target.size(0), 1)
    init = start(fc, init)
    out = io.StringIO()
    losses = []
    with contextlib.redirect_stdout(out):
        for batch_idx in range(1, 200):
            batch_x, batch_y = get_batch()
            fc.zero_grad()
            output = F.smooth_l1_loss(fc(batch_x), batch_y)
            loss = output.item()
            output.backward()
            for param in fc.parameters():
                param.data.add_(-0.1 * param.grad)
            losses.append((batch_idx, loss))
            if loss < 1e-3:
                break
        print("Loss: {:.6f} after {} batches".format(loss, batch_idx))
        print("==> Learned function:\t" + poly_desc(fc.weight.view(-1), fc.bias))
        print("==> Actual function:\t" + poly_desc(W_target.view(-1), b_target))
        print(f"{output:.3e} {fc.bias[0]:+.4f}")
    return dict(init=init, printed=out.getvalue().splitlines(), losses=losses, batches=batch_idx,
                params=list(fc.parameters()))


def test_regression_example_poly_desc_printed(torch):
    both(torch, regression_example)
