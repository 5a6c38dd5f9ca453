"""Forward-mode automatic differentiation with dual tensors (as `torch.autograd.forward_ad`).

A dual number is a pair (primal, tangent): a value x and a direction v. Pushing it through a function f
gives (f(x), J v), the value and the directional derivative of f along v, in the same pass that
computes f(x):

    with dual_level():
        x = make_dual(p, v)             # the primal p, carrying the tangent v
        y = f(x)                        # every op on a dual also computes its output's tangent
        jvp = unpack_dual(y).tangent    # J_f(p) v

How an op finds its output's tangent: minigrad's ops have a backward (vector-Jacobian product) but no
forward formula, and a vjp gives a jvp by differentiating once more. g(u) = J^T u is linear in u, so
d <g(u), v> / du = J v: the op is run once on inputs that record, its backward is run on a dummy
output gradient u (recorded), and the engine's `grad` of <g(u), v> with respect to u is the tangent.
That is the same trick as `autograd.functional.jvp`, applied op by op as the ops run: one mechanism
(`Function.apply`, reached by every differentiable op, consults `_dual_apply` while a level is entered)
and no second set of derivative formulas. Tangents are computed eagerly, not by replaying a graph at
`unpack_dual`, because a dual must look like its primal to the user: its `requires_grad` and `grad_fn`
are the primal's, so it cannot be the one that records; and eager tangents keep working under
`no_grad`, through in-place writes and through the ops that `autograd.grad(create_graph=True)` runs,
which is how forward-over-reverse gives Hessian-vector products.

A custom `autograd.Function` has no backward to differentiate here: its `jvp(ctx, *input_tangents)`
staticmethod is run instead, with forward's ctx (whose `saved_tensors` are then what `save_for_forward`
kept), as PyTorch runs it; one without a jvp is refused. Where PyTorch fails an internal assert (a jvp
returning None for a differentiable output), the output here has no tangent.

Tangents are kept on the side, keyed by the array a tensor wraps (a saved output unpacked for backward
wraps the same array, and so keeps its tangent). A view's tangent is read from its base's (at the
view's place in it, a copy: where PyTorch's is a view of the base's tangent, writing into
`unpack_dual(view).tangent` here leaves the base's as it was; writes through in-place ops on the dual
do reach it); an in-place op writes its result's tangent into the tensor's own (or its base's,
at the view's place), as PyTorch's in-place ops do. With no level entered, `_dual_apply` is None and
ordinary code pays that one test per op. As in PyTorch 2.13, there is one level at a time.
"""
import weakref
from collections import namedtuple

from . import function as _function
from .grad_mode import enable_grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What unpack_dual returns: the primal (a view of the dual) and its tangent (or None)."

# bound by minigrad.ops.inplace (the engine does not import the ops): where a view's elements lie in its base
# (a place); a copy of the elements of an array of the base's shape at a place, or None; a value written at a
# place into such an array (True), or nothing written (False). None and False: a place of another kind.
place_in_base = elements_at = write_at = None

_level = None  # the level entered (0), None outside any
_tangents = {}  # id(array) -> (weak reference to the array, tangent Tensor)


def enter_dual_level():
    """Enter a new forward-AD level and return its number (0: PyTorch 2.13 has one level at a time)."""
    global _level
    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _level = 0
    _function.dual_apply = _apply
    return _level


def exit_dual_level(*, level=None):
    """Leave the current level: every tangent made in it is dropped."""
    global _level
    if level is None:
        level = _level
    if level is None or level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _level = None
    _function.dual_apply = None
    _tangents.clear()


