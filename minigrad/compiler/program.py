"""A captured program: the list of steps one call made, replayed on new inputs without autograd.

A value the program computes lives in a numbered slot of `env` (a list). A step's arguments are
*specs*, written down at capture, that say where each argument comes from at replay:

    ("t", s)        the Tensor in slot s (an array there is wrapped)
    ("a", s)        the array in slot s
    ("x", tensor)   a tensor from outside the call (a parameter, a buffer): used live, so the
                    optimizer's in-place updates and `load_state_dict` are seen
    ("c", value)    a constant (a Python number, a dtype, a frozen index array)
    ("seq", type, [specs])   a list or tuple of the above (cat's tensors)
    ("o", s)        the live argument object in slot s (a KV cache: guards.is_live), as it is
    ("g", s)        the leaf's `.grad` as an accumulation into it left it, which that step keeps in
                    slot s (`p.grad` read after backward: a new tensor at each step that sets grads
                    to None); the Tensor itself, as eager's `p.grad` is

Steps run the same code the eager call ran, in the same order, so results (and the random
numbers dropout draws) are equal bit for bit; what they skip is the bookkeeping around it: no
Module calls, no backward graph built, no engine queue, no argument checks of the functional
layer.
"""
import operator
import threading

import numpy as np

from .._fp_errors import quiet as fp_quiet, restore as fp_restore
from ..autograd.engine import accumulate_into_leaf
from ..autograd.function import _ForwardOnlyContext, wrap_outputs
from ..autograd.grad_mode import state
from ..ops.elementwise import Add
from ..tensor import Tensor
from . import aot, codegen, fusion

FUSE = True  # fuse chains of elementwise steps (fusion.py); False: every op runs as it did eagerly


def resolve(spec, env):
    """The value `spec` names at replay."""
    kind = spec[0]
    if kind == "t":
        v = env[spec[1]]
        return v if isinstance(v, Tensor) else Tensor._wrap(v)
    if kind == "a":
        v = env[spec[1]]
        return v.array if isinstance(v, Tensor) else v
    if kind == "x" or kind == "c":
        return spec[1]
    if kind == "o":
        return env[spec[1]]
    if kind == "seq":
        return spec[1](resolve(s, env) for s in spec[2])
    if kind == "g":
        return env[spec[1]]
    raise AssertionError(spec)


def _store(env, slots, out):
    """Put an op's output(s) in their slots (a single value, or a tuple matching `slots`)."""
    if len(slots) == 1 and not isinstance(out, tuple):
        env[slots[0]] = out
        return
    for s, o in zip(slots, out):
        if s is not None:
            env[s] = o


class _ReplaySaves:
    """What a replayed forward saves for its backward, kept as plain references: no SavedTensor and
    no version check (the capture ran the same steps eagerly, with the checks, and found nothing
    modified in place between an op's forward and its backward), and `_saved_self`-style names as
    plain attributes, so the backward reads them without a SavedTensor's unpacking."""

    _replay_saved = ()

    def save_for_backward(self, *tensors):
        self._replay_saved = tensors

    def save(self, /, **named):
        saved = tuple([t if t is None or isinstance(t, Tensor) else Tensor._wrap(t) for t in named.values()])
        self._replay_saved = saved
        d = self.__dict__
        for k, t in zip(named, saved):
            d["_saved_" + k] = t

    @property
    def saved_tensors(self):
        return self._replay_saved

    def _result_array(self):
        return self._saved_result.array


_replay_node_classes = {}


def replay_node_class(cls):
    """The node class a replayed forward of Function `cls` fills: cls's own node class (its name,
    its methods), with `_ReplaySaves`' light saving."""
    node_cls = _replay_node_classes.get(cls)
    if node_cls is None:
        node_cls = type(cls._backward_cls.__name__, (_ReplaySaves, cls._backward_cls), {"__module__": cls.__module__})
        _replay_node_classes[cls] = node_cls
    return node_cls


