"""A captured program as one Python function, written out as source (`program.code`).

Replaying a list of step objects costs, per step, a method call, an argument plan walked in a loop
and a store through a helper: about 2 us, as much as a small op's own arithmetic. Written out as
straight-line code, with each step's constants bound as names and each slot an index into `env`,
the same steps cost only what they run. torch.fx shows a traced graph the same way
(`GraphModule.code`); print `program.code` to read what a replay does, step by step.

The common steps (an op's forward, an op's backward with all its gradients, a library call, an
accumulation into `.grad`) become a few lines each, doing what the step's `run` in program.py does;
every other step (fused chains) is one call of its own `run`.
"""
import sys

import numpy as np

from ..autograd import grad_mode
from ..autograd.engine import _OWN, accumulate_into_leaf
from ..autograd.function import _ForwardOnlyContext, wrap_outputs
from ..tensor import Tensor


def as_tensor(v):
    """A slot's value as the Tensor an op's forward or backward expects (a slot may hold an array)."""
    return v if isinstance(v, Tensor) else Tensor._wrap(v)


class _Writer:
    def __init__(self):
        self.lines = ["def replay(env, ctxs):"]
        from .program import _store, resolve  # (program.py imports this module)

        self.names = {"Tensor": Tensor, "ndarray": np.ndarray, "ForwardOnlyContext": _ForwardOnlyContext,
                      "wrap_outputs": wrap_outputs, "as_tensor": as_tensor, "store": _store, "resolve": resolve,
                      "getrefcount": sys.getrefcount, "own_refs": 1 + _OWN, "grad_mode": grad_mode}
        self.tensor_slots = set()  # slots known to hold a Tensor (not an array) when read
        self.array_slots = set()  # slots known to hold an array (an array step's)
        self.shells = {}  # slot -> the Tensor it is stored in at each call (see `generate`)
        self.indent = "    "

    def bind(self, name, value):
        self.names[name] = value
        return name

    def line(self, text):
        self.lines.append(self.indent + text)

    def args(self, i, specs):
        """The argument list of step i: slots from env, constants by name, the rest as `resolve` reads it."""
        return ["None" if spec is None else self.value(f"c{i}_{j}", spec) for j, spec in enumerate(specs)]

    def value(self, name, spec):
        """The expression of what `spec` names at replay, as program.py's `resolve` reads it."""
        kind = spec[0]
        if kind == "t":
            return f"env[{spec[1]}]" if spec[1] in self.tensor_slots else f"as_tensor(env[{spec[1]}])"
        if kind == "o" or kind == "g":
            return f"env[{spec[1]}]"
        if kind in ("x", "c"):
            return self.bind(name, spec[1])
        if kind == "seq" and all(s[0] in ("x", "c") for s in spec[2]):  # (a list of parameters: made in one call)
            return f"{self.bind(f'seq_{name}', spec[1])}({self.bind(f'items_{name}', tuple(s[1] for s in spec[2]))})"
        return f"resolve({self.bind(f'spec_{name}', spec)}, env)"  # (a list of specs, an array)

    def array_of(self, spec_slot, name):
        """A line or two putting the array of slot `spec_slot` in local `name`."""
        if spec_slot in self.array_slots:
            self.line(f"{name} = env[{spec_slot}]")
        elif spec_slot in self.tensor_slots:
            self.line(f"{name} = env[{spec_slot}].array")
        else:
            self.line(f"{name} = env[{spec_slot}]")
            self.line(f"if isinstance({name}, Tensor): {name} = {name}.array")

    def stored_arrays(self, slots):
        for s in slots:
            if s is not None:
                self.tensor_slots.discard(s)
                self.array_slots.add(s)

    def store_forward(self, i, step, args):
        """Wrap a forward's result as the eager `apply` would and put it in its slot(s)."""
        slots = step.slots
        if len(slots) == 1 and slots[0] in self.shells:
            s = slots[0]
            self.line("if type(out) is ndarray and ctx._dirty is None:")
            self.line(f"    t = {self.bind(f'shell{s}', self.shells[s])}; t.array = out; env[{s}] = t")
            self.line("else:  # (a forward may return its one output in a tuple: store unpacks it)")
            self.line(f"    store(env, {self.bind(f'slots{i}', slots)}, wrap_outputs(out, None, ({', '.join(args)},), ctx))")
        elif len(slots) == 1:
            self.line("if type(out) is ndarray and ctx._dirty is None:")
            self.line(f"    env[{slots[0]}] = Tensor._wrap(out)")
            self.line("else:")
            self.line(f"    store(env, {self.bind(f'slots{i}', slots)}, wrap_outputs(out, None, ({', '.join(args)},), ctx))")
        else:  # several outputs: the usual, a tuple of new arrays, each wrapped as it is
            arrays = " and ".join(f"type(out[{k}]) is ndarray" for k in range(len(slots)))
            self.line(f"if type(out) is tuple and len(out) == {len(slots)} and ctx._dirty is None and {arrays}:")
            for k, s in enumerate(slots):
                if s in self.shells:
                    self.line(f"    t = {self.bind(f'shell{s}', self.shells[s])}; t.array = out[{k}]; env[{s}] = t")
                elif s is not None:
                    self.line(f"    env[{s}] = Tensor._wrap(out[{k}])")
            self.line("else:")
            self.line(f"    store(env, {self.bind(f'slots{i}', slots)}, wrap_outputs(out, None, ({', '.join(args)},), ctx))")
        self.tensor_slots.update(s for s in slots if s is not None)
        self.array_slots.difference_update(slots)


