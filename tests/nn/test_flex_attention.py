"""nn.attention: SDPBackend, sdpa_kernel, and flex_attention / create_block_mask against torch 2.13."""
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.nn.attention import SDPBackend, sdpa_kernel
from minigrad.nn.attention import flex_attention as mfa

torch = pytest.importorskip("torch")
tfa = pytest.importorskip("torch.nn.attention.flex_attention")


@pytest.fixture(autouse=True)
def _eager_torch_flex(monkeypatch):
    # torch's CPU flex_attention compiles unless told to run its eager math (the same values, no compile time)
    monkeypatch.setattr(tfa, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding(b, h, q_idx, kv_idx):
    return q_idx - kv_idx <= 3


def odd_rows_dead(b, h, q_idx, kv_idx):  # row 1 has no key at all: zeros out, lse -inf
    return (kv_idx <= q_idx) & (q_idx != 1)


def soft_cap(score, b, h, q_idx, kv_idx):
    return 2.0 * (score / 2.0).tanh()


def alibi_of(slopes):
    def alibi(score, b, h, q_idx, kv_idx):
        return score + slopes[h].to(score.dtype) * (kv_idx - q_idx)
    return alibi


def relative(score, b, h, q_idx, kv_idx):
    return score + 0.1 * (q_idx - kv_idx) + 0.05 * b - 0.2 * h


def _pair(*shape, dtype=np.float64, seed=0):
    a = np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)
    return minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _reference(q, k, v, score_mod, mask_mod, scale, gqa):
    """torch's flex math written out: scores, score_mod through broadcast indices, mask, softmax, @ v (with grads)."""
    B, H, L, E = q.shape
    S = k.shape[-2]
    if gqa:
        k, v = k.repeat_interleave(H // k.shape[1], 1), v.repeat_interleave(H // v.shape[1], 1)
    idx = (torch.arange(B).view(B, 1, 1, 1), torch.arange(H).view(1, H, 1, 1), torch.arange(L).view(1, 1, L, 1),
           torch.arange(S).view(1, 1, 1, S))
    s = q @ k.transpose(-2, -1) * (E ** -0.5 if scale is None else scale)
    if score_mod is not None:
        s = score_mod(s, *idx)
    if mask_mod is not None:
        s = s.masked_fill(~mask_mod(*idx), float("-inf"))
    lse = s.logsumexp(-1)
    p = torch.nan_to_num(s.softmax(-1), nan=0.0)
    return p @ v, lse


CASES = [  # (score_mod: (minigrad's, torch's), mask_mod)
    (None, causal), (None, sliding), (None, odd_rows_dead), ((soft_cap, soft_cap), None),
    ((soft_cap, soft_cap), causal), ((relative, relative), sliding),
    ((alibi_of(minigrad.tensor([0.5, 0.25, 0.125, 0.0625], dtype=minigrad.float64)),
      alibi_of(torch.tensor([0.5, 0.25, 0.125, 0.0625], dtype=torch.float64))), causal),
]


def _case_id(mods):
    score_mods, mask_mod = mods
    return f"{score_mods[0].__name__ if score_mods else 'none'}-{mask_mod.__name__ if mask_mod else 'none'}"


@pytest.mark.parametrize("mods", CASES, ids=_case_id)
@pytest.mark.parametrize("gqa", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_flex_attention_values_and_grads_match_torch(mods, gqa, dtype):
    score_mods, mask_mod = mods
    ms, ts = score_mods or (None, None)
    Hkv = 2 if gqa else 4
    (mq, tq), (mk, tk), (mv, tv) = (_pair(2, 4, 9, 5, dtype=dtype), _pair(2, Hkv, 9, 5, dtype=dtype, seed=1),
                                    _pair(2, Hkv, 9, 3, dtype=dtype, seed=2))
    mbm = None if mask_mod is None else mfa.create_block_mask(mask_mod, 2, 4, 9, 9, BLOCK_SIZE=4)
    tbm = None if mask_mod is None else tfa.create_block_mask(mask_mod, 2, 4, 9, 9, device="cpu", BLOCK_SIZE=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, lse = mfa.flex_attention(mq, mk, mv, score_mod=ms, block_mask=mbm, enable_gqa=gqa, return_lse=True)
        tout, tlse = tfa.flex_attention(tq.detach(), tk.detach(), tv.detach(), score_mod=ts, block_mask=tbm,
                                        enable_gqa=gqa, return_lse=True)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    assert out.dtype == lse.dtype == (minigrad.float32 if dtype == np.float32 else minigrad.float64)
    np.testing.assert_allclose(out.detach().numpy(), tout.numpy(), **tol)
    np.testing.assert_allclose(lse.detach().numpy(), tlse.numpy(), **tol)
    # gradients: torch's CPU flex has no backward, so its math written out (the same values, checked above)
    rout, rlse = _reference(tq, tk, tv, ts, mask_mod, None, gqa)
    np.testing.assert_allclose(rout.detach().numpy(), tout.numpy(), **tol)
    go = np.random.default_rng(5).standard_normal(out.shape).astype(dtype)
    gl = np.random.default_rng(6).standard_normal(lse.shape).astype(dtype)
    finite = np.isfinite(tlse.numpy())  # (a dead row's lse, -inf, takes no gradient)
    (out * minigrad.tensor(go)).sum().backward(retain_graph=True)
    (lse.masked_fill(minigrad.tensor(~finite), 0.0) * minigrad.tensor(gl)).sum().backward()
    ((rout * torch.tensor(go)).sum() + (rlse.masked_fill(torch.tensor(~finite), 0.0) * torch.tensor(gl)).sum()).backward()
    for m, t in ((mq, tq), (mk, tk), (mv, tv)):
        assert np.isfinite(m.grad.numpy()).all()
        np.testing.assert_allclose(m.grad.numpy(), torch.nan_to_num(t.grad).numpy(), **tol)


def test_flex_attention_without_lse_and_scale_matches_torch():
    (mq, tq), (mk, tk), (mv, tv) = _pair(1, 2, 6, 4), _pair(1, 2, 6, 4, seed=1), _pair(1, 2, 6, 4, seed=2)
    for mask_mod in (None, causal):
        mbm = mask_mod and mfa.create_block_mask(mask_mod, None, None, 6, 6)
        tbm = mask_mod and tfa.create_block_mask(mask_mod, None, None, 6, 6, device="cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tout = tfa.flex_attention(tq.detach(), tk.detach(), tv.detach(), block_mask=tbm, scale=0.3)
        out = mfa.flex_attention(mq, mk, mv, block_mask=mbm, scale=0.3)
        np.testing.assert_allclose(out.detach().numpy(), tout.numpy(), rtol=1e-10, atol=1e-12)
        out.sum().backward()
        assert mq.grad is not None and mv.grad is not None


def test_block_mask_matches_torch():
    for args, kw in [((causal, 1, 2, 8, 8), {}), ((causal, None, None, 256, 256), {}),
                     ((odd_rows_dead, 2, 3, 4, 4), {"BLOCK_SIZE": 2}), ((sliding, 1, 1, 10, 7), {"BLOCK_SIZE": (4, 3)})]:
        m, t = mfa.create_block_mask(*args, **kw), tfa.create_block_mask(*args, device="cpu", **kw)
        assert m.shape == t.shape and m.BLOCK_SIZE == t.BLOCK_SIZE
        assert m.sparsity() == pytest.approx(t.sparsity())
        np.testing.assert_array_equal(m.to_dense().numpy(), t.to_dense().numpy())
        assert m.to_dense().dtype == minigrad.int32
        assert repr(m).replace("minigrad.Size", "torch.Size") == repr(t)
        for name in ("kv_num_blocks", "full_kv_num_blocks", "q_num_blocks", "full_q_num_blocks"):
            np.testing.assert_array_equal(getattr(m, name).numpy(), getattr(t, name).numpy())


def test_create_mask_and_combinators_match_torch():
    def window(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx).abs() <= 1

    for mask_mod, tmod in ((causal, causal), (mfa.and_masks(causal, window), tfa.and_masks(causal, window)),
                           (mfa.or_masks(causal, window), tfa.or_masks(causal, window)), (mfa.noop_mask, tfa.noop_mask)):
        m, t = mfa.create_mask(mask_mod, 2, 1, 5, 6), tfa.create_mask(tmod, 2, 1, 5, 6, device="cpu")
        assert m.dtype == minigrad.bool and tuple(m.shape) == tuple(t.shape)
        np.testing.assert_array_equal(m.numpy(), t.numpy())
    assert mfa.and_masks(causal, window)(*[minigrad.tensor(i) for i in (0, 0, 0, 1)]).item() is False
    m = mfa.create_mask(lambda s, b, h, q, kv: s.masked_fill(q < kv, float("-inf")), 1, 1, 3, 3)  # a score_mod
    np.testing.assert_array_equal(m.numpy(), np.tril(np.ones((3, 3), bool))[None, None])


def test_flex_attention_errors_match_torch():
    q, k = minigrad.randn(1, 4, 8, 4), minigrad.randn(1, 3, 8, 4)
    tq, tk = torch.randn(1, 4, 8, 4), torch.randn(1, 3, 8, 4)
    cases = [((q, k, k), {}, (tq, tk, tk), {}), ((q, k, k), {"enable_gqa": True}, (tq, tk, tk), {"enable_gqa": True}),
             ((q, q, q), {"block_mask": mfa.create_block_mask(causal, 1, 1, 16, 16)},
              (tq, tq, tq), {"block_mask": tfa.create_block_mask(causal, 1, 1, 16, 16, device="cpu")}),
             ((q, q, q), {"block_mask": mfa.create_block_mask(causal, 1, 1, 4, 4)},
              (tq, tq, tq), {"block_mask": tfa.create_block_mask(causal, 1, 1, 4, 4, device="cpu")}),
             ((q[0], q[0], q[0]), {}, (tq[0], tq[0], tq[0]), {})]
    for margs, mkw, targs, tkw in cases:
        with pytest.raises(Exception) as te:
            tfa.flex_attention(*targs, **tkw)
        with pytest.raises(te.type) as me:
            mfa.flex_attention(*margs, **mkw)
        assert str(me.value) == str(te.value).replace("torch.Size", "minigrad.Size")
    with pytest.raises(RuntimeError, match="All inputs should be callable mask_mods"):
        mfa.or_masks(causal, 3)
    with pytest.raises(AssertionError, match="create-block_mask requires a mask_mod function"):
        mfa.create_block_mask(soft_cap, 1, 1, 4, 4)
    with pytest.warns(FutureWarning, match="return_lse is deprecated"):
        mfa.flex_attention(q, q, q, return_lse=True)


def test_sdp_backend_members_match_torch():
    from torch.nn.attention import SDPBackend as TB

    assert {n: int(v) for n, v in TB.__members__.items()} == {b.name: int(b) for b in SDPBackend}
    assert repr(SDPBackend.MATH) == repr(TB.MATH) and str(SDPBackend.CUDNN_ATTENTION) == str(TB.CUDNN_ATTENTION)


def _switches(backends_module):
    return [getattr(backends_module, f"{n}_sdp_enabled")() for n in ("flash", "mem_efficient", "math", "cudnn")]


def test_sdpa_kernel_records_the_choice_as_torch():
    import minigrad.backends.cuda as mcuda
    from torch.nn.attention import SDPBackend as TB
    from torch.nn.attention import sdpa_kernel as tkernel

    assert _switches(mcuda) == _switches(torch.backends.cuda) == [True] * 4
    for choice in ("MATH", ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], [], ["CUDNN_ATTENTION", "MATH", "MATH"]):
        names = choice if isinstance(choice, list) else [choice]
        mb = [getattr(SDPBackend, n) for n in names] if isinstance(choice, list) else getattr(SDPBackend, choice)
        tb = [getattr(TB, n) for n in names] if isinstance(choice, list) else getattr(TB, choice)
        with sdpa_kernel(mb, set_priority=True), tkernel(tb, set_priority=True):
            assert _switches(mcuda) == _switches(torch.backends.cuda)
            x = minigrad.randn(1, 1, 3, 2)
            assert minigrad.nn.functional.scaled_dot_product_attention(x, x, x).shape == (1, 1, 3, 2)
        assert _switches(mcuda) == [True] * 4
    mcuda.enable_flash_sdp(False)
    try:
        assert not mcuda.flash_sdp_enabled()
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            assert mcuda.flash_sdp_enabled() and not mcuda.math_sdp_enabled()
        assert not mcuda.flash_sdp_enabled() and mcuda.math_sdp_enabled()
    finally:
        mcuda.enable_flash_sdp(True)
    for bad in ("MATH", 3, (SDPBackend.MATH,)):
        with pytest.raises(AssertionError) as te:
            with tkernel(bad if not isinstance(bad, tuple) else (TB.MATH,)):
                pass
        with pytest.raises(AssertionError) as me:
            with sdpa_kernel(bad):
                pass
        assert str(me.value) == str(te.value)