def arg_plan(specs):
    """(template, fill, live): the arguments with every constant in place, (position, slot) for each
    argument read from a slot as a Tensor, and (position, slot) for each live object; None when a
    spec needs the general `resolve`."""
    template, fill, live = [], [], []
    for i, s in enumerate(specs):
        if s is None:  # a backward's missing gradient
            template.append(None)
        elif s[0] == "t":
            template.append(None)
            fill.append((i, s[1]))
        elif s[0] == "o":
            template.append(None)
            live.append((i, s[1]))
        elif s[0] in ("x", "c"):
            template.append(s[1])
        else:
            return None
    return template, tuple(fill), tuple(live)


def resolve_args(step, env):
    plan = step.plan
    if plan is None:
        return [resolve(s, env) for s in step.specs]
    args = plan[0][:]
    for i, s in plan[1]:
        v = env[s]
        args[i] = v if type(v) is Tensor or isinstance(v, Tensor) else Tensor._wrap(v)
    for i, s in plan[2]:
        args[i] = env[s]
    return args


def array_plan(cls, args, specs):
    """(fn, positions, shapes) for a forward step whose op offers `array_forward` for these arguments:
    fn takes the arrays of the tensor arguments at `positions`; `shapes`, theirs at capture for those
    read from slots (a replay checks them: a value derived from a live object, a KV cache's keys, can
    change shape from call to call), None where not checked (`array_forward_any_shape`). None when the
    op declines or an argument comes from elsewhere (a list, a live object)."""
    positions = _tensor_positions(args, specs)
    if positions is None:
        return None
    if cls.array_forward is not None:
        fn = cls.array_forward(*args)
    else:  # an op with an array_step: its forward, without what it saves
        step = cls.array_step((False,) * len(args), *args)
        fn = None if step is None else _output_only(step[0])
    if fn is None:
        return None
    check = not cls.array_forward_any_shape
    return fn, positions, tuple(args[i].array.shape if check and specs[i][0] == "t" else None for i in positions)


def _output_only(forward):
    return lambda *arrays: forward(*arrays)[0]


def array_step_plan(cls, args, specs, needs):
    """(forward, backward, positions) for a step whose op offers `array_step` for these arguments (a
    training program's step on arrays, codegen.py), or None: `positions`, those of the tensor arguments,
    each read from a slot or from outside."""
    positions = _tensor_positions(args, specs)
    fns = None if positions is None else cls.array_step(needs, *args)
    return None if fns is None else (*fns, positions)


def _tensor_positions(args, specs):
    """The positions of the tensor arguments, or None when one is neither a slot nor from outside."""
    positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    return None if any(specs[i][0] not in ("t", "x") for i in positions) else positions


class Forward:
    """An op's forward: `cls.forward(ctx, *args)`, its arrays wrapped as Tensors.

    `needs` is the op's `needs_input_grad` at capture, or None when no backward node was made; with
    a node, its backward step reads the ctx this forward fills (saved tensors, ctx.scale, ...): a
    node of `replay_node_class(cls)`, which keeps what forward saves without SavedTensors."""

    def __init__(self, cls, specs, slots, needs=None, node_meta=None):
        self.cls, self.specs, self.slots, self.needs, self.node_meta = cls, specs, slots, needs, node_meta
        self.frees = ()
        self.keeps_ctx = False  # a backward step reads this op's ctx
        self.after_apply = ()  # (name, value) the op's caller set on its node after apply (ctx._shapes)
        self.output_meta = None  # the node's (shape, dtype, xp) per output, for materialized grads
        self.plan = arg_plan(specs)
        self.array_plan = None  # array_plan's, for a step without a backward node
        self.array_step = None  # array_step_plan's, for a step with one
        self.tuple_out = False  # the op returns a tuple (of one or more outputs)

    def prepare(self):
        """After capture: what each replay's node starts with."""
        if self.keeps_ctx:
            self.node_cls = replay_node_class(self.cls)
            self.node_attrs = dict(needs_input_grad=self.needs, next_functions=(), _tensor_positions=self.node_meta[0],
                                   _n_args=self.node_meta[1], _output_meta=self.output_meta)

    def run(self, env, ctxs, i):
        args = resolve_args(self, env)
        cls = self.cls
        if not self.keeps_ctx:
            ctx = _ForwardOnlyContext()
            ctx.needs_input_grad = (False,) * len(args)
            out = cls._forward_with_ctx(ctx, *args)
        else:
            ctx = self.node_cls()
            ctx.__dict__.update(self.node_attrs)
            out = cls._forward_with_ctx(ctx, *args)
            for k, v in self.after_apply:
                setattr(ctx, k, v)
            ctxs[i] = ctx
        if type(out) is np.ndarray and ctx._dirty is None:  # the usual: one new array
            out = Tensor._wrap(out)
            first = out
        else:
            out = wrap_outputs(out, None, args, ctx)
            first = out[0] if isinstance(out, tuple) else out
        if self.keeps_ctx and cls.saves_result:
            ctx._replay_saved = tuple(ctx._replay_saved) + (first,)
            ctx._saved_result = first
        _store(env, self.slots, out)

    def __repr__(self):
        return f"forward {self.cls.__name__} -> {self.slots}"


