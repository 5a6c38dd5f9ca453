"""Deep-learning scripts in the shape of PyTorch's classic tutorials (a CIFAR-like CNN with per-class accuracy, a
char-RNN name classifier with a confusion matrix, a GRU seq2seq step with teacher forcing and greedy decoding,
transfer learning onto a frozen backbone, a spatial-transformer-lite over padding modes, DCGAN's weights_init and
one G/D step, word_language_model's batchify / repackage_hidden loop, the reinforcement_q_learning DQN step, a
deployment sequence), written once against a `torch`-like module and run twice: on PyTorch, then on minigrad from
PyTorch's initial weights. Losses, gradients, parameters and outputs must agree closely (float64 throughout;
random draws by numpy or a seeded `random`)."""
import copy
import io
import math
import random
from collections import deque, namedtuple

import numpy as np
import pytest

import minigrad
from twins import both, grads, start


# ---- the 60-minute blitz: a CIFAR-like CNN, SGD with momentum, overall and per-class accuracy ------------------
def blitz_cifar(torch, init):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    classes = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 32)
            self.fc2 = nn.Linear(32, 16)
            self.fc3 = nn.Linear(16, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    net = Net()
    init = start(net, init)
    rng = np.random.default_rng(160)
    trainloader = [(torch.tensor(rng.standard_normal((4, 3, 32, 32))), torch.tensor(rng.integers(0, 10, 4)))
                   for _ in range(3)]
    testloader = [(torch.tensor(rng.standard_normal((5, 3, 32, 32))), torch.tensor(rng.integers(0, 10, 5)))
                  for _ in range(2)]
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    log = []
    for epoch in range(2):
        running_loss = 0.0
        for i, data in enumerate(trainloader, 0):
            inputs, labels = data
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            if i % 2 == 1:
                log.append(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 2:.6f}")
                running_loss = 0.0
    correct = total = 0
    correct_pred = {classname: 0 for classname in classes}
    total_pred = {classname: 0 for classname in classes}
    with torch.no_grad():
        for images, labels in testloader:
            outputs = net(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
            for label, prediction in zip(labels, predicted):
                if label == prediction:
                    correct_pred[classes[label]] += 1
                total_pred[classes[label]] += 1
    accuracy = {c: 100 * float(correct_pred[c]) / total_pred[c] for c in classes if total_pred[c]}
    return dict(init=init, log=log, correct=correct, total=total, accuracy=accuracy, outputs=outputs,
                predicted=predicted, grads=grads(net), params=list(net.parameters()))


def test_blitz_cifar_cnn(torch):
    both(torch, blitz_cifar)


# ---- a char-RNN name classifier: one-hot letters by hand, topk category, a row-normalised confusion matrix ------
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ .,;'"
NAMES = {"English": ["Smith", "Brown", "Taylor"], "French": ["Dubois", "Lefevre", "Moreau"],
         "Greek": ["Papadakis", "Nikolaou"], "Japanese": ["Sato", "Tanaka", "Ito"]}


def char_rnn(torch, init):
    nn = torch.nn
    categories = list(NAMES)
    n_letters, n_categories, n_hidden = len(LETTERS), len(categories), 12

    def line_to_tensor(line):
        tensor = torch.zeros(len(line), 1, n_letters, dtype=torch.float64)
        for li, letter in enumerate(line):
            tensor[li][0][LETTERS.find(letter)] = 1
        return tensor

    class CharRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(n_letters, n_hidden)
            self.h2o = nn.Linear(n_hidden, n_categories)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, line_tensor):
            rnn_out, hidden = self.rnn(line_tensor)
            return self.softmax(self.h2o(hidden[0]))

    def category_from_output(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return categories[category_i], category_i

    rnn = CharRNN()
    init = start(rnn, init)
    criterion = nn.NLLLoss()
    optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05)
    rng = np.random.default_rng(161)
    losses = []
    for _ in range(6):
        category = categories[rng.integers(n_categories)]
        line = NAMES[category][rng.integers(len(NAMES[category]))]
        category_tensor = torch.tensor([categories.index(category)], dtype=torch.long)
        output = rnn(line_to_tensor(line))
        loss = criterion(output, category_tensor)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(rnn.parameters(), 3)
        optimizer.step()
        losses.append(loss.item())
    confusion = torch.zeros(n_categories, n_categories, dtype=torch.float64)
    guesses = []
    rnn.eval()
    with torch.no_grad():
        for category, lines in NAMES.items():
            for line in lines:
                output = rnn(line_to_tensor(line))
                guess, guess_i = category_from_output(output)
                guesses.append(guess)
                confusion[categories.index(category)][guess_i] += 1
        _, top3 = torch.topk(output, 3, dim=1)
    for i in range(n_categories):
        confusion[i] = confusion[i] / confusion[i].sum()
    return dict(init=init, losses=losses, guesses=guesses, confusion=confusion, top3=top3,
                grads=grads(rnn), params=list(rnn.parameters()))


def test_char_rnn_name_classifier(torch):
    both(torch, char_rnn)


# ---- seq2seq without attention: GRU encoder and decoder, teacher forcing by a numpy draw, greedy decoding --------
def seq2seq_gru(torch, init):
    nn, F = torch.nn, torch.nn.functional
    SOS, EOS, vocab_in, vocab_out, hidden_size = 0, 1, 9, 8, 10

    class EncoderRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab_in, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size)

        def forward(self, input, hidden):
            embedded = self.embedding(input).view(1, 1, -1)
            return self.gru(embedded, hidden)

    class DecoderRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab_out, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size)
            self.out = nn.Linear(hidden_size, vocab_out)

        def forward(self, input, hidden):
            output = F.relu(self.embedding(input).view(1, 1, -1))
            output, hidden = self.gru(output, hidden)
            return F.log_softmax(self.out(output[0]), dim=1), hidden

    class Both(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.decoder = EncoderRNN(), DecoderRNN()

    model = Both()
    init = start(model, init)
    encoder, decoder = model.encoder, model.decoder
    enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.05)
    dec_opt = torch.optim.SGD(decoder.parameters(), lr=0.05)
    criterion = nn.NLLLoss()
    rng = np.random.default_rng(162)

    def init_hidden():
        return torch.zeros(1, 1, hidden_size, dtype=torch.float64)

    def encode(input_tensor):
        encoder_hidden = init_hidden()
        for ei in range(input_tensor.size(0)):
            encoder_output, encoder_hidden = encoder(input_tensor[ei], encoder_hidden)
        return encoder_hidden

    losses, forcing = [], []
    for _ in range(4):
        input_tensor = torch.tensor(rng.integers(2, vocab_in, (5, 1)), dtype=torch.long)
        target_tensor = torch.tensor(np.append(rng.integers(2, vocab_out, 3), EOS)[:, None], dtype=torch.long)
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        decoder_hidden = encode(input_tensor)
        decoder_input = torch.tensor([[SOS]])
        use_teacher_forcing = rng.random() < 0.5
        forcing.append(use_teacher_forcing)
        loss = 0
        for di in range(target_tensor.size(0)):
            decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
            loss += criterion(decoder_output, target_tensor[di])
            if use_teacher_forcing:
                decoder_input = target_tensor[di]
            else:
                topv, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze().detach()
                if decoder_input.item() == EOS:
                    break
        loss.backward()
        enc_opt.step()
        dec_opt.step()
        losses.append(loss.item() / target_tensor.size(0))
    with torch.no_grad():
        decoder_hidden = encode(torch.tensor([[3], [4], [5]]))
        decoder_input, decoded = torch.tensor([[SOS]]), []
        for _ in range(6):
            decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
            topv, topi = decoder_output.data.topk(1)
            decoded.append(topi.item())
            if topi.item() == EOS:
                break
            decoder_input = topi.squeeze().detach()
    return dict(init=init, losses=losses, forcing=forcing, decoded=decoded, last=decoder_output,
                grads=grads(model), params=list(model.parameters()))


