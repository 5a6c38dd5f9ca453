"""PyTorch 2.13 names added at the top level, in nn.functional and in nn.attention, each called the same way on
minigrad and torch."""
import numpy as np
import pytest

import minigrad
import minigrad.nn.attention as mg_attention
import minigrad.nn.functional as F

torch = pytest.importorskip("torch")
import torch.nn.attention as torch_attention  # noqa: E402
import torch.nn.functional as TF  # noqa: E402


def _pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(m, t, atol=1e-5):
    assert tuple(m.shape) == tuple(t.shape)
    assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=atol)


def _same_error(fm, ft, prefix=False):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(type(et.value)) as em:
        fm()
    # (minigrad names its own legacy types: minigrad.FloatTensor where PyTorch's text says torch.FloatTensor)
    mine, theirs = str(em.value).splitlines()[0], str(et.value).splitlines()[0].replace("torch.", "minigrad.")
    # (prefix: PyTorch's text goes on to list its dispatch keys, which minigrad has none of)
    assert theirs.startswith(mine) and len(mine) > 40 if prefix else mine == theirs


def test_build_flags_and_is_distributed():
    for name in ("has_lapack", "has_mkl", "has_openmp", "has_spectral"):
        assert type(getattr(minigrad, name)) is type(getattr(torch, name)) is bool
    assert minigrad.has_lapack and minigrad.has_spectral  # numpy's linalg and fft are there
    assert minigrad.is_distributed(minigrad.ones(2)) is torch.is_distributed(torch.ones(2)) is False
    _same_error(lambda: minigrad.is_distributed(3), lambda: torch.is_distributed(3))


def test_embedding_renorm_():
    wm, wt = _pair(5, 3)
    wm, wt = wm.detach(), wt.detach()
    out = minigrad.embedding_renorm_(wm, minigrad.tensor([0, 2, 2]), 1.0, 2.0)
    torch.embedding_renorm_(wt, torch.tensor([0, 2, 2]), 1.0, 2.0)
    assert out is wm
    _close(wm, wt)
    _same_error(lambda: minigrad.embedding_renorm_(wm, minigrad.tensor([0.0]), 1.0, 2.0),
                lambda: torch.embedding_renorm_(wt, torch.tensor([0.0]), 1.0, 2.0))
    _same_error(lambda: minigrad.embedding_renorm_(wm[None], minigrad.tensor([0]), 1.0, 2.0),
                lambda: torch.embedding_renorm_(wt[None], torch.tensor([0]), 1.0, 2.0))
    _same_error(lambda: minigrad.embedding_renorm_(wm, minigrad.tensor([7]), 1.0, 2.0),
                lambda: torch.embedding_renorm_(wt, torch.tensor([7]), 1.0, 2.0))
    lm, lt = _pair(5, 3)
    _same_error(lambda: minigrad.embedding_renorm_(lm, minigrad.tensor([0]), 1.0, 2.0),
                lambda: torch.embedding_renorm_(lt, torch.tensor([0]), 1.0, 2.0))


def test_native_norm():
    a = np.maximum(np.random.default_rng(1).standard_normal((3, 4)), 0).astype(np.float32)
    sm, st = minigrad.tensor(a).to_sparse().requires_grad_(), torch.tensor(a).to_sparse().requires_grad_()
    for m, t in ((minigrad.native_norm(sm), torch.native_norm(st)),
                 (minigrad.native_norm(sm, p=3), torch.native_norm(st, p=3)),
                 (minigrad.native_norm(sm, 1, [0, 1], False, None), torch.native_norm(st, 1, [0, 1], False, None))):
        _close(m, t)
        assert type(m.grad_fn).__name__ == type(t.grad_fn).__name__ == "NotImplemented"
    _same_error(lambda: minigrad.native_norm(sm).backward(), lambda: torch.native_norm(st).backward())
    _same_error(lambda: minigrad.native_norm(sm, 2, [1], False, None), lambda: torch.native_norm(st, 2, [1], False, None))
    _same_error(lambda: minigrad.native_norm(sm, 2, [0, 1], False, minigrad.float64),
                lambda: torch.native_norm(st, 2, [0, 1], False, torch.float64))
    dm, dt = _pair(3, 4)
    _same_error(lambda: minigrad.native_norm(dm), lambda: torch.native_norm(dt), prefix=True)
    _same_error(lambda: minigrad.native_norm(dm, 2, [1], False, None), lambda: torch.native_norm(dt, 2, [1], False, None),
                prefix=True)


@pytest.mark.parametrize("shape,p,dim", [((3, 4), 2, 0), ((3, 4), 2, 1), ((3, 4), 3, -1), ((2, 3, 4), 2, 1),
                                         ((3, 4), 2, -2)])
def test_norm_except_dim(shape, p, dim):
    m, t = _pair(*shape)
    rm, rt = minigrad.norm_except_dim(m, p, dim), torch.norm_except_dim(t, p, dim)
    _close(rm, rt)
    assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__
    rm.sum().backward()
    rt.sum().backward()
    _close(m.grad, t.grad)


