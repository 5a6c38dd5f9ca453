"""PyTorch's tutorials and course notebooks as learners retype them (the name classifier over pack_sequence with
nn.RNN beside its one-character-at-a-time RNNCell twin; the names generator conditioned on a category; an nn.Transformer
built from its encoder and decoder stacks with every mask; SegNet's max-unpooling decoder; patches by Unfold/Fold;
the fused conv-bn custom Function on nn.grad; an LSTM language model under an adaptive softmax; ShuffleNet's channel
shuffle with ReLU6; a CNN on a torus by circular padding; a volumetric spatial transformer; "Learning PyTorch with
Examples" from hand-written tensors to a DynamicNet; "What is torch.nn really?" refactored step by step; the chatbot's
Luong attention with a masked NLL; pretrained embeddings frozen then thawed; the padding utilities' round trips),
written once against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial
weights. Losses, gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import math

import numpy as np
import pytest

from twins import both, grads, start


def names(seed, n, letters=6, longest=6):
    """n random "names": lists of letter ids of length 2..longest."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, letters, int(rng.integers(2, longest + 1))) for _ in range(n)]


# ---- the name classifier: one-hot names packed by pack_sequence (unsorted), nn.RNN's last hidden, LogSoftmax+NLL;
# the tutorial's loop over characters with an RNNCell holding the same weights gives the same hidden state ----------
def name_classifier(torch, init):
    nn = torch.nn
    rnn_utils = nn.utils.rnn
    n_letters, n_hidden, n_categories = 6, 8, 3
    words = names(1, 7, n_letters)
    labels = torch.tensor([int(w[0]) % n_categories for w in words])

    def line_to_tensor(word):
        t = torch.zeros(len(word), n_letters, dtype=torch.float64)
        for i, letter in enumerate(word):
            t[i][int(letter)] = 1
        return t

    class NameRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(n_letters, n_hidden)
            self.h2o = nn.Linear(n_hidden, n_categories)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, packed):
            _, hidden = self.rnn(packed)
            return self.softmax(self.h2o(hidden[0]))

    model = NameRNN()
    init = start(model, init)
    lines = [line_to_tensor(w) for w in words]
    criterion = nn.NLLLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    losses = []
    for _ in range(4):
        packed = rnn_utils.pack_sequence(lines, enforce_sorted=False)
        out = model(packed)
        loss = criterion(out, labels)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 3.0)
        opt.step()
        losses.append(loss.item())

    cell = nn.RNNCell(n_letters, n_hidden).double()
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(getattr(model.rnn, name + "_l0"))
        by_cell = []
        for line in lines:
            hidden = torch.zeros(1, n_hidden, dtype=torch.float64)
            for i in range(line.size(0)):
                hidden = cell(line[i].unsqueeze(0), hidden)
            by_cell.append(hidden)
        by_cell = torch.cat(by_cell)
        packed = rnn_utils.pack_sequence(lines, enforce_sorted=False)
        _, hidden = model.rnn(packed)
        top_v, top_i = model(packed).topk(1)
    unpacked = rnn_utils.unpack_sequence(packed)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model), by_cell=by_cell,
                hidden=hidden[0], top_v=top_v, top_i=top_i, batch_sizes=packed.batch_sizes,
                sorted_indices=packed.sorted_indices, unpacked=unpacked)


def test_name_classifier_pack_sequence_rnn_and_rnncell_loop(torch):
    both(torch, name_classifier)


# ---- generating names: category one-hot + letter + hidden into an RNNCell(relu), the loss summed over the letters,
# the tutorial's manual update p.data.add_(p.grad.data, alpha=-lr), then greedy sampling by topk ------------------
def names_generator(torch, init):
    nn = torch.nn
    n_letters, n_categories, n_hidden = 7, 3, 10  # letter 6 ends a name
    eos = n_letters - 1
    words = names(2, 6, n_letters - 1)

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.RNNCell(n_categories + n_letters, n_hidden, nonlinearity="relu")
            self.o2o = nn.Linear(n_hidden + n_letters, n_letters)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, category, letter, hidden):
            hidden = self.cell(torch.cat((category, letter), 1), hidden)
            return self.softmax(self.o2o(torch.cat((hidden, letter), 1))), hidden

        def init_hidden(self):
            return torch.zeros(1, n_hidden, dtype=torch.float64)

    def one_hot(i, n):
        return nn.functional.one_hot(torch.tensor([int(i)]), n).double()

    model = Generator()
    init = start(model, init)
    criterion = nn.NLLLoss()
    lr = 0.05
    losses = []
    for k, word in enumerate(words):
        category = one_hot(k % n_categories, n_categories)
        targets = list(word[1:]) + [eos]
        model.zero_grad()
        hidden = model.init_hidden()
        loss = 0
        for letter, target in zip(word, targets):
            output, hidden = model(category, one_hot(letter, n_letters), hidden)
            loss += criterion(output, torch.tensor([int(target)]))
        loss.backward()
        for p in model.parameters():
            p.data.add_(p.grad.data, alpha=-lr)
        losses.append(loss.item() / len(word))

    samples = []
    with torch.no_grad():
        for c in range(n_categories):
            hidden, letter, name = model.init_hidden(), 0, []
            for _ in range(5):
                output, hidden = model(one_hot(c, n_categories), one_hot(letter, n_letters), hidden)
                _, top_i = output.topk(1)
                letter = top_i[0][0].item()
                if letter == eos:
                    break
                name.append(letter)
            samples.append(name)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model), samples=samples)


def test_names_generator_rnncell_category_manual_update(torch):
    both(torch, names_generator)