def generate(program, runs, split=None, absent=frozenset()):
    """(source, replay, replay_backward) for `runs`, the program's (step, index, frees) in order; each
    function takes (env, ctxs) and runs steps, freeing each slot after its last reader. With `split`,
    replay runs the steps before that index (a forward) and replay_backward the rest (its backward,
    run later on the same env and ctxs: aot.py); without, replay runs them all (replay_backward None).
    `absent`: slots of the backward's incoming gradients the caller did not send, each read only by
    gradient sums (program.py's `_summed_only`): each such sum is its other term, as it is."""
    from .fusion import Fused
    from .program import Accumulate, Backward, Call, Forward, _reads, _step_reads

    w = _Writer()
    w.tensor_slots.update(s for s in program.input_slots if s not in program.object_slots)
    if program.autograd is not None:  # (the engine hands a node's backward Tensors)
        w.tensor_slots.update(program.autograd.grad_output_slots)
    # with no backward in the program, no forward's ctx is read after its step: each step keeps one
    # ctx from call to call instead of making one per call. What a forward sets on it stays until the
    # next call: shapes, the backend that ran, at most an index array (pooling's argmax); what it
    # saves goes nowhere, `save` being a no-op there.
    # (nor where a forward's values wait in env for a backward run later, maybe after another call)
    w.reuse_ctx = split is None and not any(type(step) is Backward for step, _, _ in runs)
    inline = {i for step, i, _ in runs if type(step) is Forward and not (
        step.keeps_ctx and (len(step.slots) != 1 or step.cls.saves_result))}
    # a training program's steps on arrays (the op's `array_step`): a forward whose every backward step
    # is the op's own, with all its gradient given, and nothing else reads its ctx
    backwards = {}
    for step, _, _ in runs:
        if type(step) is Backward:
            backwards.setdefault(step.fwd, []).append(step)
    on_arrays = {i for step, i, _ in runs if type(step) is Forward and step.array_step is not None and step.keeps_ctx
                 and step.plan is not None and not program.object_slots
                 and all(b.direct and b.plan is not None for b in backwards.get(i, ()))}
    if w.reuse_ctx:
        # in an inference program, a slot only inline forwards read (no backward, no library call
        # keeps it) is stored in one Tensor of its own, its array replaced at each call: no Tensor
        # made per op. Not the slots returned: a shell would hold the caller's result alive until
        # the next call (eval's logits, say), where eager frees it when the caller lets go.
        readers = {}
        for step, i, _ in runs:
            for s in _step_reads(step):
                readers.setdefault(s, set()).add(i)
        keep = set(program.input_slots) | set(_reads(program.output))
        for step, i, _ in runs:
            if i in inline:
                for s in step.slots:
                    if s is not None and s not in keep and readers.get(s, set()) <= inline:
                        w.shells[s] = Tensor._wrap(np.empty(0))
    in_backward = split is None  # (no backward function to begin)
    for step, i, frees in runs:
        if not in_backward and i >= split:
            _begin_backward(w)
            in_backward = True
        w.line(f"# {i}: {step!r}")
        if absent and any(sp is not None and sp[0] == "t" and sp[1] in absent for sp in getattr(step, "specs", ())):
            _other_term(w, step, absent)
        elif i in on_arrays:
            _array_step_forward(w, i, step)
        elif type(step) is Backward and step.fwd in on_arrays:
            _array_step_backward(w, i, step, program.steps[step.fwd])
        elif i in inline and step.array_plan is not None and step.plan is not None:
            _array_forward(w, i, step)
        elif i in inline:
            _forward(w, i, step)
        elif type(step) is Backward and step.direct and step.plan is not None:
            _backward(w, i, step, program.steps[step.fwd].cls)
        elif type(step) is Call:
            _call(w, i, step)
        elif type(step) is Accumulate:
            _accumulate(w, i, step)
        else:  # the step's own replay
            w.line(f"{w.bind(f'step{i}', step.run)}(env, ctxs, {i})")
            written = getattr(step, "slots", None) or (getattr(step, "slot", None),)
            w.array_slots.difference_update(written)
            if type(step) is Fused:
                w.tensor_slots.add(step.slot)
        for s in frees:  # (a shell lets go of its array too: memory as eager frees it)
            w.line(f"env[{s}] = {w.bind(f'shell{s}', w.shells[s])}.array = None" if s in w.shells else f"env[{s}] = None")
    if not in_backward:
        _begin_backward(w)
    if w.lines[-1].startswith("def "):
        w.line("pass")
    source = "\n".join(w.lines) + "\n"
    namespace = dict(w.names)
    exec(compile(source, "<minigrad.compile replay>", "exec"), namespace)
    return source, namespace["replay"], namespace.get("replay_backward")


