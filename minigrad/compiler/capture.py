"""Capture: run a call eagerly while writing down, step by step, the array work it did.

The recorder is installed as `minigrad.autograd.recording.hook.recorder` for the length of one call.
Each hook (`on_apply`, `on_backward`, ...) runs the real eager code with the recorder switched
off (so an op's inner ops are not recorded twice), then writes one step of the program: which
Function ran, where its arguments came from, which slots its results went to.

Every tensor the call touches is classified once:
  - an input of the call, or a value a recorded step made: a slot, re-made at each replay;
  - a tensor from outside (a parameter, a buffer, a constant made inside the call from Python
    values): read live at replay, its shape and dtype guarded.
A tensor that is neither, yet shares memory with a slot (made from `.array` behind minigrad's
back), would be a frozen copy of traced data: the capture stops there, and so does any value that
leaves the trace as a Python value (`item()`, `float()`, `bool()`, `print`): see `on_escape`.
"""
import itertools
import weakref
from collections import OrderedDict

from ..autograd import recording
from ..autograd.engine import run_backward
from ..autograd.function import AccumulateGrad, BackwardNode, SavedTensor
from ..autograd.grad_mode import state
from ..device import array_module
from ..tensor import Tensor
from .aot import AutogradPlan
from .guards import flatten
from .program import Accumulate, Backward, Call, Forward, Program, array_plan, array_step_plan


class GraphBreak(Exception):
    """A capture cannot continue: the reason is one line, for the user."""


