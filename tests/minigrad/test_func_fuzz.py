"""A differential fuzzer of minigrad.func against torch.func: each case runs the same program on both
libraries, on the same seeded inputs, and the two outcomes must agree - values, shapes and dtypes of
every output leaf, or the exception type and text when PyTorch refuses."""
import copy

import numpy as np
import pytest

import minigrad
from tests.fuzz_settings import fuzz_rng

torch = pytest.importorskip("torch")

CASES = {}
XFAIL = {}  # case name -> why minigrad deliberately differs


PER_SLICE = ("vmap runs func once per slice, on ordinary tensors: nothing tells a value computed from a mapped "
             "input from any other, so what PyTorch refuses on a batched tensor runs per slice here")


def case(name, xfail=None):
    def register(f):
        CASES[name] = f
        if xfail:
            XFAIL[name] = xfail
        return f
    return register


class Env:
    """One library's view of the inputs: `lib` (minigrad or torch), its func and functional modules, and
    seeded arrays turned into its tensors."""

    def __init__(self, lib):
        self.lib, self.fn, self.F, self.nn = lib, lib.func, lib.nn.functional, lib.nn
        self.rng = fuzz_rng(0)

    def t(self, *shape, dtype=np.float32):
        return self.lib.tensor(self.rng.standard_normal(shape).astype(dtype))

    def ints(self, high, *shape):
        return self.lib.tensor(self.rng.integers(0, high, shape))

    def seeded(self, module):
        """`module` with weights drawn from the numpy seed, the same on both libraries."""
        with self.lib.no_grad():
            for p in module.parameters():
                p.copy_(self.t(*p.shape))
        return module


def _outcome(lib, f):
    try:
        return "value", f(Env(lib))
    except Exception as e:  # noqa: BLE001 - the refusal itself is what gets compared
        return "raised", (type(e).__name__, str(e))


def _same(got, want, where="out"):
    if isinstance(want, torch.Tensor):
        assert isinstance(got, minigrad.Tensor), f"{where}: {type(got)} where PyTorch gives a Tensor"
        assert tuple(got.shape) == tuple(want.shape), f"{where}: shape {tuple(got.shape)} != {tuple(want.shape)}"
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], f"{where}: {got.dtype} != {want.dtype}"
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=where)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{where}: keys {list(got)} != {list(want)}"
        for k in want:
            _same(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) or (isinstance(got, tuple) and isinstance(want, tuple)), \
            f"{where}: {type(got)} != {type(want)}"
        assert len(got) == len(want), f"{where}: {len(got)} leaves != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def _check(name):
    want = _outcome(torch, CASES[name])
    got = _outcome(minigrad, CASES[name])
    if want[0] == "raised":
        assert got == want, f"PyTorch raises {want[1]}, minigrad gives {got}"
    else:
        assert got[0] == "value", f"minigrad raises {got[1]}"
        _same(got[1], want[1])


# ---- vmap over ops ---------------------------------------------------------------------------------------------

ELEMENTWISE = ["sin", "exp", "tanh", "sigmoid", "relu", "abs", "neg", "sqrt_abs", "pow", "clamp", "add_scalar",
               "mul_unmapped", "sub_broadcast", "div", "maximum", "lerp", "addcmul", "float_to_long", "gt"]


def _elementwise(op):
    def run(e):
        x, y, w = e.t(5, 3, 4), e.t(5, 3, 4), e.t(4)
        body = {
            "sin": lambda a, b: a.sin(), "exp": lambda a, b: a.exp(), "tanh": lambda a, b: e.lib.tanh(a),
            "sigmoid": lambda a, b: a.sigmoid(), "relu": lambda a, b: e.F.relu(a), "abs": lambda a, b: a.abs(),
            "neg": lambda a, b: -a, "sqrt_abs": lambda a, b: a.abs().sqrt(), "pow": lambda a, b: a.abs() ** b,
            "clamp": lambda a, b: a.clamp(-0.5, 0.5), "add_scalar": lambda a, b: a + 2,
            "mul_unmapped": lambda a, b: a * w, "sub_broadcast": lambda a, b: a - b[0],
            "div": lambda a, b: a / (b.abs() + 1), "maximum": lambda a, b: e.lib.maximum(a, b),
            "lerp": lambda a, b: e.lib.lerp(a, b, 0.3), "addcmul": lambda a, b: e.lib.addcmul(a, a, b, value=0.5),
            "float_to_long": lambda a, b: (a * 10).long(), "gt": lambda a, b: a > b,
        }[op]
        return e.fn.vmap(body)(x, y)
    return run


for _op in ELEMENTWISE:
    case(f"vmap elementwise {_op}")(_elementwise(_op))


@case("vmap sum dim")
def _(e):
    return e.fn.vmap(lambda a: a.sum(dim=1, keepdim=True))(e.t(4, 3, 5))