# ---- translation with nn.TransformerEncoder / nn.TransformerDecoder built from their layers: token embeddings
# scaled by sqrt(d), a sinusoidal buffer, causal and padding masks on both sides, label-smoothed CE ignoring pads,
# then a greedy decode that calls the encoder once and the decoder per step -----------------------------------------
def transformer_translation(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(3)
    pad, bos, eos, vocab, d = 0, 1, 2, 9, 8
    src_lens, tgt_lens = [5, 3, 4], [4, 5, 2]
    src = torch.tensor([list(rng.integers(3, vocab, n)) + [pad] * (5 - n) for n in src_lens])
    tgt = torch.tensor([[bos] + list(rng.integers(3, vocab, n)) + [eos] + [pad] * (5 - n) for n in tgt_lens])

    class PositionalEncoding(nn.Module):
        def __init__(self, d, max_len=16):
            super().__init__()
            den = torch.exp(-torch.arange(0, d, 2, dtype=torch.float64) * math.log(10000) / d)
            pos = torch.arange(0, max_len, dtype=torch.float64).reshape(max_len, 1)
            pe = torch.zeros((max_len, d), dtype=torch.float64)
            pe[:, 0::2] = torch.sin(pos * den)
            pe[:, 1::2] = torch.cos(pos * den)
            self.register_buffer("pe", pe.unsqueeze(0))

        def forward(self, x):
            return x + self.pe[:, :x.size(1)]

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb = nn.Embedding(vocab, d)
            self.tgt_emb = nn.Embedding(vocab, d)
            self.pos = PositionalEncoding(d)
            enc = nn.TransformerEncoderLayer(d, 2, 16, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(enc, 2, norm=nn.LayerNorm(d), enable_nested_tensor=False)
            dec = nn.TransformerDecoderLayer(d, 2, 16, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=True)
            self.decoder = nn.TransformerDecoder(dec, 2, norm=nn.LayerNorm(d))
            self.generator = nn.Linear(d, vocab)

        def encode(self, src, src_pad):
            return self.encoder(self.pos(self.src_emb(src) * math.sqrt(d)), src_key_padding_mask=src_pad)

        def decode(self, tgt, memory, tgt_mask, tgt_pad=None, memory_pad=None):
            x = self.pos(self.tgt_emb(tgt) * math.sqrt(d))
            return self.decoder(x, memory, tgt_mask=tgt_mask, tgt_key_padding_mask=tgt_pad,
                                memory_key_padding_mask=memory_pad)

    model = Seq2Seq()
    init = start(model, init)
    loss_fn = nn.CrossEntropyLoss(ignore_index=pad, label_smoothing=0.1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), dtype=torch.float64)
    src_pad, tgt_pad = src == pad, tgt_in == pad
    losses = []
    for _ in range(3):
        memory = model.encode(src, src_pad)
        out = model.generator(model.decode(tgt_in, memory, tgt_mask, tgt_pad, src_pad))
        loss = loss_fn(out.reshape(-1, vocab), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        memory = model.encode(src[:1, :src_lens[0]], None)
        ys = torch.full((1, 1), bos, dtype=torch.long)
        for _ in range(4):
            mask = nn.Transformer.generate_square_subsequent_mask(ys.size(1), dtype=torch.float64)
            prob = model.generator(model.decode(ys, memory, mask)[:, -1])
            next_word = torch.max(prob, dim=1)[1].item()
            ys = torch.cat([ys, torch.full((1, 1), next_word, dtype=torch.long)], dim=1)
    return dict(init=init, tgt_mask=tgt_mask, losses=losses, params=list(model.parameters()), grads=grads(model),
                memory=memory, prob=prob, ys=ys)


def test_transformer_encoder_decoder_stacks_translation_masks_greedy(torch):
    both(torch, transformer_translation)


# ---- SegNet: conv-bn-relu encoders whose MaxPool2d(return_indices=True) indices drive MaxUnpool2d in the decoder
# (output_size given for an odd size), per-pixel weighted CE with ignore_index, Softmax2d probabilities, mean IoU --
def segnet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(4)
    n_classes = 3
    images = torch.tensor(rng.standard_normal((2, 1, 7, 6)))
    masks = torch.tensor(rng.integers(0, n_classes, (2, 7, 6)))
    masks[0, 0, :3] = 255  # unlabelled pixels

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    class SegNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc1, self.enc2 = block(1, 4), block(4, 6)
            self.pool = nn.MaxPool2d(2, stride=2, return_indices=True)
            self.unpool = nn.MaxUnpool2d(2, stride=2)
            self.dec2, self.dec1 = block(6, 4), nn.Conv2d(4, n_classes, 3, padding=1)

        def forward(self, x):
            x = self.enc1(x)
            size1 = x.size()
            x, idx1 = self.pool(x)
            x = self.enc2(x)
            size2 = x.size()
            x, idx2 = self.pool(x)
            x = self.unpool(x, idx2, output_size=size2)
            x = self.dec2(x)
            x = self.unpool(x, idx1, output_size=size1)
            return self.dec1(x)

    model = SegNet()
    init = start(model, init)
    weight = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    criterion = nn.CrossEntropyLoss(weight=weight, ignore_index=255)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    losses = []
    for _ in range(3):
        model.train()
        logits = model(images)
        loss = criterion(logits, masks)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        probs = nn.Softmax2d()(model(images))
        pred = probs.argmax(1)
    valid = masks != 255
    ious = []
    for c in range(n_classes):
        inter = ((pred == c) & (masks == c) & valid).sum().item()
        union = (((pred == c) | (masks == c)) & valid).sum().item()
        ious.append(inter / union if union else float("nan"))
    _, idx = F.max_pool2d(images, 2, return_indices=True)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model),
                buffers=list(model.buffers()), probs=probs, pred=pred, ious=ious, idx=idx,
                unpooled=F.max_unpool2d(F.max_pool2d(images, 2), idx, 2, output_size=(7, 6)))


def test_segnet_max_unpool_indices_weighted_ignore_softmax2d(torch):
    both(torch, segnet)


# ---- image patches by nn.Unfold (overlapping, strided), a shared linear denoiser per patch, and nn.Fold back with
# the overlap divided out by fold(unfold(ones)); F.unfold with dilation and padding beside it ------------------------
def patch_denoiser(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(5)
    clean = torch.tensor(np.sin(np.linspace(0, 3, 8 * 8)).reshape(1, 1, 8, 8).repeat(2, 0))
    noisy = clean + 0.2 * torch.tensor(rng.standard_normal((2, 1, 8, 8)))
    k, stride = 4, 2
    unfold, fold = nn.Unfold(k, stride=stride), nn.Fold((8, 8), k, stride=stride)
    n_pix = k * k

    class PatchNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n_pix, 6), nn.Tanh(), nn.Linear(6, n_pix))

        def forward(self, x):
            patches = unfold(x).transpose(1, 2)  # (N, L, k*k)
            out = patches + self.net(patches)
            summed = fold(out.transpose(1, 2))
            return summed / fold(unfold(torch.ones_like(x)))

    model = PatchNet()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    losses = []
    for _ in range(4):
        loss = F.mse_loss(model(noisy), clean)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    counts = fold(unfold(torch.ones_like(noisy)))
    x = noisy.clone().requires_grad_()
    cols = F.unfold(x, kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    back = F.fold(cols, (8, 8), kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    (back * clean).sum().backward()
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model), counts=counts,
                cols=cols, back=back, x_grad=x.grad, out=model(noisy))