class Recorder:
    def __init__(self, name, fullgraph=False, known=frozenset()):
        recording.recorders_made = True  # (from now on the eager path reads the hook: see recording.py)
        self.name, self.fullgraph = name, fullgraph
        self.steps = []
        self.n_slots = 0
        self.slot_of = {}  # id(Tensor or array) -> slot
        # slot_of holds ids, not objects: a value the call drops is freed as in eager mode (the capture's
        # peak memory is eager's), and its weak reference's callback forgets its id before any new
        # object can be given the same one
        self.refs = []  # the weak references behind slot_of
        self.values = []  # slot -> weak reference to the object first stored there
        self.meta = []  # slot -> (array module, dtype, shape) of its array, for fusion
        self.alive = []  # backward nodes, kept: node_step holds their ids
        self.node_step = {}  # id(backward node) -> index of the forward step that made it
        self.ran_backward = set()  # ids of nodes whose backward ran inside the call
        self.accumulated = set()  # ids of leaves a gradient was accumulated into
        self.externals = {}  # id -> (tensor, shape, dtype, requires_grad)
        self.broken = None  # the reason the capture stopped, once it has
        self.input_slots = []
        self.object_slots = set()  # slots of live argument objects
        self.grad_of = {}  # id(a leaf's .grad after an accumulation) -> that Accumulate step (weakly, as slot_of)
        self.every_call = False  # the capture stopped at what every call of the function does (escape's)
        self.known = known  # ids of the tensors from before the call (compile's guard names them; finish's again)
        self.written = []  # weak references to the memory in-place ops wrote (each array's base)
        self.aliases = []  # weak references to the detach()es taken in the call (on_alias)
        self.grad_reads = []  # (tensor from before the call, whether its `.grad` was None) for each such read
        self.autograd = None  # an aot.AutogradPlan once record_backward has written the result's backward

    # ---- slots ----------------------------------------------------------------------------
    def _track(self, obj, s):
        key = id(obj)
        self.slot_of[key] = s
        try:
            self.refs.append(weakref.ref(obj, lambda _, key=key, slot_of=self.slot_of: slot_of.pop(key, None)))
        except TypeError:  # a numpy scalar (an op's 0-d result): tiny, kept
            self.alive.append(obj)

    def _new_slot(self, value):
        s = self.n_slots
        self.n_slots += 1
        self._track(value, s)
        self.values.append(_ref(value))
        arr = value.array if isinstance(value, Tensor) else value
        self.meta.append((array_module(arr), arr.dtype, arr.shape))
        if isinstance(value, Tensor):
            if id(value.array) not in self.slot_of:
                self._track(value.array, s)
        return s

    def value_like(self, s):
        """An array standing for slot s's value at capture (its type, dtype and shape; no data)."""
        xp, dtype, shape = self.meta[s]
        return xp.broadcast_to(xp.empty((), dtype=dtype), shape)

    def add_input(self, t):
        """Input tensor `t` of the call: its slot (the same one for a tensor passed twice)."""
        s = self.slot_of.get(id(t))
        if s is None:
            s = self._new_slot(t)
        self.input_slots.append(s)
        return s

    def add_live_object(self, obj):
        """A live argument of the call (guards.is_live): a slot the replay fills with each call's object."""
        s = self.slot_of.get(id(obj))
        if s is None:
            s = self.n_slots
            self.n_slots += 1
            self.slot_of[id(obj)] = s
            self.alive.append(obj)
            self.values.append(_ref(obj))
            self.meta.append(None)
        self.input_slots.append(s)
        self.object_slots.add(s)
        return s

    def _outputs(self, out):
        """Slots for the values an op returned (reusing the slot of a value already known)."""
        outs = out if isinstance(out, tuple) else (out,)
        slots = []
        for o in outs:
            if o is None or not (isinstance(o, Tensor) or _is_array(o)):
                slots.append(None)
                continue
            s = self.slot_of.get(id(o))
            slots.append(s if s is not None and self.values[s]() is o else self._new_slot(o))
        return tuple(slots)

    def spec(self, a):
        """Where argument `a` comes from, for the replay (see program.py's spec kinds)."""
        if isinstance(a, Tensor):
            acc = self.grad_of.get(id(a))
            if acc is not None:  # `p.grad` read after the backward: at replay, the leaf's `.grad` as the
                # accumulation left it (a new one each step that sets grads to None), kept in a slot, so
                # that a later `zero_grad()` or `p.grad = ...` does not change what was read
                if acc.slot is None:
                    acc.slot = self._new_slot(a)
                return ("g", acc.slot)
            s = self.slot_of.get(id(a))
            if s is None and id(a) not in self.externals:  # (a parameter given a slot's array by `p.data = v`
                # stays the parameter)
                s = self.slot_of.get(id(a.array))  # a detach() or .data of a traced tensor: same memory
            if s is not None:
                return ("t", s)
            self._check_not_derived(a.array, "a tensor")
            if id(a) not in self.externals:
                self.externals[id(a)] = (a, a.array.shape, a.array.dtype, a.requires_grad)
            return ("x", a)
        if _is_array(a):
            s = self.slot_of.get(id(a))
            if s is not None:
                return ("a", s)
            self._check_not_derived(a, "an array")
            return ("c", a)
        s = self.slot_of.get(id(a))
        if s is not None and s in self.object_slots:
            return ("o", s)
        if isinstance(a, (list, tuple)) and any(isinstance(x, (Tensor, list, tuple)) or _is_array(x)
                                                for x in a):
            # (of the argument's own type: indexing's TwoStep, a tuple, is told from a plain index by it)
            kind = type(a)._make if hasattr(type(a), "_make") else type(a)
            return ("seq", kind, [self.spec(x) for x in a])
        return ("c", a)

    def _check_not_derived(self, arr, what):
        """A value sharing memory with a slot, though no recorded step made it, is data frozen at capture."""
        base = getattr(arr, "base", None)
        while base is not None:
            if id(base) in self.slot_of:
                raise GraphBreak(f"{what} made from a traced tensor's array outside minigrad's ops (a view or "
                                 "numpy result of `.array`) would be frozen in the replay")
            base = getattr(base, "base", None)

    # ---- the hooks (called from minigrad's code while this recorder is installed) --------------
    def _run(self, fn, *args):
        """Run eager code with recording off, so the ops it calls inside are not recorded again."""
        recording.hook.recorder = None
        try:
            return fn(*args)
        finally:
            recording.hook.recorder = self if self.broken is None else None

    def _guarded(self, record):
        """Write a step; a GraphBreak stops the capture (the call itself goes on, eagerly)."""
        try:
            record()
        except GraphBreak as e:
            self.stop(str(e))

    def on_apply(self, cls, args):
        out = self._run(cls.apply, *args)
        self._guarded(lambda: self._record_apply(cls, args, out))
        return out

    def _record_apply(self, cls, args, out):
        specs = [self.spec(a) for a in args]
        node = _node_of(cls, out)
        slots = self._outputs(out)
        if node is None:
            step = Forward(cls, specs, slots)
            if (cls.array_forward is not None or cls.array_step is not None) and not isinstance(out, tuple):
                step.array_plan = self._run(array_plan, cls, args, specs)
            self.steps.append(step)
            return
        self.node_step[id(node)] = len(self.steps)
        self.alive.append(node)
        step = Forward(cls, specs, slots, node.needs_input_grad, (node._tensor_positions, node._n_args))
        if cls.array_step is not None and None not in slots:
            step.array_step = self._run(array_step_plan, cls, args, specs, node.needs_input_grad)
            step.tuple_out = isinstance(out, tuple)  # (split's and unbind's, even of one piece)
        step.node, step.forward_keys = node, set(node.__dict__)  # to find what callers add after apply
        self.steps.append(step)

    def on_backward(self, node, grads):
        out = self._run(node.apply, *grads)
        self._guarded(lambda: self._record_backward(node, grads, out))
        return out

    def _record_backward(self, node, grads, out):
        if state.grad_enabled:
            raise GraphBreak("backward with create_graph=True (a graph of the backward) is not captured")
        if node._pre_hooks or node._post_hooks:
            raise GraphBreak("a hook on a tensor or node in the backward (register_hook, retain_grad) runs Python "
                             "the replay would skip")
        fwd = self.node_step.get(id(node))
        if fwd is None:
            raise GraphBreak(f"backward through {node.name()}, a node made outside the compiled function")
        self.ran_backward.add(id(node))
        specs = [None if g is None else self.spec(g) for g in grads]
        self.steps.append(Backward(fwd, specs, self._outputs(tuple(out))))

    def on_accumulate(self, variable, grad):
        from ..autograd.engine import accumulate_into_leaf

        out = self._run(accumulate_into_leaf, variable, grad)
        self._guarded(lambda: self._record_accumulate(variable, grad))
        return out

    def _record_accumulate(self, variable, grad):
        if variable._hooks or variable._post_accumulate_grad_hooks:
            raise GraphBreak("a hook on a leaf's gradient (register_hook, register_post_accumulate_grad_hook) runs "
                             "Python the replay would skip")
        self.accumulated.add(id(variable))
        step = Accumulate(self.spec(variable), self.spec(grad))
        self.steps.append(step)
        g = variable._grad
        if g is not None:
            key = id(g)
            self.grad_of[key] = step
            self.refs.append(weakref.ref(g, lambda _, key=key, grad_of=self.grad_of: grad_of.pop(key, None)))

    def on_call(self, fn, *args):
        if any(callable(a) for a in args):
            self.stop(f"{_qualname(fn)} with a closure (Python the replay cannot re-run)")
            return fn(*args)
        try:  # where the arguments come from before the call changes them (`t.data = v` takes v's array)
            specs = [self.spec(a) for a in args]
        except GraphBreak as e:
            specs = e
        out = self._run(fn, *args)

        def record():
            if isinstance(specs, GraphBreak):
                raise specs
            if out is not None and not isinstance(out, Tensor):
                raise GraphBreak(f"{_qualname(fn)} returned a Python value, which the replay would freeze")
            self.steps.append(Call(fn, specs, None if out is None else self._new_slot(out)))

        self._guarded(record)
        return out

    def on_inplace(self, method, target, args, kwargs, out_of_place=None):
        """An in-place op (`add_`, `t[i] = v`, `fill_`, ...) on tensors no gradient is recorded through:
        replayed as a call of the same method on that call's tensors (a parameter's or `.grad`'s live
        one). Where it records a gradient (an in-place op in the autograd graph), `out_of_place(source)`
        (the op's out-of-place form) is recorded in its place (`on_inplace_in_graph`); without one, or on
        a view, the capture stops."""
        if state.grad_enabled and any(isinstance(a, Tensor) and a.requires_grad for a in (target, *args, *kwargs.values())):
            if out_of_place is not None and target._base is None:
                from ..ops.inplace import write_result

                return self.on_inplace_in_graph(target, None, lambda source, _: out_of_place(source), write_result)
            self.on_escape("an in-place tensor op (add_, t[i] = v, ...) on a tensor in the autograd graph")
            return method(target, *args, **kwargs)  # (the capture has stopped: eagerly, as usual)
        try:  # where the arguments come from, before the op changes them
            specs = [self.spec(target), self.spec(tuple(args)), self.spec(tuple(kwargs.items()))]
        except GraphBreak as e:
            specs = e
        out = self._run(lambda: method(target, *args, **kwargs))

        def record():
            if isinstance(specs, GraphBreak):
                raise specs
            self.steps.append(Call(_InPlace(method), specs, None))  # (no slot: the result is the target itself)
            self.written.append(_ref(_root(target.array)))

        self._guarded(record)
        return out

    def on_inplace_in_graph(self, target, other, record, write):
        """An in-place op recording a gradient: `target += other` (or -=: a running loss, `loss += criterion(out,
        y)`), or an in-place form of an op (`relu_` on a Linear's output: ReLU(inplace=True)). The out-of-place
        op, `record(source, other)`, is the step, and target stands for its result from here on; `write(target,
        out)` does eager's in-place part (the values into target's memory, the node its history). The op reads
        target as it was: a value the call computed (its slot), or, for a tensor made in the call from Python
        values (`loss = torch.tensor([0.])`), a copy of its values now, the constant each replay starts from
        (the tensor itself ends up holding the result)."""
        if target.requires_grad and target.grad_fn is None:  # (eager's error, before anything is written)
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        source, slot = target, self.slot_of.get(id(target))
        if slot is None and id(target) in self.known or slot in self.input_slots:
            stop = ("an in-place op recording a gradient into a tensor from before the call (an argument, a "
                    "parameter, a buffer)", "a replay would not write it")
        elif slot is not None and self._aliased(target):
            stop = ("an in-place op on a tensor a view (or `.data`) was taken of",
                    "a replay would leave the view's values as they were before the op")
        else:
            stop = None
        if stop is not None:
            self.on_escape(*stop)
            return write(target, self._run(record, target, other))
        if slot is None:
            if id(target) in self.externals:  # read before this write: finish refuses a written constant
                self.written.append(_ref(_root(target.array)))
            source = Tensor._wrap(target.array.copy())
        out = record(source, other)  # (through on_apply: the step, its result in a new slot)
        if self.broken is None and out.array.dtype != target.array.dtype:
            self.on_escape("an in-place op whose result is of a wider dtype than the tensor it writes (`h += x` of "
                           "a float64 x into float32 h)", "a replay would carry the wider dtype on")
        s = None if self.broken is not None else self.slot_of.get(id(out))
        write(target, out)
        if s is not None:  # target is the sum's value from here on, its array too (a detach() of it reads it)
            self._track(target, s)
            self._track(target.array, s)
            self.values[s] = _ref(target)
        return target

    def _aliased(self, target):
        """Whether another value of the call shares target's memory (a view of it, its `.data`, a detach())."""
        root = _root(target.array)
        for ref in itertools.chain(self.values, self.aliases):
            v = ref()
            if isinstance(v, Tensor) and v is not target and _root(v.array) is root:
                return True
        return False

    def on_grad_read(self, leaf, grad):
        """`leaf.grad` read in the call: one an accumulation of the call made is its slot (`spec`); one from
        before the call (a backward outside it) is read at each replay as it is then (zero_grad may have
        put a new one there since the capture), and each replay first checks that it is None, or not, as
        at capture (a Python branch may have read which)."""
        if id(grad) in self.grad_of or id(grad) in self.slot_of:
            return grad
        if id(leaf) not in self.slot_of:
            self.grad_reads.append((leaf, grad is None))
        if grad is None:
            return None
        from ..tensor import _grad_of

        return self.on_call(_grad_of, leaf)

    def on_requires_grad(self, t, flag):
        """`t.requires_grad_()` in the call: on a value the call made (`x.detach().clone().requires_grad_()`),
        a step setting it at each replay on that call's value; on a tensor from before the call, done now
        (the guards see an outside tensor's requires_grad)."""
        from ..tensor import _set_requires_grad

        s = self.slot_of.get(id(t))
        if s is None and id(t) not in self.externals:  # (a detach() of a value of the call: its memory's slot)
            s = self.slot_of.get(id(t.array))
        if s is not None and s not in self.input_slots:
            return self.on_call(_set_requires_grad, t, flag)
        return self._run(_set_requires_grad, t, flag)

    def _live_values(self):
        for ref in self.values:
            v = ref()
            if isinstance(v, Tensor):
                yield v

    def on_alias(self, t):
        """`t` (a `detach()` of a value of the call) shares that value's memory: an in-place op in the graph on
        the value is then not recorded (`_aliased`)."""
        self.aliases.append(weakref.ref(t))

    def rebind(self, target, out):
        """`target` stands for `out`'s slot from here on (an in-place view op, `t.unsqueeze_(0)`: the view
        op is the step); the capture stops where it cannot (target is from before the call: a replay would
        not change the caller's tensor)."""
        s, slot = self.slot_of.get(id(out)), self.slot_of.get(id(target))
        if s is None or slot is None or slot in self.input_slots:
            self.on_escape("an in-place view op (unsqueeze_, t_, ...) on a tensor from before the call",
                           "a replay would not change that tensor's shape")
            return
        self._track(target, s)
        self.values[s] = _ref(target)

    def on_escape(self, what, why=None, every_call=False):
        """A value leaves the trace for Python (`item()`, `print`, a draw outside an op), or Python does
        what a replay would not redo (`why` says so; `every_call`: recording.escape's)."""
        self.every_call = self.every_call or every_call
        msg = f"{what} inside the compiled function: " + (why or "a replay would freeze the value it gives now; "
                                                           "return the tensor and use it outside the compiled function")
        if self.fullgraph:
            self.stop(msg)
            raise RuntimeError(f"minigrad.compile(fullgraph=True): {self.name}: {msg}")
        self.stop(msg)

    def stop(self, reason):
        """Stop capturing; the call goes on eagerly, and its key will run eagerly from now on."""
        if self.broken is None:
            self.broken = reason
        recording.hook.recorder = None

    # ---- a result that requires grad (aot.py) ---------------------------------------------------
    def record_backward(self, result):
        """Where the call returns tensors that require grad and ran no backward itself (a module's
        forward in grad mode), run their backward now, recording it: from the results, with stand-in
        gradients, to each tensor the call read that requires grad, capturing what reaches each (as
        autograd.grad does; no `.grad` is written and the call's own graph is kept for its caller)."""
        if self.broken is not None or self.ran_backward or self.accumulated or not state.grad_enabled:
            return
        outs, seen = [], set()
        for t in flatten(result, []):
            if isinstance(t, Tensor) and id(t) not in seen and t.grad_fn is not None and id(t.grad_fn) in self.node_step:
                seen.add(id(t))
                outs.append(t)
        if not outs:
            return
        output_slots = [self.slot_of.get(id(t)) for t in outs]
        for t, s in zip(outs, output_slots):
            base = t._base
            base_slot = None if base is None else self.slot_of.get(id(base))
            if s is None or self.values[s]() is not t or base is not None and (
                    base_slot is None or base_slot in self.input_slots or id(base) in seen):
                raise GraphBreak("the result that requires grad is a view of an input, a parameter or another "
                                 "result (its backward would have to follow the view's writes)")
        nodes = [n for n in self.alive if isinstance(n, BackwardNode)]
        if any(n._pre_hooks or n._post_hooks for n in nodes):
            raise GraphBreak("a hook on a tensor or node in the backward (register_hook, retain_grad) runs Python "
                             "the replay would skip")
        if any(getattr(n._forward_cls, "backward_runs_user_code", False) for n in nodes):
            raise GraphBreak("a module's backward hook (register_full_backward_hook) is in the result's graph: the "
                             "capture's own backward would run it on stand-in gradients")
        # the tensors a replay's node has edges to: the call's inputs, then the outside tensors it reads
        args = [self.values[s]() if s not in self.object_slots else None for s in self.input_slots]
        args += [t for t, *_ in self.externals.values()]
        targets, target_ids = [], set()
        for pos, t in enumerate(args):
            if isinstance(t, Tensor) and t.requires_grad and id(t) not in target_ids:  # (a tensor passed twice:
                target_ids.add(id(t))  # its gradient goes by its first edge, as eager's one use)
                targets.append((pos, t))
        inputs = set(self.input_slots)
        if any(t.requires_grad and t.grad_fn is None and self.slot_of.get(id(t), -1) not in inputs | {-1}
               for t in self._live_values()):
            raise GraphBreak("a tensor made in the call that requires grad (a leaf of its own) is in the graph of a "
                             "result that requires grad: a replay could not hand the caller's backward to it")
        edges = [t._edge() for _, t in targets]
        grads = []
        for t in outs:
            g = Tensor._wrap(array_module(t.array).ones_like(t.array))
            self._new_slot(g)
            grads.append(g)
        split = len(self.steps)
        # the hooks on the targets run at the caller's backward, on its gradients: not here
        muted = [(n, n._pre_hooks) for n, _ in edges if n is not None and n._pre_hooks]
        muted_leaves = [(t, t._hooks) for (_, t), (n, _) in zip(targets, edges) if type(n) is AccumulateGrad and t._hooks]
        for n, _ in muted:
            n._pre_hooks = None
        for t, _ in muted_leaves:
            t._hooks = None
        recording.hook.recorder = self
        try:
            captured = run_backward(outs, grads, retain_graph=True, create_graph=False, capture=set(edges),
                                    accumulate=False, stop_at_capture=True)
        finally:
            recording.hook.recorder = None
            for n, hooks in muted:
                n._pre_hooks = hooks
            for t, hooks in muted_leaves:
                t._hooks = hooks
        if self.broken is not None:
            raise GraphBreak(self.broken)
        # each part of a gradient by an edge of its own (a tensor the call reads twice: two), so that the
        # caller's engine sums them with the gradients from its other calls in eager's order
        grad_slots, repeats = [], []
        for (pos, t), e in zip(targets, edges):
            for k, g in enumerate(captured.get(e, ())):  # (not reached: no gradient, as eager's)
                s = self.slot_of.get(id(g))
                if s is None or self.values[s]() is not g:
                    raise GraphBreak(f"the gradient of a {tuple(t.shape)} tensor came from outside the recorded "
                                     "backward")
                if k:
                    repeats.append(pos)
                grad_slots.append((pos if k == 0 else len(args) + len(repeats) - 1, s))
        saved = {id(st.counter) for n in nodes for st in (n._saved or ()) if st is not None and st.counter is not None}
        saved_args = tuple(pos for pos, t in enumerate(args) if isinstance(t, Tensor) and id(t._version_counter) in saved)
        saved_outputs = tuple(k for k, t in enumerate(outs) if id(t._version_counter) in saved)
        self.autograd = AutogradPlan(split, output_slots, [self.slot_of[id(g)] for g in grads], tuple(grad_slots),
                                     saved_args, saved_outputs, tuple(repeats))

    # ---- the result -------------------------------------------------------------------------
    def finish(self, result, key, known=frozenset()):
        """The Program of the call that returned `result`; GraphBreak if it cannot be replayed. `known`:
        the ids of the tensors from before the call (parameters, buffers, the globals it names)."""
        if self.broken is not None:
            raise GraphBreak(self.broken)
        self.known = known
        self._check_written()
        output = self._output_spec(result)
        for step in self.steps:
            if isinstance(step, Forward) and step.needs is not None:
                step.after_apply = _set_after_apply(step.node, step.forward_keys)
                step.output_meta = step.node._output_meta
                del step.node, step.forward_keys
        externals = [(t, shape, dtype, rg, id(t) in self.accumulated)
                     for t, shape, dtype, rg in self.externals.values()]
        program = Program(self.steps, self.n_slots, self.input_slots, output, externals, key,
                          value_of=self.value_like, object_slots=self.object_slots, autograd=self.autograd)
        program.grad_reads = self.grad_reads
        return program

    def _check_written(self):
        """An in-place op into a tensor the call made from Python values (`v = zeros(n); v[i] += 1`)
        would, at replay, write into that same tensor, a constant of the program, call after call."""
        made_here = {id(_root(t.array)) for t, *_ in self.externals.values() if id(t) not in self.known}
        for ref in self.written:
            root = ref()
            if root is not None and id(root) in made_here:
                raise GraphBreak("an in-place op writes into a tensor made inside the function from Python values "
                                 "(zeros(n), zeros_like(x), say), which a replay reuses as a constant: its writes "
                                 "would add up from call to call; pass it in, or make it with an op of an input "
                                 "(x.clone(), x * 0)")

    def _output_spec(self, out):
        if isinstance(out, Tensor):
            if out.grad_fn is not None and id(out.grad_fn) not in self.ran_backward and (
                    self.autograd is None or self.slot_of.get(id(out)) not in self.autograd.output_slots):
                raise GraphBreak("the result requires grad, so its backward would run outside the compiled function "
                                 "(compile the whole step: forward, backward and optimizer step)")
            s = self.slot_of.get(id(out))
            if s is not None and s in self.input_slots:
                return ("input", s)
            spec = self.spec(out)
            if spec[0] == "x" and id(out) not in self.known:  # made in the call from Python values (zeros(3)):
                return ("fresh", out)  # a new one each call, as eager's, never the program's own
            return spec
        if isinstance(out, (list, tuple)):  # (a namedtuple's type is kept: the caller reads `out.loss`)
            kind = type(out) if type(out) in (list, tuple) or hasattr(type(out), "_fields") else tuple
            return ("seq", kind, [self._output_spec(o) for o in out])
        if isinstance(out, dict):
            return ("dict", [(k, self._output_spec(v)) for k, v in out.items()],
                    type(out) if type(out) is OrderedDict else dict)
        if out is None or isinstance(out, (str, bool)):
            return ("c", out)
        raise GraphBreak(f"the function returns a Python {type(out).__name__} ({out!r:.40}), a value the replay "
                         "would freeze; return tensors")