@case("vmap reductions")
def _(e):
    return e.fn.vmap(lambda a: (a.mean(0), a.amax(-1), a.argmax(1), a.var(0), a.norm(), a.logsumexp(1),
                               a.prod(), a.std(dim=-1, keepdim=True), a.min(1).values, a.cumsum(0)))(e.t(4, 3, 5))


@case("vmap reductions in_dims=1")
def _(e):
    return e.fn.vmap(lambda a: a.max(dim=0), in_dims=1)(e.t(3, 4, 5))


@case("vmap matmul")
def _(e):
    return e.fn.vmap(lambda a, b: a @ b)(e.t(4, 3, 5), e.t(4, 5, 2))


@case("vmap matmul unmapped weight")
def _(e):
    return e.fn.vmap(e.lib.matmul, in_dims=(0, None))(e.t(4, 3, 5), e.t(5, 2))


@case("vmap bmm")
def _(e):
    return e.fn.vmap(e.lib.bmm)(e.t(2, 3, 4, 5), e.t(2, 3, 5, 2))


@case("vmap mv dot outer")
def _(e):
    return e.fn.vmap(lambda m, v: (e.lib.mv(m, v), e.lib.dot(v, v), e.lib.outer(v, v)))(e.t(3, 4, 5), e.t(3, 5))


@case("vmap einsum")
def _(e):
    return e.fn.vmap(lambda a, b: e.lib.einsum("ij,jk->ik", a, b), in_dims=(0, 1))(e.t(3, 4, 5), e.t(5, 3, 2))


@case("vmap index with tensor")
def _(e):
    idx = e.lib.tensor([2, 0, 2])
    return e.fn.vmap(lambda a: a[idx])(e.t(4, 3, 5))


@case("vmap mapped index")
def _(e):
    return e.fn.vmap(lambda a, i: a[i])(e.t(4, 3, 5), e.ints(3, 4, 2))


@case("vmap slices")
def _(e):
    return e.fn.vmap(lambda a: (a[1:, ::2], a[..., -1], a[None, 0], a[:, [0, 2]]))(e.t(4, 3, 5))


@case("vmap boolean mask of unmapped")
def _(e):
    mask = e.lib.tensor([True, False, True, True, False])
    return e.fn.vmap(lambda a: a[:, mask])(e.t(4, 3, 5))


@case("vmap shape ops")
def _(e):
    return e.fn.vmap(lambda a: (a.view(15), a.reshape(5, 3), a.transpose(0, 1), a.permute(1, 0), a.t(),
                               a.unsqueeze(0), a.unsqueeze(-1), a.flatten(), a[None].expand(2, 3, 5),
                               a.movedim(0, 1), a.flip(0), a.roll(1, 1), a.contiguous()))(e.t(4, 3, 5))


@case("vmap shape ops in_dims=-1")
def _(e):
    return e.fn.vmap(lambda a: (a.view(-1), a.T, a.squeeze(), a.unsqueeze(1).expand(3, 2, 5)),
                     in_dims=-1)(e.t(3, 5, 4))


@case("vmap split chunk unbind")
def _(e):
    return e.fn.vmap(lambda a: (a.split(2, dim=1), a.chunk(3, dim=0), a.unbind(0)))(e.t(4, 3, 5))


@case("vmap cat stack")
def _(e):
    w = e.t(3, 2)
    return e.fn.vmap(lambda a, b: (e.lib.cat([a, w], 1), e.lib.stack([a, b]), e.lib.cat([a, b]),
                                   e.lib.stack([a, b], dim=-1)))(e.t(4, 3, 2), e.t(4, 3, 2))


@case("vmap where")
def _(e):
    return e.fn.vmap(lambda c, a: e.lib.where(c > 0, a, 0.0), in_dims=(0, None))(e.t(4, 3), e.t(3))


@case("vmap gather scatter")
def _(e):
    return e.fn.vmap(lambda a, i: (a.gather(1, i), e.lib.zeros(3, 5).scatter_add(1, i, a[:, :2])))(
        e.t(4, 3, 5), e.ints(5, 4, 3, 2))


@case("vmap softmax")
def _(e):
    return e.fn.vmap(lambda a: (a.softmax(-1), e.F.log_softmax(a, dim=0)))(e.t(4, 3, 5))


@case("vmap F.linear")
def _(e):
    return e.fn.vmap(e.F.linear, in_dims=(0, None, None))(e.t(4, 3, 5), e.t(2, 5), e.t(2))


@case("vmap F.linear over weights")
def _(e):
    return e.fn.vmap(e.F.linear, in_dims=(None, 0, 0))(e.t(3, 5), e.t(4, 2, 5), e.t(4, 2))


@case("vmap F.conv2d")
def _(e):
    return e.fn.vmap(lambda x, w: e.F.conv2d(x, w, padding=1), in_dims=(0, None))(e.t(3, 2, 2, 5, 5), e.t(4, 2, 3, 3))


@case("vmap F.layer_norm")
def _(e):
    return e.fn.vmap(lambda a, w, b: e.F.layer_norm(a, (5,), w, b), in_dims=(0, None, None))(
        e.t(4, 3, 5), e.t(5), e.t(5))


