"""Small models, minigrad vs PyTorch side by side: steady-state step time and the first step.

    python bench/small_models_bench.py                    # every kind, 3 repeats of 20 steps
    python bench/small_models_bench.py --kinds rnn gru --repeats 5 --steps 30

The kinds mirror the project's own PyTorch-form scripts (tests/scripts/*.py), and three more the
makemore lectures' way (mlp_batchnorm: BatchNorm1d in the MLP, the loss logged through
`.log10().item()`; rnn_cells, gru_cells: the recurrent cells written out, a time step's Linear,
cat, sigmoid and tanh in a Python loop), two a sample at a time, as beginners' tutorials train
(name_rnn_sample: a name classified by an RNN of two Linear layers on cat(input, hidden), one-hot
letters, NLLLoss, SGD through `.data`; bow_sample: a bag-of-words vector filled by `vec[i] += 1`,
Linear + log_softmax, NLLLoss, optim.SGD), and seven of other tutorials' shapes (name_gen_sample: a
name generated letter by letter from category, letter and hidden state through three Linear layers,
dropout and LogSoftmax, the NLLLoss of each letter summed by `loss += ...`; tagger_lstm_sample: an
LSTM part-of-speech tagger a sentence at a time; seq2seq_gru: a GRU encoder and an attention decoder
run a step at a time with teacher forcing; reinforce: a policy network run an environment step at a
time, actions drawn from a Categorical, the returns' REINFORCE loss; dqn: the DQN tutorial's
replay-buffer update (namedtuple batches cat'ed, gather, the target's max(1) through a bool mask, SmoothL1Loss,
AdamW amsgrad, clip_grad_value_), its soft target update through state_dict/load_state_dict and one
greedy action; vae: a variational autoencoder's MLP on 784-wide rows; bigram: makemore's first network,
one 27 x 27 weight on one-hot letters over all
228,146 bigrams of its names at once, its softmax written out, SGD through `.data`; text_bag: the
text-classification tutorial's nn.EmbeddingBag over flat word ids and offsets, a Linear, clipping and
SGD; gru_scratch: a GRU from scratch on raw weights (`X @ W_xz + H @ W_hz + b_z`, hidden 256, one-hot
characters, 35 steps a sequence, outputs cat'ed), gradients clipped by hand through their global norm and
`p.grad[:] *= theta / norm`, SGD in place under no_grad; lstm_scratch: an LSTM in the same style (four gates,
hidden 128, the state carried over and detached in place by `s.detach_()`); birnn_rows: a bidirectional 2-layer
nn.LSTM(28, 128) over the rows of 100 images, `fc(out[:, -1, :])`, Adam; bigram_lecture: the nanoGPT lecture's bigram.py, nn.Embedding(65, 65) as the logits table, batches
cut by `torch.stack([data[i:i + block_size] for i in ix])` over 0-d tensors i, a no_grad estimate_loss
under eval()/train() every tenth step, AdamW; llama_scratch: a Llama-style decoder written by hand (RMSNorm
as `x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w`, rotary embeddings by chunk/cat, grouped-query
attention by repeat_interleave, SwiGLU, masked_fill + softmax attention; 2 layers, width 64, 4 heads, block 32,
batch 16), AdamW and clipping; llama_generate: the same model's generation with SDPA, one token at a time on the
whole growing context, then through a KV cache grown by torch.cat, top-k sampling; mlp_backprop: makemore's MLP
with its backward written by hand under no_grad, the embedding's gradient by a Python loop `dC[Xb[k, j]] += demb[k, j]`;
bow_counts: a bag-of-words classifier on dense counts, torch.zeros(B, V) filled by scatter_add_ and by
index_put_(accumulate=True), Linear(5000, 128) + ReLU + Linear, SGD with momentum; makemore_transformer and
makemore_bow: makemore's own Transformer and BoW models as its file writes them, the GELU's tanh formula with
its `torch.pow(x, 3.0)` written out; mnist_cnn: PyTorch's MNIST example, two 3x3 convolutions (1 -> 32 -> 64
channels), max_pool2d, dropout, two Linear layers and log_softmax on batches of 64 random 28x28 images, nll_loss,
Adadelta and StepLR); poly_raw: PyTorch's "learning with examples" cubic fitted to sin(x) on 2000 points with
four 0-d tensors (`a + b * x + c * x ** 2 + d * x ** 3`, `(y_pred - y).pow(2).sum()`, the update and
`p.grad = None` under no_grad), ten recorded ops of 2000 values each; wavenet: makemore's WaveNet lecture, its
own Linear, BatchNorm1d (over dims (0, 1) of a 3-d input, running stats under no_grad), Tanh, Embedding and
FlattenConsecutive classes (block 8, n_embd 24, n_hidden 128, batch 32), SGD through `.data`; sentiment_rnn: a
sentiment-analysis tutorial's baseline, nn.Embedding(2000, 100) and nn.RNN(100, 256) over 64 padded texts of 10-50
words, `fc(hidden.squeeze(0))`, BCEWithLogitsLoss, the accuracy by `torch.round(torch.sigmoid(preds))`, SGD; char_cnn:
a character-level CNN text classifier, Embedding, `x.permute(0, 2, 1)`, three Conv1d of kernels 3, 4 and 5, each
pooled over time by `F.max_pool1d(c, c.size(2))` and by nn.AdaptiveMaxPool1d(1) on alternate steps, cat, dropout,
Linear, CrossEntropyLoss, clip_grad_norm_, Adam with weight_decay; gan: a vanilla GAN on 2-D rings,
Linear/BatchNorm1d/LeakyReLU(0.2) networks, BCELoss on torch.full labels, D's two backward calls, two Adam with
betas (0.5, 0.999); conv_ae: a denoising conv autoencoder on 16x16 images (Conv2d, MaxPool2d, ConvTranspose2d
with output_padding, Upsample nearest, MSELoss, Adam); resnet_small: a CIFAR ResNet's three stages
(16/32/64, one BasicBlock each, `out += identity`, a 1x1 stride-2 shortcut) on 8 images 3 x 32 x 32, the
augmentation by torch.flip on a masked half and a crop of the reflect-padded batch, SGD nesterov, CosineAnnealingLR;
dcgan: the DCGAN tutorial's Generator (ConvTranspose2d/BatchNorm2d/ReLU/Tanh) and Discriminator (Conv2d/LeakyReLU/
BatchNorm2d/Sigmoid) on 32 images 1 x 16 x 16, BCELoss, D's two backward calls, two Adam); pinn: a
physics-informed MLP u(x, t) (2 -> 32 -> 32 -> 1, Tanh) on Burgers' equation, u_x, u_t and u_xx by
torch.autograd.grad(create_graph=True) on 64 points, the residual's mean square backward through the
derivatives' graphs, Adam; maml: MAML on sine regression, the weights a list of tensors through F.linear,
one inner SGD step by autograd.grad(create_graph=True) per task, 5 tasks of 10 points, the outer loss's
second-order backward and Adam); unet: a U-Net segmenter of width 8 on 4 images 3 x 20 x 20
(double 3x3 Conv2d/BatchNorm2d/ReLU(inplace=True) blocks, MaxPool2d(2), ConvTranspose2d(c, c // 2, 2,
stride=2), F.pad to the skip's size, cat), BCEWithLogitsLoss(pos_weight) plus a hand-written Dice loss,
clip_grad_norm_, RMSprop(momentum=0.9, foreach=True)), written once below
against a `torch` namespace that is `torch` or `minigrad` (minigrad takes PyTorch's names, as
tests/test_torch_scripts.py shows by rewriting the scripts' import lines only). One step is what
the script's loop does: forward, loss, zero_grad, backward, clipping where the script clips, the
optimizer step (or the script's hand-written SGD through `.data`).

Each (kind, framework) runs in a fresh process on one thread (OMP_NUM_THREADS=1,
MINIGRAD_NUM_THREADS=1, torch.set_num_threads(1)); the two frameworks of a kind run one after the
other. Inside the process: the import, the build, the first step, then `--warmup` steps not
counted, then `--repeats` timed runs of `--steps` steps; the best run's mean is the step time
(the machine is shared: the best of several is the steadiest figure; the spread is printed too).
"first step" = import + build + first step - one steady step, the latency a user waits for.

    python bench/small_models_bench.py --interleaved --kinds mlp --rounds 30
    python bench/small_models_bench.py --interleaved --frameworks minigrad:/tmp/before minigrad torch

--interleaved: on a machine whose speed drifts (a shared host), steps timed in separate processes
one after the other can differ by more than what is compared. Here every framework of a kind is a
warm process, and they take turns, round by round (who goes first alternating), each running
`--steps` steps a round. Printed: each one's best round, and its ratio to the last framework's as
the best rounds' ratio and the median of the round-by-round ratios ("paired"). `minigrad:TREE`
runs the minigrad of another source tree (A/B of a change on the same models: list the baseline
last); `minigrad+compile` (or `minigrad+compile:TREE`) runs each kind's whole step through
`minigrad.compile` (a kind whose step cannot be captured runs eagerly, with the warning):

    python bench/small_models_bench.py --interleaved --frameworks minigrad+compile minigrad torch
"""
import argparse  # noqa: I001 (T_START first: the first-step time counts the imports)
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

T_START = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]
KINDS = ["mlp", "mlp_module", "mlp_batchnorm", "rnn", "gru", "rnn_cells", "gru_cells", "bow", "transformer",
         "lecture_gpt", "poly", "word_lstm", "word_gru", "word_transformer", "lstmcell_lbfgs", "name_rnn_sample",
         "bow_sample", "name_gen_sample", "tagger_lstm_sample", "seq2seq_gru", "reinforce", "dqn", "vae", "bigram",
         "text_bag", "bigram_lecture", "gru_scratch", "lstm_scratch", "birnn_rows", "llama_scratch", "llama_generate",
         "mlp_backprop", "bow_counts", "makemore_transformer", "makemore_bow", "mnist_cnn", "poly_raw", "wavenet",
         "sentiment_rnn", "char_cnn", "gan", "conv_ae", "resnet_small", "dcgan", "pinn", "maml", "unet"]


# ---- the models: each builder returns a step() closure ------------------------------------------