def _begin_backward(w):
    """End the forward's function and start the backward's (the slots' kinds carry over: same env)."""
    if w.lines[-1].startswith("def "):
        w.line("pass")
    w.lines.append("")
    w.lines.append("def replay_backward(env, ctxs):")


def _other_term(w, step, absent):
    """A gradient sum one of whose terms the caller did not send: the other term, as it is."""
    (other,) = [sp[1] for sp in step.specs[:2] if sp[1] not in absent]
    (s,) = step.slots
    w.line(f"env[{s}] = env[{other}]  # (the sum's other term: the caller sent no gradient for the one)")
    for kinds in (w.tensor_slots, w.array_slots):
        if other in kinds:
            kinds.add(s)
        else:
            kinds.discard(s)


def _call(w, i, step):
    """A library call (program.py's `Call`: optimizer.step, an in-place update, `p.grad = None`) as one
    line."""
    call = f"{w.bind(f'call{i}', step.fn)}({', '.join(w.args(i, step.specs))})"
    if step.slot is None:
        w.line(call)
    else:
        w.line(f"env[{step.slot}] = {call}")
        w.array_slots.discard(step.slot)
        w.tensor_slots.discard(step.slot)


def _accumulate(w, i, step):
    """The engine's `.grad += grad` (program.py's `Accumulate`): a gradient the program held only until
    here is let go of first, so that the leaf may adopt it without a copy, as in the engine."""
    leaf = w.value(f"c{i}_leaf", step.variable)
    accumulate = w.bind("accumulate_into_leaf", accumulate_into_leaf)
    grad = step.grad
    if grad[0] == "t" and grad[1] in step.frees and grad[1] in w.array_slots and step.variable[0] == "x":
        # an array step's gradient into a `.grad` that is None (the usual step after zero_grad(set_to_none)):
        # adopted as accumulate_into_leaf would adopt it, when only this line holds the array (the
        # engine's `reusable` test, with one holder), without its checks of a general gradient (`flags.carray`:
        # C order, writeable and aligned, the flags read once; an unaligned one takes the general path)
        s, a, like = grad[1], leaf, step.variable[1].array  # (its shape and dtype: the program's guard checks them)
        w.line(f"g = env[{s}]; env[{s}] = None")
        # A view is adopted too when it is the whole of an array that nothing else holds (a bias's
        # gradient reduced into a row and reshaped): that memory is as private as an array's own, where
        # the engine, which cannot tell, copies it (the same values either way).
        w.line(f"if g is not None and {a}._grad is None and g.shape == {w.bind(f'shape{i}', like.shape)} "
               f"and g.dtype == {w.bind(f'dtype{i}', like.dtype)} and g.flags.carray "
               f"and getrefcount(g) <= own_refs and not grad_mode.inference_tensors_made and ("
               f"(b := g.base) is None or type(b) is ndarray and b.base is None and b.nbytes == g.nbytes "
               f"and b.flags.writeable and getrefcount(b) <= own_refs + 1):")
        w.line(f"    {a}._grad = Tensor._wrap(g)")
        w.line("elif g is not None:")
        w.line(f"    g = Tensor._wrap(g); {accumulate}({leaf}, g)")
        w.line(f"else: {w.bind(f'step{i}', step.run)}(env, ctxs, {i})")
        w.line("g = b = None")
    elif grad[0] == "t" and grad[1] in step.frees:
        s = grad[1]
        w.line(f"g = env[{s}]")
        w.line(f"if g is None: {w.bind(f'step{i}', step.run)}(env, ctxs, {i})")
        w.line("else:")
        w.line(f"    env[{s}] = None")
        w.line("    if not isinstance(g, Tensor): g = Tensor._wrap(g)  # (then only the Tensor holds the array)")
        w.line(f"    {accumulate}({leaf}, g)")
        w.line("    g = None")
    else:
        w.line(f"{accumulate}({leaf}, {w.value(f'c{i}_grad', grad)})")
    if step.slot is not None:  # the call reads `.grad` after this: what it is now
        w.line(f"env[{step.slot}] = {leaf}.grad")
        w.tensor_slots.add(step.slot)
        w.array_slots.discard(step.slot)