@case("vmap F.cross_entropy")
def _(e):
    return e.fn.vmap(e.F.cross_entropy)(e.t(4, 3, 5), e.ints(5, 4, 3))


@case("vmap F.mse_loss and dropout eval")
def _(e):
    return e.fn.vmap(lambda a, b: e.F.mse_loss(e.F.dropout(a, 0.5, training=False), b))(e.t(4, 3), e.t(4, 3))


@case("vmap module call")
def _(e):
    e.lib.manual_seed(0)
    model = e.seeded(e.nn.Sequential(e.nn.Linear(5, 4), e.nn.GELU(), e.nn.Linear(4, 2)))
    return e.fn.vmap(model)(e.t(3, 2, 5))


@case("vmap to dtype")
def _(e):
    return e.fn.vmap(lambda a: (a.double(), a.to(e.lib.float16), a.int(), a.type_as(a.long())))(e.t(3, 4))


@case("vmap new tensors inside")
def _(e):
    return e.fn.vmap(lambda a: (e.lib.zeros_like(a), a.new_ones(2), e.lib.ones(2) + a.sum(), e.lib.arange(3) * a[0]))(
        e.t(3, 4))


# ---- in-place ops --------------------------------------------------------------------------------------------

@case("vmap in-place on the mapped tensor")
def _(e):
    return e.fn.vmap(lambda a, b: a.mul_(2).add_(b))(e.t(3, 4), e.t(3, 4))


@case("vmap in-place of an unmapped into a mapped tensor")
def _(e):
    w = e.t(4)
    return e.fn.vmap(lambda a: a.clone().add_(w))(e.t(3, 4))


@case("vmap in-place of a mapped into an unmapped tensor",
      xfail=PER_SLICE)
def _(e):
    w = e.t(4)
    return e.fn.vmap(lambda a: w.add_(a))(e.t(3, 4))


@case("vmap in-place into a new unmapped tensor",
      xfail=PER_SLICE)
def _(e):
    return e.fn.vmap(lambda a: e.lib.zeros(4).copy_(a))(e.t(3, 4))


@case("vmap in-place returns the input")
def _(e):
    x = e.t(3, 4)
    out = e.fn.vmap(lambda a: a.sub_(1))(x)
    return out, x


# ---- refusals inside vmap -------------------------------------------------------------------------------------

@case("vmap .item()", xfail=PER_SLICE)
def _(e):
    return e.fn.vmap(lambda a: a.sum().item())(e.t(3, 4))


@case("vmap data-dependent control flow", xfail=PER_SLICE)
def _(e):
    return e.fn.vmap(lambda a: a * 2 if a.sum() > 0 else a)(e.t(3, 4))


@case("vmap .tolist()", xfail=PER_SLICE)
def _(e):
    return e.fn.vmap(lambda a: e.lib.tensor(a.tolist()))(e.t(3, 4))


@case("vmap returns a float")
def _(e):
    return e.fn.vmap(lambda a: 1.0)(e.t(3, 4))


@case("vmap returns None")
def _(e):
    return e.fn.vmap(lambda a: None)(e.t(3, 4))


@case("vmap returns a float, out_dims None")
def _(e):
    return e.fn.vmap(lambda a: (a, 1.0), out_dims=(0, None))(e.t(3, 4))


# ---- randomness ------------------------------------------------------------------------------------------------

@case("vmap rand with randomness='error'")
def _(e):
    return e.fn.vmap(lambda a: a + e.lib.rand(4))(e.t(3, 4))


@case("vmap randn_like with randomness='error'")
def _(e):
    return e.fn.vmap(lambda a: e.lib.randn_like(a))(e.t(3, 4))


@case("vmap dropout with randomness='error'")
def _(e):
    return e.fn.vmap(lambda a: e.F.dropout(a, 0.5))(e.t(3, 4))


@case("vmap bad randomness")
def _(e):
    return e.fn.vmap(lambda a: a, randomness="sometimes")(e.t(3, 4))


def _randomness_summary(e, randomness, draw):
    out = e.fn.vmap(draw, randomness=randomness)(e.lib.zeros(5, 4))
    rows = out.detach().numpy()
    return tuple(out.shape), str(out.dtype).split(".")[-1], bool(np.all(rows == rows[0])), len(np.unique(rows))


for _mode in ("same", "different"):
    for _draw in ("rand", "randn_like", "dropout", "normal_", "randint"):
        def _random(e, mode=_mode, draw=_draw):
            fn = {"rand": lambda a: a + e.lib.rand(4), "randn_like": lambda a: e.lib.randn_like(a),
                  "dropout": lambda a: e.F.dropout(a + 1, 0.5), "normal_": lambda a: a.clone().normal_(),
                  "randint": lambda a: e.lib.randint(0, 1000, (4,)) + a}[draw]
            shape, dtype, all_same, n_unique = _randomness_summary(e, mode, fn)
            # random draws differ between the libraries; what both promise is the shape, the dtype,
            # whether the slices share their draws, and that the draws are not constant
            return shape, dtype, all_same, n_unique > (2 if draw == "dropout" else 1)
        case(f"vmap {_draw} with randomness={_mode!r}")(_random)


