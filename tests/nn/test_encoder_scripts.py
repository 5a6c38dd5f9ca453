"""Encoder-style scripts (BERT, T5, Whisper, ViT-MAE, DETR) written the way their users write them, once against a
`torch`-like module, and run twice: on PyTorch, then on minigrad from PyTorch's initial weights (copied across as
numpy arrays). Float64 throughout; losses, gradients and the parameters after a few optimizer steps must agree.
Random draws that the two libraries make differently (masking, noise) come from shared numpy arrays; a
torch.Generator's own draws are checked for their properties instead."""
import itertools
import math

import numpy as np
import pytest

from twins import agree, both, grads, start  # noqa: F401


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def params(model):
    return [p.detach().clone() for p in model.parameters()]


# ---- (1) BERT: Hugging Face modeling style, MLM + next-sentence heads, AdamW + linear warmup + clipping ----------
def bert_model(torch, V=23, C=16, H=2, L=2, T=12):
    nn = torch.nn

    class BertEmbeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.word_embeddings = nn.Embedding(V, C, padding_idx=0)
            self.position_embeddings = nn.Embedding(T, C)
            self.token_type_embeddings = nn.Embedding(2, C)
            self.LayerNorm = nn.LayerNorm(C, eps=1e-12)
            self.dropout = nn.Dropout(0.0)
            self.register_buffer("position_ids", torch.arange(T).expand((1, -1)), persistent=False)
            self.register_buffer("token_type_ids", torch.zeros(self.position_ids.size(), dtype=torch.long),
                                 persistent=False)

        def forward(self, input_ids, token_type_ids=None):
            seq_length = input_ids.size(1)
            position_ids = self.position_ids[:, :seq_length]
            if token_type_ids is None:
                token_type_ids = self.token_type_ids[:, :seq_length].expand(input_ids.shape[0], seq_length)
            embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
            embeddings += self.position_embeddings(position_ids)
            return self.dropout(self.LayerNorm(embeddings))

    class BertSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_head_size = C // H
            self.all_head_size = H * self.attention_head_size
            self.query = nn.Linear(C, self.all_head_size)
            self.key = nn.Linear(C, self.all_head_size)
            self.value = nn.Linear(C, self.all_head_size)
            self.dropout = nn.Dropout(0.0)

        def transpose_for_scores(self, x):
            new_x_shape = x.size()[:-1] + (H, self.attention_head_size)
            return x.view(new_x_shape).permute(0, 2, 1, 3)

        def forward(self, hidden_states, attention_mask=None):
            query_layer = self.transpose_for_scores(self.query(hidden_states))
            key_layer = self.transpose_for_scores(self.key(hidden_states))
            value_layer = self.transpose_for_scores(self.value(hidden_states))
            attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
            attention_scores = attention_scores / math.sqrt(self.attention_head_size)
            if attention_mask is not None:
                attention_scores = attention_scores + attention_mask
            attention_probs = nn.functional.softmax(attention_scores, dim=-1)
            attention_probs = self.dropout(attention_probs)
            context_layer = torch.matmul(attention_probs, value_layer)
            context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
            new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
            return context_layer.view(new_context_layer_shape), attention_probs

    class BertSelfOutput(nn.Module):
        def __init__(self, d_in):
            super().__init__()
            self.dense = nn.Linear(d_in, C)
            self.LayerNorm = nn.LayerNorm(C, eps=1e-12)
            self.dropout = nn.Dropout(0.0)

        def forward(self, hidden_states, input_tensor):
            hidden_states = self.dropout(self.dense(hidden_states))
            return self.LayerNorm(hidden_states + input_tensor)

    class BertLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.ModuleDict(dict(self=BertSelfAttention(), output=BertSelfOutput(C)))
            self.intermediate = nn.ModuleDict(dict(dense=nn.Linear(C, 4 * C)))
            self.output = BertSelfOutput(4 * C)

        def forward(self, hidden_states, attention_mask):
            self_out, probs = self.attention["self"](hidden_states, attention_mask)
            attention_output = self.attention["output"](self_out, hidden_states)
            intermediate = nn.functional.gelu(self.intermediate["dense"](attention_output))
            return self.output(intermediate, attention_output), probs

    class BertPooler(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = nn.Linear(C, C)
            self.activation = nn.Tanh()

        def forward(self, hidden_states):
            return self.activation(self.dense(hidden_states[:, 0]))

    class BertLMPredictionHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = nn.Linear(C, C)
            self.transform_act_fn = nn.GELU()
            self.LayerNorm = nn.LayerNorm(C, eps=1e-12)
            self.decoder = nn.Linear(C, V, bias=False)
            self.bias = nn.Parameter(torch.zeros(V))
            self.decoder.bias = self.bias

        def forward(self, hidden_states):
            hidden_states = self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))
            return self.decoder(hidden_states)

    class BertForPreTraining(nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = nn.Module()
            self.bert.embeddings = BertEmbeddings()
            self.bert.encoder = nn.ModuleDict(dict(layer=nn.ModuleList([BertLayer() for _ in range(L)])))
            self.bert.pooler = BertPooler()
            self.cls = nn.Module()
            self.cls.predictions = BertLMPredictionHead()
            self.cls.seq_relationship = nn.Linear(C, 2)
            self.apply(self._init_weights)
            self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                module.weight.data.normal_(mean=0.0, std=0.02)
                if module.bias is not None:
                    module.bias.data.zero_()
            elif isinstance(module, nn.Embedding):
                module.weight.data.normal_(mean=0.0, std=0.02)
                if module.padding_idx is not None:
                    module.weight.data[module.padding_idx].zero_()
            elif isinstance(module, nn.LayerNorm):
                module.bias.data.zero_()
                module.weight.data.fill_(1.0)

        @property
        def dtype(self):
            return next(self.parameters()).dtype

        def get_extended_attention_mask(self, attention_mask):
            extended = attention_mask[:, None, None, :].to(dtype=self.dtype)
            return (1.0 - extended) * torch.finfo(self.dtype).min

        def forward(self, input_ids, attention_mask, token_type_ids=None, labels=None, next_sentence_label=None):
            hidden = self.bert.embeddings(input_ids, token_type_ids)
            extended = self.get_extended_attention_mask(attention_mask)
            all_probs = ()
            for layer in self.bert.encoder["layer"]:
                hidden, probs = layer(hidden, extended)
                all_probs = all_probs + (probs,)
            prediction_scores = self.cls.predictions(hidden)
            seq_relationship_score = self.cls.seq_relationship(self.bert.pooler(hidden))
            total_loss = None
            if labels is not None and next_sentence_label is not None:
                loss_fct = nn.CrossEntropyLoss()  # -100 index = padding token
                masked_lm_loss = loss_fct(prediction_scores.view(-1, V), labels.view(-1))
                next_sentence_loss = loss_fct(seq_relationship_score.view(-1, 2), next_sentence_label.view(-1))
                total_loss = masked_lm_loss + next_sentence_loss
            return total_loss, prediction_scores, seq_relationship_score, all_probs

    return BertForPreTraining()


PAD, CLS, SEP, MASK = 0, 1, 2, 3


def mask_tokens(torch, inputs, special_tokens_mask, draw, words, mlm_probability=0.15):
    """The data collator's 80/10/10 masking; draw(p) is a bernoulli draw of the probability tensor p, words(shape)
    random token ids."""
    labels = inputs.clone()
    inputs = inputs.clone()
    probability_matrix = torch.full(labels.shape, mlm_probability)
    probability_matrix.masked_fill_(special_tokens_mask, value=0.0)
    masked_indices = draw(probability_matrix).bool()
    labels[~masked_indices] = -100
    indices_replaced = draw(torch.full(labels.shape, 0.8)).bool() & masked_indices
    inputs[indices_replaced] = MASK
    indices_random = draw(torch.full(labels.shape, 0.5)).bool() & masked_indices & ~indices_replaced
    random_words = words(labels.shape)
    inputs[indices_random] = random_words[indices_random]
    return inputs, labels


def bert_batch(torch, V):
    rng = np.random.default_rng(5)
    first = [[5, 6, 7, 8], [9, 10, 11], [12, 13, 14, 15, 16]]
    second = [[17, 18], [20, 21, 22, 5], [6]]
    ids, types = [], []
    for a, b in zip(first, second):
        ids.append([CLS] + a + [SEP] + b + [SEP])
        types.append([0] * (len(a) + 2) + [1] * (len(b) + 1))
    T = max(len(s) for s in ids)
    input_ids = torch.tensor([s + [PAD] * (T - len(s)) for s in ids])
    token_type_ids = torch.tensor([s + [0] * (T - len(s)) for s in types])
    attention_mask = (input_ids != PAD).long()
    special = (input_ids == CLS) | (input_ids == SEP) | (input_ids == PAD)
    return rng, input_ids, token_type_ids, attention_mask, special


def bert_pretrain(torch, init):
    V, steps, warmup = 23, 5, 2
    model = bert_model(torch, V=V)
    init = start(model, init)
    rng, input_ids, token_type_ids, attention_mask, special = bert_batch(torch, V)
    # the libraries' generators differ: the masks the script trains on come from shared uniforms
    shared = lambda p: (torch.tensor(rng.random(tuple(p.shape))) < p).long()  # noqa: E731
    words = lambda shape: torch.tensor(rng.integers(0, V, tuple(shape)))  # noqa: E731
    inputs, labels = mask_tokens(torch, input_ids, special, shared, words, mlm_probability=0.4)
    labels[0, 1] = 6 if labels[0, 1] == -100 else labels[0, 1]  # at least one token to predict
    next_sentence_label = torch.tensor([0, 1, 0])

    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=5e-3, eps=1e-8)

    def lr_lambda(current_step):
        if current_step < warmup:
            return float(current_step) / float(max(1, warmup))
        return max(0.0, float(steps - current_step) / float(max(1, steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda, last_epoch=-1)
    model.train()
    losses, norms, lrs = [], [], []
    for _ in range(steps):
        loss, scores, nsp, probs = model(inputs, attention_mask, token_type_ids, labels, next_sentence_label)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        lrs.append(scheduler.get_last_lr())
    model.eval()
    with torch.no_grad():
        _, scores, nsp, probs = model(inputs, attention_mask, token_type_ids)
    predicted = scores.argmax(-1).masked_fill(labels == -100, -100)
    tied = model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    return dict(init=init, inputs=inputs, labels=labels, losses=losses, norms=norms, lrs=lrs, scores=scores,
                nsp=nsp, probs=list(probs), predicted=predicted, tied=tied, params=params(model),
                state=list(model.state_dict()))


def test_bert_pretraining_masked_lm_with_warmup_and_clipping(torch):
    theirs, ours = both(torch, bert_pretrain)
    assert ours["tied"]
    # padded keys get no attention
    assert float(ours["probs"][0][2, :, :, -1].abs().max()) == 0.0


def test_bert_masking_with_a_seeded_generator(torch):
    """Each library's own generator: the masking keeps its invariants and a reseeded generator repeats it."""
    import minigrad

    def run(lib):
        _, input_ids, _, _, special = bert_batch(lib, 23)
        out = []
        for _ in range(2):
            g = lib.Generator().manual_seed(42)
            draw = lambda p, g=g: lib.bernoulli(p, generator=g)  # noqa: E731
            words = lambda shape, g=g: lib.randint(23, shape, dtype=lib.long, generator=g)  # noqa: E731
            out.append(mask_tokens(lib, input_ids, special, draw, words, 0.5))
        (inputs, labels), (inputs2, labels2) = out
        assert labels.dtype == lib.long and inputs.dtype == lib.long
        assert bool((inputs == inputs2).all()) and bool((labels == labels2).all())
        masked = labels != -100
        assert not bool((masked & special).any())
        assert bool((labels[masked] == input_ids[masked]).all())
        assert bool((inputs[~masked] == input_ids[~masked]).all())
        assert 0 < int(masked.sum()) < int((~special).sum())

    run(torch)
    run(minigrad)


# ---- (2) T5: relative position buckets, hand-written RMS layer norm, causal + cross attention, shift_right -------
def t5_model(torch, V=19, C=16, H=2, FF=32, L=2, num_buckets=8, max_distance=20):
    nn = torch.nn
    d_kv = C // H

    class T5LayerNorm(nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states

    class T5Attention(nn.Module):
        def __init__(self, is_decoder, has_relative_attention_bias):
            super().__init__()
            self.is_decoder = is_decoder
            self.has_relative_attention_bias = has_relative_attention_bias
            self.q = nn.Linear(C, H * d_kv, bias=False)
            self.k = nn.Linear(C, H * d_kv, bias=False)
            self.v = nn.Linear(C, H * d_kv, bias=False)
            self.o = nn.Linear(H * d_kv, C, bias=False)
            if has_relative_attention_bias:
                self.relative_attention_bias = nn.Embedding(num_buckets, H)

        @staticmethod
        def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
            relative_buckets = 0
            if bidirectional:
                num_buckets //= 2
                relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
                relative_position = torch.abs(relative_position)
            else:
                relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
            max_exact = num_buckets // 2
            is_small = relative_position < max_exact
            relative_position_if_large = max_exact + (
                torch.log(relative_position.float() / max_exact)
                / math.log(max_distance / max_exact)
                * (num_buckets - max_exact)
            ).to(torch.long)
            relative_position_if_large = torch.min(
                relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
            relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
            return relative_buckets

        def compute_bias(self, query_length, key_length):
            context_position = torch.arange(query_length, dtype=torch.long)[:, None]
            memory_position = torch.arange(key_length, dtype=torch.long)[None, :]
            relative_position = memory_position - context_position
            relative_position_bucket = self._relative_position_bucket(
                relative_position, bidirectional=not self.is_decoder, num_buckets=num_buckets,
                max_distance=max_distance)
            values = self.relative_attention_bias(relative_position_bucket)
            return values.permute([2, 0, 1]).unsqueeze(0)

        def forward(self, hidden_states, mask=None, key_value_states=None, position_bias=None):
            batch_size, seq_length = hidden_states.shape[:2]
            kv = hidden_states if key_value_states is None else key_value_states
            key_length = kv.shape[1]

            def shape(states):
                return states.view(batch_size, -1, H, d_kv).transpose(1, 2)

            query_states = shape(self.q(hidden_states))
            key_states = shape(self.k(kv))
            value_states = shape(self.v(kv))
            scores = torch.matmul(query_states, key_states.transpose(3, 2))
            if position_bias is None:
                if not self.has_relative_attention_bias:
                    position_bias = torch.zeros((1, H, seq_length, key_length), dtype=scores.dtype)
                else:
                    position_bias = self.compute_bias(seq_length, key_length)
                if mask is not None:
                    position_bias = position_bias + mask
            scores += position_bias
            attn_weights = nn.functional.softmax(scores, dim=-1).type_as(scores)
            attn_output = torch.matmul(attn_weights, value_states)
            attn_output = attn_output.transpose(1, 2).contiguous().view(batch_size, -1, H * d_kv)
            return self.o(attn_output), position_bias

    class T5Block(nn.Module):
        def __init__(self, is_decoder, has_relative_attention_bias):
            super().__init__()
            self.is_decoder = is_decoder
            self.self_norm = T5LayerNorm(C)
            self.SelfAttention = T5Attention(is_decoder, has_relative_attention_bias)
            if is_decoder:
                self.cross_norm = T5LayerNorm(C)
                self.EncDecAttention = T5Attention(is_decoder, False)
            self.ff_norm = T5LayerNorm(C)
            self.wi = nn.Linear(C, FF, bias=False)
            self.wo = nn.Linear(FF, C, bias=False)

        def forward(self, x, mask, position_bias, enc=None, enc_mask=None, enc_bias=None):
            a, position_bias = self.SelfAttention(self.self_norm(x), mask, position_bias=position_bias)
            x = x + a
            if self.is_decoder:
                a, enc_bias = self.EncDecAttention(self.cross_norm(x), enc_mask, key_value_states=enc,
                                                   position_bias=enc_bias)
                x = x + a
            x = x + self.wo(nn.functional.relu(self.wi(self.ff_norm(x))))
            return x, position_bias, enc_bias

    class T5ForConditionalGeneration(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Embedding(V, C)
            self.encoder = nn.ModuleList([T5Block(False, i == 0) for i in range(L)])
            self.encoder_final_layer_norm = T5LayerNorm(C)
            self.decoder = nn.ModuleList([T5Block(True, i == 0) for i in range(L)])
            self.decoder_final_layer_norm = T5LayerNorm(C)

        def _shift_right(self, input_ids, decoder_start_token_id=0, pad_token_id=0):
            shifted_input_ids = input_ids.new_zeros(input_ids.shape)
            shifted_input_ids[..., 1:] = input_ids[..., :-1].clone()
            shifted_input_ids[..., 0] = decoder_start_token_id
            shifted_input_ids.masked_fill_(shifted_input_ids == -100, pad_token_id)
            return shifted_input_ids

        def extended(self, mask):
            dtype = self.shared.weight.dtype
            return (1.0 - mask.to(dtype)) * torch.finfo(dtype).min

        def encode(self, input_ids, attention_mask):
            x, bias = self.shared(input_ids), None
            mask = self.extended(attention_mask[:, None, None, :])
            for block in self.encoder:
                x, bias, _ = block(x, mask, bias)
            return self.encoder_final_layer_norm(x)

        def decode(self, decoder_input_ids, enc, attention_mask):
            T = decoder_input_ids.shape[1]
            causal = torch.tril(torch.ones(T, T))[None, None, :, :]
            mask = self.extended(causal)
            enc_mask = self.extended(attention_mask[:, None, None, :])
            y, bias, enc_bias = self.shared(decoder_input_ids), None, None
            for block in self.decoder:
                y, bias, enc_bias = block(y, mask, bias, enc, enc_mask, enc_bias)
            y = self.decoder_final_layer_norm(y)
            y = y * (C ** -0.5)
            return nn.functional.linear(y, self.shared.weight)

        def forward(self, input_ids, attention_mask, labels):
            enc = self.encode(input_ids, attention_mask)
            decoder_input_ids = self._shift_right(labels)
            lm_logits = self.decode(decoder_input_ids, enc, attention_mask)
            loss_fct = nn.CrossEntropyLoss(ignore_index=-100)
            loss = loss_fct(lm_logits.view(-1, lm_logits.size(-1)), labels.view(-1))
            return loss, lm_logits

    return T5ForConditionalGeneration()


def t5_finetune(torch, init):
    model = t5_model(torch)
    init = start(model, init)
    input_ids = torch.tensor([[4, 5, 6, 7, 8, 9, 1], [10, 11, 12, 1, 0, 0, 0]])
    attention_mask = (input_ids != 0).long()
    labels = torch.tensor([[13, 14, 15, 1, -100], [16, 17, 1, -100, -100]])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    losses = []
    for _ in range(4):
        loss, logits = model(input_ids, attention_mask, labels)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        g = grads(model)
        optimizer.step()
        losses.append(loss.item())
    rel = torch.arange(-30, 31)[None, :]
    buckets_bi = model.encoder[0].SelfAttention._relative_position_bucket(rel, True, 8, 20)
    buckets_uni = model.decoder[0].SelfAttention._relative_position_bucket(rel, False, 8, 20)
    # greedy decoding without a cache
    model.eval()
    with torch.no_grad():
        enc = model.encode(input_ids, attention_mask)
        out = torch.zeros((2, 1), dtype=torch.long)
        for _ in range(5):
            nxt = model.decode(out, enc, attention_mask)[:, -1].argmax(-1)
            out = torch.cat([out, nxt[:, None]], dim=-1)
    return dict(init=init, shifted=model._shift_right(labels), losses=losses, logits=logits, grads=g,
                params=params(model), buckets_bi=buckets_bi, buckets_uni=buckets_uni, out=out)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_t5_relative_buckets_causal_cross_attention_finetune(torch):
    theirs, ours = both(torch, t5_finetune)
    assert int(ours["buckets_bi"].max()) == 7 and int(ours["buckets_uni"].max()) == 7


@pytest.mark.parametrize("dtype", ["long", "int", "int16", "uint8"])
@pytest.mark.parametrize("grad", [False, True])
def test_casting_out_of_range_floats_to_integers_is_silent_as_pytorch(torch, dtype, grad):
    """T5's buckets take log(0) = -inf to long: PyTorch casts it without a word, and so must we."""
    import warnings

    import minigrad

    x = np.array([-np.inf, np.inf, np.nan, 1e30, -1e30, 2.5, -2.5])
    theirs = torch.tensor(x).to(getattr(torch, dtype)).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for src in (minigrad.tensor(x, requires_grad=grad), minigrad.tensor(x, requires_grad=grad).float()):
            assert src.to(getattr(minigrad, dtype)).tolist() == theirs
        assert minigrad.tensor(x).long().tolist() == torch.tensor(x).long().tolist()


# ---- (3) Whisper: log-mel front end from torch.stft, conv stem, sinusoidal positions ---------------------------
SAMPLE_RATE, N_FFT, HOP_LENGTH, N_MELS = 1600, 64, 16, 8


def mel_filters(torch, n_mels=N_MELS, n_fft=N_FFT, sr=SAMPLE_RATE):
    """A Slaney-free triangular mel filterbank: (n_mels, n_fft // 2 + 1)."""
    def hz_to_mel(f):
        return 2595.0 * torch.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)

    fft_freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1, dtype=torch.float64)
    mels = torch.linspace(0.0, float(hz_to_mel(torch.tensor(sr / 2.0, dtype=torch.float64))), n_mels + 2,
                          dtype=torch.float64)
    hz = mel_to_hz(mels)
    lower = (fft_freqs[None, :] - hz[:-2, None]) / (hz[1:-1] - hz[:-2])[:, None]
    upper = (hz[2:, None] - fft_freqs[None, :]) / (hz[2:] - hz[1:-1])[:, None]
    return torch.clamp(torch.minimum(lower, upper), min=0.0)


def log_mel_spectrogram(torch, audio, filters):
    window = torch.hann_window(N_FFT, dtype=audio.dtype)
    stft = torch.stft(audio, N_FFT, HOP_LENGTH, window=window, return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2
    mel_spec = filters @ magnitudes
    log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0


def sinusoids(torch, length, channels, max_timescale=10000):
    inv_timescales = torch.exp(-math.log(max_timescale) * torch.arange(channels // 2) / (channels // 2 - 1))
    scaled_time = torch.arange(length)[:, None] * inv_timescales[None, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


def whisper_model(torch, n_ctx, C=16, H=2, n_classes=3):
    nn, F = torch.nn, torch.nn.functional

    class MultiHeadAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.query = nn.Linear(C, C)
            self.key = nn.Linear(C, C, bias=False)
            self.value = nn.Linear(C, C)
            self.out = nn.Linear(C, C)

        def forward(self, x):
            q, k, v = self.query(x), self.key(x), self.value(x)
            n_batch, n_ctx, n_state = q.shape
            scale = (n_state // H) ** -0.25
            q = q.view(*q.shape[:2], H, -1).permute(0, 2, 1, 3) * scale
            k = k.view(*k.shape[:2], H, -1).permute(0, 2, 3, 1) * scale
            v = v.view(*v.shape[:2], H, -1).permute(0, 2, 1, 3)
            w = F.softmax(q @ k, dim=-1)
            return self.out((w @ v).permute(0, 2, 1, 3).flatten(start_dim=2))

    class ResidualAttentionBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = MultiHeadAttention()
            self.attn_ln = nn.LayerNorm(C)
            self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C))
            self.mlp_ln = nn.LayerNorm(C)

        def forward(self, x):
            x = x + self.attn(self.attn_ln(x))
            return x + self.mlp(self.mlp_ln(x))

    class AudioEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(N_MELS, C, kernel_size=3, padding=1)
            self.conv2 = nn.Conv1d(C, C, kernel_size=3, stride=2, padding=1)
            self.register_buffer("positional_embedding", sinusoids(torch, n_ctx, C))
            self.blocks = nn.ModuleList([ResidualAttentionBlock() for _ in range(2)])
            self.ln_post = nn.LayerNorm(C)
            self.head = nn.Linear(C, n_classes)

        def forward(self, x):
            x = F.gelu(self.conv1(x))
            x = F.gelu(self.conv2(x))
            x = x.permute(0, 2, 1)
            assert x.shape[1:] == self.positional_embedding.shape, "incorrect audio shape"
            x = (x + self.positional_embedding).to(x.dtype)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_post(x).mean(dim=1))

    return AudioEncoder()


def whisper_train(torch, init):
    rng = np.random.default_rng(7)
    t = np.arange(SAMPLE_RATE // 4) / SAMPLE_RATE
    clips = np.stack([np.sin(2 * np.pi * f * t) + 0.1 * rng.standard_normal(t.shape) for f in (110.0, 330.0, 550.0)])
    audio = torch.tensor(clips, requires_grad=True)
    filters = mel_filters(torch)
    mel = log_mel_spectrogram(torch, audio, filters)
    n_frames = mel.shape[-1]
    model = whisper_model(torch, n_ctx=(n_frames + 1) // 2)
    init = start(model, init)
    labels = torch.tensor([0, 1, 2])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for step in range(3):
        logits = model(mel if step == 0 else mel.detach())
        loss = torch.nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            audio_grad = audio.grad.clone()
            g = grads(model)
        optimizer.step()
        losses.append(loss.item())
    return dict(init=init, filters=filters, mel=mel, losses=losses,
                audio_grad=audio_grad, grads=g, params=params(model))


def test_whisper_log_mel_front_end_and_conv_encoder(torch):
    theirs, ours = both(torch, whisper_train)
    mel = ours["mel"].detach()
    assert float(mel.max() - mel.min()) <= 2.0 + 1e-12
    # the positions are float32 (the default dtype), where numpy's sin may round the other way from PyTorch's
    import minigrad

    pos = sinusoids(minigrad, 6, 8)
    assert pos.dtype == minigrad.float32
    np.testing.assert_allclose(pos.numpy(), sinusoids(torch, 6, 8).numpy(), rtol=3e-7, atol=1e-7)


# ---- (4) ViT-MAE: patchify by einsum, argsort masking, gather / unshuffle, normalized pixel loss ----------------
def mae_model(torch, img=8, p=2, C=16, Cd=12, H=2):
    nn = torch.nn
    L = (img // p) ** 2

    class MaskedAutoencoderViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch_embed = nn.Conv2d(3, C, kernel_size=p, stride=p)
            self.cls_token = nn.Parameter(torch.zeros(1, 1, C))
            self.pos_embed = nn.Parameter(torch.randn(1, L + 1, C) * 0.02, requires_grad=False)
            self.blocks = nn.ModuleList([
                nn.TransformerEncoderLayer(C, H, 2 * C, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True) for _ in range(2)])
            self.norm = nn.LayerNorm(C, eps=1e-6)
            self.decoder_embed = nn.Linear(C, Cd, bias=True)
            self.mask_token = nn.Parameter(torch.zeros(1, 1, Cd))
            self.decoder_pos_embed = nn.Parameter(torch.randn(1, L + 1, Cd) * 0.02, requires_grad=False)
            self.decoder_blocks = nn.ModuleList([
                nn.TransformerEncoderLayer(Cd, H, 2 * Cd, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)])
            self.decoder_norm = nn.LayerNorm(Cd, eps=1e-6)
            self.decoder_pred = nn.Linear(Cd, p ** 2 * 3, bias=True)
            torch.nn.init.normal_(self.cls_token, std=0.02)
            torch.nn.init.normal_(self.mask_token, std=0.02)
            self.apply(self._init_weights)

        def _init_weights(self, m):
            if isinstance(m, nn.Linear):
                torch.nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.LayerNorm):
                nn.init.constant_(m.bias, 0)
                nn.init.constant_(m.weight, 1.0)

        def patchify(self, imgs):
            h = w = imgs.shape[2] // p
            x = imgs.reshape(shape=(imgs.shape[0], 3, h, p, w, p))
            x = torch.einsum("nchpwq->nhwpqc", x)
            return x.reshape(shape=(imgs.shape[0], h * w, p ** 2 * 3))

        def unpatchify(self, x):
            h = w = int(x.shape[1] ** .5)
            x = x.reshape(shape=(x.shape[0], h, w, p, p, 3))
            x = torch.einsum("nhwpqc->nchpwq", x)
            return x.reshape(shape=(x.shape[0], 3, h * p, h * p))

        def random_masking(self, x, mask_ratio, noise):
            N, L, D = x.shape
            len_keep = int(L * (1 - mask_ratio))
            ids_shuffle = torch.argsort(noise, dim=1)
            ids_restore = torch.argsort(ids_shuffle, dim=1)
            ids_keep = ids_shuffle[:, :len_keep]
            x_masked = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))
            mask = torch.ones([N, L], device=x.device)
            mask[:, :len_keep] = 0
            mask = torch.gather(mask, dim=1, index=ids_restore)
            return x_masked, mask, ids_restore

        def forward_encoder(self, x, mask_ratio, noise):
            x = self.patch_embed(x).flatten(2).transpose(1, 2)
            x = x + self.pos_embed[:, 1:, :]
            x, mask, ids_restore = self.random_masking(x, mask_ratio, noise)
            cls_token = self.cls_token + self.pos_embed[:, :1, :]
            cls_tokens = cls_token.expand(x.shape[0], -1, -1)
            x = torch.cat((cls_tokens, x), dim=1)
            for blk in self.blocks:
                x = blk(x)
            return self.norm(x), mask, ids_restore

        def forward_decoder(self, x, ids_restore):
            x = self.decoder_embed(x)
            mask_tokens = self.mask_token.repeat(x.shape[0], ids_restore.shape[1] + 1 - x.shape[1], 1)
            x_ = torch.cat([x[:, 1:, :], mask_tokens], dim=1)
            x_ = torch.gather(x_, dim=1, index=ids_restore.unsqueeze(-1).repeat(1, 1, x.shape[2]))
            x = torch.cat([x[:, :1, :], x_], dim=1)
            x = x + self.decoder_pos_embed
            for blk in self.decoder_blocks:
                x = blk(x)
            return self.decoder_pred(self.decoder_norm(x))[:, 1:, :]

        def forward_loss(self, imgs, pred, mask):
            target = self.patchify(imgs)
            mean = target.mean(dim=-1, keepdim=True)
            var = target.var(dim=-1, keepdim=True)
            target = (target - mean) / (var + 1.e-6) ** .5
            loss = (pred - target) ** 2
            loss = loss.mean(dim=-1)
            return (loss * mask).sum() / mask.sum()

        def forward(self, imgs, noise, mask_ratio=0.75):
            latent, mask, ids_restore = self.forward_encoder(imgs, mask_ratio, noise)
            pred = self.forward_decoder(latent, ids_restore)
            return self.forward_loss(imgs, pred, mask), pred, mask

    return MaskedAutoencoderViT()


def mae_pretrain(torch, init):
    model = mae_model(torch)
    init = start(model, init)
    rng = np.random.default_rng(11)
    imgs = torch.tensor(rng.standard_normal((2, 3, 8, 8)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1.5e-3, betas=(0.9, 0.95), weight_decay=0.05)
    losses = []
    for _ in range(3):
        noise = torch.tensor(rng.random((2, 16)))  # shared: the libraries' torch.rand differ
        loss, pred, mask = model(imgs, noise)
        optimizer.zero_grad()
        loss.backward()
        g = grads(model)
        optimizer.step()
        losses.append(loss.item())
    patches = model.patchify(imgs)
    roundtrip = model.unpatchify(patches)
    y = model.unpatchify(pred.detach())
    mask_img = model.unpatchify(mask.detach().unsqueeze(-1).repeat(1, 1, 2 ** 2 * 3))
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    return dict(init=init, losses=losses, pred=pred, mask=mask, grads=g, params=params(model), patches=patches,
                roundtrip=roundtrip, paste=imgs * (1 - mask_img) + y * mask_img, frozen=frozen)


def test_vit_mae_random_masking_and_normalized_pixel_loss(torch):
    theirs, ours = both(torch, mae_pretrain)
    assert ours["frozen"] == ["pos_embed", "decoder_pos_embed"]
    assert ours["mask"].sum().item() == 2 * 12
    np.testing.assert_array_equal(ours["roundtrip"].numpy(), np.random.default_rng(11).standard_normal((2, 3, 8, 8)))


# ---- (5) DETR: Hungarian matching on cdist / generalized IoU costs, set loss with a down-weighted no-object ------
def box_cxcywh_to_xyxy(torch, x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(torch, boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    return inter / union, union


def generalized_box_iou(torch, boxes1, boxes2):
    assert (boxes1[:, 2:] >= boxes1[:, :2]).all()
    assert (boxes2[:, 2:] >= boxes2[:, :2]).all()
    iou, union = box_iou(torch, boxes1, boxes2)
    lt = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    area = wh[:, :, 0] * wh[:, :, 1]
    return iou - (area - union) / area


def linear_sum_assignment(cost):
    """Rows and columns of the cheapest one-to-one assignment of a (Q, n) cost array, Q >= n, by exhaustion."""
    Q, n = cost.shape
    best = min(itertools.permutations(range(Q), n), key=lambda rows: sum(cost[r, c] for c, r in enumerate(rows)))
    order = np.argsort(best)
    return np.asarray(best)[order], np.arange(n)[order]


def detr_model(torch, num_classes=3, Q=5, C=16):
    nn, F = torch.nn, torch.nn.functional

    class MLP(nn.Module):
        def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
            super().__init__()
            h = [hidden_dim] * (num_layers - 1)
            self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = F.relu(layer(x)) if i < len(self.layers) - 1 else layer(x)
            return x

    class DETR(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Conv2d(3, C, 3, stride=2, padding=1), nn.ReLU(),
                                          nn.Conv2d(C, C, 3, stride=2, padding=1))
            self.query_embed = nn.Embedding(Q, C)
            self.attn = nn.MultiheadAttention(C, 2, batch_first=True)
            self.class_embed = nn.Linear(C, num_classes + 1)
            self.bbox_embed = MLP(C, C, 4, 3)

        def forward(self, images):
            src = self.backbone(images).flatten(2).permute(0, 2, 1)
            query = self.query_embed.weight.unsqueeze(0).repeat(images.shape[0], 1, 1)
            hs, _ = self.attn(query, src, src)
            return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}

    return DETR()


class HungarianMatcher:
    def __init__(self, torch, cost_class=1.0, cost_bbox=5.0, cost_giou=2.0):
        self.torch, self.cost_class, self.cost_bbox, self.cost_giou = torch, cost_class, cost_bbox, cost_giou

    def __call__(self, outputs, targets):
        torch = self.torch
        with torch.no_grad():
            bs, num_queries = outputs["pred_logits"].shape[:2]
            out_prob = outputs["pred_logits"].flatten(0, 1).softmax(-1)
            out_bbox = outputs["pred_boxes"].flatten(0, 1)
            tgt_ids = torch.cat([v["labels"] for v in targets])
            tgt_bbox = torch.cat([v["boxes"] for v in targets])
            cost_class = -out_prob[:, tgt_ids]
            cost_bbox = torch.cdist(out_bbox, tgt_bbox, p=1)
            cost_giou = -generalized_box_iou(torch, box_cxcywh_to_xyxy(torch, out_bbox),
                                             box_cxcywh_to_xyxy(torch, tgt_bbox))
            C = self.cost_bbox * cost_bbox + self.cost_class * cost_class + self.cost_giou * cost_giou
            C = C.view(bs, num_queries, -1).cpu()
            sizes = [len(v["boxes"]) for v in targets]
            indices = [linear_sum_assignment(c[i].detach().numpy()) for i, c in enumerate(C.split(sizes, -1))]
            return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64))
                    for i, j in indices], C


def set_criterion(torch, outputs, targets, indices, num_classes, empty_weight):
    F = torch.nn.functional
    batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
    src_idx = torch.cat([src for (src, _) in indices])
    idx = (batch_idx, src_idx)
    num_boxes = max(float(sum(len(t["labels"]) for t in targets)), 1.0)

    src_logits = outputs["pred_logits"]
    target_classes_o = torch.cat([t["labels"][J] for t, (_, J) in zip(targets, indices)])
    target_classes = torch.full(src_logits.shape[:2], num_classes, dtype=torch.int64, device=src_logits.device)
    target_classes[idx] = target_classes_o
    loss_ce = F.cross_entropy(src_logits.transpose(1, 2), target_classes, empty_weight)

    src_boxes = outputs["pred_boxes"][idx]
    target_boxes = torch.cat([t["boxes"][i] for t, (_, i) in zip(targets, indices)], dim=0)
    loss_bbox = F.l1_loss(src_boxes, target_boxes, reduction="none").sum() / num_boxes
    loss_giou = (1 - torch.diag(generalized_box_iou(
        torch, box_cxcywh_to_xyxy(torch, src_boxes), box_cxcywh_to_xyxy(torch, target_boxes)))).sum() / num_boxes

    with torch.no_grad():
        tgt_lengths = torch.as_tensor([len(v["labels"]) for v in targets], device=src_logits.device)
        card_pred = (src_logits.argmax(-1) != src_logits.shape[-1] - 1).sum(1)
        card_err = F.l1_loss(card_pred.float(), tgt_lengths.float())
    return {"loss_ce": loss_ce, "loss_bbox": loss_bbox, "loss_giou": loss_giou, "cardinality_error": card_err}


def detr_train(torch, init):
    num_classes, eos_coef = 3, 0.1
    model = detr_model(torch, num_classes=num_classes)
    init = start(model, init)
    empty_weight = torch.ones(num_classes + 1, dtype=torch.float64)
    empty_weight[-1] = eos_coef
    rng = np.random.default_rng(13)
    images = torch.tensor(rng.standard_normal((2, 3, 8, 8)))
    targets = [
        {"labels": torch.tensor([0, 2, 1]), "boxes": torch.tensor([[0.3, 0.3, 0.2, 0.2], [0.6, 0.5, 0.3, 0.4],
                                                                   [0.5, 0.8, 0.4, 0.2]], dtype=torch.float64)},
        {"labels": torch.tensor([1]), "boxes": torch.tensor([[0.5, 0.5, 0.5, 0.6]], dtype=torch.float64)},
    ]
    matcher = HungarianMatcher(torch)
    weight_dict = {"loss_ce": 1, "loss_bbox": 5, "loss_giou": 2}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    history = []
    for _ in range(3):
        outputs = model(images)
        indices, cost = matcher(outputs, targets)
        loss_dict = set_criterion(torch, outputs, targets, indices, num_classes, empty_weight)
        losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
        optimizer.zero_grad()
        losses.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        g = grads(model)
        optimizer.step()
        history.append(dict(losses=losses.item(), parts={k: v.item() for k, v in loss_dict.items()},
                            indices=[(i.tolist(), j.tolist()) for i, j in indices], cost=cost))
    return dict(init=init, history=history, grads=g, params=params(model), outputs=model(images))


def test_detr_hungarian_matching_and_set_loss(torch):
    theirs, ours = both(torch, detr_train)
    for step in ours["history"]:
        assert [len(j) for _, j in step["indices"]] == [3, 1]