def names_data(torch, block=8, batch=32, vocab=27):
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, vocab, (batch, block), generator=g)
    y = torch.randint(0, vocab, (batch, block), generator=g)
    return x, y


def build_mlp(torch, batchnorm=False):
    """tests/scripts/names_mlp.py: embedding table + tanh MLP on raw tensors, SGD through .data.
    batchnorm=True: makemore's MLP with batch normalization (hidden 200, BatchNorm1d before the tanh in
    place of the first bias), each step's loss logged as `.log10().item()`."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    vocab, block, n_hidden = 27, 3, 200 if batchnorm else 64
    X = torch.randint(0, vocab, (2000, block), generator=g)
    Y = torch.randint(0, vocab, (2000,), generator=g)
    C = torch.randn((vocab, 10), generator=g)
    W1 = torch.randn((block * 10, n_hidden), generator=g) * ((5 / 3) / (block * 10) ** 0.5 if batchnorm else 0.2)
    b1 = None if batchnorm else torch.randn(n_hidden, generator=g) * 0.01
    W2 = torch.randn((n_hidden, vocab), generator=g) * 0.01
    b2 = torch.zeros(vocab)
    bn = torch.nn.BatchNorm1d(n_hidden) if batchnorm else None
    params = [C, W1, W2, b2] + (list(bn.parameters()) if batchnorm else [b1])
    for p in params:
        p.requires_grad = True
    lossi = []

    def step():
        ix = torch.randint(0, X.shape[0], (32,), generator=g)
        emb = C[X[ix]]
        pre = emb.view(-1, block * 10) @ W1
        h = torch.tanh(bn(pre) if batchnorm else pre + b1)
        loss = F.cross_entropy(h @ W2 + b2, Y[ix])
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data += -0.1 * p.grad
        if batchnorm:
            lossi.append(loss.log10().item())
    return step


def names_models(torch, kind):
    """tests/scripts/names_models.py's models (block 8, vocab 27, batch 32), AdamW + clip_grad_norm_."""
    nn, F = torch.nn, torch.nn.functional
    vocab, block = 27, 8

    class RNN(nn.Module):
        def __init__(self, cell):
            super().__init__()
            self.wte = nn.Embedding(vocab, 32)
            self.rnn = (nn.GRU if cell == "gru" else nn.RNN)(32, 64, batch_first=True)
            self.lm_head = nn.Linear(64, vocab)

        def forward(self, idx):
            out, _ = self.rnn(self.wte(idx))
            return self.lm_head(out)

    class BoW(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, 32)
            self.wpe = nn.Embedding(block, 32)
            self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, block, block))
            self.mlp = nn.Sequential(nn.Linear(32, 128), nn.Tanh(), nn.Linear(128, 32))
            self.lm_head = nn.Linear(32, vocab)

        def forward(self, idx):
            B, T = idx.size()
            x = self.wte(idx) + self.wpe(torch.arange(0, T, dtype=torch.long).unsqueeze(0))
            att = torch.zeros((B, T, T)).masked_fill(self.bias[:, :T, :T] == 0, float("-inf"))
            x = x + F.softmax(att, dim=-1) @ x
            x = x + self.mlp(x)
            return self.lm_head(x)

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, 32)
            self.wpe = nn.Embedding(block, 32)
            layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers=2)
            self.lm_head = nn.Linear(32, vocab)

        def forward(self, idx):
            T = idx.size(1)
            x = self.wte(idx) + self.wpe(torch.arange(T).unsqueeze(0))
            mask = nn.Transformer.generate_square_subsequent_mask(T)
            return self.lm_head(self.encoder(x, mask=mask, is_causal=True))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab + 1, 16)
            self.mlp = nn.Sequential(nn.Linear(block * 16, 64), nn.Tanh(), nn.Linear(64, vocab))

        def forward(self, idx):
            embs = []
            for _ in range(block):
                embs.append(self.wte(idx))
                idx = torch.roll(idx, 1, 1)
                idx[:, 0] = vocab
            return self.mlp(torch.cat(embs, -1))

    model = {"rnn": lambda: RNN("rnn"), "gru": lambda: RNN("gru"), "bow": BoW, "transformer": Transformer,
             "mlp_module": MLP}[kind]()
    return names_step(torch, model, 5e-3, block, vocab, clip=True)


def names_step(torch, model, lr, block, vocab, clip):
    """The names models' step: cross_entropy of every position, zero_grad, backward, clip_grad_norm_
    (makemore's own loop does not clip), AdamW."""
    F = torch.nn.functional
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    X, Y = names_data(torch, block, 32, vocab)

    def step():
        logits = model(X)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1), ignore_index=-1)
        model.zero_grad(set_to_none=True)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return step


def build_cells(torch, kind):
    """makemore's RNN and GRU: the cell written out and run over the sequence in a Python loop (block 16,
    widths 64, batch 32), hidden states stacked, cross_entropy, AdamW."""
    nn, F = torch.nn, torch.nn.functional
    vocab, block, n_embd, n_embd2 = 27, 16, 64, 64

    class RNNCell(nn.Module):
        def __init__(self):
            super().__init__()
            self.xh_to_h = nn.Linear(n_embd + n_embd2, n_embd2)

        def forward(self, xt, hprev):
            return F.tanh(self.xh_to_h(torch.cat([xt, hprev], dim=1)))

    class GRUCell(nn.Module):
        def __init__(self):
            super().__init__()
            self.xh_to_z = nn.Linear(n_embd + n_embd2, n_embd2)
            self.xh_to_r = nn.Linear(n_embd + n_embd2, n_embd2)
            self.xh_to_hbar = nn.Linear(n_embd + n_embd2, n_embd2)

        def forward(self, xt, hprev):
            xh = torch.cat([xt, hprev], dim=1)
            r = F.sigmoid(self.xh_to_r(xh))
            hbar = F.tanh(self.xh_to_hbar(torch.cat([xt, r * hprev], dim=1)))
            z = F.sigmoid(self.xh_to_z(xh))
            return (1 - z) * hprev + z * hbar

    class RNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.start = nn.Parameter(torch.zeros(1, n_embd2))
            self.wte = nn.Embedding(vocab, n_embd)
            self.cell = RNNCell() if kind == "rnn_cells" else GRUCell()
            self.lm_head = nn.Linear(n_embd2, vocab)

        def forward(self, idx):
            b, t = idx.size()
            emb = self.wte(idx)
            hprev = self.start.expand((b, -1))
            hiddens = []
            for i in range(t):
                hprev = self.cell(emb[:, i, :], hprev)
                hiddens.append(hprev)
            return self.lm_head(torch.stack(hiddens, 1))

    return names_step(torch, RNN(), 5e-4, block, vocab, clip=False)


def build_lecture_gpt(torch):
    """tests/scripts/lecture_gpt.py: heads as modules, a tril buffer, dropout 0.1, AdamW (batch 8, block 16)."""
    nn, F = torch.nn, torch.nn.functional
    batch_size, block_size, n_embd, n_head, n_layer, dropout, vocab_size = 8, 16, 32, 4, 2, 0.1, 65

    class Head(nn.Module):
        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = self.dropout(F.softmax(wei, dim=-1))
            return wei @ self.value(x)

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.proj(torch.cat([h(x) for h in self.heads], dim=-1)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.sa = MultiHeadAttention(n_head, n_embd // n_head)
            self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd),
                                      nn.Dropout(dropout))
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab_size, n_embd)
            self.pos = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.ln_f(self.blocks(self.tok(idx) + self.pos(torch.arange(T))))
            logits = self.lm_head(x)
            return F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    model = GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    X, Y = names_data(torch, block_size, batch_size, vocab_size)

    def step():
        loss = model(X, Y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def build_poly(torch):
    """tests/scripts/poly_regression.py: Linear(3, 1) on cubic features, MSELoss(sum), SGD momentum."""
    nn = torch.nn
    x = torch.linspace(-math.pi, math.pi, 200).unsqueeze(1)
    y = torch.sin(x).flatten()
    features = torch.cat([x, x ** 2, x ** 3], dim=1)
    model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))
    loss_fn = nn.MSELoss(reduction="sum")
    opt = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)

    def step():
        loss = loss_fn(model(features), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def build_word(torch, kind):
    """tests/scripts/word_lm.py: 2-layer LSTM/GRU (32/32) or Transformer (32, 2 heads, 64), bptt 12,
    batch 10, vocab 1000, dropout 0.2, clip_grad_norm_ 0.25 and SGD through .data."""
    nn, F = torch.nn, torch.nn.functional
    ntokens, bptt, bsz = 1000, 12, 10

    class RNNModel(nn.Module):
        def __init__(self, rnn_type):
            super().__init__()
            self.drop = nn.Dropout(0.2)
            self.encoder = nn.Embedding(ntokens, 32)
            self.rnn = getattr(nn, rnn_type)(32, 32, 2, dropout=0.2)
            self.decoder = nn.Linear(32, ntokens)

        def forward(self, input, hidden):
            output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
            return F.log_softmax(self.decoder(self.drop(output)).view(-1, ntokens), dim=1), hidden

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=64):
            super().__init__()
            self.dropout = nn.Dropout(p=0.2)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

        def forward(self, x):
            return self.dropout(x + self.pe[:x.size(0), :])

    class TransformerModel(nn.Transformer):
        def __init__(self):
            super().__init__(d_model=32, nhead=2, dim_feedforward=64, num_encoder_layers=2)
            self.pos_encoder = PositionalEncoding(32)
            self.input_emb = nn.Embedding(ntokens, 32)
            self.decoder = nn.Linear(32, ntokens)
            self.src_mask = torch.log(torch.tril(torch.ones(bptt, bptt)))

        def forward(self, src):
            src = self.pos_encoder(self.input_emb(src) * math.sqrt(32))
            return F.log_softmax(self.decoder(self.encoder(src, mask=self.src_mask)), dim=-1)

    model = TransformerModel() if kind == "Transformer" else RNNModel(kind)
    criterion = nn.NLLLoss()
    g = torch.Generator().manual_seed(0)
    data = torch.randint(0, ntokens, (bptt, bsz), generator=g)
    targets = torch.randint(0, ntokens, (bptt * bsz,), generator=g)
    state = {}
    if kind == "LSTM":
        state["hidden"] = (torch.zeros(2, bsz, 32), torch.zeros(2, bsz, 32))
    elif kind == "GRU":
        state["hidden"] = torch.zeros(2, bsz, 32)

    def step():
        model.zero_grad()
        if kind == "Transformer":
            output = model(data).view(-1, ntokens)
        else:
            h = state["hidden"]
            h = tuple(t.detach() for t in h) if isinstance(h, tuple) else h.detach()
            output, state["hidden"] = model(data, h)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-5.0)
    return step


