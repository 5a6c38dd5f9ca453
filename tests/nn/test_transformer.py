"""nn.Transformer and its layers against PyTorch's, from the same weights: outputs and the gradients of
the inputs and every parameter, masks of every kind, both layouts, pre- and post-norm, activations,
eval and train mode; and a word-level language model subclassing nn.Transformer trained as PyTorch's."""
import math
import warnings

import numpy as np
import pytest
from twins import RNG, check, randn, twin

import minigrad
import nn
import nn.functional as F

# a float mask with a bool padding mask warns (in both): mixed kinds are part of what is compared
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched")

D, NHEAD, FF, S, T, N = 8, 2, 16, 5, 4, 3
DTYPES = [np.float32, np.float64]


def pair(torch, cls, dtype=np.float64, *args, **kw):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "enable_nested_tensor is True")
        return twin(torch, getattr(torch.nn, cls)(*args, **kw), getattr(nn, cls)(*args, **kw), dtype)


def layer_pair(torch, cls, dtype, **kw):
    kw.setdefault("dropout", 0.0)  # train mode, without randomness: the gradients are compared
    return pair(torch, cls, dtype, D, NHEAD, FF, **kw)


def stack_pair(torch, stack, layer, dtype, num_layers=2, norm=True, **kw):
    """TransformerEncoder / TransformerDecoder of `num_layers` copies of a layer, with a final LayerNorm."""
    kw.setdefault("dropout", 0.0)
    torch.manual_seed(0)
    mods = []
    for lib in (torch.nn, nn):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "enable_nested_tensor is True")
            mods.append(getattr(lib, stack)(getattr(lib, layer)(D, NHEAD, FF, **kw), num_layers,
                                            lib.LayerNorm(D) if norm else None))
    return twin(torch, *mods, dtype)


def seq(n, dtype, batch_first=False):
    return randn(N, n, D, dtype=dtype) if batch_first else randn(n, N, D, dtype=dtype)


def bool_mask(*shape):
    m = RNG.random(shape) < 0.3
    m[..., 0] = False  # every query may attend to something
    return m


def float_mask(*shape, dtype=np.float64):
    m = RNG.standard_normal(shape).astype(dtype)
    m[bool_mask(*shape)] = -np.inf
    return m


def causal(n, dtype=np.float64):
    return np.triu(np.full((n, n), -np.inf, dtype=dtype), 1)


ACTIVATIONS = {  # the name, and each library's activation from (its nn, its functional)
    "relu": lambda nn_, F_: "relu", "gelu": lambda nn_, F_: "gelu", "F.gelu": lambda nn_, F_: F_.gelu,
    "nn.GELU()": lambda nn_, F_: nn_.GELU(), "F.silu": lambda nn_, F_: F_.silu,
}


# ---- the encoder layer --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_vs_torch(torch, dtype, norm_first, batch_first):
    theirs, ours = layer_pair(torch, "TransformerEncoderLayer", dtype, norm_first=norm_first, batch_first=batch_first)
    out = check(torch, lambda m, x, a, p: m(x, src_mask=a, src_key_padding_mask=p), theirs, ours,
                [seq(S, dtype, batch_first), float_mask(S, S, dtype=dtype), float_mask(N, S, dtype=dtype)], dtype)[0]
    assert out.shape == ((N, S, D) if batch_first else (S, N, D))


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_encoder_layer_activations_vs_torch(torch, activation):
    torch.manual_seed(0)
    make = ACTIVATIONS[activation]
    theirs = torch.nn.TransformerEncoderLayer(D, NHEAD, FF, 0.0, make(torch.nn, torch.nn.functional))
    ours = nn.TransformerEncoderLayer(D, NHEAD, FF, 0.0, make(nn, F))
    theirs, ours = twin(torch, theirs, ours, np.float64)
    assert ours.activation_relu_or_gelu == theirs.activation_relu_or_gelu
    check(torch, lambda m, x: m(x), theirs, ours, [seq(S, np.float64)], np.float64)