# ---- in_dims / out_dims ----------------------------------------------------------------------------------------

@case("vmap in_dims None int negative")
def _(e):
    return e.fn.vmap(lambda a, b, c: a + b * c, in_dims=(None, 1, -1))(e.t(4), e.t(4, 3), e.t(4, 3))


@case("vmap in_dims nested")
def _(e):
    return e.fn.vmap(lambda p, c: p[0] * p[1][0] + p[1][1] + c, in_dims=((0, (None, 1)), None))(
        (e.t(3, 4), (e.t(4), e.t(4, 3))), e.t(4))


@case("vmap in_dims dict")
def _(e):
    return e.fn.vmap(lambda d: d["w"] @ d["x"], in_dims=({"w": None, "x": 0},))({"w": e.t(2, 4), "x": e.t(3, 4)})


@case("vmap in_dims list")
def _(e):
    return e.fn.vmap(lambda xs: xs[0] - xs[1], in_dims=([0, 1],))([e.t(3, 4), e.t(4, 3)])


@case("vmap in_dims a list at the top")
def _(e):
    return e.fn.vmap(lambda a: a, in_dims=[0])(e.t(3, 4))


@case("vmap in_dims a float")
def _(e):
    return e.fn.vmap(lambda a: a, in_dims=0.0)(e.t(3, 4))


@case("vmap in_dims out of range")
def _(e):
    return e.fn.vmap(lambda a: a, in_dims=-3)(e.t(3, 4))


@case("vmap in_dims a mapped non-tensor")
def _(e):
    return e.fn.vmap(lambda a, s: a * s, in_dims=(0, 0))(e.t(3, 4), 2.0)


@case("vmap in_dims structure mismatch")
def _(e):
    return e.fn.vmap(lambda a, b: a + b, in_dims=(0,))(e.t(3, 4), e.t(3, 4))


@case("vmap sizes differ")
def _(e):
    return e.fn.vmap(lambda a, b: a + b, in_dims=(0, 1))(e.t(3, 4), e.t(3, 4))


@case("vmap nothing mapped")
def _(e):
    return e.fn.vmap(lambda a: a, in_dims=None)(e.t(3, 4))


@case("vmap no inputs")
def _(e):
    return e.fn.vmap(lambda: e.lib.ones(2))()


@case("vmap 0-dim input")
def _(e):
    return e.fn.vmap(lambda a: a)(e.lib.tensor(1.0))


@case("vmap out_dims ints and negative")
def _(e):
    return e.fn.vmap(lambda a: (a * 2, a.sum(0), a.T), out_dims=(1, 0, -1))(e.t(4, 3, 5))


@case("vmap out_dims None for an unmapped output")
def _(e):
    w = e.t(3)
    return e.fn.vmap(lambda a: (a + 1, w), out_dims=(0, None))(e.t(4, 3))


@case("vmap out_dims nested and dict")
def _(e):
    return e.fn.vmap(lambda a: {"x": a, "y": (a.sum(), a * 2)}, out_dims={"x": 1, "y": (0, -1)})(e.t(4, 3))


@case("vmap out_dims out of range")
def _(e):
    return e.fn.vmap(lambda a: a, out_dims=2)(e.t(4, 3))


@case("vmap out_dims structure mismatch")
def _(e):
    return e.fn.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(e.t(4, 3))


@case("vmap out_dims a float")
def _(e):
    return e.fn.vmap(lambda a: a, out_dims=1.0)(e.t(4, 3))


@case("vmap kwargs are not mapped")
def _(e):
    return e.fn.vmap(lambda a, scale: a * scale)(e.t(4, 3), scale=e.t(3))


@case("vmap chunk_size")
def _(e):
    return e.fn.vmap(lambda a, b: (a @ b, a.sum()), in_dims=(0, None), chunk_size=2)(e.t(5, 3, 4), e.t(4, 2))


@case("vmap chunk_size 0")
def _(e):
    return e.fn.vmap(lambda a: a, chunk_size=0)(e.t(5, 3))


@case("vmap chunk_size float")
def _(e):
    return e.fn.vmap(lambda a: a, chunk_size=1.5)(e.t(5, 3))


@case("vmap chunk_size larger than the batch")
def _(e):
    return e.fn.vmap(lambda a: a.exp(), chunk_size=10)(e.t(5, 3))


@case("vmap nested")
def _(e):
    return e.fn.vmap(e.fn.vmap(lambda a, b: a * b + a.sum(), in_dims=(0, None)), in_dims=(1, 0))(e.t(3, 4, 5), e.t(4))