def test_unfold_fold_patch_denoiser_overlap_average(torch):
    both(torch, patch_denoiser)


# ---- the "fused conv-bn" tutorial: a custom Function whose backward calls torch.nn.grad.conv2d_input/conv2d_weight
# and differentiates batch norm by hand; it trains like nn.Conv2d + nn.BatchNorm2d(affine=False) -------------------
def fused_conv_bn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(6)
    x = torch.tensor(rng.standard_normal((3, 2, 6, 6)))
    y = torch.tensor(rng.integers(0, 4, 3))

    class FusedConvBN2DFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, conv_weight, eps=1e-3):
            ctx.save_for_backward(X, conv_weight)
            X = F.conv2d(X, conv_weight)
            sum_ = X.sum(dim=(0, 2, 3))
            X_sum_squared = (X * X).sum(dim=(0, 2, 3))
            N = X.numel() / X.size(1)
            mean = sum_ / N
            var = X_sum_squared / N - mean * mean
            ctx.eps, ctx.N = eps, N
            ctx.sum, ctx.sqrt_var = sum_, torch.sqrt(var + eps)
            return (X - mean.reshape(1, -1, 1, 1)) / ctx.sqrt_var.reshape(1, -1, 1, 1)

        @staticmethod
        def backward(ctx, grad_out):
            X, conv_weight = ctx.saved_tensors
            X_conv_out = F.conv2d(X, conv_weight)
            mean = (ctx.sum / ctx.N).reshape(1, -1, 1, 1)
            sqrt_var = ctx.sqrt_var.reshape(1, -1, 1, 1)
            x_hat = (X_conv_out - mean) / sqrt_var
            g = grad_out
            grad_conv = (g - g.mean(dim=(0, 2, 3), keepdim=True)
                         - x_hat * (g * x_hat).mean(dim=(0, 2, 3), keepdim=True)) / sqrt_var
            grad_X = torch.nn.grad.conv2d_input(X.shape, conv_weight, grad_conv)
            grad_weight = torch.nn.grad.conv2d_weight(X, conv_weight.shape, grad_conv)
            return grad_X, grad_weight, None

    class FusedConvBN(nn.Module):
        def __init__(self, cin, cout, k):
            super().__init__()
            self.conv_weight = nn.Parameter(torch.empty(cout, cin, k, k))
            nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))

        def forward(self, x):
            return FusedConvBN2DFunction.apply(x, self.conv_weight)

    class Net(nn.Module):
        def __init__(self, fused):
            super().__init__()
            self.fused = fused
            if fused:
                self.convbn = FusedConvBN(2, 4, 3)
            else:
                self.conv = nn.Conv2d(2, 4, 3, bias=False)
                self.bn = nn.BatchNorm2d(4, affine=False, track_running_stats=False, eps=1e-3)
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            x = self.convbn(x) if self.fused else self.bn(self.conv(x))
            return self.fc(F.adaptive_avg_pool2d(F.relu(x), 1).flatten(1))

    fused, plain = Net(True), Net(False)
    init = start(nn.ModuleList([fused]), init)
    plain.double()
    with torch.no_grad():
        plain.conv.weight.copy_(fused.convbn.conv_weight)
        plain.fc.load_state_dict(fused.fc.state_dict())
    xg = x.clone().requires_grad_()
    ok = torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (xg[:2, :, :4, :4].detach().requires_grad_(),
                                                                fused.convbn.conv_weight.detach().requires_grad_()))
    losses = []
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (fused, plain)]
    for _ in range(3):
        for m, opt in zip((fused, plain), opts):
            loss = F.cross_entropy(m(xg), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return dict(init=init, ok=ok, losses=losses, fused=list(fused.parameters()), plain=list(plain.parameters()),
                x_grad=xg.grad, name=type(fused(x).grad_fn).__name__)


def test_fused_conv_bn_custom_function_nn_grad(torch):
    _, ours = both(torch, fused_conv_bn)
    fused_losses, plain_losses = ours["losses"][0::2], ours["losses"][1::2]
    np.testing.assert_allclose(fused_losses, plain_losses, rtol=1e-9)


# ---- a word LSTM language model whose output layer is AdaptiveLogSoftmaxWithLoss (two tail clusters, div_value),
# trained with gradient clipping; log_prob sums to one, predict is its argmax -----------------------------------------
def adaptive_softmax_lm(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(7)
    vocab, d, bptt = 20, 8, 5
    # a Zipf-like corpus: frequent ids are small, as the adaptive softmax expects
    corpus = torch.tensor(np.minimum(rng.zipf(1.5, 3 * 4 * bptt + 1) - 1, vocab - 1))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.lstm = nn.LSTM(d, d, num_layers=2, batch_first=True)
            self.out = nn.AdaptiveLogSoftmaxWithLoss(d, vocab, cutoffs=[4, 10], div_value=2.0, head_bias=True)

        def forward(self, x, targets, hidden=None):
            h, hidden = self.lstm(self.emb(x), hidden)
            return self.out(h.reshape(-1, d), targets.reshape(-1)), h, hidden

    model = LM()
    init = start(model, init)
    data = corpus[:-1].reshape(4, -1)
    target = corpus[1:].reshape(4, -1)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    hidden, losses, outputs = None, [], []
    for i in range(0, data.size(1), bptt):
        if hidden is not None:
            hidden = tuple(h.detach() for h in hidden)
        res, h, hidden = model(data[:, i:i + bptt], target[:, i:i + bptt], hidden)
        opt.zero_grad()
        res.loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        losses.append(res.loss.item())
        outputs.append(res.output)
    with torch.no_grad():
        flat = h.reshape(-1, d)
        logp = model.out.log_prob(flat)
        pred = model.out.predict(flat)
    return dict(init=init, losses=losses, outputs=outputs, params=list(model.parameters()), grads=grads(model),
                logp=logp, total=logp.exp().sum(1), pred=pred, argmax=logp.argmax(1))


def test_adaptive_log_softmax_lstm_lm_clipped(torch):
    both(torch, adaptive_softmax_lm)


# ---- ShuffleNet v2 units: channel split, grouped/depthwise convs, nn.ChannelShuffle against the hand-written
# view-transpose-view shuffle, ReLU6 and Hardtanh, a stride-2 unit concatenating both branches ----------------------
def shufflenet_units(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(8)
    x = torch.tensor(rng.standard_normal((2, 8, 6, 6)))
    y = torch.tensor([1, 3])

    def channel_shuffle(x, groups):
        n, c, h, w = x.size()
        x = x.view(n, groups, c // groups, h, w)
        x = torch.transpose(x, 1, 2).contiguous()
        return x.view(n, -1, h, w)

    def branch(c, stride):
        return nn.Sequential(
            nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU6(inplace=True),
            nn.Conv2d(c, c, 3, stride, 1, groups=c, bias=False), nn.BatchNorm2d(c),
            nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.Hardtanh(-1.0, 2.0))

    class Unit(nn.Module):
        def __init__(self, c, stride):
            super().__init__()
            self.stride = stride
            half = c // 2
            self.right = branch(half if stride == 1 else c, stride)
            if stride == 2:
                self.left = nn.Sequential(nn.Conv2d(c, c, 3, 2, 1, groups=c, bias=False), nn.BatchNorm2d(c),
                                          nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU6())
            self.shuffle = nn.ChannelShuffle(2)

        def forward(self, x):
            if self.stride == 1:
                a, b = x.chunk(2, dim=1)
                out = torch.cat((a, self.right(b)), dim=1)
            else:
                out = torch.cat((self.left(x), self.right(x)), dim=1)
            return self.shuffle(out)

    model = nn.Sequential(Unit(8, 1), Unit(8, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 4))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    shuffled = nn.ChannelShuffle(4)(x)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model),
                buffers=list(model.buffers()), shuffled=shuffled, by_hand=channel_shuffle(x, 4),
                functional=F.channel_shuffle(x, 2))


def test_shufflenet_units_channel_shuffle_relu6_hardtanh(torch):
    both(torch, shufflenet_units)


# ---- a CNN on a torus: learning a periodic stencil (one heat step) with padding_mode="circular" convs beside
# nn.CircularPad2d + valid convs, CELU between, and the same stencil in 1-D by F.pad(mode="circular") -------------
def circular_cnn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(9)
    u = torch.tensor(rng.standard_normal((4, 1, 6, 5)))
    lap = torch.tensor([[0.0, 1, 0], [1, -4, 1], [0, 1, 0]], dtype=torch.float64).view(1, 1, 3, 3)
    target = u + 0.1 * F.conv2d(F.pad(u, (1, 1, 1, 1), mode="circular"), lap)

    class Torus(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(1, 4, 3, padding=1, padding_mode="circular")
            self.pad = nn.CircularPad2d((1, 1, 1, 1))
            self.b = nn.Conv2d(4, 1, 3)
            self.act = nn.CELU(alpha=0.5)

        def forward(self, x):
            return x + self.b(self.pad(self.act(self.a(x))))

    model = Torus()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(4):
        loss = F.mse_loss(model(u), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    rolled = model(torch.roll(u, shifts=(2, 1), dims=(2, 3)))
    equivariant = torch.roll(model(u), shifts=(2, 1), dims=(2, 3))
    line = u[:, :, 0]
    pad1 = nn.CircularPad1d(2)(line)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model), rolled=rolled,
                equivariant=equivariant, pad1=pad1, same=torch.allclose(pad1, F.pad(line, (2, 2), mode="circular")))


def test_circular_padding_torus_cnn_celu(torch):
    both(torch, circular_cnn)


# ---- a volumetric spatial transformer: a Conv3d/MaxPool3d localisation net regressing a (N, 3, 4) affine started
# at the identity, affine_grid + trilinear grid_sample with align_corners both ways, border and zeros padding -------
def volumetric_stn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(10)
    vols = torch.tensor(rng.standard_normal((2, 1, 4, 6, 6)))
    y = torch.tensor([0, 2])

    class STN3d(nn.Module):
        def __init__(self, align_corners):
            super().__init__()
            self.align_corners = align_corners
            self.localization = nn.Sequential(nn.Conv3d(1, 3, 3, padding=1), nn.MaxPool3d(2), nn.ReLU())
            self.fc_loc = nn.Sequential(nn.Linear(3 * 2 * 3 * 3, 8), nn.ReLU(), nn.Linear(8, 12))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0], dtype=torch.float))
            self.classifier = nn.Sequential(nn.Conv3d(1, 2, 3), nn.Flatten(), nn.LazyLinear(3))

        def stn(self, x, padding_mode):
            theta = self.fc_loc(self.localization(x).view(x.size(0), -1)).view(-1, 3, 4)
            grid = F.affine_grid(theta, list(x.size()), align_corners=self.align_corners)
            return F.grid_sample(x, grid, mode="bilinear", padding_mode=padding_mode,
                                 align_corners=self.align_corners)

        def forward(self, x, padding_mode="zeros"):
            return self.classifier(self.stn(x, padding_mode))

    out = {}
    models = nn.ModuleList([STN3d(False), STN3d(True)]).double()
    with torch.no_grad():
        for m in models:  # materialise the lazy heads before recording init
            m(vols)
    init = start(models, init)
    for m in models:
        opt = torch.optim.SGD(m.parameters(), lr=0.05)
        losses = []
        for step in range(3):
            loss = F.cross_entropy(m(vols, "border" if step % 2 else "zeros"), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        with torch.no_grad():
            warped = m.stn(vols, "zeros")
        out[f"losses{m.align_corners}"] = losses
        out[f"warped{m.align_corners}"] = warped
    theta = torch.tensor(rng.standard_normal((2, 3, 4)) * 0.3, requires_grad=True)
    grid = F.affine_grid(theta, [2, 1, 3, 4, 5], align_corners=False)
    sampled = F.grid_sample(vols, grid, padding_mode="reflection", align_corners=False)
    sampled.square().sum().backward()
    return dict(init=init, **out, params=list(models.parameters()), grads=grads(models), grid=grid,
                sampled=sampled, theta_grad=theta.grad)


def test_volumetric_stn_affine_grid_3d_trilinear_both_alignments(torch):
    both(torch, volumetric_stn)


# ---- "Learning PyTorch with Examples": y = sin(x) fitted by hand-written tensors and updates, by autograd, by a
# custom LegendrePolynomial3 Function, by nn.Sequential(Linear(3, 1), Flatten(0, 1)) under RMSprop, and a DynamicNet
# reusing its middle layer a numpy-drawn number of times ------------------------------------------------------------
def learning_with_examples(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(11)
    x = torch.linspace(-math.pi, math.pi, 200, dtype=torch.float64)
    y = torch.sin(x)
    abcd = [torch.tensor(v, dtype=torch.float64) for v in rng.standard_normal(4)]

    # tensors and a hand-written backward
    a, b, c, d = (t.clone() for t in abcd)
    lr = 1e-6
    for _ in range(5):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        grad_y_pred = 2.0 * (y_pred - y)
        grads_by_hand = [grad_y_pred.sum(), (grad_y_pred * x).sum(), (grad_y_pred * x ** 2).sum(),
                         (grad_y_pred * x ** 3).sum()]
        a, b, c, d = (p - lr * g for p, g in zip((a, b, c, d), grads_by_hand))
    manual = torch.stack([a, b, c, d])

    # autograd, updates under no_grad
    a, b, c, d = (t.clone().requires_grad_() for t in abcd)
    for _ in range(5):
        loss = (a + b * x + c * x ** 2 + d * x ** 3 - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    auto = torch.stack([a, b, c, d]).detach()

    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    a, b, c, d = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
    for _ in range(5):
        loss = (a + b * LegendrePolynomial3.apply(c + d * x) - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 5e-6 * p.grad
                p.grad = None
    legendre = torch.stack([a, b, c, d]).detach()

    class DynamicNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d, self.e = (nn.Parameter(torch.randn(())) for _ in range(5))

        def forward(self, x, extra):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, 4 + extra):
                y = y + self.e * x ** exp
            return y

    model = nn.ModuleDict({"poly": nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1)), "dyn": DynamicNet()})
    init = start(model, init)
    xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
    loss_fn = nn.MSELoss(reduction="sum")
    opt = torch.optim.RMSprop(model["poly"].parameters(), lr=1e-3)
    dyn_opt = torch.optim.SGD(model["dyn"].parameters(), lr=1e-8, momentum=0.9)
    losses = []
    for _ in range(5):
        loss = loss_fn(model["poly"](xx), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        dyn_loss = loss_fn(model["dyn"](x, int(rng.integers(0, 3))), y)
        dyn_opt.zero_grad()
        dyn_loss.backward()
        dyn_opt.step()
        losses.append((loss.item(), dyn_loss.item()))
    linear = model["poly"][0]
    return dict(init=init, manual=manual, auto=auto, legendre=legendre, losses=losses,
                params=list(model.parameters()), grads=grads(model), xx=xx,
                fitted=[linear.bias.item(), linear.weight[:, 0].item(), linear.weight[:, 1].item()])


def test_learning_pytorch_with_examples_polynomials(torch):
    both(torch, learning_with_examples)


# ---- "What is torch.nn really?": a logistic model by hand (log_softmax, nll by indexing, accuracy), then
# F.cross_entropy, nn.Module, nn.Linear, optim, TensorDataset/DataLoader, a Lambda module, WrappedDataLoader and fit
# with a validation loss weighted by batch sizes ---------------------------------------------------------------------
def nn_really(torch, init):
    nn, F = torch.nn, torch.nn.functional
    TensorDataset, DataLoader = torch.utils.data.TensorDataset, torch.utils.data.DataLoader
    rng = np.random.default_rng(12)
    x_train = torch.tensor(rng.standard_normal((20, 16)))
    y_train = torch.tensor(rng.integers(0, 3, 20))
    x_valid = torch.tensor(rng.standard_normal((7, 16)))
    y_valid = torch.tensor(rng.integers(0, 3, 7))
    bs, lr = 8, 0.5

    weights = torch.tensor(rng.standard_normal((16, 3)) / math.sqrt(16))
    weights.requires_grad_()
    bias = torch.zeros(3, dtype=torch.float64, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    def accuracy(out, yb):
        return (torch.argmax(out, dim=1) == yb).float().mean()

    by_hand = []
    for i in range((20 - 1) // bs + 1):
        xb, yb = x_train[i * bs: i * bs + bs], y_train[i * bs: i * bs + bs]
        pred = log_softmax(xb @ weights + bias)
        loss = nll(pred, yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
        by_hand.append((loss.item(), F.cross_entropy(xb @ weights + bias, yb).item(), accuracy(pred, yb).item()))

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x, y):
        return x.view(-1, 1, 4, 4), y

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl, self.func = dl, func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            for b in self.dl:
                yield self.func(*b)

    model = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(4, 3, 3, stride=2, padding=1),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), Lambda(lambda x: x.view(x.size(0), -1)))
    init = start(model, init)
    train_dl = WrappedDataLoader(DataLoader(TensorDataset(x_train, y_train), batch_size=bs), preprocess)
    valid_dl = WrappedDataLoader(DataLoader(TensorDataset(x_valid, y_valid), batch_size=bs * 2), preprocess)

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    history = []
    for _ in range(2):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, F.cross_entropy, xb, yb, opt)
        model.eval()
        with torch.no_grad():
            losses, nums = zip(*[loss_batch(model, F.cross_entropy, xb, yb) for xb, yb in valid_dl])
        history.append(np.sum(np.multiply(losses, nums)) / np.sum(nums))
    return dict(init=init, by_hand=by_hand, weights=weights, bias=bias, history=history,
                params=list(model.parameters()), batches=len(train_dl))


def test_what_is_torch_nn_really_refactors(torch):
    both(torch, nn_really)


# ---- the chatbot tutorial: a bidirectional GRU encoder over pack_padded_sequence (sorted batch) with its two
# directions summed, a GRU decoder stepping one word at a time with Luong attention (dot, general, concat), the
# masked NLL by gather + masked_select, teacher forcing decided by numpy, two optimizers, clipping, greedy search ------
def chatbot(torch, init, method):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(13)
    pad, sos, vocab, hidden = 0, 1, 10, 6
    lengths = [5, 4, 2]  # the tutorial sorts its batch by length
    inputs = torch.tensor([list(rng.integers(2, vocab, n)) + [pad] * (5 - n) for n in lengths]).t()  # (T, B)
    out_lens = [3, 4, 2]
    target = torch.tensor([list(rng.integers(2, vocab, n)) + [pad] * (4 - n) for n in out_lens]).t()
    mask = target != pad

    class EncoderRNN(nn.Module):
        def __init__(self, embedding):
            super().__init__()
            self.embedding = embedding
            self.gru = nn.GRU(hidden, hidden, 2, bidirectional=True)

        def forward(self, input_seq, input_lengths, hidden=None):
            packed = nn.utils.rnn.pack_padded_sequence(self.embedding(input_seq), input_lengths)
            outputs, hidden = self.gru(packed, hidden)
            outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs)
            return outputs[:, :, :hidden.size(-1)] + outputs[:, :, hidden.size(-1):], hidden

    class Attn(nn.Module):
        def __init__(self, method):
            super().__init__()
            self.method = method
            if method == "general":
                self.attn = nn.Linear(hidden, hidden)
            elif method == "concat":
                self.attn = nn.Linear(hidden * 2, hidden)
                self.v = nn.Parameter(torch.rand(hidden, dtype=torch.float64))

        def forward(self, h, encoder_outputs):
            if self.method == "dot":
                energies = torch.sum(h * encoder_outputs, dim=2)
            elif self.method == "general":
                energies = torch.sum(h * self.attn(encoder_outputs), dim=2)
            else:
                energy = self.attn(torch.cat((h.expand(encoder_outputs.size(0), -1, -1), encoder_outputs), 2)).tanh()
                energies = torch.sum(self.v * energy, dim=2)
            return F.softmax(energies.t(), dim=1).unsqueeze(1)

    class LuongAttnDecoderRNN(nn.Module):
        def __init__(self, embedding):
            super().__init__()
            self.embedding = embedding
            self.gru = nn.GRU(hidden, hidden, 2)
            self.concat = nn.Linear(hidden * 2, hidden)
            self.out = nn.Linear(hidden, vocab)
            self.attn = Attn(method)

        def forward(self, input_step, last_hidden, encoder_outputs):
            rnn_output, hidden = self.gru(self.embedding(input_step), last_hidden)
            attn_weights = self.attn(rnn_output, encoder_outputs)
            context = attn_weights.bmm(encoder_outputs.transpose(0, 1))
            concat_input = torch.cat((rnn_output.squeeze(0), context.squeeze(1)), 1)
            output = self.out(torch.tanh(self.concat(concat_input)))
            return F.softmax(output, dim=1), hidden

    def mask_nll_loss(inp, target, mask):
        n_total = mask.sum()
        cross_entropy = -torch.log(torch.gather(inp, 1, target.view(-1, 1)).squeeze(1))
        return cross_entropy.masked_select(mask).mean(), n_total.item()

    embedding = nn.Embedding(vocab, hidden)
    model = nn.ModuleDict({"encoder": EncoderRNN(embedding), "decoder": LuongAttnDecoderRNN(embedding)})
    init = start(model, init)
    encoder, decoder = model["encoder"], model["decoder"]
    enc_opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    dec_opt = torch.optim.Adam(decoder.parameters(), lr=5e-3)
    losses = []
    for _ in range(3):
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        encoder_outputs, encoder_hidden = encoder(inputs, torch.tensor(lengths))
        decoder_input = torch.full((1, 3), sos, dtype=torch.long)
        decoder_hidden = encoder_hidden[:2]
        teacher = rng.random() < 0.5
        loss, print_losses, n_totals = 0, [], 0
        for t in range(target.size(0)):
            decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden, encoder_outputs)
            if teacher:
                decoder_input = target[t].view(1, -1)
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = torch.tensor([[topi[i][0] for i in range(3)]])
            mask_loss, n_total = mask_nll_loss(decoder_output, target[t], mask[t])
            loss += mask_loss
            print_losses.append(mask_loss.item() * n_total)
            n_totals += n_total
        loss.backward()
        nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
        nn.utils.clip_grad_norm_(decoder.parameters(), 1.0)
        enc_opt.step()
        dec_opt.step()
        losses.append(sum(print_losses) / n_totals)

    encoder.eval()
    decoder.eval()
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(inputs[:, :1], torch.tensor([5]))
        decoder_hidden = encoder_hidden[:2]
        decoder_input = torch.ones(1, 1, dtype=torch.long) * sos
        all_tokens, all_scores = torch.zeros([0], dtype=torch.long), torch.zeros([0], dtype=torch.float64)
        for _ in range(4):
            decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden, encoder_outputs)
            decoder_scores, decoder_input = torch.max(decoder_output, dim=1)
            all_tokens = torch.cat((all_tokens, decoder_input), dim=0)
            all_scores = torch.cat((all_scores, decoder_scores), dim=0)
            decoder_input = torch.unsqueeze(decoder_input, 0)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model), tokens=all_tokens,
                scores=all_scores)