def _src_mask_cases(dtype):
    return {
        "none": dict(),
        "bool 2-D": dict(src_mask=bool_mask(S, S)),
        "float 2-D": dict(src_mask=float_mask(S, S, dtype=dtype)),
        "bool 3-D": dict(src_mask=bool_mask(N * NHEAD, S, S)),
        "float 3-D": dict(src_mask=float_mask(N * NHEAD, S, S, dtype=dtype)),
        "bool padding": dict(src_key_padding_mask=bool_mask(N, S)),
        "both bool": dict(src_mask=bool_mask(S, S), src_key_padding_mask=bool_mask(N, S)),
        "causal": dict(src_mask=causal(S, dtype), is_causal=True),
        "causal and padding": dict(src_mask=causal(S, dtype), src_key_padding_mask=float_mask(N, S, dtype=dtype),
                                   is_causal=True),
    }


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(_src_mask_cases(np.float64)))
def test_encoder_layer_masks_vs_torch(torch, dtype, case):
    theirs, ours = layer_pair(torch, "TransformerEncoderLayer", dtype, batch_first=True)
    masks = _src_mask_cases(dtype)[case]
    names = list(masks)
    check(torch, lambda m, x, *ms: m(x, **dict(zip(names, ms))), theirs, ours,
          [seq(S, dtype, True)] + list(masks.values()), dtype)


def test_encoder_layer_unbatched_vs_torch(torch):
    theirs, ours = layer_pair(torch, "TransformerEncoderLayer", np.float64)
    out = check(torch, lambda m, x, a, p: m(x, src_mask=a, src_key_padding_mask=p), theirs, ours,
                [randn(S, D), bool_mask(S, S), bool_mask(S)], np.float64)[0]
    assert out.shape == (S, D)


class _KeepsAttention:
    """A subclass body for either library's TransformerEncoderLayer: its self-attention block keeps the
    attention weights (a common way to look at them)."""

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x, self.weights = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                         need_weights=True)
        return self.dropout1(x)


def test_a_subclass_of_the_encoder_layer_vs_torch(torch):
    torch.manual_seed(0)
    theirs = type("Keeps", (_KeepsAttention, torch.nn.TransformerEncoderLayer), {})(D, NHEAD, FF, 0.0)
    ours = type("Keeps", (_KeepsAttention, nn.TransformerEncoderLayer), {})(D, NHEAD, FF, 0.0)
    theirs, ours = twin(torch, theirs, ours, np.float64)
    check(torch, lambda m, x, a: (m(x, src_mask=a), m.weights), theirs, ours,
          [seq(S, np.float64), float_mask(S, S)], np.float64)
    assert ours.weights.shape == (N, S, S)


# ---- the encoder ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["causal detected", "causal and padding", "bool", "none"])
def test_encoder_vs_torch(torch, dtype, batch_first, masks):
    theirs, ours = stack_pair(torch, "TransformerEncoder", "TransformerEncoderLayer", dtype, batch_first=batch_first)
    args = {"causal detected": [causal(S, dtype), None], "causal and padding": [causal(S, dtype), bool_mask(N, S)],
            "bool": [bool_mask(S, S), bool_mask(N, S)], "none": [None, None]}[masks]
    check(torch, lambda m, x, a, p: m(x, mask=a, src_key_padding_mask=p), theirs, ours,
          [seq(S, dtype, batch_first)] + args, dtype)


def test_encoder_layers_are_deep_copies(torch):
    layer = nn.TransformerEncoderLayer(D, NHEAD, FF)
    enc = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    assert isinstance(enc.layers, nn.ModuleList) and len(enc.layers) == 3 and enc.norm is None
    w = [m.self_attn.in_proj_weight for m in enc.layers]
    assert len({id(p) for p in w + [layer.self_attn.in_proj_weight]}) == 4  # four distinct parameters,
    for p in w:  # equal in value
        np.testing.assert_array_equal(p.detach().numpy(), layer.self_attn.in_proj_weight.detach().numpy())
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, NHEAD, FF), 3, enable_nested_tensor=False)
    assert list(enc.state_dict()) == list(theirs.state_dict())


