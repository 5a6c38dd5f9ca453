"""torch._foreach_* (EMA updates and hand-written optimizer steps use them) against torch: values, what each
returns, and the error texts for lists that do not line up."""
import numpy as np
import pytest

import minigrad


def _lists(m, seed=0):
    rng = np.random.default_rng(seed)
    return [[m.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((2, 3), (4,), ())] for _ in range(3)]


CALLS = [
    ("mul_", lambda m, a, b, c: (a, 0.999), {}),
    ("add_", lambda m, a, b, c: (a, b), {"alpha": 0.001}),
    ("lerp_", lambda m, a, b, c: (a, b, 0.25), {}),
    ("addcmul_", lambda m, a, b, c: (a, b, c), {"value": -0.5}),
    ("addcdiv_", lambda m, a, b, c: (a, b, [x.abs() + 1 for x in c], [1.0, 2.0, 3.0]), {}),
    ("mul_", lambda m, a, b, c: (a, m.tensor(2.0)), {}),
    ("add", lambda m, a, b, c: (a, b), {"alpha": 2}),
    ("sub", lambda m, a, b, c: (a, [1.0, 2.0, 3.0]), {}),
    ("sqrt", lambda m, a, b, c: ([x.abs() for x in a],), {}),
    ("maximum", lambda m, a, b, c: (a, b), {}),
    ("norm", lambda m, a, b, c: (a,), {}),
    ("norm", lambda m, a, b, c: (a, 1), {}),
    ("pow", lambda m, a, b, c: (2.0, a), {}),
    ("zero_", lambda m, a, b, c: (a,), {}),
    ("copy_", lambda m, a, b, c: (a, b), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_foreach_matches_torch(name, args, kwargs):
    torch = pytest.importorskip("torch")
    results = []
    for m in (torch, minigrad):
        a, b, c = _lists(m)
        out = getattr(m, f"_foreach_{name}")(*args(m, a, b, c), **kwargs)
        if name.endswith("_"):
            assert out is a  # in place: the list it was given, changed
        else:
            assert isinstance(out, tuple)
        results.append([t.numpy() for t in out])
    for want, got in zip(*results):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_foreach_promotes_as_the_method_does():
    torch = pytest.importorskip("torch")
    want = torch._foreach_add([torch.ones(2, dtype=torch.int64)], 1.5)[0]
    got = minigrad._foreach_add([minigrad.ones(2, dtype=minigrad.int64)], 1.5)[0]
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call", [
    lambda m: m._foreach_add_([m.ones(2), m.ones(3)], [m.ones(2)]),
    lambda m: m._foreach_add_([], 1.0),
    lambda m: m._foreach_mul_([m.ones(2), m.ones(3)], [1.0]),
    lambda m: m._foreach_mul_([m.ones(2), m.ones(3)], m.ones(2)),
])
def test_foreach_error_texts_match_torch(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(minigrad)
    assert str(got.value) == str(want.value)


def test_foreach_names_are_torchs():
    torch = pytest.importorskip("torch")
    assert hasattr(minigrad, "_foreach_lerp_") and hasattr(minigrad, "_foreach_norm")
    assert not hasattr(torch, "_foreach_relu_") and not hasattr(minigrad, "_foreach_relu_")