def test_norm_except_dim_bad_dim():
    m, t = _pair(3, 4)
    _same_error(lambda: minigrad.norm_except_dim(m, 2, 5), lambda: torch.norm_except_dim(t, 2, 5))


def test_detach_copy():
    m, t = _pair(3, 4)
    rm, rt = minigrad.detach_copy(m), torch.detach_copy(t)
    _close(rm, rt)
    assert rm.requires_grad == rt.requires_grad
    assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__
    assert not np.shares_memory(rm.array, m.array)
    _same_error(lambda: rm.sum().backward(), lambda: rt.sum().backward())


@pytest.mark.parametrize("name", ["grid_sampler", "grid_sampler_2d"])
@pytest.mark.parametrize("mode,padding,align", [(0, 0, False), (1, 1, True), (0, 2, False)])
def test_grid_sampler(name, mode, padding, align):
    xm, xt = _pair(1, 2, 4, 4)
    gm, gt = _pair(1, 3, 3, 2, seed=1)
    rm = getattr(minigrad, name)(xm, gm * 0.9, mode, padding, align)
    rt = getattr(torch, name)(xt, gt * 0.9, mode, padding, align)
    _close(rm, rt)
    assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__
    rm.sum().backward()
    rt.sum().backward()
    _close(xm.grad, xt.grad)
    _close(gm.grad, gt.grad, atol=1e-4)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_generator(align):
    m, t = _pair(1, 2, 3)
    rm, rt = minigrad.affine_grid_generator(m, [1, 2, 4, 4], align), torch.affine_grid_generator(t, [1, 2, 4, 4], align)
    _close(rm, rt)
    assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__
    (rm * rm).sum().backward()
    (rt * rt).sum().backward()
    _close(m.grad, t.grad)
    _same_error(lambda: minigrad.affine_grid_generator(m, [1, 2, 4], align),
                lambda: torch.affine_grid_generator(t, [1, 2, 4], align))


@pytest.mark.parametrize("pad", [0, 1, 2])
@pytest.mark.parametrize("where", ["top", "functional"])
def test_conv_tbc(pad, where):
    (im, it), (wm, wt), (bm, bt) = _pair(5, 2, 3), _pair(3, 3, 4, seed=1), _pair(4, seed=2)
    fm, ft = (minigrad.conv_tbc, torch.conv_tbc) if where == "top" else (F.conv_tbc, TF.conv_tbc)
    rm, rt = fm(im, wm, bm, pad), ft(it, wt, bt, pad)
    _close(rm, rt)
    assert type(rm.grad_fn).__name__ == type(rt.grad_fn).__name__ == "ConvTbcBackward0"
    (rm * rm).sum().backward()
    (rt * rt).sum().backward()
    for m, t in ((im, it), (wm, wt), (bm, bt)):
        _close(m.grad, t.grad, atol=1e-4)


def test_conv_tbc_errors():
    (im, it), (wm, wt), (bm, bt) = _pair(5, 2, 3), _pair(3, 3, 4, seed=1), _pair(4, seed=2)
    for args in (lambda i, w, b, T: (i, w, T.ones(5)), lambda i, w, b, T: (i, w[:, :2], b),
                 lambda i, w, b, T: (i[0], w, b), lambda i, w, b, T: (i, w[0], b), lambda i, w, b, T: (i, w, b[None]),
                 lambda i, w, b, T: (i, T.ones(7, 3, 4), b)):
        mine, theirs = args(im, wm, bm, minigrad), args(it, wt, bt, torch)
        _same_error(lambda: minigrad.conv_tbc(*mine), lambda: torch.conv_tbc(*theirs))  # noqa: B023 (called here)


def test_native_channel_shuffle():
    m, t = _pair(1, 4, 2, 2)
    for rm, rt in ((F.native_channel_shuffle(m, 2), TF.native_channel_shuffle(t, 2)),
                   (minigrad.native_channel_shuffle(m, 2), torch.native_channel_shuffle(t, 2))):
        _close(rm, rt)
    _same_error(lambda: F.native_channel_shuffle(m, 3), lambda: TF.native_channel_shuffle(t, 3))


def test_sdpa_kernel_checks():
    q = _pair(1, 2, 3, 4)
    pm = mg_attention.SDPAParams(q[0], q[0], q[0], None, 0.0, False, False)
    pt = torch_attention.SDPAParams(q[1], q[1], q[1], None, 0.0, False, False)
    assert pm.query is q[0] and pm.dropout == pt.dropout and pm.is_causal == pt.is_causal
    assert pm.enable_gqa == pt.enable_gqa and pm.attn_mask is pt.attn_mask is None
    for name in ("can_use_flash_attention", "can_use_efficient_attention"):
        for debug in (False, True):
            assert getattr(mg_attention, name)(pm, debug) is getattr(torch_attention, name)(pt, debug)
        with pytest.raises(TypeError):
            getattr(torch_attention, name)(3)
        with pytest.raises(TypeError):
            getattr(mg_attention, name)(3)