def test_nested_tensor_warning_is_torchs(torch):
    for kw in (dict(), dict(batch_first=True, norm_first=True), dict(batch_first=True, nhead=1)):
        nhead = kw.pop("nhead", NHEAD)
        with pytest.warns(UserWarning) as theirs:
            torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, nhead, FF, **kw), 1)
        with pytest.warns(UserWarning) as ours:
            enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, nhead, FF, **kw), 1)
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
        assert enc.enable_nested_tensor and not enc.use_nested_tensor
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nn.TransformerEncoder(nn.TransformerEncoderLayer(D, NHEAD, FF, batch_first=True), 1).use_nested_tensor


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors is in prototype stage")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding", ["left-aligned", "scattered"])
def test_encoder_inference_with_padding_vs_torch(torch, dtype, padding):
    # eval, no autograd, batch_first, a padding mask: PyTorch runs its nested-tensor path, whose padded
    # positions come out as zeros (then normed), when the padding is at the end of each sequence
    theirs, ours = stack_pair(torch, "TransformerEncoder", "TransformerEncoderLayer", dtype, dropout=0.1,
                              batch_first=True)
    theirs.eval(), ours.eval()
    if padding == "left-aligned":
        kpm = np.arange(S)[None, :] >= np.array([S, 3, 1])[:, None]
    else:  # a padded position before a token: not left-aligned
        kpm = np.zeros((N, S), bool)
        kpm[0, 1], kpm[2, 3] = True, True
    with torch.no_grad(), minigrad.no_grad():
        out = check(torch, lambda m, x, p: m(x, src_key_padding_mask=p), theirs, ours, [seq(S, dtype, True), kpm],
                    dtype, grad=False)[0]
    normed_zero = np.broadcast_to(ours.norm.bias.detach().numpy(), (int(kpm.sum()), D))
    assert np.allclose(out.numpy()[kpm], normed_zero) == (padding == "left-aligned")
    # with autograd, both run the plain path: the padded positions are computed
    check(torch, lambda m, x, p: m(x, src_key_padding_mask=p), theirs, ours, [seq(S, dtype, True), kpm], dtype)


# ---- the decoder ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_vs_torch(torch, dtype, norm_first, batch_first):
    theirs, ours = layer_pair(torch, "TransformerDecoderLayer", dtype, norm_first=norm_first, batch_first=batch_first)
    out = check(torch, lambda m, x, mem, a, b, p, q: m(x, mem, tgt_mask=a, memory_mask=b, tgt_key_padding_mask=p,
                                                      memory_key_padding_mask=q),
                theirs, ours, [seq(T, dtype, batch_first), seq(S, dtype, batch_first), causal(T, dtype),
                               float_mask(T, S, dtype=dtype), float_mask(N, T, dtype=dtype),
                               float_mask(N, S, dtype=dtype)], dtype)[0]
    assert out.shape == ((N, T, D) if batch_first else (T, N, D))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tgt_mask", ["float causal", "bool causal", "bool", "none"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_decoder_vs_torch(torch, dtype, tgt_mask, activation):
    theirs, ours = stack_pair(torch, "TransformerDecoder", "TransformerDecoderLayer", dtype, activation=activation)
    mask = {"float causal": causal(T, dtype), "bool causal": np.triu(np.ones((T, T), bool), 1),
            "bool": bool_mask(T, T), "none": None}[tgt_mask]
    check(torch, lambda m, x, mem, a, q: m(x, mem, tgt_mask=a, memory_key_padding_mask=q), theirs, ours,
          [seq(T, dtype), seq(S, dtype), mask, bool_mask(N, S)], dtype)