def build_lstmcell_lbfgs(torch):
    """tests/scripts/lstm_lbfgs.py: two LSTMCells over 29 steps, float64, one LBFGS step (20 closures)."""
    import numpy as np
    nn = torch.nn

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTMCell(1, 16)
            self.lstm2 = nn.LSTMCell(16, 16)
            self.linear = nn.Linear(16, 1)

        def forward(self, input):
            outputs = []
            h_t = torch.zeros(input.size(0), 16, dtype=torch.double)
            c_t = torch.zeros(input.size(0), 16, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                outputs += [self.linear(h_t2)]
            return torch.cat(outputs, dim=1)

    rs = np.random.RandomState(2)
    x = np.array(range(30)) + rs.randint(-80, 80, 8).reshape(8, 1)
    data = np.sin(x / 20.0).astype("float64")
    input, target = torch.from_numpy(data[3:, :-1]), torch.from_numpy(data[3:, 1:])
    seq = Sequence().double()
    criterion = nn.MSELoss()
    opt = torch.optim.LBFGS(seq.parameters(), lr=0.8)

    def closure():
        opt.zero_grad()
        loss = criterion(seq(input), target)
        loss.backward()
        return loss

    def step():
        opt.step(closure)
    return step


def build_per_sample(torch, kind):
    """A sample at a time (batch 1), a step being one pass over 8 samples: name_rnn_sample (letters
    one-hot (57), hidden 128, 18 classes, names of 4-9 letters), bow_sample (60 words, 2 labels,
    sentences of 8 words)."""
    import numpy as np

    nn, F = torch.nn, torch.nn.functional
    g = torch.Generator().manual_seed(0)
    if kind == "name_rnn_sample":
        letters, hidden, classes = 57, 128, 18

        class NameRNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.i2h = nn.Linear(letters + hidden, hidden)
                self.i2o = nn.Linear(letters + hidden, classes)
                self.softmax = nn.LogSoftmax(dim=1)

            def forward(self, x, h):
                combined = torch.cat((x, h), 1)
                return self.softmax(self.i2o(combined)), self.i2h(combined)

        model, criterion = NameRNN(), nn.NLLLoss()
        # the names drawn by numpy, not by the framework's own randint: their lengths are the step's work,
        # the same on every framework and every version
        rng, samples = np.random.default_rng(0), []
        for n in rng.integers(4, 10, 8).tolist():
            line = torch.zeros(n, 1, letters)
            for i, c in enumerate(rng.integers(0, letters, n).tolist()):
                line[i][0][c] = 1
            samples.append((line, torch.tensor([int(rng.integers(0, classes))])))

        def step():
            for line, label in samples:
                h = torch.zeros(1, hidden)
                model.zero_grad()
                for i in range(line.size()[0]):
                    out, h = model(line[i], h)
                loss = criterion(out, label)
                loss.backward()
                for p in model.parameters():
                    p.data.add_(p.grad.data, alpha=-0.005)
        return step
    words, labels = 60, 2
    model = nn.Linear(words, labels)
    criterion, opt = nn.NLLLoss(), torch.optim.SGD(model.parameters(), lr=0.1)
    samples = [(torch.randint(0, words, (8,), generator=g).tolist(), torch.randint(0, labels, (1,), generator=g))
               for _ in range(8)]

    def step():
        for sentence, label in samples:
            model.zero_grad()
            vec = torch.zeros(words)
            for w in sentence:
                vec[w] += 1
            loss = criterion(F.log_softmax(model(vec.view(1, -1)), dim=1), label)
            loss.backward()
            opt.step()
    return step


def build_name_gen(torch):
    """The name-generation tutorial's RNN (categories 18, letters 59, hidden 128): per letter cat(category,
    letter, hidden) -> i2h, i2o; cat(hidden, output) -> o2o, dropout 0.1, LogSoftmax; the NLLLoss of each
    letter added into a running `loss +=`; SGD through `.data`. A step: 8 names of 7 letters."""
    nn = torch.nn
    letters, hidden, categories, n = 59, 128, 18, 7

    class RNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.i2h = nn.Linear(categories + letters + hidden, hidden)
            self.i2o = nn.Linear(categories + letters + hidden, letters)
            self.o2o = nn.Linear(hidden + letters, letters)
            self.dropout = nn.Dropout(0.1)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, category, letter, h):
            combined = torch.cat((category, letter, h), 1)
            h, out = self.i2h(combined), self.i2o(combined)
            return self.softmax(self.dropout(self.o2o(torch.cat((h, out), 1)))), h

    model, criterion = RNN(), nn.NLLLoss()
    g = torch.Generator().manual_seed(0)
    samples = []
    for k in range(8):
        category = torch.zeros(1, categories)
        category[0][k] = 1
        line = torch.zeros(n, 1, letters)
        ids = torch.randint(0, letters, (n + 1,), generator=g)
        for i in range(n):
            line[i][0][int(ids[i])] = 1
        samples.append((category, line, ids[1:].unsqueeze(-1)))

    def step():
        for category, line, target in samples:
            h = torch.zeros(1, hidden)
            model.zero_grad()
            loss = torch.Tensor([0])
            for i in range(line.size(0)):
                out, h = model(category, line[i], h)
                loss += criterion(out, target[i])
            loss.backward()
            for p in model.parameters():
                p.data.add_(p.grad.data, alpha=-0.0005)
    return step


def build_tagger(torch):
    """The sequence-models tutorial's part-of-speech tagger: Embedding(30, 6), nn.LSTM(6, 6) over a sentence
    viewed (len, 1, -1), Linear + log_softmax, NLLLoss, optim.SGD(lr=0.1). A step: 8 sentences of 5 words."""
    nn, F = torch.nn, torch.nn.functional

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.lstm, self.out = nn.Embedding(30, 6), nn.LSTM(6, 6), nn.Linear(6, 3)

        def forward(self, sentence):
            out, _ = self.lstm(self.embed(sentence).view(len(sentence), 1, -1))
            return F.log_softmax(self.out(out.view(len(sentence), -1)), dim=1)

    model, criterion = Tagger(), nn.NLLLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(0)
    data = [(torch.randint(0, 30, (5,), generator=g), torch.randint(0, 3, (5,), generator=g)) for _ in range(8)]

    def step():
        for sentence, tags in data:
            model.zero_grad()
            criterion(model(sentence), tags).backward()
            opt.step()
    return step


def build_seq2seq(torch):
    """The translation tutorial's encoder and attention decoder (hidden 64, vocabulary 100, batch 32, 10
    steps): an Embedding + dropout + GRU encoder; a decoder step of Embedding, dropout, additive attention
    (Linear, tanh, Linear, softmax, bmm), cat and a one-step GRU, its outputs cat'ed and log_softmax'ed;
    teacher forcing, NLLLoss, two Adams."""
    nn, F = torch.nn, torch.nn.functional
    H, V, L, B = 64, 100, 10, 32

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.gru, self.drop = nn.Embedding(V, H), nn.GRU(H, H, batch_first=True), nn.Dropout(0.1)

        def forward(self, x):
            return self.gru(self.drop(self.embed(x)))

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.Wa, self.Ua, self.Va = nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys))).squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            return torch.bmm(weights, keys), weights

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.attention = nn.Embedding(V, H), Attention()
            self.gru, self.out, self.drop = nn.GRU(2 * H, H, batch_first=True), nn.Linear(H, V), nn.Dropout(0.1)

        def forward(self, keys, h, target):
            x, outs = torch.zeros(B, 1, dtype=torch.long), []
            for i in range(L):
                context, _ = self.attention(h.permute(1, 0, 2), keys)
                out, h = self.gru(torch.cat((self.drop(self.embed(x)), context), dim=2), h)
                outs.append(self.out(out))
                x = target[:, i].unsqueeze(1)
            return F.log_softmax(torch.cat(outs, dim=1), dim=-1)

    g = torch.Generator().manual_seed(0)
    encoder, decoder, criterion = Encoder(), Decoder(), nn.NLLLoss()
    opts = torch.optim.Adam(encoder.parameters(), lr=1e-3), torch.optim.Adam(decoder.parameters(), lr=1e-3)
    src, tgt = torch.randint(0, V, (B, L), generator=g), torch.randint(0, V, (B, L), generator=g)

    def step():
        for opt in opts:
            opt.zero_grad()
        keys, h = encoder(src)
        criterion(decoder(keys, h, tgt).view(-1, V), tgt.view(-1)).backward()
        for opt in opts:
            opt.step()
    return step