def _forward(w, i, step):
    args = w.args(i, step.specs)
    fwd = w.bind(f"{step.cls.__name__}_forward{i}", step.cls._forward_with_ctx)  # (setup_context style too)
    if step.keeps_ctx:  # a backward step reads this ctx: a light node (program.py's replay_node_class)
        w.line(f"ctx = {w.bind(f'node{i}', step.node_cls)}(); ctx.__dict__.update({w.bind(f'node_attrs{i}', step.node_attrs)})")
        w.line(f"out = {fwd}(ctx, {', '.join(args)})")
        if step.after_apply:
            w.line(f"ctx.__dict__.update({w.bind(f'after_apply{i}', dict(step.after_apply))})")
        w.line(f"ctxs[{i}] = ctx")
    elif w.reuse_ctx:
        ctx = _ForwardOnlyContext()
        ctx.needs_input_grad = (False,) * len(args)
        w.line(f"ctx = {w.bind(f'ctx{i}', ctx)}")
        w.line(f"out = {fwd}(ctx, {', '.join(args)})")
    else:
        w.line(f"ctx = ForwardOnlyContext(); ctx.needs_input_grad = {(False,) * len(args)!r}")
        w.line(f"out = {fwd}(ctx, {', '.join(args)})")
    w.store_forward(i, step, args)


def _arrays_in(w, i, step, positions):
    """The argument list of an array function: each tensor argument's array (a slot's, or an outside
    tensor's own at this call)."""
    template, fill, _ = step.plan
    from_slot = dict(fill)
    arrays = []
    for k, j in enumerate(positions):
        if j in from_slot:
            w.array_of(from_slot[j], f"a{k}")
            arrays.append(f"a{k}")
        else:
            arrays.append(f"{w.bind(f'c{i}_{j}', template[j])}.array")
    return arrays


def _array_step_forward(w, i, step):
    """A training program's forward on arrays: the output, and what its backward reads in ctxs[i]."""
    fwd, _, positions = step.array_step
    arrays = _arrays_in(w, i, step, positions)
    w.line(f"out, ctxs[{i}] = {w.bind(f'{step.cls.__name__}_array_step{i}', fwd)}({', '.join(arrays)})")
    if not step.tuple_out:
        w.line(f"env[{step.slots[0]}] = out")
    else:  # an op that returns a tuple (split, unbind), of one output or more
        w.line(f"{', '.join(f'env[{s}]' for s in step.slots)}, = out")
    w.stored_arrays(step.slots)


