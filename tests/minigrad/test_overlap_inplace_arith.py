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


# ---- an in-place op reading part of self's memory is refused, all of it allowed -------------------------------
def _grid(L):
    return L.arange(1., 25.).reshape(6, 4)


def _ints(L):
    return L.arange(1, 25).reshape(6, 4)


def _rows(op, make=_grid, *args, **kwargs):  # rows 1-2 written while rows 0-1 are read
    return lambda L: getattr(make(L)[1:3], op)(*(a(L) if callable(a) else a for a in args), **kwargs)


def _shifted(op, make=_grid, *args, **kwargs):
    def write(L):
        x = make(L)
        return getattr(x[1:3], op)(x[0:2], *args, **kwargs)
    return write


def _itself(op, make=_grid, *args, **kwargs):
    def write(L):
        x = make(L)
        return getattr(x, op)(x, *args, **kwargs)
    return write


BINARY = ("add_ sub_ mul_ div_ pow_ atan2_ arctan2_ copysign_ divide_ true_divide_ multiply_ subtract_ floor_divide_ "
          "fmod_ remainder_ hypot_ igamma_ igammac_ ldexp_ logical_and_ logical_or_ logical_xor_ eq_ ne_ lt_ ge_ "
          "greater_ nextafter_ xlogy_ heaviside_ clamp_max_ clamp_min_ clip_ clamp_ __iadd__ __isub__ __imul__ "
          "__itruediv__ __ipow__").split()
INTEGER = "gcd_ lcm_ bitwise_and_ bitwise_or_ bitwise_xor_ bitwise_left_shift_ bitwise_right_shift_ __iand__".split()

ARITH = [(f"{op} of part", _shifted(op)) for op in BINARY] + [(f"{op} of itself", _itself(op)) for op in BINARY]
ARITH += [(f"{op} of part", _shifted(op, _ints)) for op in INTEGER]
ARITH += [(f"{op} of itself", _itself(op, _ints)) for op in INTEGER]


def _with(write):
    return lambda L: (lambda x: write(L, x))(_grid(L))