class Backward:
    """The backward of forward step `fwd` (its node's `apply`, as the engine called it), on grads."""

    def __init__(self, fwd, specs, slots):
        self.fwd, self.specs, self.slots = fwd, specs, slots
        self.frees = ()
        self.frees_ctx = False  # the last step to read that ctx: drop it (and what it saved) after
        self.plan = arg_plan(specs)
        # every gradient present (nothing to materialize): call the op's backward itself
        self.direct = all(sp is not None for sp in specs)
        self.pick = None  # the tensor arguments' positions, when some arguments are not tensors

    def prepare(self, forward):
        pos, n_args = forward.node_meta
        self.pick = tuple(pos) if len(pos) != n_args else None

    def run(self, env, ctxs, i):
        grads = resolve_args(self, env)
        node = ctxs[self.fwd]
        if self.direct:  # BackwardNode.apply's work, with what it checks known since the capture
            out = node._forward_cls.backward(node, *grads)
            if not isinstance(out, tuple):
                out = (out,)
            if self.pick is not None and len(out) == node._n_args:
                out = [out[j] for j in self.pick]
        else:
            out = node.apply(*grads)
        for s, o in zip(self.slots, out):
            if s is not None:
                env[s] = o
        if self.frees_ctx:
            ctxs[self.fwd] = None

    def __repr__(self):
        return f"backward of step {self.fwd} -> {self.slots}"


class Accumulate:
    """The engine's `.grad += grad` into a leaf (a parameter, or an input that requires grad)."""

    def __init__(self, variable, grad):
        self.variable, self.grad = variable, grad
        self.slot = None  # where the leaf's `.grad` is kept after it, when the call reads it (capture.py)
        self.frees = ()

    def run(self, env, ctxs, i):
        grad = self.grad
        if grad[0] == "t" and grad[1] in self.frees and env[grad[1]] is not None:
            # the slot's last reader: let go of it first, so that, as in the engine, a gradient only
            # the program held is adopted as `.grad` without a copy (`reusable` decides, as there)
            g = env[grad[1]]
            env[grad[1]] = None
            if not isinstance(g, Tensor):  # (an array step's: the Tensor then holds the array alone)
                g = Tensor._wrap(g)
            accumulate_into_leaf(resolve(self.variable, env), g)
        else:
            accumulate_into_leaf(resolve(self.variable, env), resolve(grad, env))
        if self.slot is not None:
            env[self.slot] = resolve(self.variable, env).grad

    def __repr__(self):
        return f"accumulate {self.grad} into a leaf"


class Call:
    """A library call replayed as a whole (optimizer.step, zero_grad, clip_grad_norm_, scheduler.step):
    its Python runs again, reading the live state (the step count, the lr, the gradients)."""

    def __init__(self, fn, specs, slot):
        self.fn, self.specs, self.slot = fn, specs, slot
        self.frees = ()

    def run(self, env, ctxs, i):
        out = self.fn(*[resolve(s, env) for s in self.specs])
        if self.slot is not None:
            env[self.slot] = out

    def __repr__(self):
        return f"call {getattr(self.fn, '__qualname__', self.fn)}"