class dual_level:
    """`with dual_level():` the block in which dual tensors carry tangents."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _check_level(level):
    if _level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if level is not None and level != _level:
        raise RuntimeError("Invalid level given to _make_dual")


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor: a view of `tensor` (its requires_grad and history) carrying `tangent` at `level`."""
    Tensor = _function.Tensor
    for name, t in (("tensor", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dual(): argument '{name}' must be Tensor, not {type(t).__name__}")
    _check_level(level)
    if tensor.array.dtype.kind not in "fc":
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tangent.array.dtype.kind not in "fc":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tangent.array.shape != tensor.array.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(tensor.array.shape)} while the given forward gradient is of "
            f"size {list(tangent.array.shape)}.")
    if tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {_level} is not supported.")
    dual = tensor.view_as(tensor) if tensor.requires_grad else Tensor._wrap(tensor.array.view())
    dual._version_counter = tensor._version_counter  # (the same memory: in-place writes are seen by both)
    dual._base = None  # (its own tangent, not its base's)
    _set(dual.array, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of `tensor`: the primal a view of it, the tangent None where it has none."""
    Tensor = _function.Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {type(tensor).__name__}")
    if _level is None or level is not None and level != _level:
        return UnpackedDualTensor(tensor, None)
    primal = Tensor._wrap(tensor.array.view(), version_counter=tensor._version_counter)
    if tensor.requires_grad:
        primal = _plain(type(tensor).view_as, tensor, tensor)
    return UnpackedDualTensor(primal, tangent_of(tensor))


def _set(array, tangent):
    key = id(array)
    _tangents[key] = (weakref.ref(array, lambda _, key=key: _tangents.pop(key, None)), tangent)


def _own(array):
    entry = _tangents.get(id(array))
    return entry[1] if entry is not None and entry[0]() is array else None


def tangent_of(t):
    """t's tangent at the current level, or None."""
    if not _tangents:
        return None
    base = t._base
    if base is not None:
        bt = _own(base.array)
        if bt is not None:
            own = elements_at(bt.array, place_in_base(t.array, base.array))
            if own is not None:
                return _function.Tensor._wrap(own)
    return _own(t.array)


def _plain(fn, *args):
    """fn(*args) with tangents not propagated (forward AD's own work, and ops on no dual)."""
    _function.dual_apply = None
    try:
        return fn(*args)
    finally:
        _function.dual_apply = _apply


def _apply(cls, args):
    """Function.apply while a level is entered: the op's result, its tangent computed where an input has one."""
    Tensor = _function.Tensor
    tangents = [tangent_of(a) if isinstance(a, Tensor) and a.array.dtype.kind in "fc" else None for a in args]
    if all(v is None for v in tangents):
        return _plain(cls.apply, *args)
    if cls._user:
        if getattr(cls, "jvp", None) is None:
            raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                      "with forward mode AD.")
        _function.jvp_ctx = None
        out = _plain(cls.apply, *args)
        _plain(_user_jvp, cls, _function.jvp_ctx, args, tangents, out)
        return out
    from .. import random as _random

    before = _random.get_rng_state()  # (the second run draws what the first drew: dropout's mask is the output's)
    out = _plain(cls.apply, *args)
    after = _random.get_rng_state()
    outs = out if isinstance(out, tuple) else (out,)
    _random._set_rng_state(before)
    try:
        _plain(_tangents_of_outputs, cls, args, tangents, outs)
    finally:
        _random._set_rng_state(after)
    return out


class _JvpContext:
    """The ctx a user's jvp sees: forward's, save that `saved_tensors` gives what `save_for_forward` kept."""

    def __init__(self, ctx):
        object.__setattr__(self, "_ctx", ctx)

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)

    def __delattr__(self, name):  # (a jvp may drop what forward stashed on ctx, as the tutorial's does)
        delattr(self._ctx, name)

    @property
    def saved_tensors(self):
        return tuple(getattr(self._ctx, "_saved_forward", ()))


def _user_jvp(cls, ctx, args, tangents, out):
    """A custom Function's outputs take the tangents its `jvp(ctx, *input_tangents)` returns. As PyTorch, an
    input tensor without a tangent passes zeros (None after `ctx.set_materialize_grads(False)`), any other
    argument None; an output forward modified in place (mark_dirty) must have its tangent modified in place."""
    Tensor = _function.Tensor
    ins = []
    for a, v in zip(args, tangents):
        if v is None and isinstance(a, Tensor) and ctx._materialize:
            v = Tensor._wrap(a.array * 0)
        ins.append(v)
    got = cls.jvp(_JvpContext(ctx), *ins)
    outs = out if isinstance(out, tuple) else (out,)
    got = got if isinstance(got, tuple) else (got,)
    if len(got) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outs)} "
                           f"but got {len(got)})")
    dirty = ctx._dirty or ()
    for i, (o, t) in enumerate(zip(outs, got)):
        if t is None:
            continue
        if not isinstance(o, Tensor) or o.array.dtype.kind not in "fc" or _undifferentiable(o, ctx):
            raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the corresponding forward "
                               "output is not a differentiable Tensor.You should return None at that position instead.")
        if t.array.shape != o.array.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the original Tensor, this "
                f"is not supported. Tensor is of size {list(o.array.shape)} while the given forward gradient is of "
                f"size {list(t.array.shape)}.")
        if any(o is d for d in dirty):
            if t is not tangents[[j for j, a in enumerate(args) if a is o][0]] and \
                    tangent_of(o) is not None:
                raise RuntimeError("An inplace custom Function is not modifying the forward mode gradients inplace. If "
                                   "the forward is modifying an input inplace, then the jvp function must modify the "
                                   "corresponding gradient inplace.")
            if tangent_of(o) is None:
                _set(o.array, t)
            continue
        _set(o.array, t)