ARITH += [
    ("add_ the same view", _with(lambda L, x: x[1:3].add_(x[1:3]))),
    ("add_ alpha", _shifted("add_", alpha=2)),
    ("sub_ alpha first", _with(lambda L, x: x[1:3].sub_(x[0:2], alpha=0.5))),
    ("div_ floor", _shifted("div_", rounding_mode="floor")),
    ("div_ integers, floor", _shifted("div_", _ints, rounding_mode="floor")),
    ("add_ transposed", lambda L: (lambda y: y.add_(y.t()))(L.arange(16.).reshape(4, 4))),
    ("add_ a row of self", _with(lambda L, x: x.add_(x[0]))),
    ("add_ the row written", _with(lambda L, x: x[1:3].add_(x[1]))),
    ("add_ a 0-d of self", _with(lambda L, x: x.add_(x[0, 0]))),
    ("add_ a row beside", _with(lambda L, x: x[1:3].add_(x[0:1]))),
    ("add_ disjoint rows", _with(lambda L, x: x[1:3].add_(x[3:5]))),
    ("add_ strided", lambda L: (lambda z: z[1::2].add_(z[::2]))(L.arange(8.))),
    ("add_ expanded", _with(lambda L, x: x[0:2].add_(x[1:2].expand(2, 4)))),
    ("add_ empty", _with(lambda L, x: x[1:1].add_(x[0:0]))),
    ("add_ complex", lambda L: (lambda z: z[1:].add_(z[:-1]))(L.zeros(3, dtype=L.complex64))),
    ("add_ parts of complex", lambda L: (lambda r: r[1:].add_(r[:-1]))(L.view_as_real(L.zeros(3, dtype=L.complex64)))),
    ("add_ real and imag parts", lambda L: (lambda z: z.real.add_(z.imag))(L.zeros(3, dtype=L.complex64))),
    ("mul_ a number", _with(lambda L, x: x[1:3].mul_(2.0))),
    ("addcmul_ tensor1", _with(lambda L, x: x[1:3].addcmul_(x[0:2], L.ones(2, 4), value=2))),
    ("addcmul_ tensor2", _with(lambda L, x: x[1:3].addcmul_(L.ones(2, 4), x[0:2]))),
    ("addcmul_ itself", _with(lambda L, x: x.addcmul_(x, x))),
    ("addcdiv_", _with(lambda L, x: x[1:3].addcdiv_(x[0:2], L.ones(2, 4)))),
    ("addcdiv_ itself", _with(lambda L, x: x.addcdiv_(x, x))),
    ("lerp_ end", _shifted("lerp_", _grid, 0.5)),
    ("lerp_ weight", _with(lambda L, x: x[1:3].lerp_(L.ones(2, 4), x[0:2]))),
    ("lerp_ itself", _with(lambda L, x: x.lerp_(x, x))),
    ("clamp_ both bounds", _with(lambda L, x: x[1:3].clamp_(x[0:2], x[2:4]))),
    ("clamp_ max", _with(lambda L, x: x[1:3].clamp_(max=x[0:2]))),
    ("clamp_ a 0-d of self", _with(lambda L, x: x.clamp_(x[0, 0]))),
    ("addr_", lambda L: (lambda x: x[0:4].addr_(x[0], x[1]))(L.arange(32.).reshape(8, 4))),
    ("addmm_", lambda L: (lambda x: x[0:4].addmm_(x[1:5], x[4:8]))(L.arange(32.).reshape(8, 4))),
    ("addmv_", lambda L: (lambda x: x[0].addmv_(x[0:4], x[1]))(L.arange(32.).reshape(8, 4))),
    ("addbmm_", lambda L: (lambda x: x[0:4].addbmm_(x[1:5].view(1, 4, 4), x[1:5].view(1, 4, 4)))(
        L.arange(32.).reshape(8, 4))),
    ("masked_fill_ mask of self", lambda L: (lambda b: b[1:].masked_fill_(b[:-1], False))(
        L.tensor([True, False, True, True]))),
    ("masked_fill_ mask of self broadcast", lambda L: (lambda b: b.masked_fill_(b[0], False))(
        L.tensor([[True, False], [True, True]]))),
    ("masked_fill_ mask itself", lambda L: (lambda b: b.masked_fill_(b, False))(L.tensor([True, False, True]))),
    ("masked_fill_ 0-d value of self", _with(lambda L, x: x[1:3].masked_fill_(L.ones(2, 4, dtype=L.bool), x[1, 0]))),
    ("fill_ 0-d value of self", _with(lambda L, x: x[1:3].fill_(x[1, 0]))),
    ("neg_ of a view", _with(lambda L, x: x[1:3].neg_())),
    # PyTorch's order: autograd's refusals, the op's own, then this one, then shapes, dtypes, alpha
    ("order: leaf view first", lambda L: (lambda x: x[1:3].add_(x.detach()[0:2]))(_grid(L).requires_grad_())),
    ("order: before broadcast", _with(lambda L, x: x[1:2].add_(x[0:3]))),
    ("order: before broadcast, recorded", lambda L: (lambda y: y[1:2].add_(y[0:3]))(_grid(L).requires_grad_() * 1)),
    ("order: before dtype", _with(lambda L, x: x.view(L.int32)[1:3].add_(x[0:2]))),
    ("order: before float alpha", _shifted("add_", _ints, alpha=0.5)),
    ("order: before true division", _shifted("div_", _ints)),
    ("order: before pow's broadcast", lambda L: (lambda x: x[1:3].pow_(x[0:3]))(L.arange(6.))),
    ("order: before lerp_'s broadcast", lambda L: (lambda x: x[1:3].lerp_(x[0:3], 0.5))(L.arange(6.))),
    ("order: before clamp_'s broadcast", lambda L: (lambda x: x[1:3].clamp_(x[0:3]))(L.arange(6.))),
    ("order: before masked_fill_'s broadcast", lambda L: (lambda b: b[1:].masked_fill_(b[:2], False))(
        L.tensor([True, False, True, True]))),
    ("order: bool subtraction first", lambda L: (lambda b: b[1:].sub_(b[:-1]))(L.tensor([True, False, True, True]))),
    ("order: bool subtract_ first", lambda L: (lambda b: b[1:].subtract_(b[:-1]))(L.tensor([True, False, True, True]))),
    ("order: integer addcdiv_ first", _with(lambda L, x: _ints(L)[1:3].addcdiv_(_ints(L)[0:2], _ints(L)[0:2]))),
    ("order: integer addcdiv_ of self first", lambda L: (lambda x: x[1:3].addcdiv_(x[0:2], x[0:2]))(_ints(L))),
    ("order: no autograd check for logical_and_", lambda L: (lambda x: x[1:3].logical_and_(x.detach()[0:2]))(
        L.zeros(6, requires_grad=True))),
]