_ARRAY, _REQUIRES_GRAD = operator.attrgetter("array"), operator.attrgetter("_requires_grad")
_HOOKS, _POST_HOOKS = operator.attrgetter("_hooks"), operator.attrgetter("_post_accumulate_grad_hooks")


class Program:
    """The steps of one captured call, with where its inputs go and where its outputs come from."""

    def __init__(self, steps, n_slots, input_slots, output, externals, key, value_of=None, object_slots=(),
                 autograd=None):
        self.steps, self.n_slots, self.input_slots = steps, n_slots, input_slots
        # an aot.AutogradPlan where the result requires grad: the steps from autograd.split on are its
        # backward, run when the caller's backward reaches the call's node (aot.py)
        self.autograd = autograd
        self.object_slots = frozenset(object_slots)  # the inputs that are live objects, not tensors
        self.output = output  # the returned structure, tensors as specs
        self.externals = externals  # [(tensor, shape, dtype, requires_grad, hooked)] the program reads live
        self._external_tensors = [t for t, *_ in externals]
        self._as_captured = [(shape, dtype, rg) for _, shape, dtype, rg, _ in externals]
        self._arrays = [t.array for t in self._external_tensors]  # check's fast path: the same arrays
        self._rgs = [rg for _, _, _, rg, _ in externals]
        self._accumulated_into = [t for t, *_, hooked in externals if hooked]
        self.key = key
        _plan_frees(self)
        # value_of(slot): the capture's value there; fusion asks it which backend takes a chain
        split = None if autograd is None else autograd.split
        absorbed = fusion.fuse(steps, value_of, barrier=split) if value_of is not None and FUSE else set()
        self.n_fused = sum(getattr(step, "n_ops", 0) for step in steps)
        for step in steps:
            if isinstance(step, Forward):
                step.prepare()
            elif isinstance(step, Backward):
                step.prepare(steps[step.fwd])
        # what a replay runs: (step, index, frees), written out as one function (codegen.py)
        self.runs = [(step, i, step.frees) for i, step in enumerate(steps) if i not in absorbed]
        self.code, self._run_steps, self._run_backward_steps = codegen.generate(self, self.runs, split)
        # the results the backward half does not read: let go of once the caller holds them
        later = {s for step in steps[split:] for s in _step_reads(step)} if split is not None else set()
        self.dropped_after_forward = () if split is None else tuple(
            s for s in set(_reads(output)) if s not in later and s not in input_slots)
        if autograd is not None:
            autograd.summed_only = _summed_only(self, value_of)
            autograd.reached_from = _reached_from(self)
            autograd.n_edges = 1 + len(input_slots) + len(externals) + len(autograd.repeats)
            self._backwards_without = {}  # frozenset of gradient slots the caller left out -> replay_backward
        self._lock = threading.Lock()
        self.draws_random = False  # set by the capture: the call advanced a random generator
        self.graph = None  # a cuda_graph.GraphReplay, where the program runs through one

    def backward_without(self, absent):
        """replay_backward for a call whose caller sent no gradient for the results at slots `absent`
        (each in autograd.summed_only): the sums those gradients entered are their other terms, as
        the engine, given none, would have had them (written once per such set)."""
        run = self._backwards_without.get(absent)
        if run is None:
            run = self._backwards_without[absent] = codegen.generate(self, self.runs, self.autograd.split, absent)[2]
        return run

    grad_reads = ()  # (tensor from before the call, whether the capture read its `.grad` as None) (capture.py)

    def check(self):
        """Why an outside tensor no longer matches what the capture saw (None: it matches)."""
        if self.grad_reads:
            for t, was_none in self.grad_reads:
                if (t._grad is None) != was_none:
                    return f"the .grad of a tensor the function reads was {'None' if was_none else 'a tensor'} " \
                           f"and is {'a tensor' if was_none else 'None'} now"
        ext = self._external_tensors
        if not ext:
            return None
        acc = self._accumulated_into
        hooked = acc and (any(map(_HOOKS, acc)) or any(map(_POST_HOOKS, acc)))
        # the usual answer, in C loops: each tensor still holds the array it held when last checked
        # (updated in place, as an optimizer does), with the same requires_grad
        if not hooked and all(map(operator.is_, map(_ARRAY, ext), self._arrays)) \
                and list(map(_REQUIRES_GRAD, ext)) == self._rgs:
            return None
        if not hooked and [(t.array.shape, t.array.dtype, t._requires_grad) for t in ext] == self._as_captured:
            self._arrays = [t.array for t in ext]  # (another array of the same kind: `p.data = ...`)
            return None
        for t, shape, dtype, requires_grad, hooked in self.externals:
            a = t.array
            if a.shape != shape or a.dtype != dtype or t._requires_grad != requires_grad:
                changes = [f"{what} {before} -> {now}" for what, before, now in
                           (("shape", shape, a.shape), ("dtype", dtype, a.dtype),
                            ("requires_grad", requires_grad, t._requires_grad)) if before != now]
                return f"a tensor the function reads from outside changed: {', '.join(changes)}"
            if hooked and (t._hooks or t._post_accumulate_grad_hooks):
                return "a hook was registered on a parameter the function accumulates a gradient into"
        return None

    def replay(self, inputs):
        """Run the steps on `inputs` (the call's tensors, flattened) and return the call's result."""
        # one replay at a time: an inference program's ctxs and slot Tensors (codegen.py), and a CUDA
        # graph's buffers, are the program's own from call to call; two threads must not share them
        with self._lock:
            if self.graph is not None:  # on a GPU, through a CUDA graph (cuda_graph.py)
                return self.graph.replay(inputs)
            if self.autograd is not None:  # the forward half, as one op whose backward is the rest
                return aot.replay(self, inputs, build_result)
            return build_result(self.output, self.run(inputs), made={})

    def run(self, inputs):
        """The steps on `inputs`; returns the slots (each freed after its last reader)."""
        env = [None] * self.n_slots
        for s, t in zip(self.input_slots, inputs):
            env[s] = t
        ctxs = [None] * len(self.steps)
        prev = state.grad_enabled
        state.grad_enabled = False  # no graph: the backward steps are in the program
        fp = fp_quiet()  # numpy's inf/nan warnings off once a replay, not once a step
        try:
            self._run_steps(env, ctxs)  # each slot freed after its last reader (codegen.py)
        finally:
            state.grad_enabled = prev
            fp_restore(fp)
        return env