@pytest.mark.parametrize("method", ["dot", "general", "concat"])
def test_chatbot_luong_attention_masked_nll_greedy_search(torch, method):
    both(torch, chatbot, method=method)


# ---- pretrained vectors: Embedding.from_pretrained frozen (padding_idx) under an optimizer over
# filter(lambda p: p.requires_grad, ...), then thawed into a new param group at a lower lr; freeze=False from the
# start as the other arm; mean pooling over non-pad tokens; the cosine nearest neighbours of the vectors ------------
def pretrained_embeddings(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(14)
    vocab, dim, pad = 9, 5, 0
    vectors = torch.tensor(rng.standard_normal((vocab, dim)))
    vectors[pad] = 0
    lens = [4, 2, 3, 4]
    tokens = torch.tensor([list(rng.integers(1, vocab, n)) + [pad] * (4 - n) for n in lens])
    y = torch.tensor([1.0, 0.0, 1.0, 0.0], dtype=torch.float64)

    class Classifier(nn.Module):
        def __init__(self, freeze):
            super().__init__()
            self.embedding = nn.Embedding.from_pretrained(vectors, freeze=freeze, padding_idx=pad)
            self.fc = nn.Linear(dim, 1)

        def forward(self, x):
            keep = (x != pad).unsqueeze(-1).double()
            pooled = (self.embedding(x) * keep).sum(1) / keep.sum(1)
            return self.fc(pooled).squeeze(-1)

    models = nn.ModuleList([Classifier(True), Classifier(False)])
    init = start(models, init)
    frozen, free = models
    out = {"requires": [[p.requires_grad for p in m.parameters()] for m in models]}
    opt = torch.optim.Adam(filter(lambda p: p.requires_grad, frozen.parameters()), lr=0.05)
    free_opt = torch.optim.Adam(free.parameters(), lr=0.05)
    losses = []
    for step in range(5):
        if step == 2:
            frozen.embedding.weight.requires_grad_(True)
            opt.add_param_group({"params": [frozen.embedding.weight], "lr": 0.01})
        for m, o in ((frozen, opt), (free, free_opt)):
            loss = F.binary_cross_entropy_with_logits(m(tokens), y)
            o.zero_grad()
            loss.backward()
            o.step()
            losses.append(loss.item())
    with torch.no_grad():
        unit = F.normalize(frozen.embedding.weight[1:], dim=1)
        sims = unit @ unit.T - 2 * torch.eye(vocab - 1, dtype=torch.float64)
        nearest = sims.argmax(1) + 1
        cos = F.cosine_similarity(frozen.embedding.weight[1:2], free.embedding.weight[1:], dim=1)
    return dict(init=init, **out, losses=losses, params=list(models.parameters()), grads=grads(models),
                nearest=nearest, cos=cos, pad_row=frozen.embedding.weight[pad], groups=len(opt.param_groups),
                lrs=[g["lr"] for g in opt.param_groups])


def test_pretrained_embeddings_frozen_then_thawed_filter_param_group(torch):
    both(torch, pretrained_embeddings)


# ---- the padding utilities' round trips in a BiLSTM tagger: pad_sequence (both sides, batch_first both ways),
# pack_padded_sequence(enforce_sorted=False), an elementwise op on packed.data kept as a PackedSequence,
# pad_packed_sequence(total_length=...), unpad_sequence and unpack_sequence back to the sequences ----------------------
def padding_round_trips(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rnn_utils = nn.utils.rnn
    rng = np.random.default_rng(15)
    lens = [3, 5, 2, 4]
    seqs = [torch.tensor(rng.standard_normal((n, 3))) for n in lens]
    tags = [torch.tensor(rng.integers(0, 4, n)) for n in lens]
    lengths = torch.tensor(lens)

    model = nn.ModuleDict({"lstm": nn.LSTM(3, 4, bidirectional=True, batch_first=True), "out": nn.Linear(8, 4)})
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    padded_tags = rnn_utils.pad_sequence(tags, batch_first=True, padding_value=-100)
    losses = []
    for _ in range(3):
        padded = rnn_utils.pad_sequence(seqs, batch_first=True)
        packed = rnn_utils.pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        packed = rnn_utils.PackedSequence(torch.tanh(packed.data), packed.batch_sizes, packed.sorted_indices,
                                          packed.unsorted_indices)
        out_packed, (h, c) = model["lstm"](packed)
        out, out_lens = rnn_utils.pad_packed_sequence(out_packed, batch_first=True, total_length=6)
        logits = model["out"](out[:, :padded_tags.size(1)])
        loss = F.cross_entropy(logits.reshape(-1, 4), padded_tags.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    time_first = rnn_utils.pad_sequence(seqs, padding_value=1.5)
    left = rnn_utils.pad_sequence(seqs, batch_first=True, padding_side="left")
    unpadded = rnn_utils.unpad_sequence(out, out_lens, batch_first=True)
    unpacked = rnn_utils.unpack_sequence(out_packed)
    repacked = rnn_utils.pack_sequence(unpadded, enforce_sorted=False)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model), out=out,
                out_lens=out_lens, h=h, c=c, time_first=time_first, left=left, unpadded=unpadded, unpacked=unpacked,
                same=[torch.equal(a, b) for a, b in zip(unpadded, unpacked)], batch_sizes=packed.batch_sizes,
                sorted_indices=packed.sorted_indices, unsorted_indices=packed.unsorted_indices,
                repacked=repacked.data)


def test_padding_utilities_round_trips_bilstm_tagger(torch):
    both(torch, padding_round_trips)


# ---- the transfer-learning tutorial on FashionMNIST-shaped data: a Dataset with hand-written transforms (Compose,
# normalise, a numpy-decided flip), a "pretrained" backbone frozen by requires_grad = False with its head replaced
# by nn.Linear(fc.in_features, n), train/val phases under set_grad_enabled, StepLR, the best weights deep-copied ----
def transfer_learning(torch, init):
    nn = torch.nn
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader
    rng = np.random.default_rng(16)
    images = rng.uniform(0, 255, (12, 10, 10)).astype(np.uint8)
    labels = rng.integers(0, 3, 12)
    flips = rng.random(12) < 0.5

    class Compose:
        def __init__(self, transforms):
            self.transforms = transforms

        def __call__(self, x, i):
            for t in self.transforms:
                x = t(x, i)
            return x

    def to_tensor(img, i):
        return torch.from_numpy(img).double().div(255).unsqueeze(0)

    def normalize(x, i):
        return (x - 0.286) / 0.353

    def flip(x, i):
        return torch.flip(x, dims=[2]) if flips[i] else x

    class FashionLike(Dataset):
        def __init__(self, idx, transform):
            self.idx, self.transform = idx, transform

        def __len__(self):
            return len(self.idx)

        def __getitem__(self, k):
            i = self.idx[k]
            return self.transform(images[i], i), int(labels[i])

    loaders = {"train": DataLoader(FashionLike(range(8), Compose([to_tensor, flip, normalize])), batch_size=4),
               "val": DataLoader(FashionLike(range(8, 12), Compose([to_tensor, normalize])), batch_size=4)}

    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4, momentum=None), nn.ReLU(),
                                          nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.BatchNorm2d(6), nn.ReLU(),
                                          nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.fc = nn.Linear(6, 10)

        def forward(self, x):
            return self.fc(self.features(x))

    model = Backbone()
    for param in model.parameters():
        param.requires_grad = False
    model.features[1].reset_running_stats()
    model.fc = nn.Linear(model.fc.in_features, 3)
    init = start(model, init)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.01, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.1)
    best_acc, best_wts, history = 0.0, None, []
    for _ in range(3):
        for phase in ["train", "val"]:
            model.train() if phase == "train" else model.eval()
            running_loss, running_corrects = 0.0, 0
            for inputs, targets in loaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, targets)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == targets.data)
            if phase == "train":
                scheduler.step()
            n = len(loaders[phase].dataset)
            epoch_acc = running_corrects.double() / n
            history.append((phase, running_loss / n, epoch_acc.item()))
            if phase == "val" and epoch_acc > best_acc:
                best_acc, best_wts = epoch_acc.item(), {k: v.clone() for k, v in model.state_dict().items()}
    if best_wts is not None:
        model.load_state_dict(best_wts)
    bn = model.features[1]
    return dict(init=init, history=history, best_acc=best_acc, params=list(model.parameters()),
                running=[bn.running_mean, bn.running_var, bn.num_batches_tracked, model.features[5].running_mean],
                requires=[p.requires_grad for p in model.parameters()], lr=scheduler.get_last_lr())