@pytest.mark.parametrize("name,write", ARITH, ids=[c[0] for c in ARITH])
def test_partial_overlap_refused_as_torch(name, write):
    assert _outcome(minigrad, write) == _outcome(torch, write)


def _running_sum(L, other):
    y = _grid(L).requires_grad_() * 1
    y += other(y)
    return y.grad_fn.name()


@pytest.mark.parametrize("other", [lambda y: y[0], lambda y: y.detach()[1], lambda y: y, lambda y: y.detach(),
                                   lambda y: y[0:1].expand(6, 4)], ids=["row", "detached row", "itself", "detached",
                                                                      "expanded row"])
def test_recorded_sum_into_itself_as_torch(other):
    """`y += ...` recorded in the graph (a running loss's path) refuses part of y as any in-place add does."""
    assert _outcome(minigrad, lambda L: _running_sum(L, other)) == _outcome(torch, lambda L: _running_sum(L, other))


@pytest.mark.parametrize("write", [
    lambda L, p: p.data[1:].add_(p.data[:-1], alpha=-0.1),
    lambda L, p: p.data.add_(p.data, alpha=-0.1),
    lambda L, p: p.data.mul_(p.data),
    lambda L, p: p.data.add_(p.data.flip(0)),
], ids=["part", "all", "mul all", "a copy"])
def test_optimizer_style_writes_as_torch(write):
    """An SGD step's `p.data.add_(...)` (numpy's ufunc, unchecked on the usual path) refuses and allows as torch."""
    out = []
    for L in (minigrad, torch):
        p = L.arange(8.).requires_grad_()
        out.append((_outcome(L, lambda L, p=p: write(L, p)), p.tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize("write", [
    lambda L, x: x.add_(x),
    lambda L, x: x.mul_(x.view(6, 4)),
    lambda L, x: x.sub_(x, alpha=0.5),
    lambda L, x: x[1:3].pow_(x[1:3]),
    lambda L, x: x.addcmul_(x, x, value=0.5),
    lambda L, x: x.lerp_(x.flip(0), 0.25),
    lambda L, x: x[1:3].clamp_(x[3:5]),
], ids=["add", "mul view", "sub alpha", "pow", "addcmul", "lerp copy", "clamp disjoint"])
def test_allowed_writes_values_as_torch(write):
    out = []
    for L in (minigrad, torch):
        x = _grid(L) / 4
        write(L, x)
        out.append(x.flatten().tolist())
    assert out[0] == pytest.approx(out[1], rel=1e-6)


def test_refused_write_leaves_the_tensor_as_it_was():
    x = _grid(minigrad)
    for write in (lambda: x[1:3].add_(x[0:2]), lambda: x[1:3].addcmul_(x[0:2], x[0:2]),
                  lambda: x[1:3].clamp_(x[0:2]), lambda: x.add_(x[0])):
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            write()
    assert x.tolist() == _grid(torch).tolist()
    assert x._version == 0