@case("vmap nested outer product")
def _(e):
    return e.fn.vmap(e.fn.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(e.t(3), e.t(4))


@case("vmap zero-size batch")
def _(e):
    return e.fn.vmap(lambda a: a.sum(1))(e.lib.zeros(0, 3, 2))


@case("vmap zero-size batch in_dims=1")
def _(e):
    return e.fn.vmap(lambda a: a * 2, in_dims=1)(e.lib.zeros(3, 0))


# ---- grad and friends ------------------------------------------------------------------------------------------

@case("grad argnums int")
def _(e):
    return e.fn.grad(lambda a, b: (a.sin() * b).sum(), argnums=1)(e.t(3, 4), e.t(3, 4))


@case("grad argnums tuple")
def _(e):
    return e.fn.grad(lambda a, b, c: (a * b * c).sum(), argnums=(0, 2))(e.t(3), e.t(3), e.t(3))


@case("grad argnums negative")
def _(e):
    return e.fn.grad(lambda a, b: (a * b.exp()).sum(), argnums=-1)(e.t(3), e.t(3))


@case("grad argnums empty tuple")
def _(e):
    return e.fn.grad(lambda a: a.sum(), argnums=())(e.t(3))


@case("grad argnums float")
def _(e):
    return e.fn.grad(lambda a: a.sum(), argnums=0.0)(e.t(3))


@case("grad argnums out of range")
def _(e):
    return e.fn.grad(lambda a, b: a.sum(), argnums=2)(e.t(3), e.t(3))


@case("grad of a pytree argument")
def _(e):
    return e.fn.grad(lambda p: (p["w"] @ p["x"][0]).sum() + p["x"][1].pow(2).sum())(
        {"w": e.t(2, 3), "x": (e.t(3), e.t(2))})


@case("grad has_aux")
def _(e):
    return e.fn.grad(lambda a: ((a ** 2).sum(), {"m": a.mean(), "n": 3}), has_aux=True)(e.t(3, 4))


@case("grad has_aux not a pair")
def _(e):
    return e.fn.grad(lambda a: (a.sum(), 1, 2), has_aux=True)(e.t(3))


@case("grad non-scalar output")
def _(e):
    return e.fn.grad(lambda a: a * 2)(e.t(3))


@case("grad returns a float")
def _(e):
    return e.fn.grad(lambda a: 1.0)(e.t(3))


@case("grad int input")
def _(e):
    return e.fn.grad(lambda a: a.sum())(e.lib.ones(2, dtype=e.lib.long))


@case("grad non-tensor input")
def _(e):
    return e.fn.grad(lambda a: a)(2.0)


@case("grad of an unused input")
def _(e):
    return e.fn.grad(lambda a, b: a.sum(), argnums=(0, 1))(e.t(3), e.t(2))


@case("grad of a constant")
def _(e):
    return e.fn.grad(lambda a: e.lib.tensor(2.0))(e.t(3))


@case("grad float64")
def _(e):
    return e.fn.grad(lambda a: (a ** 3).sum())(e.t(3, dtype=np.float64))


@case("grad_and_value")
def _(e):
    return e.fn.grad_and_value(lambda a, b: (a * b).sum().tanh(), argnums=(0, 1))(e.t(3), e.t(3))


@case("grad_and_value has_aux")
def _(e):
    return e.fn.grad_and_value(lambda a: (a.exp().sum(), a.max()), has_aux=True)(e.t(3))


@case("grad of grad")
def _(e):
    return e.fn.grad(lambda a: e.fn.grad(lambda b: (b.sin() * b).sum())(a).sum())(e.t(4))


@case("grad with kwargs")
def _(e):
    return e.fn.grad(lambda a, scale=1.0: (a * scale).sum())(e.t(3), scale=e.t(3))


@case("vjp")
def _(e):
    out, fn = e.fn.vjp(lambda a, b: (a * b, a.sin()), e.t(3), e.t(3))
    return out, fn((e.t(3), e.t(3)))


@case("vjp has_aux")
def _(e):
    out, fn, aux = e.fn.vjp(lambda a: (a.exp(), a.sum()), e.t(3, 2), has_aux=True)
    return out, fn(e.lib.ones(3, 2)), aux


@case("vjp wrong cotangent structure")
def _(e):
    out, fn = e.fn.vjp(lambda a: (a * 2, a * 3), e.t(3))
    return fn(e.t(3))


@case("vjp pytree primal")
def _(e):
    out, fn = e.fn.vjp(lambda p: p["a"] @ p["b"], {"a": e.t(2, 3), "b": e.t(3)})
    return out, fn(e.t(2))


@case("jvp")
def _(e):
    return e.fn.jvp(lambda a, b: (a * b).sin(), (e.t(3), e.t(3)), (e.t(3), e.t(3)))


@case("jvp has_aux")
def _(e):
    return e.fn.jvp(lambda a: (a.exp(), a.sum()), (e.t(3),), (e.t(3),), has_aux=True)


@case("jvp primals not a tuple")
def _(e):
    return e.fn.jvp(lambda a: a, e.t(3), (e.t(3),))


@case("jvp tangent count")
def _(e):
    return e.fn.jvp(lambda a, b: a + b, (e.t(3), e.t(3)), (e.t(3),))


@case("jvp tangent shape")
def _(e):
    return e.fn.jvp(lambda a: a * 2, (e.t(3),), (e.t(4),))


@case("jvp pytree output")
def _(e):
    return e.fn.jvp(lambda a: {"s": a.sum(), "c": a.cos()}, (e.t(3),), (e.t(3),))


@case("jacrev")
def _(e):
    return e.fn.jacrev(lambda a: a.softmax(-1))(e.t(4))


@case("jacrev argnums has_aux")
def _(e):
    return e.fn.jacrev(lambda a, b: (a * b.sum(), a.mean()), argnums=(0, 1), has_aux=True)(e.t(3), e.t(2))


@case("jacrev chunk_size")
def _(e):
    return e.fn.jacrev(lambda a: a.sin().cumsum(0), chunk_size=2)(e.t(5))


@case("jacrev chunk_size 0")
def _(e):
    return e.fn.jacrev(lambda a: a.sin(), chunk_size=0)(e.t(5))


@case("jacrev pytree output")
def _(e):
    return e.fn.jacrev(lambda a: (a.sum(), a.outer(a)))(e.t(3))


@case("jacrev matrix input")
def _(e):
    return e.fn.jacrev(lambda m: m @ m)(e.t(2, 2))


@case("jacrev int input")
def _(e):
    return e.fn.jacrev(lambda a: a * 2)(e.lib.ones(2, dtype=e.lib.long))


@case("jacfwd")
def _(e):
    return e.fn.jacfwd(lambda a: a.tanh() * a)(e.t(4))


@case("jacfwd argnums has_aux")
def _(e):
    return e.fn.jacfwd(lambda a, b: (a @ b, b.sum()), argnums=1, has_aux=True)(e.t(2, 3), e.t(3))


@case("jacfwd randomness")
def _(e):
    return e.fn.jacfwd(lambda a: a + e.lib.rand(3))(e.t(3))


@case("jacfwd randomness same")
def _(e):
    return e.fn.jacfwd(lambda a: a * (e.lib.rand(3) * 0 + 2), randomness="same")(e.t(3))


@case("hessian")
def _(e):
    return e.fn.hessian(lambda a: (a.sin() * a.exp()).sum())(e.t(3))


@case("hessian argnums")
def _(e):
    return e.fn.hessian(lambda a, b: (a * a * b).sum(), argnums=1)(e.t(3), e.t(3))


@case("hessian argnums tuple")
def _(e):
    return e.fn.hessian(lambda a, b: (a * a * b).sum(), argnums=(0, 1))(e.t(2), e.t(2))


@case("jacrev of vmap")
def _(e):
    return e.fn.jacrev(e.fn.vmap(lambda a: a.sin().sum()))(e.t(3, 2))


@case("vmap of jacrev")
def _(e):
    return e.fn.vmap(e.fn.jacrev(lambda a: a.sin() * a.sum()))(e.t(3, 2))


@case("vmap of vjp")
def _(e):
    return e.fn.vmap(lambda a, v: e.fn.vjp(e.lib.sin, a)[1](v))(e.t(3, 2), e.t(3, 2))


@case("vmap of jvp")
def _(e):
    return e.fn.vmap(lambda a, v: e.fn.jvp(e.lib.exp, (a,), (v,)))(e.t(3, 2), e.t(3, 2))


# ---- modules -----------------------------------------------------------------------------------------------------

def _mlp(e):
    e.lib.manual_seed(0)
    return e.seeded(e.nn.Sequential(e.nn.Linear(4, 5), e.nn.Tanh(), e.nn.Linear(5, 3)))


@case("functional_call")
def _(e):
    model = _mlp(e)
    params = {k: v * 2 for k, v in model.named_parameters()}
    return e.fn.functional_call(model, params, (e.t(2, 4),))


@case("functional_call a single tensor arg")
def _(e):
    model = _mlp(e)
    return e.fn.functional_call(model, {"0.bias": e.lib.zeros(5)}, e.t(2, 4))


@case("functional_call kwargs")
def _(e):
    lin = e.seeded(e.nn.Linear(3, 2))
    return e.fn.functional_call(lin, {"weight": e.t(2, 3)}, (), {"input": e.t(4, 3)})


@case("functional_call several dicts")
def _(e):
    model = _mlp(e)
    named = dict(model.named_parameters())
    return e.fn.functional_call(model, ({"0.weight": named["0.weight"] * 0}, {"2.bias": e.lib.ones(3)}), (e.t(2, 4),))


@case("functional_call a key in two dicts")
def _(e):
    model = _mlp(e)
    w = e.lib.zeros(5, 4)
    return e.fn.functional_call(model, ({"0.weight": w}, {"0.weight": w}), (e.t(2, 4),))


@case("functional_call strict missing")
def _(e):
    model = _mlp(e)
    return e.fn.functional_call(model, {"0.weight": e.lib.zeros(5, 4)}, (e.t(2, 4),), strict=True)


@case("functional_call strict unexpected")
def _(e):
    model = _mlp(e)
    params = dict(model.named_parameters())
    params["extra"] = e.lib.zeros(1)
    return e.fn.functional_call(model, params, (e.t(2, 4),), strict=True)


@case("functional_call non-strict unexpected")
def _(e):
    model = _mlp(e)
    return e.fn.functional_call(model, {"0.weight": e.lib.zeros(5, 4), "nope": e.lib.zeros(1)}, (e.t(2, 4),))


class _TiedFactory:
    """An embedding and a head sharing one weight, on either library."""

    @staticmethod
    def make(e):
        class Tied(e.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = e.nn.Embedding(5, 3)
                self.head = e.nn.Linear(3, 5, bias=False)
                self.head.weight = self.emb.weight

            def forward(self, idx):
                return self.head(self.emb(idx))
        return e.seeded(Tied())


@case("functional_call tied weights")
def _(e):
    m = _TiedFactory.make(e)
    return e.fn.functional_call(m, {"emb.weight": e.t(5, 3)}, (e.lib.tensor([1, 4]),))


@case("functional_call tie_weights=False")
def _(e):
    m = _TiedFactory.make(e)
    return e.fn.functional_call(m, {"emb.weight": e.t(5, 3)}, (e.lib.tensor([1, 4]),), tie_weights=False)


@case("functional_call tied weights given twice differently")
def _(e):
    m = _TiedFactory.make(e)
    return e.fn.functional_call(m, {"emb.weight": e.t(5, 3), "head.weight": e.t(5, 3)}, (e.lib.tensor([1, 4]),))


@case("functional_call buffers")
def _(e):
    bn = e.nn.BatchNorm1d(3).eval()
    buffers = {"running_mean": e.t(3), "running_var": e.t(3).abs() + 0.5}
    out = e.fn.functional_call(bn, buffers, (e.t(4, 3),))
    return out, bn.running_mean


@case("functional_call training buffers updated in the dict")
def _(e):
    bn = e.nn.BatchNorm1d(3)
    buffers = {"running_mean": e.lib.zeros(3), "running_var": e.lib.ones(3), "num_batches_tracked": e.lib.tensor(0)}
    e.fn.functional_call(bn, buffers, (e.t(4, 3),))
    return buffers, bn.running_mean, bn.num_batches_tracked


@case("functional_call grad through")
def _(e):
    model = _mlp(e)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = e.t(6, 4), e.ints(3, 6)
    return e.fn.grad(lambda p: e.F.cross_entropy(e.fn.functional_call(model, p, (x,)), y))(params)


@case("stack_module_state")
def _(e):
    e.lib.manual_seed(0)
    models = [e.seeded(e.nn.Sequential(e.nn.Linear(3, 4), e.nn.BatchNorm1d(4))) for _ in range(3)]
    params, buffers = e.fn.stack_module_state(models)
    return (params, buffers, [p.requires_grad for p in params.values()], [p.is_leaf for p in params.values()],
            [b.requires_grad for b in buffers.values()])


@case("stack_module_state mixed")
def _(e):
    return e.fn.stack_module_state([e.nn.Linear(3, 4), e.nn.Linear(3, 5)])


@case("stack_module_state empty")
def _(e):
    return e.fn.stack_module_state([])


def _ensemble(e, x_dim):
    e.lib.manual_seed(0)
    models = [e.seeded(e.nn.Sequential(e.nn.Linear(4, 6), e.nn.ReLU(), e.nn.Linear(6, 2))) for _ in range(3)]
    params, buffers = e.fn.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta") if e.lib is torch else copy.deepcopy(models[0])

    def call(p, b, x):
        return e.fn.functional_call(base, (p, b), (x,))
    x = e.t(3, 5, 4) if x_dim == 0 else e.t(5, 4)
    return e.fn.vmap(call, in_dims=(0, 0, x_dim))(params, buffers, x)


@case("ensemble, same minibatch")
def _(e):
    return _ensemble(e, None)


@case("ensemble, a minibatch per model")
def _(e):
    return _ensemble(e, 0)


@case("per-sample gradients")
def _(e):
    model = _mlp(e)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_of(params, buffers, x, y):
        out = e.fn.functional_call(model, (params, buffers), (x.unsqueeze(0),))
        return e.F.cross_entropy(out, y.unsqueeze(0))
    return e.fn.vmap(e.fn.grad(loss_of), in_dims=(None, None, 0, 0))(params, buffers, e.t(6, 4), e.ints(3, 6))


@case("per-sample gradients and losses, chunked")
def _(e):
    model = _mlp(e)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of(params, x, y):
        return e.F.cross_entropy(e.fn.functional_call(model, params, (x[None],)), y[None])
    return e.fn.vmap(e.fn.grad_and_value(loss_of), in_dims=(None, 0, 0), chunk_size=4)(params, e.t(6, 4), e.ints(3, 6))


# ---- argument checks the transforms share with PyTorch ----------------------------------------------------------

@case("grad argnums repeated")
def _(e):
    return e.fn.grad(lambda a, b: (a * b).sum(), argnums=(0, -2))(e.t(3), e.t(3))


@case("grad argnums a list")
def _(e):
    return e.fn.grad(lambda a: a.sum(), argnums=[0])(e.t(3))


@case("grad argnums a float in a tuple")
def _(e):
    return e.fn.grad(lambda a: a.sum(), argnums=(0.0,))(e.t(3))


@case("grad aux None")
def _(e):
    return e.fn.grad(lambda a: (a.sum(), None), has_aux=True)(e.t(3))


@case("grad aux nested tensors")
def _(e):
    return e.fn.grad(lambda a: (a.sum(), [a * 2, (a.exp(),)]), has_aux=True)(e.t(3))


@case("jacrev aux an int")
def _(e):
    return e.fn.jacrev(lambda a: (a * 2, 3), has_aux=True)(e.t(3))


@case("jacrev has_aux not a pair")
def _(e):
    return e.fn.jacrev(lambda a: a * 2, has_aux=True)(e.t(3))


@case("jacfwd has_aux not a pair")
def _(e):
    return e.fn.jacfwd(lambda a: a * 2, has_aux=True)(e.t(3))


@case("vjp aux an int")
def _(e):
    return e.fn.vjp(lambda a: (a * 2, 3), e.t(3), has_aux=True)


@case("jvp aux an int")
def _(e):
    return e.fn.jvp(lambda a: (a * 2, 3), (e.t(3),), (e.t(3),), has_aux=True)


@case("jvp tangents a list")
def _(e):
    return e.fn.jvp(lambda a: a, (e.t(2),), [e.t(2)])


@case("jvp tangent a float")
def _(e):
    return e.fn.jvp(lambda a: a, (e.t(2),), (1.0,))


@case("jvp no primals")
def _(e):
    return e.fn.jvp(lambda: e.lib.ones(2), (), ())


@case("jvp returns an int")
def _(e):
    return e.fn.jvp(lambda a: 3, (e.t(2),), (e.t(2),))


@case("vjp returns an int")
def _(e):
    return e.fn.vjp(lambda a: (a, 3), e.t(2))


@case("jacrev returns an int")
def _(e):
    return e.fn.jacrev(lambda a: (a, 3))(e.t(2))


@case("jacfwd returns an int")
def _(e):
    return e.fn.jacfwd(lambda a: (a, 3))(e.t(2))


@case("vjp dict cotangent for a tuple output")
def _(e):
    out, fn = e.fn.vjp(lambda a: {"x": a * 2, "y": a.sum()}, e.t(3))
    return fn((e.t(3), e.t()))


@case("jacrev chunk_size negative")
def _(e):
    return e.fn.jacrev(lambda a: a, chunk_size=-1)


@case("jacrev chunk_size float")
def _(e):
    return e.fn.jacrev(lambda a: a.sin(), chunk_size=1.5)(e.t(3))


@case("jacfwd bad randomness")
def _(e):
    return e.fn.jacfwd(lambda a: a, randomness="x")(e.t(3))


@case("hessian of a random function")
def _(e):
    return e.fn.hessian(lambda a: (a * e.lib.rand(3)).sum())(e.t(3))


@case("vmap chunk_size negative")
def _(e):
    return e.fn.vmap(lambda a: a, chunk_size=-1)


@case("vmap in_dims a float in the tuple")
def _(e):
    return e.fn.vmap(lambda a: a, in_dims=(0.5,))(e.t(2, 3))


@case("vmap in_dims a list for a tuple")
def _(e):
    return e.fn.vmap(lambda p: p[0] + p[1], in_dims=([0, 1],))((e.t(2, 3), e.t(3, 2)))


@case("vmap in_dims a dict in another key order")
def _(e):
    return e.fn.vmap(lambda d: d["a"] - d["b"], in_dims=({"b": 1, "a": 0},))({"a": e.t(2, 3), "b": e.t(3, 2)})


@case("vmap one tensor out, out_dims=(1,)")
def _(e):
    return e.fn.vmap(lambda a: a * 2, out_dims=(1,))(e.t(2, 3))


@case("vmap one tensor out, out_dims=[1]")
def _(e):
    return e.fn.vmap(lambda a: a * 2, out_dims=[1])(e.t(2, 3))


@case("vmap out_dims a list for a tuple")
def _(e):
    return e.fn.vmap(lambda a: (a, a), out_dims=[1, 0])(e.t(2, 3))


@case("vmap out_dims a float in the tuple")
def _(e):
    return e.fn.vmap(lambda a: (a, a), out_dims=(1, 0.5))(e.t(2, 3))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=XFAIL[n], strict=True))
                                  if n in XFAIL else n for n in CASES])
def test_func_agrees_with_pytorch(name):
    _check(name)