# ---- the Transformer ----------------------------------------------------------------------------------------
def transformer_pair(torch, dtype, **kw):
    kw.setdefault("dropout", 0.0)
    return pair(torch, "Transformer", dtype, d_model=D, nhead=NHEAD, num_encoder_layers=2, num_decoder_layers=2,
                dim_feedforward=FF, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_vs_torch(torch, dtype, batch_first, norm_first):
    theirs, ours = transformer_pair(torch, dtype, batch_first=batch_first, norm_first=norm_first)
    gen = nn.Transformer.generate_square_subsequent_mask

    def call(m, src, tgt, src_mask, mem_mask, src_kpm, tgt_kpm, mem_kpm):
        tgt_mask = (gen if isinstance(src, minigrad.Tensor) else torch.nn.Transformer.generate_square_subsequent_mask)(
            T, dtype=src.dtype)
        return m(src, tgt, src_mask=src_mask, tgt_mask=tgt_mask, memory_mask=mem_mask, src_key_padding_mask=src_kpm,
                 tgt_key_padding_mask=tgt_kpm, memory_key_padding_mask=mem_kpm)

    out = check(torch, call, theirs, ours, [seq(S, dtype, batch_first), seq(T, dtype, batch_first),
                                            float_mask(S, S, dtype=dtype), float_mask(T, S, dtype=dtype),
                                            bool_mask(N, S), bool_mask(N, T), bool_mask(N, S)], dtype)[0]
    assert out.shape == ((N, T, D) if batch_first else (T, N, D))


def test_transformer_is_causal_hints_and_no_bias_vs_torch(torch):
    theirs, ours = transformer_pair(torch, np.float64, bias=False, activation="gelu")
    assert "encoder.layers.0.linear1.bias" not in ours.state_dict()
    check(torch, lambda m, src, tgt, a, b: m(src, tgt, src_mask=a, tgt_mask=b, src_is_causal=True, tgt_is_causal=True),
          theirs, ours, [seq(S, np.float64), seq(T, np.float64), causal(S), causal(T)], np.float64)


def test_transformer_unbatched_vs_torch(torch):
    theirs, ours = transformer_pair(torch, np.float64)
    out = check(torch, lambda m, src, tgt: m(src, tgt), theirs, ours, [randn(S, D), randn(T, D)], np.float64)[0]
    assert out.shape == (T, D)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eval_mode_turns_dropout_off(torch, dtype):
    theirs, ours = transformer_pair(torch, dtype, dropout=0.3)
    theirs.eval(), ours.eval()
    check(torch, lambda m, src, tgt: m(src, tgt), theirs, ours, [seq(S, dtype), seq(T, dtype)], dtype)


def test_dropout_in_training_mode():
    minigrad.manual_seed(0)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "enable_nested_tensor is True")
        m = nn.Transformer(D, NHEAD, 1, 1, FF, dropout=0.5).double()
    src, tgt = minigrad.tensor(seq(S, np.float64)), minigrad.tensor(seq(T, np.float64))
    m.eval()
    clean = m(src, tgt)
    m.train()
    minigrad.manual_seed(1)
    a = m(src, tgt)
    minigrad.manual_seed(1)
    b = m(src, tgt)
    a.sum().backward()
    assert a.shape == clean.shape == (T, N, D) and np.isfinite(a.detach().numpy()).all()
    assert not np.allclose(a.detach().numpy(), clean.detach().numpy())  # dropped
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())  # by the seed
    assert all(p.grad is not None for p in m.parameters())
    # the dropouts are the layers' own modules, named as PyTorch's
    names = [n for n, mod in m.named_modules() if isinstance(mod, nn.Dropout)]
    assert "encoder.layers.0.dropout" in names and "decoder.layers.0.dropout3" in names and len(names) == 7


def test_repr_is_torchs(torch):
    theirs, ours = transformer_pair(torch, np.float32, bias=False, activation="gelu", norm_first=True)
    assert repr(ours) == repr(theirs)


def test_generate_square_subsequent_mask_is_torchs(torch):
    ours = nn.Transformer.generate_square_subsequent_mask(4)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert ours.dtype == minigrad.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=minigrad.float64).dtype == minigrad.float64


