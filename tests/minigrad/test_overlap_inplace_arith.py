"""In-place ops reading a tensor that shares self's memory (PyTorch's assert_no_partial_overlap: all of self's
memory is fine, part of it is refused), and the leaf that autograd names in its refusal of an in-place write,
each case refused or allowed as torch 2.13."""
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _outcome(lib, write):
    try:
        write(lib)
    except Exception as e:  # noqa: BLE001 (the refusal itself is what is compared)
        return type(e).__name__, str(e).split("\n")[0].replace("minigrad.", "torch.")
    return "ok"


# ---- autograd's refusal names a leaf that is a view "a view of a leaf Variable" ------------------------------
LEAVES = [
    ("plain", lambda L: L.zeros(6, 4).requires_grad_()),
    ("reshaped", lambda L: L.zeros(24).reshape(6, 4).requires_grad_()),
    ("view", lambda L: L.zeros(24).view(6, 4).requires_grad_()),
    ("transposed", lambda L: L.zeros(4, 6).t().requires_grad_()),
    ("sliced", lambda L: L.zeros(7, 4)[1:].requires_grad_()),
    ("view of a view", lambda L: L.zeros(24).view(6, 4)[1:].requires_grad_()),
    ("detached", lambda L: L.zeros(6, 4).detach().requires_grad_()),
    ("detached view", lambda L: L.zeros(24).view(6, 4).detach().requires_grad_()),
    ("view of a leaf requiring grad", lambda L: L.zeros(24, requires_grad=True).view(6, 4)),
]

WRITES = [
    ("index_put_ ids", lambda L, x: x.index_put_((L.tensor([0, 1]),), L.ones(2, 4))),
    ("index_put_ mask", lambda L, x: x.index_put_((L.tensor([True, False, True, False, False, False]),), L.tensor(1.))),
    ("index_put_ ids accumulate", lambda L, x: x.index_put_((L.tensor([0, 1]),), L.ones(2, 4), accumulate=True)),
    ("setitem ids", lambda L, x: x.__setitem__(L.tensor([0, 1]), L.ones(2, 4))),
    ("setitem mask", lambda L, x: x.__setitem__(L.tensor([True, False, True, False, False, False]), 1.0)),
    ("setitem all rows, ids", lambda L, x: x.__setitem__((slice(None), L.tensor([0, 1])), 1.0)),
    ("setitem some rows, ids", lambda L, x: x.__setitem__((slice(1, None), L.tensor([0, 1])), 1.0)),
    ("setitem int, ids", lambda L, x: x.__setitem__((0, L.tensor([0, 1])), 1.0)),
    ("setitem slice", lambda L, x: x.__setitem__(slice(0, 2), 1.0)),
    ("setitem all", lambda L, x: x.__setitem__(slice(None), 1.0)),
    ("add_", lambda L, x: x.add_(1.0)),
    ("zero_", lambda L, x: x.zero_()),
    ("unsqueeze_", lambda L, x: x.unsqueeze_(0)),
    ("add_ of its own rows", lambda L, x: x.add_(x.detach()[0])),
]


@pytest.mark.parametrize("leaf", LEAVES, ids=[c[0] for c in LEAVES])
@pytest.mark.parametrize("write", WRITES, ids=[c[0] for c in WRITES])
def test_leaf_refusal_named_as_torch(leaf, write):
    def run(L):
        write[1](L, leaf[1](L))

    assert _outcome(minigrad, run) == _outcome(torch, run)


@pytest.mark.parametrize("write", WRITES[:6], ids=[c[0] for c in WRITES[:6]])
def test_leaf_view_written_under_no_grad(write):
    out = []
    for L in (minigrad, torch):
        x = LEAVES[1][1](L)
        with L.no_grad():
            write[1](L, x)
        out.append(x.tolist())
    assert out[0] == out[1]