def build_result(out, env, copy=False, made=None):
    """The call's result from its recorded structure: each tensor is a new Tensor, so a result the
    caller keeps is never the one the next call writes (each call's arrays are its own; `copy`: the
    arrays are a CUDA graph's, written again at each launch, so the result gets copies). `made`:
    slot -> the Tensor to return for it (aot.py's, with a grad_fn)."""
    kind = out[0]
    if kind == "t" or kind == "a":
        if made is not None and out[1] in made:
            return made[out[1]]
        v = env[out[1]]
        if type(v) is Tensor and v._requires_grad and v.grad_fn is None and not copy:
            return v  # a leaf the call made (`zeros(3, requires_grad=True)`): that call's own, as eager returns it
        v = v.array if isinstance(v, Tensor) else v
        t = Tensor._wrap(v.copy() if copy else v)
        if made is not None:  # (a tensor returned twice, `return y, y`, is one object, as eager's)
            made[out[1]] = t
        return t
    if kind == "input":
        return env[out[1]]
    if kind == "x" or kind == "c":
        return out[1]
    if kind == "seq":
        items = (build_result(o, env, copy, made) for o in out[2])
        return out[1](*items) if hasattr(out[1], "_fields") else out[1](items)  # (a namedtuple takes fields)
    if kind == "g":
        return env[out[1]]
    if kind == "fresh":
        return Tensor._wrap(out[1].array.copy(), requires_grad=out[1]._requires_grad)
    if kind == "dict":
        return out[2]((k, build_result(o, env, copy, made)) for k, o in out[1])
    raise AssertionError(out)