def build_reinforce(torch):
    """The REINFORCE example's policy (Linear(4, 128), dropout 0.6, relu, Linear(128, 2), softmax), run an
    environment step at a time on 20 fixed states: a Categorical of the probabilities, an action drawn and
    read by `.item()`, its log_prob kept; then the discounted returns normalized, the loss cat'ed and summed,
    Adam. A step: one such episode."""
    import numpy as np

    nn, F = torch.nn, torch.nn.functional

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1, self.dropout, self.affine2 = nn.Linear(4, 128), nn.Dropout(0.6), nn.Linear(128, 2)

        def forward(self, x):
            return F.softmax(self.affine2(F.relu(self.dropout(self.affine1(x)))), dim=1)

    policy = Policy()
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    states = [s.astype(np.float32) for s in np.random.default_rng(0).standard_normal((20, 4))]

    def step():
        log_probs, rewards = [], []
        for state in states:
            dist = torch.distributions.Categorical(policy(torch.from_numpy(state).float().unsqueeze(0)))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            rewards.append(1.0 + 0.1 * action.item())
        R, returns = 0.0, []
        for r in rewards[::-1]:
            R = r + 0.99 * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = torch.cat([-lp * r for lp, r in zip(log_probs, returns)]).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def build_dqn(torch):
    """The DQN tutorial's update and soft target update: a Q-network Linear(4, 128)/ReLU/Linear(128, 128)/ReLU/
    Linear(128, 2) and its target copy, 1000 fixed transitions (namedtuples in a deque, 5% with no next state)
    sampled by random.sample, the batch cat'ed, the bool mask of non-final states, `gather(1, action)`, the
    target's `max(1).values` written through the mask under no_grad, SmoothL1Loss, AdamW(amsgrad=True),
    clip_grad_value_, then the target's state_dict blended `p * TAU + t * (1 - TAU)` and loaded back, and one
    greedy action `policy(state).max(1).indices.view(1, 1)`. A step: one environment step's work."""
    import random
    from collections import deque, namedtuple

    import numpy as np

    nn = torch.nn
    Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))
    rng, sampler = np.random.default_rng(0), random.Random(0)
    memory = deque(maxlen=10000)
    for _ in range(1000):
        state = torch.tensor(rng.standard_normal(4), dtype=torch.float32).unsqueeze(0)
        nxt = None if rng.random() < 0.05 else torch.tensor(rng.standard_normal(4), dtype=torch.float32).unsqueeze(0)
        memory.append(Transition(state, torch.tensor([[int(rng.integers(2))]], dtype=torch.long), nxt,
                                 torch.tensor([1.0])))

    def q_net():
        return nn.Sequential(nn.Linear(4, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2))

    policy_net, target_net = q_net(), q_net()
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-4, amsgrad=True)
    criterion = nn.SmoothL1Loss()
    tau = 0.005

    def step():
        batch = Transition(*zip(*sampler.sample(memory, 128)))
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch, action_batch = torch.cat(batch.state), torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(128)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected = next_state_values * 0.99 + reward_batch
        loss = criterion(state_action_values, expected.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        target_sd, policy_sd = target_net.state_dict(), policy_net.state_dict()
        for key in policy_sd:
            target_sd[key] = policy_sd[key] * tau + target_sd[key] * (1 - tau)
        target_net.load_state_dict(target_sd)
        with torch.no_grad():
            policy_net(batch.state[0]).max(1).indices.view(1, 1)
    return step


def build_vae(torch):
    """The VAE example's model (784 -> 400 -> 20 + 20, 20 -> 400 -> 784) on a batch of 128 rows in [0, 1):
    relu, the reparameterized draw, sigmoid, binary_cross_entropy (sum) + the KL term, Adam."""
    nn, F = torch.nn, torch.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc21, self.fc22 = nn.Linear(784, 400), nn.Linear(400, 20), nn.Linear(400, 20)
            self.fc3, self.fc4 = nn.Linear(20, 400), nn.Linear(400, 784)

        def forward(self, x):
            h = F.relu(self.fc1(x.view(-1, 784)))
            mu, logvar = self.fc21(h), self.fc22(h)
            z = mu + torch.randn_like(logvar) * torch.exp(0.5 * logvar)
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar

    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(128, 1, 28, 28, generator=torch.Generator().manual_seed(0))

    def step():
        opt.zero_grad()
        recon, mu, logvar = model(x)
        bce = F.binary_cross_entropy(recon, x.view(-1, 784), reduction="sum")
        (bce - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())).backward()
        opt.step()
    return step


def build_bigram(torch):
    """makemore's first neural network: one-hot letters (all 228,146 bigrams of its names, drawn here)
    times a 27 x 27 weight, counts = exp, probs = counts / counts.sum(1, keepdims=True), the mean negative
    log likelihood of the next letters plus 0.01 (W**2).mean(), `W.grad = None`, SGD through `.data`."""
    import numpy as np

    F = torch.nn.functional
    rng = np.random.default_rng(0)
    n = 228146
    xs, ys = torch.tensor(rng.integers(0, 27, n)), torch.tensor(rng.integers(0, 27, n))
    W = torch.randn((27, 27), generator=torch.Generator().manual_seed(2147483647), requires_grad=True)

    def step():
        xenc = F.one_hot(xs, num_classes=27).float()
        counts = (xenc @ W).exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(n), ys].log().mean() + 0.01 * (W ** 2).mean()
        W.grad = None
        loss.backward()
        W.data += -50 * W.grad
    return step