def _undifferentiable(o, ctx):
    """Whether forward marked output `o` non-differentiable (a recording ctx left it out of its outputs)."""
    if isinstance(ctx, _function.BackwardNode):
        return o.grad_fn is not ctx
    return any(o.array is getattr(n, "array", n) for n in getattr(ctx, "_non_diff_outputs", ()))


def _tangents_of_outputs(cls, args, tangents, outs):
    """Each floating output's tangent J v, by the double-vjp trick on a second run of the op whose inputs
    with a tangent record (stand-ins for them: the user's tensors keep their flags and graph)."""
    from .engine import grad

    Tensor = _function.Tensor
    ins = [Tensor._wrap(a.array, requires_grad=True) if v is not None else a for a, v in zip(args, tangents)]
    with enable_grad():
        again = cls.apply(*ins)
        again = again if isinstance(again, tuple) else (again,)
        node = next((o.grad_fn for o in again if isinstance(o, Tensor) and o.grad_fn is not None), None)
        if cls.keep_state is not None and node is not None:  # (what the op's caller sets on its node after apply)
            cls.keep_state(node, ins, again)
        pairs = [(i, o) for i, o in enumerate(again) if isinstance(o, Tensor) and o.grad_fn is not None]
        if not pairs:
            return
        us = [Tensor._wrap(o.array * 0, requires_grad=True) for _, o in pairs]
        xs = [x for x, v in zip(ins, tangents) if v is not None]
        vs = [v for v in tangents if v is not None]
        gs = grad([o for _, o in pairs], xs, us, create_graph=True, allow_unused=True)
    used = [(g, v.to(g.dtype) if v.dtype != g.dtype else v) for g, v in zip(gs, vs) if g is not None and g.requires_grad]
    if not used:
        return
    jv = grad([g for g, _ in used], us, [v for _, v in used], allow_unused=True)
    given = [_memory(v.array) for v in vs]
    for (i, _), t in zip(pairs, jv):
        if t is not None and isinstance(outs[i], Tensor):
            if any(_memory(t.array) is m for m in given):  # (clone's is the input's: an in-place op writes its own)
                t = Tensor._wrap(t.array.copy())
            _set(outs[i].array, t)


def _memory(array):
    """The array owning `array`'s memory (itself, or the base its view chain ends at)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def apply_inplace(self, raw, recorded, others, apply_inplace):
    """ops.inplace's apply_inplace while a level is entered: where self or an argument has a tangent, the
    out-of-place op that stands for the in-place one is run for its tangent, which self then takes."""
    Tensor = _function.Tensor
    if tangent_of(self) is None and not any(isinstance(o, Tensor) and tangent_of(o) is not None for o in others):
        return _plain(apply_inplace, self, raw, recorded, *others)
    out = recorded()
    _plain(apply_inplace, self, raw, recorded, *others)
    _after_inplace(self, out)
    return self


def _after_inplace(self, out):
    """An in-place op wrote `out` (the out-of-place op's result, with its tangent) into self: self's tangent
    (or its base's, at self's place) takes out's, or zeros where out has none."""
    nt = tangent_of(out)
    if nt is None and tangent_of(self) is None:
        return
    new = nt.array if nt is not None else 0
    base = self._base
    if base is not None:
        place = place_in_base(self.array, base.array)
        bt = _own(base.array)
        made = bt is None
        if made:
            bt = _function.Tensor._wrap(base.array * 0)
        if write_at(bt.array, place, new):
            if made:
                _set(base.array, bt)
            return
    own = _own(self.array)
    if own is not None and own.array.flags.writeable:
        own.array[...] = new
    else:
        _set(self.array, nt if nt is not None else _function.Tensor._wrap(self.array * 0))