def test_seq2seq_gru_teacher_forcing(torch):
    both(torch, seq2seq_gru)


# ---- transfer learning: load "pretrained" weights, freeze, replace the head, StepLR, keep the best weights -------
def transfer_learning(torch, init):
    nn = torch.nn

    class SmallNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                                          nn.AdaptiveAvgPool2d(2))
            self.fc = nn.Linear(16, 5)

        def forward(self, x):
            return self.fc(torch.flatten(self.features(x), 1))

    pretrained = SmallNet()
    init = start(pretrained, init)
    buf = io.BytesIO()
    torch.save(pretrained.state_dict(), buf)
    buf.seek(0)
    model = SmallNet().double()
    result = model.load_state_dict(torch.load(buf, weights_only=True))
    for param in model.parameters():
        param.requires_grad = False
    num_ftrs = model.fc.in_features
    model.fc = nn.Linear(num_ftrs, 2).double()
    rng = np.random.default_rng(163)
    with torch.no_grad():  # the new head from the same numbers in both frameworks
        model.fc.weight.copy_(torch.tensor(rng.standard_normal((2, num_ftrs)) * 0.1))
        model.fc.bias.fill_(0.0)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
    loaders = {p: [(torch.tensor(rng.standard_normal((4, 3, 6, 6))), torch.tensor(rng.integers(0, 2, 4)))
                   for _ in range(2)] for p in ("train", "val")}
    best_model_wts, best_acc, history = copy.deepcopy(model.state_dict()), 0.0, []
    for epoch in range(4):
        for phase in ["train", "val"]:
            model.train() if phase == "train" else model.eval()
            running_loss, running_corrects = 0.0, 0
            for inputs, labels in loaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == "train":
                scheduler.step()
            epoch_acc = running_corrects.double() / 8
            history.append((epoch, phase, running_loss / 8, epoch_acc, scheduler.get_last_lr()))
            if phase == "val" and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_model_wts)
    frozen = [p.grad is None and not p.requires_grad for p in model.features.parameters()]
    return dict(init=init, missing=list(result.missing_keys), unexpected=list(result.unexpected_keys),
                history=history, best_acc=best_acc, frozen=frozen, state=dict(model.state_dict()),
                head_grads=grads(model.fc))