def build_text_bag(torch):
    """The text-classification tutorial's model: nn.EmbeddingBag (mean of each text's word vectors, the
    texts given as one flat id list and their offsets; vocabulary 20,000, width 64) -> Linear(64, 4),
    weights uniform in +-0.5, cross_entropy, clip_grad_norm_(0.1), SGD(lr 5); a batch of 64 texts of
    20-60 words (drawn by numpy, the same on every framework)."""
    import numpy as np

    nn = torch.nn
    vocab, width, classes, batch = 20000, 64, 4, 64

    class TextClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab, width, sparse=False)
            self.fc = nn.Linear(width, classes)
            self.embedding.weight.data.uniform_(-0.5, 0.5)
            self.fc.weight.data.uniform_(-0.5, 0.5)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            return self.fc(self.embedding(text, offsets))

    model, criterion = TextClassifier(), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=5)
    rng = np.random.default_rng(0)
    lengths = rng.integers(20, 61, batch)
    text = torch.tensor(rng.integers(0, vocab, int(lengths.sum())))
    offsets = torch.tensor(np.concatenate([[0], np.cumsum(lengths)[:-1]]))
    label = torch.tensor(rng.integers(0, classes, batch))

    def step():
        opt.zero_grad()
        loss = criterion(model(text, offsets), label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
    return step


def build_bigram_lecture(torch):
    """The nanoGPT lecture's bigram.py: an nn.Embedding(vocab, vocab) whose rows are the next character's
    logits, cross_entropy over the (B*T, C) view, AdamW (lr 1e-3); each batch's 32 offsets drawn by
    torch.randint and its rows cut `data[i:i + block_size]` with each 0-d tensor i (the slices' bounds,
    `i + 1` and `i + block_size + 1`, are tensor arithmetic), stacked; every tenth step the estimate_loss of
    ten train and ten val batches under @torch.no_grad() and eval()/train(). Text: 100,000 random ids of 65."""
    nn, F = torch.nn, torch.nn.functional
    batch_size, block_size, vocab = 32, 8, 65
    data = torch.randint(0, vocab, (100000,), generator=torch.Generator().manual_seed(0))
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]

    def get_batch(split):
        d = train_data if split == "train" else val_data
        ix = torch.randint(len(d) - block_size, (batch_size,))
        x = torch.stack([d[i:i + block_size] for i in ix])
        y = torch.stack([d[i + 1:i + block_size + 1] for i in ix])
        return x, y

    class BigramLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab, vocab)

        def forward(self, idx, targets):
            logits = self.token_embedding_table(idx)
            B, T, C = logits.shape
            return F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    model = BigramLanguageModel()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        out = {}
        for split in ("train", "val"):
            losses = torch.zeros(10)
            for k in range(10):
                losses[k] = model(*get_batch(split)).item()
            out[split] = losses.mean()
        model.train()
        return out

    count = [0]

    def step():
        count[0] += 1
        if count[0] % 10 == 0:
            estimate_loss()
        loss = model(*get_batch("train"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def build_gru_scratch(torch):
    """A GRU written from scratch, as textbook scripts train one on characters: nine weights and biases,
    the gates' products `X @ W` in a Python loop over time, clipping by the global norm by hand."""
    F = torch.nn.functional
    vocab, hidden, batch, steps = 28, 256, 32, 35
    g = torch.Generator().manual_seed(0)

    def weights(n_in):
        return [torch.randn(n_in, hidden, generator=g) * 0.01, torch.randn(hidden, hidden, generator=g) * 0.01,
                torch.zeros(hidden)]

    gates = [weights(vocab) for _ in range(3)]
    W_hq, b_q = torch.randn(hidden, vocab, generator=g) * 0.01, torch.zeros(vocab)
    params = [p for gate in gates for p in gate] + [W_hq, b_q]
    for p in params:
        p.requires_grad_(True)
    data = torch.randint(0, vocab, (batch, steps + 1), generator=g)

    def step():
        X = F.one_hot(data[:, :-1].T, vocab).type(torch.float32)
        (W_xz, W_hz, b_z), (W_xr, W_hr, b_r), (W_xh, W_hh, b_h) = gates
        H, outputs = torch.zeros(batch, hidden), []
        for x in X:
            Z = torch.sigmoid(x @ W_xz + H @ W_hz + b_z)
            R = torch.sigmoid(x @ W_xr + H @ W_hr + b_r)
            H_tilde = torch.tanh(x @ W_xh + (R * H) @ W_hh + b_h)
            H = Z * H + (1 - Z) * H_tilde
            outputs.append(H @ W_hq + b_q)
        loss = F.cross_entropy(torch.cat(outputs, dim=0), data[:, 1:].T.reshape(-1))
        for p in params:
            if p.grad is not None:
                p.grad.zero_()
        loss.backward()
        norm = torch.sqrt(sum(torch.sum(p.grad ** 2) for p in params))
        if norm > 1.0:
            for p in params:
                p.grad[:] *= 1.0 / norm
        with torch.no_grad():
            for p in params:
                p -= 1.0 * p.grad
    return step


def build_lstm_scratch(torch):
    """An LSTM written from scratch in the same textbook style: four gates of `(X @ W_x) + (H @ W_h) + b`
    (hidden 128), `C = F * C + I * C_tilda`, the state (H, C) carried over from step to step and detached
    in place, the loss `CrossEntropyLoss()(y_hat, y.long()).mean()`, clipping by hand, SGD divided by the
    batch size."""
    F = torch.nn.functional
    vocab, hidden, batch, steps = 28, 128, 32, 35
    g = torch.Generator().manual_seed(0)

    def three():
        return (torch.randn(vocab, hidden, generator=g) * 0.01, torch.randn(hidden, hidden, generator=g) * 0.01,
                torch.zeros(hidden))

    gates = [three() for _ in range(4)]
    W_hq, b_q = torch.randn(hidden, vocab, generator=g) * 0.01, torch.zeros(vocab)
    params = [p for gate in gates for p in gate] + [W_hq, b_q]
    for p in params:
        p.requires_grad_(True)
    data = torch.randint(0, vocab, (batch, steps + 1), generator=g)
    loss_fn = torch.nn.CrossEntropyLoss()
    state = (torch.zeros((batch, hidden)), torch.zeros((batch, hidden)))

    def step():
        nonlocal state
        for s in state:
            s.detach_()
        (W_xi, W_hi, b_i), (W_xf, W_hf, b_f), (W_xo, W_ho, b_o), (W_xc, W_hc, b_c) = gates
        H, C = state
        outputs = []
        for X in F.one_hot(data[:, :-1].T, vocab).type(torch.float32):
            I = torch.sigmoid((X @ W_xi) + (H @ W_hi) + b_i)
            F_ = torch.sigmoid((X @ W_xf) + (H @ W_hf) + b_f)
            O = torch.sigmoid((X @ W_xo) + (H @ W_ho) + b_o)
            C_tilda = torch.tanh((X @ W_xc) + (H @ W_hc) + b_c)
            C = F_ * C + I * C_tilda
            H = O * torch.tanh(C)
            outputs.append((H @ W_hq) + b_q)
        state = (H, C)
        y = data[:, 1:].T.reshape(-1)
        loss = loss_fn(torch.cat(outputs, dim=0), y.long()).mean()
        loss.backward()
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > 1.0:
            for p in params:
                p.grad[:] *= 1.0 / norm
        with torch.no_grad():
            for p in params:
                p -= 1.0 * p.grad / batch
                p.grad.zero_()
    return step


def build_birnn_rows(torch):
    """A tutorial's bidirectional LSTM classifier over an image's rows: nn.LSTM(28, 128, 2, batch_first=True,
    bidirectional=True) from zero states made in forward, `fc(out[:, -1, :])`, CrossEntropyLoss, Adam, the
    batch's accuracy by `torch.max(outputs.data, 1)` (batch 100 of random 28x28 images)."""
    nn = torch.nn

    class BiRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(28, 128, 2, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(256, 10)

        def forward(self, x):
            h0 = torch.zeros(4, x.size(0), 128)
            c0 = torch.zeros(4, x.size(0), 128)
            out, _ = self.lstm(x, (h0, c0))
            return self.fc(out[:, -1, :])

    g = torch.Generator().manual_seed(0)
    model = BiRNN()
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    images, labels = torch.rand(100, 1, 28, 28, generator=g), torch.randint(0, 10, (100,), generator=g)

    def step():
        outputs = model(images.reshape(-1, 28, 28))
        loss = criterion(outputs, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        _, predicted = torch.max(outputs.data, 1)
        return (predicted == labels).sum().item()
    return step


def build_mlp_backprop(torch):
    """makemore's MLP with its backward written by hand, under no_grad (the lecture's exercise): the forward
    cut into atoms (batch norm by mean/var/`** -0.5`), `dlogits = softmax; dlogits[range(n), Yb] -= 1`, every
    gradient by `.T` products and `sum(0)`, the embedding's by a Python loop `dC[Xb[k, j]] += demb[k, j]`,
    the update through `.data`, the loss logged by `.log10().item()`."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(1)
    vocab, block, emb_dim, hidden, n = 27, 3, 10, 64, 32
    Xtr = torch.randint(0, vocab, (4000, block), generator=g)
    Ytr = torch.randint(0, vocab, (4000,), generator=g)
    C = torch.randn((vocab, emb_dim), generator=g)
    W1 = torch.randn((block * emb_dim, hidden), generator=g) * (5 / 3) / (block * emb_dim) ** 0.5
    b1 = torch.randn(hidden, generator=g) * 0.1
    W2 = torch.randn((hidden, vocab), generator=g) * 0.1
    b2 = torch.randn(vocab, generator=g) * 0.1
    gain, shift = torch.randn((1, hidden), generator=g) * 0.1 + 1.0, torch.randn((1, hidden), generator=g) * 0.1
    params, losses = [C, W1, b1, W2, b2, gain, shift], []

    @torch.no_grad()
    def step():
        ix = torch.randint(0, Xtr.shape[0], (n,), generator=g)
        Xb, Yb = Xtr[ix], Ytr[ix]
        emb = C[Xb]
        embcat = emb.view(emb.shape[0], -1)
        hprebn = embcat @ W1 + b1
        mean = hprebn.mean(0, keepdim=True)
        var_inv = (hprebn.var(0, keepdim=True) + 1e-5) ** -0.5
        bnraw = (hprebn - mean) * var_inv
        h = torch.tanh(gain * bnraw + shift)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Yb)
        dlogits = F.softmax(logits, 1)
        dlogits[range(n), Yb] -= 1
        dlogits /= n
        dh = dlogits @ W2.T
        dpre = (1.0 - h ** 2) * dh
        dhprebn = gain * var_inv / n * (n * dpre - dpre.sum(0) - n / (n - 1) * bnraw * (dpre * bnraw).sum(0))
        demb = (dhprebn @ W1.T).view(emb.shape)
        dC = torch.zeros_like(C)
        for k in range(Xb.shape[0]):
            for j in range(Xb.shape[1]):
                dC[Xb[k, j]] += demb[k, j]
        grads = [dC, embcat.T @ dhprebn, dhprebn.sum(0), h.T @ dlogits, dlogits.sum(0),
                 (bnraw * dpre).sum(0, keepdim=True), dpre.sum(0, keepdim=True)]
        for p, grad in zip(params, grads):
            p.data += -0.1 * grad
        losses.append(loss.log10().item())
    return step


def build_bow_counts(torch):
    """A bag-of-words classifier on dense count vectors: each document's title words counted into
    torch.zeros(B, V) by scatter_add_, its body words by index_put_(accumulate=True), the two summed ->
    Linear(5000, 128) + ReLU + Linear(128, 5), CrossEntropyLoss, SGD with momentum; 64 documents of 40 + 40
    words a batch."""
    nn = torch.nn
    vocab, batch, words, classes = 5000, 64, 40, 5
    g = torch.Generator().manual_seed(0)
    titles = torch.randint(0, vocab, (batch, words), generator=g)
    bodies = torch.randint(0, vocab, (batch, words), generator=g)
    labels = torch.randint(0, classes, (batch,), generator=g)
    rows = torch.arange(batch).unsqueeze(1).expand(batch, words)
    model = nn.Sequential(nn.Linear(vocab, 128), nn.ReLU(), nn.Linear(128, classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()

    def step():
        title = torch.zeros(batch, vocab)
        title.scatter_add_(1, titles, torch.ones(batch, words))
        body = torch.zeros(batch, vocab)
        body.index_put_((rows, bodies), torch.ones(batch, words), accumulate=True)
        loss = criterion(model(title + body), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def build_sentiment_rnn(torch):
    """The sentiment-analysis tutorial's first model on a batch of 64 padded texts (vocabulary 2000, lengths
    10-50, time first): Embedding(2000, 100) -> nn.RNN(100, 256) -> `fc(hidden.squeeze(0))`, BCEWithLogitsLoss,
    the binary accuracy by `torch.round(torch.sigmoid(preds))` and `.float()`, SGD. A step: one batch."""
    import numpy as np

    nn = torch.nn
    vocab, emb, hidden, pad, batch = 2000, 100, 256, 1, 64
    rng = np.random.default_rng(0)  # (the lengths drawn by numpy: the same work on every framework)
    lengths = rng.integers(10, 51, batch)
    ids = rng.integers(2, vocab, (int(lengths.max()), batch))
    for b, n in enumerate(lengths.tolist()):
        ids[n:, b] = pad
    text, label = torch.tensor(ids), torch.tensor(rng.integers(0, 2, batch).astype(np.float32))

    class RNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab, emb)
            self.rnn = nn.RNN(emb, hidden)
            self.fc = nn.Linear(hidden, 1)

        def forward(self, text):
            output, hidden = self.rnn(self.embedding(text))
            return self.fc(hidden.squeeze(0))

    model = RNN()
    optimizer, criterion = torch.optim.SGD(model.parameters(), lr=1e-3), nn.BCEWithLogitsLoss()

    def step():
        optimizer.zero_grad()
        predictions = model(text).squeeze(1)
        loss = criterion(predictions, label)
        correct = (torch.round(torch.sigmoid(predictions)) == label).float()
        acc = correct.sum() / len(correct)
        loss.backward()
        optimizer.step()
        return loss.item(), acc.item()
    return step

def llama_scratch_model(torch, sdpa):
    """A Llama-style decoder written out by hand: RMSNorm as `x * rsqrt(mean(x^2) + eps) * w`, rotary
    embeddings in the cos/sin form (rotate_half by chunk and cat), grouped-query attention by
    repeat_interleave, SwiGLU, causal attention by masked_fill + softmax or F.scaled_dot_product_attention."""
    nn, F = torch.nn, torch.nn.functional
    vocab, width, n_layer, n_head, n_kv_head, block = 65, 64, 2, 4, 2, 32
    head = width // n_head

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps, self.weight = eps, nn.Parameter(torch.ones(dim))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq = nn.Linear(width, n_head * head, bias=False)
            self.wk = nn.Linear(width, n_kv_head * head, bias=False)
            self.wv = nn.Linear(width, n_kv_head * head, bias=False)
            self.wo = nn.Linear(n_head * head, width, bias=False)

        def forward(self, x, cos, sin, cache=None):
            B, T, _ = x.shape
            q = self.wq(x).view(B, T, n_head, head).transpose(1, 2)
            k = self.wk(x).view(B, T, n_kv_head, head).transpose(1, 2)
            v = self.wv(x).view(B, T, n_kv_head, head).transpose(1, 2)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            if cache is not None:
                if "k" in cache:
                    k, v = torch.cat((cache["k"], k), dim=2), torch.cat((cache["v"], v), dim=2)
                cache["k"], cache["v"] = k, v
            k = k.repeat_interleave(n_head // n_kv_head, dim=1)
            v = v.repeat_interleave(n_head // n_kv_head, dim=1)
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=T > 1)
            else:
                S = k.shape[2]
                att = (q @ k.transpose(-2, -1)) / math.sqrt(head)
                mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
                y = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1) @ v
            return self.wo(y.transpose(1, 2).contiguous().view(B, T, -1))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_norm, self.attn, self.mlp_norm = RMSNorm(width), Attention(), RMSNorm(width)
            self.w1, self.w2, self.w3 = (nn.Linear(width, 4 * width, bias=False), nn.Linear(4 * width, width, bias=False),
                                         nn.Linear(width, 4 * width, bias=False))

        def forward(self, x, cos, sin, cache=None):
            x = x + self.attn(self.attn_norm(x), cos, sin, cache)
            h = self.mlp_norm(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, width)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.norm, self.out = RMSNorm(width), nn.Linear(width, vocab, bias=False)
            inv_freq = 1.0 / (10000 ** (torch.arange(0, head, 2).float() / head))
            freqs = torch.outer(torch.arange(block).float(), inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.cos, self.sin = emb.cos(), emb.sin()

        def forward(self, idx, targets=None, caches=None, start=0):
            T = idx.shape[1]
            cos, sin = self.cos[start:start + T], self.sin[start:start + T]
            x = self.tok(idx)
            for i, b in enumerate(self.blocks):
                x = b(x, cos, sin, None if caches is None else caches[i])
            logits = self.out(self.norm(x))
            if targets is None:
                return logits
            return F.cross_entropy(logits.view(-1, vocab), targets.view(-1))

    return Llama(), vocab, block


def build_llama_scratch(torch, sdpa=False):
    """Training steps of llama_scratch_model: batch 16 of 32 tokens, AdamW, clipping."""
    model, vocab, block = llama_scratch_model(torch, sdpa)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    data = torch.randint(0, vocab, (20000,), generator=torch.Generator().manual_seed(0))

    def step():
        ix = torch.randint(len(data) - block - 1, (16,))
        x = torch.stack([data[i:i + block] for i in ix])
        y = torch.stack([data[i + 1:i + block + 1] for i in ix])
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return step


def build_llama_generate(torch):
    """Generation by llama_scratch_model (SDPA): a step is 16 tokens one at a time from a one-token prompt,
    the whole growing context each time, then 16 more through a KV cache grown by torch.cat; top-k 10 sampling."""
    model, vocab, block = llama_scratch_model(torch, sdpa=True)
    model.eval()

    def sample(logits):
        v, _ = torch.topk(logits, 10)
        logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
        return torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)

    F = torch.nn.functional

    generated = torch.zeros((1, 33), dtype=torch.long)  # (the step's tokens, kept as a script keeps its output)

    @torch.no_grad()
    def step():
        idx = torch.zeros((1, 1), dtype=torch.long)
        for _ in range(16):
            idx = torch.cat((idx, sample(model(idx[:, -block:])[:, -1, :])), dim=1)
        caches = [{} for _ in model.blocks]
        logits = model(idx[:, :1], caches=caches)
        tokens = [idx]
        for t in range(16):
            nxt = sample(logits[:, -1, :])
            tokens.append(nxt)
            logits = model(nxt, caches=caches, start=t + 1)
        generated.copy_(torch.cat(tokens, dim=1))
    return step


def build_makemore(torch, kind):
    """makemore's own Transformer and BoW, written out as its file writes them (n_layer 4, n_head 4, n_embd 64,
    block 16, vocab 27, batch 32): attention from one c_attn product split into q, k, v, the causal mask a
    `bias` buffer applied by masked_fill, the GELU's tanh formula written out, blocks in an nn.ModuleDict;
    the BoW's causal average by masked_fill + softmax of zeros, its MLP of c_fc/c_proj with tanh.
    AdamW as makemore (weight decay 0.01, betas (0.9, 0.99), eps 1e-8), no clipping."""
    nn, F = torch.nn, torch.nn.functional
    vocab, block, n_embd, n_head, n_layer = 27, 16, 64, 4, 4

    class NewGELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(n_embd), CausalSelfAttention(), nn.LayerNorm(n_embd)
            self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd),
                                          act=NewGELU()))
            m = self.mlp
            self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlpf(self.ln_2(x))

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block, n_embd),
                                                  h=nn.ModuleList([Block() for _ in range(n_layer)]),
                                                  ln_f=nn.LayerNorm(n_embd)))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)

        def forward(self, idx):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for blk in self.transformer.h:
                x = blk(x)
            return self.lm_head(self.transformer.ln_f(x))

    class CausalBoW(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, block, block))

        def forward(self, x):
            B, T, C = x.size()
            att = torch.zeros((B, T, T))
            att = att.masked_fill(self.bias[:, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            return att @ x

    class BoWBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.cbow = CausalBoW()
            self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd)))
            m = self.mlp
            self.mlpf = lambda x: m.c_proj(F.tanh(m.c_fc(x)))

        def forward(self, x):
            x = x + self.cbow(x)
            return x + self.mlpf(x)

    class BoW(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.context_block = BoWBlock()
            self.lm_head = nn.Linear(n_embd, vocab)

        def forward(self, idx):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
            x = self.context_block(self.wte(idx) + self.wpe(pos))
            return self.lm_head(x)

    model = Transformer() if kind == "makemore_transformer" else BoW()
    return names_step(torch, model, 5e-4, block, vocab, clip=False)


def build_mnist_cnn(torch):
    """PyTorch's MNIST example's model and loop (random images in place of MNIST's): Adadelta(lr=1), a StepLR
    step every 10 steps (the example's is once an epoch)."""
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = F.relu(self.fc1(torch.flatten(x, 1)))
            return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)

    model = Net()
    model.train()
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    g = torch.Generator().manual_seed(0)
    data = torch.randn((64, 1, 28, 28), generator=g)
    target = torch.randint(0, 10, (64,), generator=g)
    count = [0]

    def step():
        opt.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        count[0] += 1
        if count[0] % 10 == 0:
            scheduler.step()
    return step


def build_poly_raw(torch):
    """PyTorch's tensor-level example: y = a + b x + c x^2 + d x^3 fitted to sin(x) by hand-written SGD on
    four 0-d tensors that require grad (each step ten recorded ops on 2000 values, then four no_grad updates)."""
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    g = torch.Generator().manual_seed(0)
    a, b, c, d = (torch.randn((), generator=g, requires_grad=True) for _ in range(4))

    def step():
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 1e-6 * p.grad
                p.grad = None
    return step


def build_wavenet(torch):
    """makemore's WaveNet lecture: its hand-written layers (weights (fan_in, fan_out) / sqrt(fan_in), a
    BatchNorm1d whose batch statistics run over dims (0, 1) of a 3-d input and whose running ones are updated
    under no_grad), consecutive characters merged two by two through `view`, SGD through `.data` and the
    loss logged as `.log10().item()`."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.randn((fan_in, fan_out), generator=g) / fan_in**0.5
            self.bias = torch.zeros(fan_out) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps, self.momentum, self.training = eps, momentum, True
            self.gamma, self.beta = torch.ones(dim), torch.zeros(dim)
            self.running_mean, self.running_var = torch.zeros(dim), torch.ones(dim)

        def __call__(self, x):
            if self.training:
                dim = 0 if x.ndim == 2 else (0, 1)
                xmean, xvar = x.mean(dim, keepdim=True), x.var(dim, keepdim=True)
            else:
                xmean, xvar = self.running_mean, self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    class Embedding:
        def __init__(self, num_embeddings, embedding_dim):
            self.weight = torch.randn((num_embeddings, embedding_dim), generator=g)

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class FlattenConsecutive:
        def __init__(self, n):
            self.n = n

        def __call__(self, x):
            B, T, C = x.shape
            x = x.view(B, T // self.n, C * self.n)
            if x.shape[1] == 1:
                x = x.squeeze(1)
            self.out = x
            return self.out

        def parameters(self):
            return []

    class Sequential:
        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]

    vocab, n_embd, n_hidden = 27, 24, 128
    model = Sequential([
        Embedding(vocab, n_embd),
        FlattenConsecutive(2), Linear(n_embd * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab)])
    with torch.no_grad():
        model.layers[-1].weight *= 0.1
    parameters = model.parameters()
    for p in parameters:
        p.requires_grad = True
    Xtr = torch.randint(0, vocab, (5000, 8), generator=g)
    Ytr = torch.randint(0, vocab, (5000,), generator=g)
    lossi = []

    def step():
        ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
        Xb, Yb = Xtr[ix], Ytr[ix]
        loss = F.cross_entropy(model(Xb), Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -0.1 * p.grad
        lossi.append(loss.log10().item())
    return step


def build_char_cnn(torch):
    """A character-level CNN text classifier (45 characters and padding, texts of 96, batch 32): Embedding(46,
    32, padding_idx=0), `x.permute(0, 2, 1)`, three Conv1d(32, 64) of kernels 3, 4 and 5 and ReLU, each pooled
    over time two ways in turn (`F.max_pool1d(c, c.size(2)).squeeze(2)` and nn.AdaptiveMaxPool1d(1)), cat,
    dropout, Linear to 4 classes, CrossEntropyLoss, clip_grad_norm_, Adam with weight_decay, the accuracy by
    `(preds == y).float().mean().item()`."""
    import numpy as np

    nn, F = torch.nn, torch.nn.functional
    vocab, emb, filters, classes, length, batch = 46, 32, 64, 4, 96, 32

    class CharCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
            self.convs = nn.ModuleList([nn.Conv1d(emb, filters, k) for k in (3, 4, 5)])
            self.pool, self.dropout = nn.AdaptiveMaxPool1d(1), nn.Dropout(0.5)
            self.fc = nn.Linear(3 * filters, classes)

        def forward(self, x, adaptive):
            x = self.embedding(x).permute(0, 2, 1)
            conved = [F.relu(conv(x)) for conv in self.convs]
            if adaptive:
                pooled = [self.pool(c).squeeze(-1) for c in conved]
            else:
                pooled = [F.max_pool1d(c, c.size(2)).squeeze(2) for c in conved]
            return self.fc(self.dropout(torch.cat(pooled, 1)))

    rng = np.random.default_rng(0)
    ids = rng.integers(1, vocab, (batch, length))
    ids[:, 80:] = 0
    x, y = torch.tensor(ids), torch.tensor(rng.integers(0, classes, batch))
    model, criterion = CharCNN(), nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    count = [0]

    def step():
        model.train()
        optimizer.zero_grad()
        logits = model(x, count[0] % 2 == 1)
        loss = criterion(logits, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        count[0] += 1
        return loss.item(), (logits.argmax(dim=1) == y).float().mean().item()
    return step


def build(torch, kind):
    if kind == "mnist_cnn":
        return build_mnist_cnn(torch)
    if kind == "resnet_small":
        return build_resnet_small(torch)
    if kind == "dcgan":
        return build_dcgan(torch)
    if kind == "unet":
        return build_unet(torch)
    if kind == "poly_raw":
        return build_poly_raw(torch)
    if kind == "wavenet":
        return build_wavenet(torch)
    if kind == "char_cnn":
        return build_char_cnn(torch)
    if kind == "mlp":
        return build_mlp(torch)
    if kind in ("mlp_module", "rnn", "gru", "bow", "transformer"):
        return names_models(torch, kind)
    if kind == "mlp_batchnorm":
        return build_mlp(torch, batchnorm=True)
    if kind in ("rnn_cells", "gru_cells"):
        return build_cells(torch, kind)
    if kind == "lecture_gpt":
        return build_lecture_gpt(torch)
    if kind == "poly":
        return build_poly(torch)
    if kind.startswith("word_"):
        return build_word(torch, {"word_lstm": "LSTM", "word_gru": "GRU", "word_transformer": "Transformer"}[kind])
    if kind == "lstmcell_lbfgs":
        return build_lstmcell_lbfgs(torch)
    if kind in ("name_rnn_sample", "bow_sample"):
        return build_per_sample(torch, kind)
    if kind == "name_gen_sample":
        return build_name_gen(torch)
    if kind == "tagger_lstm_sample":
        return build_tagger(torch)
    if kind == "seq2seq_gru":
        return build_seq2seq(torch)
    if kind == "reinforce":
        return build_reinforce(torch)
    if kind == "dqn":
        return build_dqn(torch)
    if kind == "vae":
        return build_vae(torch)
    if kind == "bigram":
        return build_bigram(torch)
    if kind == "text_bag":
        return build_text_bag(torch)
    if kind == "bigram_lecture":
        return build_bigram_lecture(torch)
    if kind == "gru_scratch":
        return build_gru_scratch(torch)
    if kind == "lstm_scratch":
        return build_lstm_scratch(torch)
    if kind == "birnn_rows":
        return build_birnn_rows(torch)
    if kind == "mlp_backprop":
        return build_mlp_backprop(torch)
    if kind == "bow_counts":
        return build_bow_counts(torch)
    if kind == "sentiment_rnn":
        return build_sentiment_rnn(torch)
    if kind == "gan":
        return build_gan(torch)
    if kind == "conv_ae":
        return build_conv_ae(torch)
    if kind == "llama_scratch":
        return build_llama_scratch(torch)
    if kind == "llama_generate":
        return build_llama_generate(torch)
    if kind in ("makemore_transformer", "makemore_bow"):
        return build_makemore(torch, kind)
    if kind == "pinn":
        return build_pinn(torch)
    if kind == "maml":
        return build_maml(torch)
    raise ValueError(kind)


def build_pinn(torch):
    """Burgers' equation u_t + u u_x = nu u_xx: the derivatives by autograd.grad with create_graph, so the
    loss's backward runs through the backward graphs (second order for u_xx)."""
    nn = torch.nn
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    x = torch.linspace(-1, 1, 64, requires_grad=True).view(-1, 1)
    t = torch.linspace(0, 1, 64).view(-1, 1).requires_grad_()
    x0 = torch.linspace(-1, 1, 16).view(-1, 1)
    u0 = -torch.sin(math.pi * x0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        u = model(torch.cat([x, t], dim=1))
        u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        u_t = torch.autograd.grad(u.sum(), t, create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
        f = u_t + u * u_x - (0.01 / math.pi) * u_xx
        loss = f.pow(2).mean() + torch.nn.functional.mse_loss(model(torch.cat([x0, torch.zeros_like(x0)], 1)), u0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def build_maml(torch):
    """MAML without a library: the parameters a plain list, the adapted ones `p - alpha * g` from
    autograd.grad(create_graph=True), the outer loss summed over tasks and backward to the list."""
    import numpy as np
    F = torch.nn.functional
    rs = np.random.RandomState(0)
    shapes = [(40, 1), (40,), (40, 40), (40,), (1, 40), (1,)]
    params = [(torch.randn(*s) * 0.2).requires_grad_() for s in shapes]
    tasks = []
    for _ in range(5):
        amp, phase = rs.uniform(0.1, 5.0), rs.uniform(0, np.pi)
        xs, xq = rs.uniform(-5, 5, (2, 10, 1)).astype(np.float32)
        tasks.append([torch.from_numpy(a) for a in (xs, amp * np.sin(xs + phase), xq, amp * np.sin(xq + phase))])
    opt = torch.optim.Adam(params, lr=1e-3)

    def forward(x, w):
        h = F.relu(F.linear(x, w[0], w[1]))
        h = F.relu(F.linear(h, w[2], w[3]))
        return F.linear(h, w[4], w[5])

    def step():
        opt.zero_grad()
        outer = 0.0
        for xs, ys, xq, yq in tasks:
            grads = torch.autograd.grad(F.mse_loss(forward(xs, params), ys), params, create_graph=True)
            fast = [p - 0.01 * g for p, g in zip(params, grads)]
            outer = outer + F.mse_loss(forward(xq, fast), yq)
        (outer / len(tasks)).backward()
        opt.step()
    return step



def build_gan(torch):
    """A vanilla GAN on 2-D rings (batch 64, noise 16): Generator Linear/BatchNorm1d/LeakyReLU(0.2)/Tanh,
    Discriminator Linear/LeakyReLU/Sigmoid, nn.BCELoss against torch.full labels (0.9 smoothed), two Adam
    with betas (0.5, 0.999); D's loss backward in two calls (real, then fake.detach()), then G's step."""
    import numpy as np

    nn = torch.nn
    nz, B, h = 16, 64, 128
    G = nn.Sequential(nn.Linear(nz, h), nn.BatchNorm1d(h), nn.LeakyReLU(0.2, inplace=True), nn.Linear(h, h),
                      nn.BatchNorm1d(h), nn.LeakyReLU(0.2, inplace=True), nn.Linear(h, 2), nn.Tanh())
    D = nn.Sequential(nn.Linear(2, h), nn.LeakyReLU(0.2, inplace=True), nn.Linear(h, h),
                      nn.LeakyReLU(0.2, inplace=True), nn.Linear(h, 1), nn.Sigmoid())
    criterion = nn.BCELoss()
    optD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    rng = np.random.default_rng(0)
    angle, radius = rng.uniform(0, 2 * np.pi, B), rng.choice([0.5, 1.0], B)
    real = torch.tensor(np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1).astype(np.float32))
    g = torch.Generator().manual_seed(0)

    def step():
        D.zero_grad()
        label = torch.full((B,), 0.9)
        errD_real = criterion(D(real).view(-1), label)
        errD_real.backward()
        fake = G(torch.randn(B, nz, generator=g))
        label.fill_(0.0)
        errD_fake = criterion(D(fake.detach()).view(-1), label)
        errD_fake.backward()
        optD.step()
        G.zero_grad()
        label.fill_(1.0)
        errG = criterion(D(fake).view(-1), label)
        errG.backward()
        optG.step()
    return step


def build_conv_ae(torch):
    """A small convolutional autoencoder on 32 images 1 x 16 x 16: Conv2d/ReLU/MaxPool2d down to 8 x 4 x 4,
    ConvTranspose2d(stride 2, output_padding 1), Upsample(scale_factor=2, nearest), Conv2d and Sigmoid back
    up; inputs noised by `x + 0.3 * randn_like(x)` and clamped, MSELoss against the clean ones, Adam."""
    nn = torch.nn
    enc = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(True), nn.MaxPool2d(2, 2),
                        nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(True), nn.MaxPool2d(2, 2))
    dec = nn.Sequential(nn.ConvTranspose2d(8, 16, 3, stride=2, padding=1, output_padding=1), nn.ReLU(True),
                        nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(16, 1, 3, padding=1), nn.Sigmoid())
    model = nn.Sequential(enc, dec)
    criterion = nn.MSELoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(32, 1, 16, 16, generator=torch.Generator().manual_seed(0))

    def step():
        noisy = (x + 0.3 * torch.randn_like(x)).clamp(0., 1.)
        loss = criterion(model(noisy), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def build_resnet_small(torch):
    """A small CIFAR ResNet (ResNet-20's stem and three stages of widths 16/32/64, one BasicBlock each: 3x3
    Conv2d without bias, BatchNorm2d, ReLU(inplace=True), `out += identity`, a 1x1 stride-2 Conv2d + BatchNorm2d
    shortcut), AdaptiveAvgPool2d((1, 1)), `torch.flatten(x, 1)`, Linear, on 8 random 3 x 32 x 32 images; the
    augmentation by tensor ops (a random half flipped by `torch.flip(dims=[3])` through a mask, a random crop
    of the reflect-padded batch); kaiming_normal_(fan_out) init, SGD nesterov with weight decay, CosineAnnealingLR."""
    nn, F = torch.nn, torch.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                                nn.BatchNorm2d(planes))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)

    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                          BasicBlock(16, 16), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2),
                          nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(1), nn.Linear(64, 10))
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=200)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (8,), generator=g)

    def step():
        flip = torch.rand(8, generator=g) < 0.5
        xb = x.clone()
        xb[flip] = torch.flip(xb[flip], dims=[3])
        i, j = torch.randint(0, 9, (2,), generator=g).tolist()
        xb = F.pad(xb, (4, 4, 4, 4), mode="reflect")[:, :, i:i + 32, j:j + 32]
        model.train()
        loss = criterion(model(xb), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        scheduler.step()
    return step


def build_dcgan(torch):
    """A DCGAN pair on 32 random 1 x 16 x 16 images (noise 16): the Generator ConvTranspose2d(16, 64, 4, 1, 0)
    -> BatchNorm2d -> ReLU(True) -> ConvTranspose2d(64, 32, 4, 2, 1) -> ... -> Tanh, the Discriminator
    Conv2d(4, 2, 1, bias=False) with LeakyReLU(0.2, inplace=True), BatchNorm2d and a Sigmoid; normal_(0, 0.02)
    init through `classname.find('Conv')`, BCELoss on torch.full labels, `netD(x).view(-1)`, D's two backward
    calls (real, then fake.detach()), two Adam with betas (0.5, 0.999)."""
    nn = torch.nn
    nz, B = 16, 32
    netG = nn.Sequential(nn.ConvTranspose2d(nz, 64, 4, 1, 0, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
                         nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(True),
                         nn.ConvTranspose2d(32, 1, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(nn.Conv2d(1, 32, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(32, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(64, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    netG.apply(weights_init)
    netD.apply(weights_init)
    criterion = nn.BCELoss()
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    g = torch.Generator().manual_seed(0)
    real = torch.rand(B, 1, 16, 16, generator=g) * 2 - 1

    def step():
        netD.zero_grad()
        label = torch.full((B,), 1.0, dtype=torch.float)
        errD_real = criterion(netD(real).view(-1), label)
        errD_real.backward()
        fake = netG(torch.randn(B, nz, 1, 1, generator=g))
        label.fill_(0.0)
        errD_fake = criterion(netD(fake.detach()).view(-1), label)
        errD_fake.backward()
        optD.step()
        netG.zero_grad()
        label.fill_(1.0)
        errG = criterion(netD(fake).view(-1), label)
        errG.backward()
        optG.step()
    return step



def build_unet(torch):
    """A U-Net segmenter (width 8, three downs and three ups through ConvTranspose2d) on 4 random 3 x 20 x 20
    images: 20 halves to 2, so the first up is 4 wide and F.pad fits it to its skip's 5; one output channel,
    BCEWithLogitsLoss(pos_weight) + (1 - Dice of the sigmoid), clip_grad_norm_, RMSprop momentum 0.9 foreach."""
    nn, F = torch.nn, torch.nn.functional

    def double(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class Up(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.up = nn.ConvTranspose2d(cin, cin // 2, 2, stride=2)
            self.conv = double(cin, cout)

        def forward(self, x1, x2):
            x1 = self.up(x1)
            dy, dx = x2.size()[2] - x1.size()[2], x2.size()[3] - x1.size()[3]
            x1 = F.pad(x1, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
            return self.conv(torch.cat([x2, x1], dim=1))

    class UNet(nn.Module):
        def __init__(self, w=8):
            super().__init__()
            self.inc = double(3, w)
            self.downs = nn.ModuleList([nn.Sequential(nn.MaxPool2d(2), double(w * 2 ** i, w * 2 ** (i + 1)))
                                        for i in range(3)])
            self.ups = nn.ModuleList([Up(w * 2 ** (i + 1), w * 2 ** i) for i in (2, 1, 0)])
            self.outc = nn.Conv2d(w, 1, kernel_size=1)

        def forward(self, x):
            skips = [self.inc(x)]
            for down in self.downs:
                skips.append(down(skips[-1]))
            x = skips.pop()
            for up in self.ups:
                x = up(x, skips.pop())
            return self.outc(x)

    model = UNet()
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-4, weight_decay=1e-8, momentum=0.9, foreach=True)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, 20, 20, generator=g)
    mask = (torch.rand(4, 1, 20, 20, generator=g) > 0.7).float()

    def step():
        model.train()
        logits = model(x)
        probs = torch.sigmoid(logits)
        inter = (probs * mask).sum(dim=(2, 3))
        dice = (2 * inter + 1e-6) / (probs.sum(dim=(2, 3)) + mask.sum(dim=(2, 3)) + 1e-6)
        loss = criterion(logits, mask) + (1 - dice.mean())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return step

def minigrad_as_torch():
    """minigrad under PyTorch's layout: `torch.nn` is the nn package, `torch.optim` its optimizers, and
    every other name minigrad's, those it loads on first use (`torch.cuda`, `torch.utils`) included."""
    import types

    import minigrad
    import nn

    class Torch(types.SimpleNamespace):
        def __getattr__(self, name):  # (only for names not set below: minigrad's lazily loaded ones)
            return getattr(minigrad, name)

    torch = Torch(**{k: getattr(minigrad, k) for k in dir(minigrad) if not k.startswith("__")})
    torch.nn, torch.optim = nn, nn.optim
    return torch


# ---- one process: one framework, one kind ---------------------------------------------------------

def worker(framework, kind, warmup, steps, repeats):
    if framework.startswith("minigrad"):
        torch = minigrad_as_torch()
    else:
        import torch
        torch.set_num_threads(1)
    torch.manual_seed(0)
    t_import = time.perf_counter()
    step = _built(torch, kind, framework)
    t_build = time.perf_counter()
    step()
    t_first = time.perf_counter()
    for _ in range(warmup):
        step()
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        runs.append((time.perf_counter() - t) / steps)
    best = min(runs)
    print(json.dumps({"import": t_import - T_START, "build": t_build - t_import, "first": t_first - t_build,
                      "step": best, "runs": runs, "latency": t_first - T_START - best}))


def _built(torch, kind, framework):
    """The kind's step; through `minigrad.compile` (torch.compile's name) for minigrad+compile."""
    step = build(torch, kind)
    return torch.compile(step) if framework.split(":")[0] == "minigrad+compile" else step


def serve(framework, kind, warmup):
    """--interleaved's worker: build, warm up, then for each line "N" on stdin time N steps."""
    if framework.startswith("minigrad"):
        torch = minigrad_as_torch()
    else:
        import torch
        torch.set_num_threads(1)
    torch.manual_seed(0)
    step = _built(torch, kind, framework)
    for _ in range(1 + warmup):
        step()
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        faults = _minor_faults()
        t = time.perf_counter()
        for _ in range(n):
            step()
        print((time.perf_counter() - t) / n, (_minor_faults() - faults) / n, flush=True)


def _minor_faults():
    """Page faults of this process served without I/O: glibc handing a large array fresh pages."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def interleaved(kind, args):
    """-> {framework: [seconds a step, one per round]}, the frameworks' warm processes taking turns."""
    procs = []
    for f in args.frameworks:
        tree = f.split(":", 1)[1] if ":" in f else str(ROOT)
        env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1")
        cmd = [sys.executable, __file__, "--serve", f, "--kinds", kind, "--warmup", str(args.warmup)]
        procs.append(subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, cwd=ROOT))
    for f, p in zip(args.frameworks, procs):
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{f} {kind}: the worker failed (run it alone to see why)")
    times, faults = {f: [] for f in args.frameworks}, {f: [] for f in args.frameworks}
    for r in range(args.rounds):
        turn = list(zip(args.frameworks, procs))
        for f, p in (turn if r % 2 == 0 else turn[::-1]):
            p.stdin.write(f"{args.steps}\n")
            p.stdin.flush()
            seconds, step_faults = p.stdout.readline().split()
            times[f].append(float(seconds))
            faults[f].append(float(step_faults))
    for p in procs:
        p.stdin.close()
        p.wait()
    return times, faults


def interleaved_main(args):
    import statistics

    last = args.frameworks[-1]
    print(f"CPU: {cpu_name()}; one thread each; {args.rounds} rounds of {args.steps} steps, the frameworks taking "
          f"turns; ms a step (best round); ratios to {last}: best rounds', and paired (median round by round); "
          "faults: minor page faults a step (median round: fresh pages from the C library's malloc)")
    print(f"{'kind':<17}" + "".join(f"{f[-24:]:>26}{'ratio':>7}{'paired':>7}{'faults':>8}" for f in args.frameworks))
    for kind in args.kinds:
        times, faults = interleaved(kind, args)
        line = f"{kind:<17}"
        for f in args.frameworks:
            paired = statistics.median(a / b for a, b in zip(times[f], times[last]))
            line += (f"{min(times[f]) * 1e3:>26.3f}{min(times[f]) / min(times[last]):>7.2f}{paired:>7.2f}"
                     f"{statistics.median(faults[f]):>8.0f}")
        print(line, flush=True)


def run_worker(framework, kind, args):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1")
    cmd = [sys.executable, __file__, "--worker", framework, "--kinds", kind, "--warmup", str(args.warmup),
           "--steps", str(args.steps), "--repeats", str(args.repeats)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{framework} {kind} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        return "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", nargs="+", default=KINDS, choices=KINDS)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--frameworks", nargs="+", default=["minigrad", "torch"],
                    help="minigrad, minigrad+compile, torch, or minigrad:TREE (with --interleaved: another source tree's minigrad)")
    ap.add_argument("--interleaved", action="store_true", help="warm processes taking turns (see above)")
    ap.add_argument("--rounds", type=int, default=20, help="with --interleaved: turns per framework")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.kinds[0], args.warmup, args.steps, args.repeats)
    if args.serve:
        return serve(args.serve, args.kinds[0], args.warmup)
    if args.interleaved:
        return interleaved_main(args)
    print(f"CPU: {cpu_name()}; one thread each; best of {args.repeats} x {args.steps} steps after {args.warmup} "
          "warmup (spread: worst/best run)")
    head = f"{'kind':<17}" + "".join(f"{f + ' ms/step':>17}{'spread':>8}" for f in args.frameworks)
    head += f"{'ratio':>7}" if len(args.frameworks) == 2 else ""
    head += "".join(f"{f[:5] + ' 1st s':>13}" for f in args.frameworks)
    print(head)
    for kind in args.kinds:
        res = {f: run_worker(f, kind, args) for f in args.frameworks}
        line = f"{kind:<17}"
        for f in args.frameworks:
            r = res[f]
            line += f"{r['step'] * 1e3:>17.3f}{max(r['runs']) / r['step']:>8.2f}"
        if len(args.frameworks) == 2:
            line += f"{res[args.frameworks[0]]['step'] / res[args.frameworks[1]]['step']:>7.2f}"
        line += "".join(f"{res[f]['latency']:>13.3f}" for f in args.frameworks)
        print(line, flush=True)
    print("ratio: minigrad time / PyTorch time (below 1: minigrad faster); 1st s: import + build + first step "
          "- one steady step")


if __name__ == "__main__":
    main()