def test_transfer_learning_frozen_backbone_new_head_phases(torch):
    both(torch, transfer_learning)


# ---- the activation-functions notebook: each activation's values and gradients over a grid by autograd, then a
# small net per activation trained the same way; a self-normalising net (SELU, LeCun-normal init by numpy,
# AlphaDropout) evaluated in eval mode keeps its activations near zero mean and unit variance --------------------
ACTS = ["Mish", "Softsign", "Tanhshrink", "Hardshrink", "LogSigmoid", "SELU", "Threshold", "Softmin", "Hardswish"]


def make_act(nn, name):
    if name == "Threshold":
        return nn.Threshold(0.1, -1.0)
    if name == "Softmin":
        return nn.Softmin(dim=1)
    if name == "Hardshrink":
        return nn.Hardshrink(0.3)
    return getattr(nn, name)()


def activations(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(17)
    grid = torch.linspace(-3, 3, 13, dtype=torch.float64).reshape(1, -1)
    x = torch.tensor(rng.standard_normal((16, 4)))
    y = torch.tensor(rng.integers(0, 2, 16))
    curves = {}
    for name in ACTS:
        g = grid.clone().requires_grad_()
        out = make_act(nn, name)(g)
        out.sum().backward()
        curves[name] = (out.detach(), g.grad)
    nets = nn.ModuleDict({name: nn.Sequential(nn.Linear(4, 6), make_act(nn, name), nn.Linear(6, 2))
                          for name in ACTS})
    snn = nn.Sequential(nn.Linear(4, 32), nn.SELU(), nn.AlphaDropout(0.1), nn.Linear(32, 32), nn.SELU(),
                        nn.AlphaDropout(0.1))
    init_rng = np.random.default_rng(18)
    with torch.no_grad():
        for m in snn.modules():
            if isinstance(m, nn.Linear):
                m.weight.copy_(torch.tensor(init_rng.standard_normal(tuple(m.weight.shape)) / math.sqrt(m.in_features)))
                m.bias.zero_()
    init = start(nn.ModuleList([nets, snn]), init)
    losses = {}
    for name, net in nets.items():
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        losses[name] = []
        for _ in range(3):
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    snn.eval()
    with torch.no_grad():
        h = snn(torch.tensor(rng.standard_normal((256, 4))))
    return dict(init=init, curves=curves, losses=losses, params=list(nets.parameters()), grads=grads(nets),
                snn_out=h, stats=[h.mean().item(), h.std().item()])


def test_activation_functions_notebook_and_self_normalising_net(torch):
    _, ours = both(torch, activations)
    mean, std = ours["stats"]
    assert abs(mean) < 0.5 and 0.5 < std < 1.5


# ---- counting objects in FashionMNIST-shaped images: ReplicationPad2d and ConstantPad2d borders, LPPool2d, a
# log-rate head trained by PoissonNLLLoss(full=True), a multi-label head by MultiLabelMarginLoss (targets padded
# with -1), Adamax, and predictions by exp and by thresholding --------------------------------------------------------
def counting_cnn(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(19)
    x = torch.tensor(rng.uniform(0, 1, (6, 1, 9, 9)))
    counts = torch.tensor(rng.poisson(3.0, 6)).double()
    multi = torch.full((6, 4), -1, dtype=torch.long)
    for i in range(6):
        present = rng.choice(4, size=int(rng.integers(1, 4)), replace=False)
        multi[i, :len(present)] = torch.tensor(present)

    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.ReplicationPad2d(1), nn.Conv2d(1, 4, 3), nn.Softplus(beta=2.0),
                                      nn.LPPool2d(2, 2), nn.ConstantPad2d((0, 1, 0, 1), 0.5), nn.Conv2d(4, 4, 3),
                                      nn.ReLU(), nn.AdaptiveMaxPool2d(1), nn.Flatten())
            self.rate = nn.Linear(4, 1)
            self.labels = nn.Linear(4, 4)

        def forward(self, x):
            h = self.body(x)
            return self.rate(h).squeeze(1), self.labels(h)

    model = Counter()
    init = start(model, init)
    poisson = nn.PoissonNLLLoss(log_input=True, full=True)
    margin = nn.MultiLabelMarginLoss()
    opt = torch.optim.Adamax(model.parameters(), lr=0.05)
    losses = []
    for _ in range(4):
        log_rate, scores = model(x)
        loss = poisson(log_rate, counts) + margin(scores, multi)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        log_rate, scores = model(x)
    return dict(init=init, losses=losses, params=list(model.parameters()), grads=grads(model),
                expected=log_rate.exp(), present=scores > 0,
                terms=[nn.PoissonNLLLoss(log_input=False, reduction="none")(log_rate.exp(), counts),
                       nn.MultiLabelMarginLoss(reduction="none")(scores, multi)])


def test_counting_cnn_padding_lppool_poisson_multilabel_margin(torch):
    both(torch, counting_cnn)