def test_transfer_learning_frozen_backbone(torch):
    theirs, _ = both(torch, transfer_learning)
    assert all(theirs["frozen"])


# ---- spatial-transformer-lite: theta from a localisation net started at the identity, over padding modes -------
def stn_lite(torch, init, padding_mode, align_corners):
    nn, F = torch.nn, torch.nn.functional

    class STN(nn.Module):
        def __init__(self):
            super().__init__()
            self.loc = nn.Sequential(nn.AvgPool2d(2), nn.Flatten(), nn.Linear(3 * 4 * 4, 6), nn.Tanh())
            self.fc_loc = nn.Linear(6, 6)
            self.fc_loc.weight.data.zero_()
            self.fc_loc.bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        def forward(self, x):
            theta = self.fc_loc(self.loc(x)).view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size(), align_corners=align_corners)
            return F.grid_sample(x, grid, mode="bilinear", padding_mode=padding_mode,
                                 align_corners=align_corners), theta

    model = STN()
    identity = model.fc_loc.bias.detach().clone()
    init = start(model, init)
    rng = np.random.default_rng(164)
    x = torch.tensor(rng.random((2, 3, 8, 8)))
    target = torch.tensor(np.roll(rng.random((2, 3, 8, 8)), 1, axis=3))
    with torch.no_grad():
        same = model(x)[0]
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses, thetas = [], []
    for _ in range(3):
        out, theta = model(x)
        loss = F.mse_loss(out, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        thetas.append(theta.detach())
    return dict(init=init, identity=identity, same=same, losses=losses, thetas=thetas, out=out,
                grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("padding_mode,align_corners", [("zeros", False), ("zeros", True), ("border", False),
                                                        ("border", True)])
def test_spatial_transformer_lite(torch, padding_mode, align_corners):
    theirs, _ = both(torch, stn_lite, padding_mode=padding_mode, align_corners=align_corners)
    if align_corners:  # the identity theta samples the pixels themselves
        x = np.random.default_rng(164).random((2, 3, 8, 8))
        np.testing.assert_allclose(theirs["same"].numpy(), x, atol=1e-12)


# ---- DCGAN: weights_init through model.apply by class name, then one D step and one G step ----------------------
def dcgan(torch, init):
    nn = torch.nn
    nz, b, real_label, fake_label = 5, 6, 1.0, 0.0

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    class GAN(nn.Module):
        def __init__(self):
            super().__init__()
            self.G = nn.Sequential(nn.ConvTranspose2d(nz, 16, 4, 1, 0, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),
                                   nn.ConvTranspose2d(16, 3, 4, 2, 1, bias=False), nn.Tanh())
            self.D = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16),
                                   nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(16, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    gan = GAN()
    gan.apply(weights_init)
    convs = [m.weight for m in gan.modules() if m.__class__.__name__.find("Conv") != -1]
    bns = [m for m in gan.modules() if m.__class__.__name__.find("BatchNorm") != -1]
    inits = dict(conv_std=[0.015 < w.std().item() < 0.025 and abs(w.mean().item()) < 0.005 for w in convs],
                 bn_mean=[abs(m.weight.mean().item() - 1.0) < 0.02 for m in bns],
                 bn_bias=[bool((m.bias == 0).all()) for m in bns])
    init = start(gan, init)
    netG, netD = gan.G, gan.D
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
    rng = np.random.default_rng(165)
    log = []
    for _ in range(2):
        real = torch.tensor(rng.uniform(-1, 1, (b, 3, 8, 8)))
        netD.zero_grad()
        label = torch.full((b,), real_label, dtype=torch.float64)
        output = netD(real).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.tensor(rng.standard_normal((b, nz, 1, 1)))
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        log.append((errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
    return dict(init=init, inits=inits, log=log, fake=fake, grads=grads(gan), params=list(gan.parameters()),
                buffers=list(gan.buffers()))


def test_dcgan_weights_init_and_step(torch):
    theirs, ours = both(torch, dcgan)
    assert all(all(v) for v in theirs["inits"].values())


# ---- word_language_model: batchify, get_batch, repackage_hidden, clip_grad_norm_, manual SGD, lr annealing -------
def word_lm(torch, init):
    nn = torch.nn
    ntokens, ninp, nhid, nlayers, bptt = 13, 6, 7, 2, 5

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.0)
            self.encoder = nn.Embedding(ntokens, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=0.0)
            self.decoder = nn.Linear(nhid, ntokens)
            self.init_weights()

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            decoded = self.decoder(self.drop(output)).view(-1, ntokens)
            return torch.nn.functional.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return (weight.new_zeros(nlayers, bsz, nhid), weight.new_zeros(nlayers, bsz, nhid))

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        return data.view(bsz, -1).t().contiguous()

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)

    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    model = RNNModel()
    init = start(model, init)
    rng = np.random.default_rng(166)
    train_data = batchify(torch.tensor(rng.integers(0, ntokens, 63)), 3)
    val_data = batchify(torch.tensor(rng.integers(0, ntokens, 22)), 2)
    criterion = nn.NLLLoss()

    def evaluate(data_source):
        model.eval()
        total_loss = 0.0
        hidden = model.init_hidden(2)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    lr, best_val_loss, log = 20.0, None, []
    for epoch in range(3):
        model.train()
        hidden = model.init_hidden(3)
        for i in range(0, train_data.size(0) - 1, bptt):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            log.append(loss.item())
        val_loss = evaluate(val_data)
        log.append((epoch, val_loss, math.exp(val_loss), lr))
        if not best_val_loss or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            lr /= 4.0
    return dict(init=init, shape=tuple(train_data.shape), train_data=train_data, log=log,
                hidden=hidden, grads=grads(model), params=list(model.parameters()))


def test_word_language_model_loop(torch):
    both(torch, word_lm)


# ---- reinforcement_q_learning: Transition tuples, a seeded replay memory, a non-final mask, a soft update --------
Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory:
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


def dqn_tutorial(torch, init):
    nn = torch.nn
    n_observations, n_actions, BATCH_SIZE, GAMMA, TAU = 4, 2, 5, 0.99, 0.05
    EPS_START, EPS_END, EPS_DECAY = 0.9, 0.05, 10

    class DQN(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = nn.Linear(n_observations, 16)
            self.layer2 = nn.Linear(16, 16)
            self.layer3 = nn.Linear(16, n_actions)

        def forward(self, x):
            x = torch.nn.functional.relu(self.layer1(x))
            x = torch.nn.functional.relu(self.layer2(x))
            return self.layer3(x)

    policy_net, target_net = DQN(), DQN()
    init = start(policy_net, init)
    target_net.double().load_state_dict(policy_net.state_dict())
    optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-3, amsgrad=True)
    memory = ReplayMemory(50)
    random.seed(167)
    rng = np.random.default_rng(167)

    def select_action(state, steps_done):
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
        if random.random() > eps_threshold:
            with torch.no_grad():
                return policy_net(state).max(1).indices.view(1, 1)
        return torch.tensor([[random.randrange(n_actions)]], dtype=torch.long)

    def optimize_model():
        if len(memory) < BATCH_SIZE:
            return None
        transitions = memory.sample(BATCH_SIZE)
        batch = Transition(*zip(*transitions))
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(BATCH_SIZE, dtype=torch.float64)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        return loss.item()

    state = torch.tensor(rng.standard_normal(n_observations), dtype=torch.float64).unsqueeze(0)
    actions, losses = [], []
    for t in range(14):
        action = select_action(state, t)
        actions.append(action.item())
        obs = state[0].numpy() * 0.9 + (action.item() - 0.5) * 0.3
        terminated = t % 5 == 4
        reward = torch.tensor([1.0 - abs(float(obs[0]))], dtype=torch.float64)
        next_state = None if terminated else torch.tensor(obs, dtype=torch.float64).unsqueeze(0)
        memory.push(state, action, next_state, reward)
        state = next_state if next_state is not None else torch.tensor(
            rng.standard_normal(n_observations), dtype=torch.float64).unsqueeze(0)
        losses.append(optimize_model())
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)
    return dict(init=init, actions=actions, losses=losses, grads=grads(policy_net),
                params=list(policy_net.parameters()), target=list(target_net.parameters()))


def test_dqn_tutorial_step(torch):
    both(torch, dqn_tutorial)


# ---- deployment: eval, inference_mode around no_grad, state_dict round trip, jit spellings -----------------------
def deployment(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3))
    init = start(model, init)
    x = torch.tensor(np.random.default_rng(168).standard_normal((5, 4)))
    model.eval()
    with torch.inference_mode():
        with torch.no_grad():
            out = model(x)
    flags = [out.requires_grad, out.is_inference(), torch.is_grad_enabled(), model.training]
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    fresh = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3)).double()
    result = fresh.load_state_dict(torch.load(buf, weights_only=True))
    fresh.eval()
    with torch.no_grad():
        reloaded = fresh(x)
        scripted = torch.jit.script(fresh)(x)
        traced = torch.jit.trace(fresh, (x,))(x)
    whole = io.BytesIO()
    torch.save(model, whole)
    whole.seek(0)
    try:
        torch.load(whole, weights_only=True)
        refused = None
    except Exception as e:  # noqa: BLE001 (the type is compared)
        refused = type(e).__name__
    whole.seek(0)
    again = torch.load(whole, weights_only=False)
    with torch.no_grad():
        again_out = again(x)
    return dict(init=init, out=out, flags=flags, missing=list(result.missing_keys),
                unexpected=list(result.unexpected_keys), reloaded=reloaded, scripted=scripted, traced=traced,
                refused=refused, again=again_out, again_training=again.training)


def test_deployment_sequence(torch):
    theirs, _ = both(torch, deployment)
    assert theirs["refused"] == "UnpicklingError"


def test_deployment_onnx_export_refused_in_one_line(torch):
    model = minigrad.nn.Linear(2, 2)
    with pytest.raises(NotImplementedError) as e:
        minigrad.onnx.export(model, (minigrad.randn(1, 2),), io.BytesIO())
    assert "\n" not in str(e.value) and "ONNX export" in str(e.value)