def _ref(obj):
    """A weak reference to obj, or (an object that has none, a numpy scalar) a call returning it."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


class _InPlace:
    """A Call step's function for an in-place method: `method(target, *args, **kwargs)` again."""

    def __init__(self, method):
        self.method = method
        self.__qualname__ = f"Tensor.{getattr(method, '__name__', 'inplace')}"

    def __call__(self, target, args, kwargs):
        return self.method(target, *args, **dict(kwargs))


def _root(arr):
    """The array that owns `arr`'s memory."""
    while getattr(arr, "base", None) is not None:
        arr = arr.base
    return arr


def _is_array(a):
    return hasattr(a, "shape") and hasattr(a, "dtype") and hasattr(a, "__array_interface__") or \
        hasattr(a, "__cuda_array_interface__")


_ENGINE_KEYS = {"_freed", "_saved", "_names", "_pre_hooks", "_post_hooks"}  # what the engine sets on a node later


def _set_after_apply(node, forward_keys):
    """What the op's caller set on its node after `apply` (`grad_fn._keep_shapes(...)`): static facts
    (shapes), replayed as they were; a tensor there would be data frozen at capture."""
    extra = {k: v for k, v in node.__dict__.items() if k not in forward_keys and k not in _ENGINE_KEYS}
    for k, v in extra.items():
        if any(isinstance(x, (Tensor, SavedTensor)) or _is_array(x)  # (a decomposition's saved outputs: linalg's
               for x in (v if isinstance(v, (list, tuple)) else (v,))):  # svd, eigh, qr, lu_factor)
            raise GraphBreak(f"a tensor was set on {node.name()}.{k} outside its forward")
    return tuple(extra.items())


def _node_of(cls, out):
    """The backward node `Function.apply` attached to its outputs (None when none was made)."""
    for o in out if isinstance(out, tuple) else (out,):
        fn = getattr(o, "grad_fn", None)
        if fn is not None and type(fn) is cls._backward_cls:
            return fn
    return None


def _qualname(fn):
    return getattr(fn, "__qualname__", repr(fn))
