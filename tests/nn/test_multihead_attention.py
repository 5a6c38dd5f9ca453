"""nn.MultiheadAttention and F.multi_head_attention_forward against PyTorch's, from the same weights:
outputs, attention weights and the gradients of the inputs, float masks and every parameter."""
import warnings

import numpy as np
import pytest
from twins import RNG, check, randn, twin

import minigrad
import nn
import nn.functional as F

E, H, L, S, N = 8, 2, 5, 6, 3
DTYPES = [np.float32, np.float64]


def pair(torch, dtype=np.float64, **kw):
    torch.manual_seed(0)
    return twin(torch, torch.nn.MultiheadAttention(E, H, **kw), nn.MultiheadAttention(E, H, **kw), dtype)


def seq(n, dtype, batch_first=False, e=E):
    return randn(N, n, e, dtype=dtype) if batch_first else randn(n, N, e, dtype=dtype)


def bool_mask(*shape):
    m = RNG.random(shape) < 0.3
    m[..., 0] = False  # every query may attend to something (a fully masked row is NaN in PyTorch's weights)
    return m


def float_mask(*shape, dtype=np.float64):
    m = RNG.standard_normal(shape).astype(dtype)
    m[bool_mask(*shape)] = -np.inf
    return m


# ---- self-, cross- and general attention, both layouts, weights or not ------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_self_attention_vs_torch(torch, dtype, batch_first, need_weights, average):
    theirs, ours = pair(torch, dtype, batch_first=batch_first)
    out, w = check(torch, lambda m, x: m(x, x, x, need_weights=need_weights, average_attn_weights=average),
                   theirs, ours, [seq(L, dtype, batch_first)], dtype)
    assert out.shape == ((N, L, E) if batch_first else (L, N, E))
    assert w is None if not need_weights else w.shape == ((N, L, L) if average else (N, H, L, L))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_cross_and_general_attention_vs_torch(torch, dtype, batch_first, need_weights):
    theirs, ours = pair(torch, dtype, batch_first=batch_first)
    # key is value (an encoder's memory), and three different tensors
    check(torch, lambda m, q, kv: m(q, kv, kv, need_weights=need_weights), theirs, ours,
          [seq(L, dtype, batch_first), seq(S, dtype, batch_first)], dtype)
    check(torch, lambda m, q, k, v: m(q, k, v, need_weights=need_weights), theirs, ours,
          [seq(L, dtype, batch_first), seq(S, dtype, batch_first), seq(S, dtype, batch_first)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("need_weights", [True, False])
def test_kdim_vdim_vs_torch(torch, dtype, need_weights):
    theirs, ours = pair(torch, dtype, kdim=3, vdim=5)
    assert ours.in_proj_weight is None and ours.k_proj_weight.shape == (E, 3) and ours.v_proj_weight.shape == (E, 5)
    mask = float_mask(L, S, dtype=dtype)
    check(torch, lambda m, q, k, v, a: m(q, k, v, attn_mask=a, need_weights=need_weights), theirs, ours,
          [seq(L, dtype), seq(S, dtype, e=3), seq(S, dtype, e=5), mask], dtype)


# ---- masks --------------------------------------------------------------------------------------------------
def _mask_cases(dtype):
    return {
        "bool 2-D": dict(attn_mask=bool_mask(L, S)),
        "float 2-D": dict(attn_mask=float_mask(L, S, dtype=dtype)),
        "bool 3-D": dict(attn_mask=bool_mask(N * H, L, S)),
        "float 3-D": dict(attn_mask=float_mask(N * H, L, S, dtype=dtype)),
        "bool padding": dict(key_padding_mask=bool_mask(N, S)),
        "float padding": dict(key_padding_mask=float_mask(N, S, dtype=dtype)),
        "both bool": dict(attn_mask=bool_mask(L, S), key_padding_mask=bool_mask(N, S)),
        "both float 3-D": dict(attn_mask=float_mask(N * H, L, S, dtype=dtype),
                               key_padding_mask=float_mask(N, S, dtype=dtype)),
    }


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(_mask_cases(np.float64)))
@pytest.mark.parametrize("need_weights", [True, False])
def test_masks_vs_torch(torch, dtype, case, need_weights):
    # float masks require grad here: their gradients are compared too
    theirs, ours = pair(torch, dtype)
    masks = _mask_cases(dtype)[case]
    names = list(masks)
    check(torch, lambda m, q, kv, *ms: m(q, kv, kv, need_weights=need_weights, **dict(zip(names, ms))),
          theirs, ours, [seq(L, dtype), seq(S, dtype)] + list(masks.values()), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("padding", [False, True])
@pytest.mark.filterwarnings("ignore:Support for mismatched")
def test_is_causal_hint_vs_torch(torch, dtype, need_weights, padding):
    # the hint with the causal mask: without weights or padding the mask is dropped and attention is causal
    theirs, ours = pair(torch, dtype, batch_first=True)
    causal = np.triu(np.full((L, L), -np.inf, dtype=dtype), 1)
    kpm = bool_mask(N, L) if padding else None
    check(torch, lambda m, x, a, p: m(x, x, x, attn_mask=a, key_padding_mask=p, is_causal=True,
                                      need_weights=need_weights),
          theirs, ours, [seq(L, dtype, True), causal, kpm], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.filterwarnings("ignore:Support for mismatched")
def test_unbatched_vs_torch(torch, dtype):
    theirs, ours = pair(torch, dtype, batch_first=True)  # (batch_first does not apply to unbatched input)
    q, kv = randn(L, E, dtype=dtype), randn(S, E, dtype=dtype)
    out, w = check(torch, lambda m, q, kv, p, a: m(q, kv, kv, key_padding_mask=p, attn_mask=a), theirs, ours,
                   [q, kv, bool_mask(S), float_mask(H, L, S, dtype=dtype)], dtype)
    assert out.shape == (L, E) and w.shape == (L, S)
    out, w = check(torch, lambda m, x: m(x, x, x, need_weights=False), theirs, ours, [q], dtype)
    assert out.shape == (L, E) and w is None


# ---- the other options ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("options", [dict(add_bias_kv=True), dict(add_zero_attn=True),
                                     dict(add_bias_kv=True, add_zero_attn=True, kdim=4), dict(bias=False)])
@pytest.mark.filterwarnings("ignore:Support for mismatched")
def test_bias_kv_zero_attn_and_no_bias_vs_torch(torch, dtype, need_weights, options):
    theirs, ours = pair(torch, dtype, **options)
    kdim = options.get("kdim", E)
    extra = options.get("add_bias_kv", False) + options.get("add_zero_attn", False)
    _, w = check(torch, lambda m, q, k, v, a, p: m(q, k, v, attn_mask=a, key_padding_mask=p,
                                                   need_weights=need_weights),
                 theirs, ours, [seq(L, dtype), seq(S, dtype, e=kdim), seq(S, dtype), float_mask(L, S, dtype=dtype),
                                bool_mask(N, S)], dtype)
    assert w is None or w.shape == (N, L, S + extra)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eval_mode_turns_dropout_off(torch, dtype):
    theirs, ours = pair(torch, dtype, dropout=0.5, batch_first=True)
    theirs.eval(), ours.eval()
    for need_weights in (True, False):
        check(torch, lambda m, x, p, nw=need_weights: m(x, x, x, key_padding_mask=p, need_weights=nw), theirs, ours,
              [seq(L, dtype, True), bool_mask(N, L)], dtype)
    # and without autograd, where PyTorch takes its fused inference path
    with torch.no_grad(), minigrad.no_grad():
        check(torch, lambda m, x, p: m(x, x, x, key_padding_mask=p), theirs, ours,
              [seq(L, dtype, True), bool_mask(N, L)], dtype, grad=False)


def test_dropout_in_training_drops_and_scales_the_weights(torch):
    p = 0.5
    m = nn.MultiheadAttention(E, H, dropout=p).double()
    x = minigrad.tensor(seq(L, np.float64))
    m.eval()
    with minigrad.no_grad():
        _, clean = m(x, x, x, average_attn_weights=False)
        out_eval, _ = m(x, x, x, need_weights=False)
        m.train()
        minigrad.manual_seed(3)
        _, dropped = m(x, x, x, average_attn_weights=False)
        kept = dropped.numpy() != 0
        assert 0.3 < 1 - kept.mean() < 0.7  # about p of the probabilities dropped
        np.testing.assert_allclose(dropped.numpy()[kept] * (1 - p), clean.numpy()[kept], rtol=1e-12)  # the rest scaled
        minigrad.manual_seed(4)
        out1, _ = m(x, x, x, need_weights=False)
        minigrad.manual_seed(4)
        out2, _ = m(x, x, x, need_weights=False)
    assert out1.shape == out_eval.shape and not np.allclose(out1.numpy(), out_eval.numpy())
    np.testing.assert_array_equal(out1.numpy(), out2.numpy())  # the seed decides the dropout


# ---- parameters, state dicts, init ------------------------------------------------------------------------
@pytest.mark.parametrize("options", [dict(), dict(kdim=3, vdim=5), dict(bias=False), dict(add_bias_kv=True)])
def test_state_dict_keys_and_shapes_are_torchs(torch, options):
    theirs, ours = torch.nn.MultiheadAttention(E, H, **options), nn.MultiheadAttention(E, H, **options)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert type(ours.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(ours.out_proj, nn.Linear) and repr(ours) == repr(theirs)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def test_init_is_torchs():
    m = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    w = m.in_proj_weight.detach().numpy()
    bound = np.sqrt(6 / (16 + 48))  # xavier_uniform_ on (3E, E)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not m.in_proj_bias.detach().numpy().any() and not m.out_proj.bias.detach().numpy().any()
    assert m.bias_k.detach().numpy().std() > 0 and m.bias_k.shape == (1, 1, 16)
    w = nn.MultiheadAttention(16, 4, kdim=5).k_proj_weight.detach().numpy()
    assert np.abs(w).max() <= np.sqrt(6 / (16 + 5))


def test_merge_masks_is_torchs(torch):
    theirs, ours = pair(torch, batch_first=True)
    x = seq(L, np.float64, True)
    cases = [(float_mask(L, L), None), (None, float_mask(N, L)), (float_mask(L, L), float_mask(N, L)),
             (float_mask(N * H, L, L), float_mask(N, L)), (None, None)]
    for a, p in cases:
        t_merged, t_type = theirs.merge_masks(*(None if m is None else torch.tensor(m) for m in (a, p)),
                                              torch.tensor(x))
        m_merged, m_type = ours.merge_masks(*(None if m is None else minigrad.tensor(m) for m in (a, p)),
                                            minigrad.tensor(x))
        assert m_type == t_type and (m_merged is None) == (t_merged is None)
        if t_merged is not None:
            np.testing.assert_array_equal(m_merged.numpy(), t_merged.numpy())


# ---- the functional -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("need_weights", [True, False])
def test_functional_with_static_keys_and_values_vs_torch(torch, dtype, need_weights):
    theirs, ours = pair(torch, dtype)

    def call(m, q, k, v, sk, sv):
        fn = torch.nn.functional if isinstance(q, torch.Tensor) else F
        return fn.multi_head_attention_forward(
            q, k, v, E, H, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0, m.out_proj.weight,
            m.out_proj.bias, need_weights=need_weights, static_k=sk, static_v=sv)

    check(torch, call, theirs, ours, [seq(L, dtype), seq(S, dtype), seq(S, dtype), randn(N * H, 7, E // H, dtype=dtype),
                                      randn(N * H, 7, E // H, dtype=dtype)], dtype)


# ---- errors -------------------------------------------------------------------------------------------------
def test_errors_are_torchs(torch):
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    m = nn.MultiheadAttention(E, H)
    x = minigrad.tensor(seq(L, np.float32))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*, but should be \(5, 5\)\."):
        m(x, x, x, attn_mask=minigrad.zeros(4, 5))
    with pytest.raises(RuntimeError, match=r"The shape of the 3D attn_mask is .*, but should be \(6, 5, 5\)\."):
        m(x, x, x, attn_mask=minigrad.zeros(2, 5, 5))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask are supported"):
        m(x, x, x, attn_mask=minigrad.zeros(5, 5, dtype=minigrad.int64))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor"):
        m(x[None], x[None], x[None])
    with pytest.raises(AssertionError, match="expected `key_padding_mask` to be `None` or 2-D"):
        m(x, x, x, key_padding_mask=minigrad.zeros(N, L, 1, dtype=minigrad.bool))
    with pytest.raises(AssertionError, match="Expected key_padded_mask.shape"):
        m(x, x, x, key_padding_mask=minigrad.zeros(N, L + 1, dtype=minigrad.bool))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 4"):
        m(x[..., :4], x[..., :4], x[..., :4])
    # the same messages as PyTorch's, up to the name of the Size class
    t = torch.nn.MultiheadAttention(E, H)
    tx = torch.tensor(seq(L, np.float32))
    with pytest.raises(RuntimeError) as theirs:
        t(tx, tx, tx, attn_mask=torch.zeros(4, 5))
    with pytest.raises(RuntimeError) as ours:
        m(x, x, x, attn_mask=minigrad.zeros(4, 5))
    assert str(ours.value).replace("minigrad", "torch") == str(theirs.value)


def test_mismatched_mask_types_warn_as_torch():
    m = nn.MultiheadAttention(E, H)
    x = minigrad.tensor(seq(L, np.float32))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        m(x, x, x, attn_mask=minigrad.zeros(L, L), key_padding_mask=minigrad.zeros(N, L, dtype=minigrad.bool))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(x, x, x, attn_mask=minigrad.zeros(L, L, dtype=minigrad.bool),
          key_padding_mask=minigrad.zeros(N, L, dtype=minigrad.bool))