def _array_step_backward(w, i, step, forward):
    """Its backward on arrays: the gradients of the node's inputs, into their slots."""
    bwd = forward.array_step[1]
    template, fill, _ = step.plan
    from_slot = dict(fill)
    grads = []
    for k in range(len(template)):  # one gradient per output
        if k in from_slot:
            w.array_of(from_slot[k], f"g{k}")
            grads.append(f"g{k}")
        else:  # a gradient from outside (the ones backward() starts from, made before the call)
            grads.append(f"{w.bind(f'g{i}_{k}', template[k])}.array")
    w.line(f"out = {w.bind(f'{forward.cls.__name__}_array_backward{i}', bwd)}(ctxs[{step.fwd}], {', '.join(grads)})")
    positions = forward.array_step[2]  # out: one gradient per tensor argument; the slots: one per edge
    for s, arg in zip(step.slots, forward.node_meta[0]):
        if s is not None:
            w.line(f"env[{s}] = out[{positions.index(arg)}]")
    w.line("out = None  # (a leaf adopts a gradient without a copy only where nothing else holds it, as in the engine)")
    w.stored_arrays(step.slots)
    if step.frees_ctx:
        w.line(f"ctxs[{step.fwd}] = None")


def _array_forward(w, i, step):
    """An inference program's step through the op's `array_forward`: the arrays in, the array out, no
    ctx and no backend lookup. Its inputs' shapes are checked first: a shape other than the capture's
    (a value derived from a growing KV cache) runs the op's forward as usual."""
    fn, positions, shapes = step.array_plan
    template, fill, _ = step.plan
    from_slot = dict(fill)
    arrays, checks = [], []
    for k, j in enumerate(positions):
        if j in from_slot:
            w.array_of(from_slot[j], f"a{k}")
            # an array step's value has the capture's shape at every call (in a program with no live
            # object, the guards fix every shape those steps see, as they assume): nothing to check
            if shapes[k] is not None and from_slot[j] not in w.array_slots:
                checks.append(f"a{k}.shape == {w.bind(f'shape{i}_{k}', shapes[k])}")
            arrays.append(f"a{k}")
        else:  # a tensor from outside (a parameter): its array now
            arrays.append(f"{w.bind(f'c{i}_{j}', template[j])}.array")
    expression = getattr(fn, "expression", None)  # (a function that is one expression, `x + y`: written out)
    call = (f"out = {expression.format(*arrays)}" if expression is not None
            else f"out = {w.bind(f'{step.cls.__name__}_array{i}', fn)}({', '.join(arrays)})")
    (s,) = step.slots
    store = (f"t = {w.bind(f'shell{s}', w.shells[s])}; t.array = out; env[{s}] = t" if s in w.shells
             else f"env[{s}] = out")
    # array steps' values in, unchecked: an array of a fixed shape out, as an array step's
    read = [from_slot[j] for j in positions if j in from_slot]
    fixed = not checks and s not in w.shells and read and all(r in w.array_slots for r in read)
    if fixed:  # (straight into its slot: no local left holding a gradient a leaf may adopt)
        w.line(f"env[{s}] = {call[len('out = '):]}")
    elif not checks:
        w.line(call)
        w.line(store)
    else:
        w.line(f"if {' and '.join(checks)}:")
        w.line("    " + call)
        w.line("    " + store)
        w.line("else:")
        w.indent += "    "
        _forward(w, i, step)
        w.indent = w.indent[:-4]
    if s not in w.shells:  # an array there, or a Tensor: readers wrap it
        w.tensor_slots.discard(s)
        w.array_slots.discard(s)
        if fixed:
            w.array_slots.add(s)


def _backward(w, i, step, forward_cls):
    grads = w.args(i, step.specs)
    node = f"ctxs[{step.fwd}]"
    w.line(f"out = {w.bind(f'{forward_cls.__name__}_backward{i}', forward_cls.backward)}({node}, {', '.join(grads)})")
    w.line("if not isinstance(out, tuple): out = (out,)")
    if step.pick is not None:
        w.line(f"if len(out) == {node}._n_args: out = [out[j] for j in {step.pick!r}]")
    for k, s in enumerate(step.slots):
        if s is not None:
            w.line(f"env[{s}] = out[{k}] if len(out) > {k} else None")
            w.tensor_slots.discard(s)
            w.array_slots.discard(s)
    w.line("out = None  # (as in _array_step_backward: no second holder of the gradients)")
    if step.frees_ctx:
        w.line(f"{node} = None")
