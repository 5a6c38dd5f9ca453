"""Review of issue 29's merges: what expand's new view to the same shape reached (broadcast_tensors,
cosine_similarity's operands, the distributions' parameters), find's memo under a setting assigned
directly, Module._apply's one walk."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends
from minigrad.backends.cpu import team

torch = pytest.importorskip("torch")

rng = np.random.default_rng(2929)
A, B = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))


def _walk(g, depth):
    """Node `g`'s name and its edges' names, `depth` levels down (None for an edge with no node)."""
    if g is None:
        return None
    name = g.name().removeprefix("torch::autograd::")
    return name if depth == 0 else (name, tuple(_walk(f, depth - 1) for f, _ in g.next_functions))


def _names(t, depth):
    return _walk(t.grad_fn, depth)


def _leaf(L, a):
    return L.tensor(a, requires_grad=True)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((1, 4), (3, 1))])
def test_broadcast_tensors_leaves_a_tensor_of_the_shape_itself(shapes):
    arrays, got = [rng.standard_normal(s) for s in shapes], {}
    for L in (minigrad, torch):
        ts = [_leaf(L, a) for a in arrays]
        out = L.broadcast_tensors(*ts)
        got[L] = [(o is t, _names(o, 1), tuple(o.shape)) for o, t in zip(out, ts)]
    assert got[minigrad] == got[torch]


def test_cosine_similarity_of_one_shape_divides_the_inputs_themselves():
    got = {}
    for L, f in ((minigrad, F), (torch, torch.nn.functional)):
        x1, x2 = _leaf(L, A), _leaf(L, B)
        out = f.cosine_similarity(x1, x2)
        out.sum().backward()
        div = out.grad_fn.next_functions[0][0].next_functions[0][0]  # SumBackward1 <- MulBackward0 <- DivBackward0
        got[L] = (_names(out, 1), _walk(div, 1)[0], _walk(div, 1)[1][0], out.detach().numpy(),
                  x1.grad.numpy())
    (m_node, m_div, m_edge, m_out, m_grad), (t_node, t_div, t_edge, t_out, t_grad) = got[minigrad], got[torch]
    assert (m_node, m_div, m_edge) == (t_node, t_div, t_edge)
    np.testing.assert_allclose(m_out, t_out, rtol=1e-12)
    np.testing.assert_allclose(m_grad, t_grad, rtol=1e-10)


def test_a_distributions_parameters_of_one_shape_are_the_tensors_given():
    got = {}
    for L in (minigrad, torch):
        loc, scale = _leaf(L, A), _leaf(L, np.abs(B) + 0.5)
        d = L.distributions.Normal(loc, scale)
        got[L] = (d.loc is loc, d.scale is scale, _names(d.loc, 0))
    assert got[minigrad] == got[torch]


def test_find_follows_a_setting_assigned_directly(monkeypatch):
    # (test_functional's "numpy passes" assigns backends._kernels with monkeypatch, and undoes it)
    if not team.available():
        pytest.skip("numba is not installed")
    from minigrad.backends.cpu import sigmoid

    x = np.zeros((4, 8), np.float32)
    assert backends.find("sigmoid", x) is sigmoid
    monkeypatch.setattr(backends, "_kernels", "numpy")
    assert backends.find("sigmoid", x) is None
    monkeypatch.undo()
    monkeypatch.setattr(backends, "_kernels", "numpy")
    backends.find("sigmoid", x)  # (the memo made under "numpy" first)
    monkeypatch.undo()
    assert backends.find("sigmoid", x) is sigmoid


class _Holder:
    """A module with a buffer that requires grad (given, so two modules may share one), a parameter and a
    plain buffer, built for `L` (minigrad or torch)."""

    def __new__(cls, L, buf):
        mod = nn if L is minigrad else torch.nn
        m = mod.Module()
        m.register_buffer("b", buf)
        m.register_buffer("count", L.zeros(2))
        m.lin = mod.Linear(2, 2)
        return m


@pytest.mark.parametrize("convert", ["double", "half", "to_empty"])
def test_apply_replaces_grad_buffers_and_converts_the_rest(convert):
    got = {}
    for L in (minigrad, torch):
        buf = L.ones(3, requires_grad=True)
        m = _Holder(L, buf)
        w = m.lin.weight
        if convert == "to_empty":
            m.to_empty(device="cpu")
        else:
            getattr(m, convert)()
        b = m.b
        got[L] = (b is buf, str(b.dtype).split(".")[1], b.requires_grad, b.is_leaf, _names(b, 1),
                  m.lin.weight is w, str(m.lin.weight.dtype).split(".")[1],
                  str(m.count.dtype).split(".")[1])
    assert got[minigrad] == got[torch]


def test_apply_converts_a_tied_parameter_once_and_its_grad():
    for L in (minigrad, torch):
        mod = nn if L is minigrad else torch.nn
        a, c = mod.Linear(2, 2), mod.Linear(2, 2)
        c.weight = a.weight
        a.weight.grad = L.ones(2, 2)
        m = mod.Sequential(a, c)
        m.double()
        assert m[1].weight is m[0].weight and m[0].weight.dtype == L.float64
        assert m[0].weight.grad.dtype == L.float64 and m[1].bias.dtype == L.float64


@pytest.mark.parametrize("call", [
    lambda x: x.transpose_(0, 1, 2),
    lambda x: x.transpose_(0),
    lambda x: x.as_strided_(),
    lambda x: x.unsqueeze_(),
    lambda x: x.unsqueeze_(0, 1),
], ids=["transpose_ extra", "transpose_ missing", "as_strided_ missing", "unsqueeze_ missing", "unsqueeze_ extra"])
def test_inplace_view_forms_count_their_arguments_as_methods(call):
    texts = {}
    for L in (minigrad, torch):
        with pytest.raises(TypeError) as info:
            call(L.ones(2, 3))
        texts[L] = str(info.value)
    assert texts[minigrad] == texts[torch]


@pytest.mark.parametrize("shape", [(4,), (1, 4), (1, 1, 4), (1, 1, 4, 4), (1, 1, 4, 4, 4)])
@pytest.mark.parametrize("options", [{}, {"antialias": True}, {"align_corners": True}],
                         ids=["plain", "antialias", "align_corners"])
def test_interpolate_lanczos_is_refused_after_pytorchs_checks(shape, options):
    # (PyTorch's lanczos runs only on 4-D input with antialias: there minigrad says it has no lanczos)
    outcomes = {}
    for L, f in ((minigrad, F), (torch, torch.nn.functional)):
        size = (2, 2) if len(shape) == 4 else 2
        try:
            outcomes[L] = ("ok", tuple(f.interpolate(L.ones(shape), size=size, mode="lanczos", **options).shape))
        except (ValueError, NotImplementedError) as e:
            outcomes[L] = (type(e).__name__, str(e))
    if outcomes[torch][0] == "ok":
        assert outcomes[minigrad][0] == "NotImplementedError" and "lanczos" in outcomes[minigrad][1]
    else:
        assert outcomes[minigrad] == outcomes[torch]


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_loss_adds_its_margin_as_pytorch(swap):
    # (PyTorch's composite adds the margin as a number, AddBackward1, as margin_ranking_loss's)
    got = {}
    for L, f in ((minigrad, F), (torch, torch.nn.functional)):
        a, p, n = _leaf(L, A), _leaf(L, B), _leaf(L, A[::-1].copy())
        out = f.triplet_margin_loss(a, p, n, margin=0.5, swap=swap)
        out.backward()
        got[L] = (_names(out, 3), float(out), a.grad.numpy(), p.grad.numpy(), n.grad.numpy())
    assert got[minigrad][0] == got[torch][0]
    for m, t in zip(got[minigrad][1:], got[torch][1:]):
        np.testing.assert_allclose(m, t, rtol=1e-10, atol=1e-12)