def test_reset_parameters_is_xavier_uniform():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "enable_nested_tensor is True")
        m = nn.Transformer(16, 2, 1, 1, 64)
    w = m.encoder.layers[0].linear1.weight.detach().numpy()  # (64, 16)
    xavier, kaiming = math.sqrt(6 / (16 + 64)), 1 / math.sqrt(16)  # Linear's own bound is the smaller
    assert kaiming < np.abs(w).max() <= xavier
    assert not m.encoder.layers[0].self_attn.in_proj_bias.detach().numpy().any()
    np.testing.assert_array_equal(m.decoder.norm.weight.detach().numpy(), np.ones(16))  # 1-D: left alone


def test_errors_are_torchs(torch):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "enable_nested_tensor is True")
        m = nn.Transformer(D, NHEAD, 1, 1, FF)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        m(minigrad.randn(S, N, D), minigrad.randn(T, N + 1, D))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        m(minigrad.randn(S, N, D), minigrad.randn(T, N, D + 1))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(D, NHEAD, activation="tanh")
    with pytest.raises(AssertionError, match="only bool and floating types of src_key_padding_mask are supported"):
        m.encoder(minigrad.randn(S, N, D), src_key_padding_mask=minigrad.zeros(N, S, dtype=minigrad.int64))


# ---- a word-level language model, subclassing nn.Transformer ----------------------------------------------------
def word_language_model(torch, nn):
    """The classic word_language_model example's Transformer, written against `torch` and `nn`: PyTorch's,
    or minigrad's (the same text with only the imports changed)."""

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
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
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers,
                             dropout=dropout)
            self.model_type = "Transformer"
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            self.init_weights()

        def _generate_square_subsequent_mask(self, sz):
            return torch.log(torch.tril(torch.ones(sz, sz)))

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, src, has_mask=True):
            if has_mask:
                device = src.device
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    mask = self._generate_square_subsequent_mask(len(src)).to(device)
                    self.src_mask = mask
            else:
                self.src_mask = None
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask)
            output = self.decoder(output)
            return nn.functional.log_softmax(output, dim=-1)

    return TransformerModel


def test_word_language_model_trains_as_torchs(torch):
    ntokens, bptt, batch = 30, 7, 4
    models = []
    for lib, lib_nn in ((torch, torch.nn), (minigrad, nn)):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "enable_nested_tensor is True")
            models.append(word_language_model(lib, lib_nn)(ntokens, 16, 2, 32, 2, dropout=0.0))
    theirs, ours = models
    state = theirs.state_dict()
    assert list(ours.state_dict()) == list(state)  # the decoder Linear where the TransformerDecoder was
    ours.load_state_dict({k: v.numpy().copy() for k, v in state.items()})
    # counting sequences from random starts (the next token is this one plus 1): something to learn
    starts = np.random.default_rng(1).integers(0, ntokens, (10, 1, batch))
    data = (starts + np.arange(bptt + 1)[None, :, None]) % ntokens
    losses = []
    for model, lib, lib_nn in ((theirs, torch, torch.nn), (ours, minigrad, nn)):
        criterion = lib_nn.NLLLoss()
        opt = (torch.optim.SGD if lib is torch else nn.optim.SGD)(model.parameters(), lr=2.0)
        model.train()
        run = []
        for chunk in data:
            source, targets = lib.tensor(chunk[:-1]), lib.tensor(chunk[1:]).reshape(-1)
            model.zero_grad()
            output = model(source)
            loss = criterion(output.view(-1, ntokens), targets)
            loss.backward()
            lib_nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            opt.step()
            run.append(loss.item())
        losses.append(run)
    np.testing.assert_allclose(losses[1], losses[0], rtol=0, atol=1e-5)
    assert np.mean(losses[0][-3:]) < np.mean(losses[0][:3]) - 0.3  # it learns
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(dict(ours.named_parameters())[name].detach().numpy(), p.detach().numpy(),
                                   atol=1e-5, err_msg=name)