def _reads(spec):
    """The slots a spec reads."""
    kind = spec[0]
    if kind in ("t", "a", "o", "input", "g"):
        return (spec[1],)
    if kind == "seq":
        return tuple(s for sub in spec[2] for s in _reads(sub))
    if kind == "dict":
        return tuple(s for _, sub in spec[1] for s in _reads(sub))
    return ()


def _step_reads(step):
    if isinstance(step, Accumulate):
        return _reads(step.variable) + _reads(step.grad)
    return tuple(s for spec in step.specs if spec is not None for s in _reads(spec))


def _reached_from(program):
    """For each gradient the backward half returns (its slot), the incoming-gradient slots it is made
    from: where the caller sends none of those, eager's engine would deliver no gradient there (aot.py)."""
    plan = program.autograd
    made_from = {s: frozenset((s,)) for s in plan.grad_output_slots}
    for step in program.steps[plan.split:]:
        sources = frozenset().union(*(made_from.get(s, ()) for s in _step_reads(step)))
        for s in getattr(step, "slots", None) or (getattr(step, "slot", None),):
            if s is not None:
                made_from[s] = sources
    return {s: made_from.get(s, frozenset()) for _, s in plan.grads}


def _summed_only(program, value_of):
    """The backward's incoming-gradient slots that only gradient sums read (an Add the engine recorded
    where two gradients met, its other term no such slot and of the sum's dtype and shape): where the
    caller sends no gradient for that result, each sum is its other term (aot.py). A slot no step reads
    is one too."""
    split, grad_slots = program.autograd.split, set(program.autograd.grad_output_slots)
    run = {i for _, i, _ in program.runs}
    readers = {}
    for i in range(split, len(program.steps)):
        for s in _step_reads(program.steps[i]):
            readers.setdefault(s, []).append(i)

    def plain_sum(i, s):
        step = program.steps[i]
        if type(step) is not Forward or step.cls is not Add or step.needs is not None or i not in run:
            return False
        specs = step.specs
        if len(specs) == 3 and specs[2] == ("c", 1):  # (alpha 1, given)
            specs = specs[:2]
        if len(specs) != 2 or any(sp[0] != "t" for sp in specs) or [sp[1] for sp in specs].count(s) != 1:
            return False
        other = specs[0][1] if specs[1][1] == s else specs[1][1]
        a, out = value_of(other), value_of(step.slots[0])
        return other not in grad_slots and a.dtype == out.dtype and a.shape == out.shape

    return frozenset(s for s in grad_slots if all(plain_sum(i, s) for i in readers.get(s, ())))


def _plan_frees(program):
    """Liveness: each slot is dropped right after its last reader, as eager Python frees a
    temporary once nothing refers to it (outputs and inputs are kept); each ctx after its last
    backward step."""
    keep = set(_reads(program.output)) | set(program.input_slots)
    if program.autograd is not None:  # the backward's incoming gradients and the gradients it returns
        keep |= set(program.autograd.grad_output_slots) | {s for _, s in program.autograd.grads}
    last = {}
    last_ctx = {}
    for i, step in enumerate(program.steps):
        for s in _step_reads(step):
            last[s] = i
        for s in getattr(step, "slots", None) or ((step.slot,) if getattr(step, "slot", None) is not None else ()):
            if s is not None:
                last.setdefault(s, i)  # written and never read: free at once
        if isinstance(step, Backward):
            last_ctx[step.fwd] = i
            program.steps[step.fwd].keeps_ctx = True
    frees = {}
    for s, i in last.items():
        if s not in keep:
            frees.setdefault(i, []).append(s)
    for i, lst in frees.items():
        program.steps[i].frees = tuple(lst)
    for i in last_ctx.values():
        program.steps[i].frees_ctx = True
