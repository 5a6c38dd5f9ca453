"""The torch names training scripts use, at minigrad's top level and on Tensor, against PyTorch."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad
import nn.functional as F

# what the scripts this project runs spell (the list of the issue "PyTorch scripts run on minigrad")
TOP = ("tril multinomial stack cat no_grad manual_seed from_numpy Generator randint set_printoptions "
       "get_default_dtype device tensor zeros ones arange randn rand randperm save load initial_seed seed "
       "broadcast_shapes broadcast_tensors tensordot normal bernoulli randint_like scalar_tensor asarray "
       "is_floating_point get_default_device pi e inf nan newaxis set_float32_matmul_precision "
       "get_float32_matmul_precision use_deterministic_algorithms are_deterministic_algorithms_enabled").split()
METHODS = ("to cpu cuda type float long view masked_fill contiguous item tolist numpy clone detach requires_grad_ "
           "exponential_ geometric_ cauchy_ log_normal_ random_ fill_diagonal_ get_device is_cpu H mH "
           "__contains__ __format__").split()
FUNCTIONAL = ("sigmoid tanh softsign hardtanh relu6 elu leaky_relu logsigmoid softplus normalize one_hot pad "
              "mse_loss l1_loss nll_loss binary_cross_entropy binary_cross_entropy_with_logits cosine_similarity "
              "pairwise_distance").split()


def test_the_names_exist():
    assert [n for n in TOP if not hasattr(minigrad, n)] == []
    assert [n for n in METHODS if not hasattr(minigrad.Tensor, n)] == []
    assert [n for n in FUNCTIONAL if not hasattr(F, n)] == []
    assert minigrad.cuda.is_available() in (True, False)


def outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e), str(e)
    return tuple(r) if isinstance(r, tuple) else r


@pytest.mark.parametrize("shapes", [(), ((2, 3), (3,)), ((2, 1), 4), ((5, 1, 3), (4, 1), (1,)), ((2, 3), (4,)),
                                    ((2, 3), (3, 3)), ((2, -1),), (3, 3)])
def test_broadcast_shapes(torch, shapes):
    got, want = outcome(lambda: minigrad.broadcast_shapes(*shapes)), outcome(lambda: torch.broadcast_shapes(*shapes))
    assert got == want


def test_broadcast_tensors(torch):
    a, b = np.arange(3.0).reshape(3, 1), np.arange(4.0)
    ours = minigrad.broadcast_tensors(minigrad.tensor(a), minigrad.tensor(b))
    theirs = torch.broadcast_tensors(torch.tensor(a), torch.tensor(b))
    assert isinstance(ours, tuple)
    for x, y in zip(ours, theirs):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize("sa, sb, dims", [((2, 3), (3, 4), 1), ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (4, 5), 0),
                                          ((3, 4, 2), (2, 4, 3), ([0, 1], [2, 1])), ((3, 4), (4, 3), ([1], [0])),
                                          ((2, 3), (4, 5), 1), ((2, 3), (3, 2), -1)])
def test_tensordot(torch, sa, sb, dims):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    results = []
    for lib in (minigrad, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        try:
            out = lib.tensordot(x, y, dims)
        except RuntimeError as e:
            results.append(str(e))
            continue
        (out * out).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    if isinstance(results[0], str) or isinstance(results[1], str):
        assert results[0] == results[1]
        return
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_normal_forms(torch):
    minigrad.manual_seed(0)
    assert tuple(minigrad.normal(2.0, 3.0, (4, 5)).shape) == (4, 5)
    assert minigrad.normal(2.0, 3.0, (2,)).dtype == minigrad.float32
    assert tuple(minigrad.normal(minigrad.zeros(2, 3), 1.0).shape) == (2, 3)
    assert tuple(minigrad.normal(0.0, minigrad.ones(3)).shape) == (3,)
    big = minigrad.normal(2.0, 3.0, (200000,), dtype=minigrad.float64).numpy()
    assert abs(big.mean() - 2.0) < 0.03 and abs(big.std() - 3.0) < 0.03
    mean = minigrad.zeros(3, requires_grad=True)
    std = minigrad.ones(3, requires_grad=True)
    sample = minigrad.normal(mean, std)
    sample.sum().backward()  # differentiable in mean and std, as PyTorch's
    assert mean.grad.tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(std.grad.numpy(), sample.detach().numpy())
    with pytest.raises(RuntimeError, match="must match the size"):
        minigrad.normal(minigrad.zeros(2), minigrad.ones(3))
    g = minigrad.Generator().manual_seed(4)
    a = minigrad.normal(0.0, 1.0, (3,), generator=g)
    g.manual_seed(4)
    assert a.tolist() == minigrad.normal(0.0, 1.0, (3,), generator=g).tolist()


def test_bernoulli_randint_like_scalar_tensor_asarray(torch):
    minigrad.manual_seed(0)
    p = minigrad.full((100000,), 0.3, dtype=minigrad.float64)
    draws = minigrad.bernoulli(p)
    assert draws.dtype == minigrad.float64 and set(np.unique(draws.numpy())) == {0.0, 1.0}
    assert abs(draws.numpy().mean() - 0.3) < 0.01
    assert minigrad.bernoulli(minigrad.zeros(3), p=1.0).tolist() == torch.bernoulli(torch.zeros(3), p=1.0).tolist()
    r = minigrad.randint_like(minigrad.zeros(1000), 3, 5)
    assert r.dtype == minigrad.float32 and set(np.unique(r.numpy())) == {3.0, 4.0}
    assert minigrad.randint_like(minigrad.zeros(2, dtype=minigrad.int64), 5).dtype == minigrad.int64
    for v in (3, 2.5, True):
        ours, theirs = minigrad.scalar_tensor(v), torch.scalar_tensor(v)
        assert ours.item() == theirs.item() and str(ours.dtype)[9:] == str(theirs.dtype)[6:] and ours.ndim == 0
    a = np.arange(3.0)
    assert np.shares_memory(minigrad.asarray(a).numpy(), a) and not np.shares_memory(minigrad.asarray(a, copy=True).numpy(), a)
    assert minigrad.asarray([1, 2]).dtype == minigrad.int64
    assert minigrad.is_floating_point(minigrad.ones(1)) and not minigrad.is_floating_point(minigrad.tensor([1]))
    assert (minigrad.pi, minigrad.e, minigrad.inf, minigrad.newaxis) == (torch.pi, torch.e, torch.inf, torch.newaxis)
    assert str(minigrad.get_default_device()) == str(torch.get_default_device()) == "cpu"


@pytest.mark.parametrize("shape, value, wrap", [((3, 3), 5.0, False), ((2, 4), 2.0, False), ((7, 3), -1.0, True),
                                                ((7, 3), -1.0, False), ((3, 3, 3), 4.0, False), ((2, 3, 3), 1.0, False)])
def test_fill_diagonal_(torch, shape, value, wrap):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    ours, theirs = minigrad.tensor(a), torch.tensor(a)
    got = outcome(lambda: ours.fill_diagonal_(value, wrap=wrap))
    want = outcome(lambda: theirs.fill_diagonal_(value, wrap=wrap))
    if isinstance(want, tuple):
        assert got[0] is want[0] and got[1] == want[1]
        return
    assert got is ours
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_contains(torch):
    for lib in (minigrad, torch):
        t = lib.tensor([[1, 2], [3, 4]])
        assert (3 in t, 5 in t, lib.tensor([1, 2]) in t, lib.tensor([5, 6]) in t) == (True, False, True, False)
        with pytest.raises(RuntimeError, match=r"^Tensor.__contains__ only supports Tensor or scalar, but you passed "
                                               r"in a <class 'str'>.$"):
            "a" in t  # noqa: B015 - the membership test is what raises


def test_device_queries_and_conjugate_transposes(torch):
    for lib in (minigrad, torch):
        t = lib.ones(2, 3)
        assert t.is_cpu and t.get_device() == -1
        assert tuple(t.H.shape) == (3, 2) and tuple(lib.ones(4, 2, 3).mH.shape) == (4, 3, 2)
        with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
            lib.ones(2, 2, 2).H  # noqa: B018 - the property raises


def test_random_fills():
    minigrad.manual_seed(0)
    e = minigrad.zeros(200000, dtype=minigrad.float64).exponential_(2.0).numpy()
    assert (e >= 0).all() and abs(e.mean() - 0.5) < 0.01
    g = minigrad.zeros(200000, dtype=minigrad.float64).geometric_(0.25).numpy()
    assert g.min() == 1 and (g == np.round(g)).all() and abs(g.mean() - 4.0) < 0.05
    c = minigrad.zeros(200000, dtype=minigrad.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.05 and abs(np.percentile(c, 75) - 3.0) < 0.1
    ln = minigrad.zeros(200000, dtype=minigrad.float64).log_normal_(0.5, 0.25).numpy()
    assert abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01
    r = minigrad.zeros(10000).random_(3, 7).numpy()
    assert set(np.unique(r)) == {3.0, 4.0, 5.0, 6.0}
    assert set(np.unique(minigrad.zeros(1000, dtype=minigrad.int64).random_(4).numpy())) == {0, 1, 2, 3}
    assert set(np.unique(minigrad.zeros(1000, dtype=minigrad.bool).random_().numpy())) == {False, True}
    big = minigrad.zeros(1000).random_().numpy()
    assert big.min() >= 0 and big.max() <= 2**24 and big.max() > 2**20
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0"):
        minigrad.zeros(2).exponential_(0.0)
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        minigrad.zeros(2).random_(5, 5)


def test_set_printoptions_as_pytorch(torch):
    arrays = [np.array([1.5, 2.25, 3e-5, 1234.5], dtype=np.float32), np.arange(20.0, dtype=np.float32) * 1.5,
              np.array([1.0, 2.0, 3.0], dtype=np.float32), np.array([0.1, 0.25], dtype=np.float32)]
    try:
        for kwargs in ({"precision": 2}, {"sci_mode": False}, {"sci_mode": True}, {"profile": "short"},
                       {"threshold": 5, "edgeitems": 1}, {"linewidth": 30}, {"profile": "full"}):
            for lib in (minigrad, torch):
                lib.set_printoptions(profile="default", sci_mode=None)
                lib.set_printoptions(**kwargs)
            for a in arrays:
                assert repr(minigrad.tensor(a)) == repr(torch.tensor(a)), kwargs
    finally:
        for lib in (minigrad, torch):
            lib.set_printoptions(profile="default", sci_mode=None)
    assert repr(minigrad.tensor([1.5, 2.25])) == "tensor([1.5000, 2.2500])"


# ---- the *_copy ops (the view op, then a copy), fill, rsub, and small predicates ------------------------------
X6 = np.arange(24.0).reshape(2, 3, 4) - 7.5
COPY_CASES = [
    ("view_copy", ((4, 6),)), ("view_copy", ((-1,),)), ("t_copy", ()), ("transpose_copy", (0, 2)),
    ("permute_copy", ((2, 0, 1),)), ("unsqueeze_copy", (1,)), ("squeeze_copy", ()), ("expand_copy", ((2, 2, 3, 4),)),
    ("diagonal_copy", ()), ("diagonal_copy", (1, 1, 2)), ("select_copy", (1, -1)), ("slice_copy", ()),
    ("slice_copy", (2, 1, None, 2)), ("slice_copy", (1, 0, 2)), ("unbind_copy", ()), ("unbind_copy", (2,)),
    ("split_copy", (2, 2)), ("split_with_sizes_copy", ([1, 3], 2)), ("alias_copy", ()), ("unfold_copy", (2, 2, 1)),
    ("as_strided_copy", ((3, 2), (2, 3), 1)), ("narrow_copy", (2, 1, 2)),
]


@pytest.mark.parametrize("name, args", COPY_CASES, ids=[c[0] for c in COPY_CASES])
def test_copy_ops_as_torch(torch, name, args):
    src = X6[:, :, :1] if name == "squeeze_copy" else X6[0] if name == "t_copy" else X6
    if name == "expand_copy":
        src = X6[None, :1]
    if name == "view_copy":  # (a tensor with no view of that shape: copied all the same)
        src = X6.transpose(0, 2, 1)
    results = []
    for lib in (minigrad, torch):
        x = lib.tensor(src, requires_grad=True)
        x_in = x.permute(0, 2, 1) if name == "view_copy" else x
        out = getattr(lib, name)(x_in, *args)
        outs = list(out) if isinstance(out, tuple) else [out]
        sum(((o * lib.arange(o.numel(), dtype=o.dtype).reshape(o.shape)).sum() for o in outs)).backward()
        for o in outs:
            o.detach().mul_(0)  # a copy: nothing written through to x
        results.append(([o.shape for o in outs], [o.is_contiguous() for o in outs], x.detach().numpy().copy(),
                        x.grad.numpy(), type(out).__name__))
    (shapes, contig, after, grad, kind), (tshapes, tcontig, tafter, tgrad, tkind) = results
    assert [tuple(s) for s in shapes] == [tuple(s) for s in tshapes] and contig == tcontig and kind == tkind
    np.testing.assert_array_equal(after, tafter)
    np.testing.assert_array_equal(grad, tgrad)


def test_tensor_narrow_copy(torch):
    np.testing.assert_array_equal(minigrad.tensor(X6).narrow_copy(1, 1, 2).numpy(),
                                  torch.tensor(X6).narrow_copy(1, 1, 2).numpy())


@pytest.mark.parametrize("dtype, value", [("float32", 2.5), ("int64", 2.7), ("float64", "0-d"), ("int32", -3)])
def test_fill_as_torch(torch, dtype, value):
    out = []
    for lib in (minigrad, torch):
        x = lib.ones(2, 3, dtype=getattr(lib, dtype), requires_grad=dtype.startswith("float"))
        v = lib.tensor(1.5, dtype=getattr(lib, dtype), requires_grad=True) if value == "0-d" else value
        y = lib.fill(x * 1 if x.requires_grad else x, v)
        grads = None
        if y.requires_grad:
            (y * 2).sum().backward()
            grads = (x.grad.numpy(), v.grad.numpy() if value == "0-d" else None)
        out.append((y.detach().numpy(), str(y.dtype).split(".")[-1], grads, x.detach().numpy()))
    (y, dt, g, x), (ty, tdt, tg, tx) = out
    np.testing.assert_array_equal(y, ty)
    np.testing.assert_array_equal(x, tx)  # out of place
    assert dt == tdt and (g is None) == (tg is None)
    if g is not None:
        np.testing.assert_array_equal(g[0], tg[0])
        assert (g[1] is None and tg[1] is None) or g[1] == tg[1]
    with pytest.raises(RuntimeError) as t:
        torch.fill(torch.ones(2), torch.ones(1))
    with pytest.raises(RuntimeError) as e:
        minigrad.fill(minigrad.ones(2), minigrad.ones(1))
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("args, kw", [((2.0,), {}), ((2, 3), {}), ((np.arange(3.0),), {"alpha": 2}), ((np.arange(3.0),), {})])
def test_rsub_as_torch(torch, args, kw):
    out = []
    for lib in (minigrad, torch):
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = lib.rsub(x, *(lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args), **kw)
        y.sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_small_predicates_as_torch(torch):
    for lib in (minigrad, torch):
        x = lib.ones(2)
        with lib.inference_mode():
            y = lib.ones(2)
        assert (lib.is_inference(x), lib.is_inference(y)) == (False, True)
        assert lib.is_conj(x) is x.is_conj() is lib.is_neg(x) is x.is_neg() is False
        assert lib.resolve_neg(x) is x and lib.get_device(x) == -1
        assert lib.is_warn_always_enabled() is False
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled() is True
        lib.set_warn_always(False)
    assert minigrad.set_flush_denormal(False) is False and isinstance(torch.set_flush_denormal(False), bool)


@pytest.mark.parametrize("kw", [{}, {"correction": 0}, {"aweights": "w"}, {"fweights": "f"},
                                {"fweights": "f", "aweights": "w", "correction": 2}, {"aweights": "w", "correction": 0}])
def test_tensor_cov_and_corrcoef(torch, kw):
    x = np.random.default_rng(2).standard_normal((3, 5))
    arrays = {"w": np.linspace(0.5, 2.0, 5), "f": np.array([1, 3, 0, 2, 1])}  # (minigrad ignored both weights)
    got = minigrad.tensor(x).cov(**{k: minigrad.tensor(arrays[v]) if v in arrays else v for k, v in kw.items()})
    want = torch.tensor(x).cov(**{k: torch.tensor(arrays[v]) if v in arrays else v for k, v in kw.items()})
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(minigrad.tensor(x).corrcoef().numpy(), torch.tensor(x).corrcoef().numpy(), rtol=1e-12)


@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 0), (1, 2)), ((), ()), ((3,), (0,)),
                                          ((2, 2, 2), (1, 4, 2))])
def test_empty_strided_as_torch(torch, size, stride):
    t, want = minigrad.empty_strided(size, stride, dtype=minigrad.float64), torch.empty_strided(size, stride)
    assert tuple(t.shape) == tuple(want.shape) and t.stride() == want.stride()
    assert t.is_contiguous() == want.is_contiguous() and t.dtype == minigrad.float64 and t.is_leaf
    t.fill_(2.0)
    assert (t.numpy() == 2.0).all()


@pytest.mark.parametrize("size, stride", [((2, 3), (1,)), ((2, 3), (1, -2)), ((2, -3), (1, 2))])
def test_empty_strided_errors_as_torch(torch, size, stride):
    with pytest.raises(RuntimeError) as t:
        torch.empty_strided(size, stride)
    with pytest.raises(RuntimeError) as e:
        minigrad.empty_strided(size, stride)
    assert str(e.value) == str(t.value)


def test_frombuffer_shares_memory_as_torch(torch):
    import array

    for lib in (minigrad, torch):
        a = array.array("i", [1, 2, 3, 4])
        t = lib.frombuffer(a, dtype=lib.int32, offset=4, count=2)
        t[0] = 9
        assert t.tolist() == [9, 3] and a.tolist() == [1, 9, 3, 4]
        assert lib.frombuffer(bytearray(b"\x01\x02\x03\x04"), dtype=lib.int16).tolist() == [513, 1027]
        assert lib.frombuffer(bytearray(8), dtype=lib.float32, requires_grad=True).requires_grad


@pytest.mark.parametrize("n, kw", [(8, {"count": 3}), (8, {"offset": 3}), (8, {"offset": 9}), (0, {}), (7, {}),
                                   (8, {"count": 0})])
def test_frombuffer_errors_as_torch(torch, n, kw):
    with pytest.raises(ValueError) as t:
        torch.frombuffer(bytearray(n), dtype=torch.int32, **kw)
    with pytest.raises(ValueError) as e:
        minigrad.frombuffer(bytearray(n), dtype=minigrad.int32, **kw)
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("weights", [dict(fweights=[1, -1, 1, 1]), dict(fweights=[1.0, 1, 1, 1]), dict(fweights=[1, 1, 1]),
                                     dict(fweights=[[1, 1], [1, 1]]), dict(aweights=[1.0, -1, 1, 1]),
                                     dict(aweights=[1, 1, 1, 1]), dict(aweights=[1.0, 1, 1]), dict(aweights=[[1.0, 1], [1, 1]])])
def test_cov_refuses_bad_weights_as_torch(torch, weights):
    (name, values), = weights.items()
    x = np.arange(8.0).reshape(2, 4)
    with pytest.raises(RuntimeError) as theirs:
        torch.cov(torch.tensor(x), **{name: torch.tensor(values)})
    with pytest.raises(RuntimeError) as ours:
        minigrad.cov(minigrad.tensor(x), **{name: minigrad.tensor(values)})
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["complex32", "chalf"])
def test_complex32_is_refused_in_one_clear_line(torch, name):
    # (complex64 and complex128 are there, tests/minigrad/test_complex.py; numpy has no complex32)
    assert hasattr(torch, name) and not hasattr(minigrad, name)
    with pytest.raises(AttributeError) as e:
        getattr(minigrad, name)
    text = str(e.value)
    assert "\n" not in text and f"no attribute '{name}'" in text and "no complex32 dtype" in text


def test_fft_and_sparse_load_on_first_use():
    # `import minigrad` leaves torch.fft's and torch.sparse's modules unloaded (a script without them never pays
    # for them); minigrad.fft, minigrad.stft, Tensor.stft and minigrad.sparse_coo_tensor load them when reached
    code = ("import sys, minigrad; assert 'minigrad.fft' not in sys.modules and 'minigrad.sparse' not in sys.modules; "
            "x = minigrad.arange(64.0); s = x.stft(16, window=minigrad.hann_window(16), return_complex=True); "
            "assert minigrad.stft is minigrad.fft.stft and tuple(s.shape) == (9, 1 + 64 // 4); "
            "a = minigrad.sparse_coo_tensor(minigrad.tensor([[0, 1], [1, 0]]), minigrad.tensor([2.0, 3.0]), (2, 2)); "
            "assert minigrad.spmm(a, minigrad.eye(2)).tolist() == [[0.0, 2.0], [3.0, 0.0]]; print('ok')")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
