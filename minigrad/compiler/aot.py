"""A compiled call whose result requires grad: its forward replayed as one op with a backward of its own.

    model = minigrad.compile(model)
    loss = F.cross_entropy(model(x), y)   # the compiled call returns logits that require grad
    loss.backward()                       # ... and their backward runs later, outside the call

A program replays steps the capture wrote down, so the backward of a result must be among them
before the result's backward ever runs. At capture, once the call returns, the recorder runs that
backward itself (capture.py's `record_backward`: the engine from the results, with stand-in
gradients, to every tensor the call read that requires grad, its inputs and the parameters), leaving
the call's own graph as it was for the caller's backward. The program is then two halves: the
forward's steps, and after `split` the backward's, which read the forward's slots. (PyTorch's
AOTAutograd traces a joint forward and backward the same way.)

A replay runs the forward half as the forward of one `Function`, `CompiledFunction` below: its node,
CompiledFunctionBackward (PyTorch's name for it), has an edge to each input and parameter, and keeps
that call's slots and ctxs. When the caller's backward reaches the node, it runs the backward half on
them and returns each input's and parameter's gradient to the engine, which delivers it as for any
op (AccumulateGrad into `.grad`, hooks, an input's own history). As eager, the node checks the
versions of what the ops saved (an input or parameter changed in place before backward is
PyTorch's error), frees its slots after backward unless `retain_graph`, and says so if run again.
"""
from itertools import repeat
from operator import is_not

from ..autograd.function import FREED_MESSAGE, BackwardNode, Function, SavedTensor, _zeros_like_meta
from ..autograd.grad_mode import state
from ..tensor import Tensor


class AutogradPlan:
    """What the capture learned about a program's backward half (positions are in `args`: the call's
    inputs, flattened, then the outside tensors the program reads, in `program.externals`' order)."""

    def __init__(self, split, output_slots, grad_output_slots, grads, saved_args, saved_outputs, repeats=()):
        self.split = split  # the index of the first backward step
        self.output_slots = output_slots  # the results that require grad: the node's outputs, in order
        self.grad_output_slots = grad_output_slots  # where each one's incoming gradient goes
        self.grads = grads  # ((position, slot)): where each input's or parameter's gradient comes from
        # the positions of the tensors passed again after those (one more edge for each further part of
        # a gradient; their positions in `grads` follow the rest)
        self.repeats = repeats
        self.saved_args = saved_args  # the positions of tensors an op saved (their versions are checked)
        self.saved_outputs = saved_outputs  # indices into output_slots of results an op saved
        self.summed_only = frozenset()  # grad_output_slots only gradient sums read (program.py's _summed_only)
        self.reached_from = {}  # a gradient's slot -> the grad_output_slots it is made from (_reached_from)
        self.n_edges = None  # the node's arguments: the call, the inputs, the outside tensors, the repeats (Program's)


class _Call:
    """One replayed call: its program, and the slots and ctxs its forward half left for the backward."""

    __slots__ = ("program", "env", "ctxs")

    def __init__(self, program):
        self.program, self.env, self.ctxs = program, None, None


class CompiledFunction(Function):
    """The forward half of a program as one op; its node's backward runs the backward half."""

    @staticmethod
    def forward(ctx, call, *args):
        program = call.program
        plan = program.autograd
        env = [None] * program.n_slots
        for s, v in zip(program.input_slots, args):
            env[s] = v
        ctxs = [None] * len(program.steps)
        program._run_steps(env, ctxs)
        call.env, call.ctxs = env, ctxs
        ctx.call = call
        ctx.set_materialize_grads(False)  # (a result the caller's backward does not reach: see backward)
        ctx.save_for_backward(*[args[i] for i in plan.saved_args])
        if len(plan.output_slots) == 1:  # (one array, not a tuple of one: apply's wrapping has a short way for it)
            return _array(env[plan.output_slots[0]])
        return tuple([_array(env[s]) for s in plan.output_slots])

    @staticmethod
    def backward(ctx, *grads):
        call = ctx.call
        if call is None or call.env is None:
            raise RuntimeError(FREED_MESSAGE)
        _ = ctx.saved_tensors  # (unpacking checks each one's version, with eager's error)
        if state.grad_enabled:  # (a double backward: its backward is a replay, not recorded ops; PyTorch's error)
            raise RuntimeError("torch.compile with aot_autograd does not currently support double backward")
        program = call.program
        plan = program.autograd
        if state.retain_graph:  # the node may run again: the backward frees a copy's slots as it goes
            env, ctxs = call.env[:], call.ctxs[:]
        else:  # its one run: each value let go of after its last reader, as eager's nodes free theirs
            env, ctxs = call.env, call.ctxs
            call.env = call.ctxs = None
        if all(map(is_not, grads, repeat(None))):  # the usual: the caller's backward reached every result
            absent, run = None, program._run_backward_steps
        else:
            # a result the caller's backward did not reach sends no gradient: where only gradient sums read
            # its slot, each sum is its other term; elsewhere zeros stand in, as for any op of several outputs
            absent = frozenset(s for s, g in zip(plan.grad_output_slots, grads) if g is None)
            summed = absent & plan.summed_only
            run = program.backward_without(summed) if summed else program._run_backward_steps
            if absent - summed:
                grads = [_zeros_like_meta(m) if g is None and s not in summed else g
                         for s, g, m in zip(plan.grad_output_slots, grads, ctx._output_meta)]
        for s, g in zip(plan.grad_output_slots, grads):
            env[s] = g
        run(env, ctxs)
        out = [None] * plan.n_edges
        for pos, s in plan.grads:
            if absent is not None:
                sources = plan.reached_from[s]
                if sources and sources <= absent:  # made only from what the caller did not send: no
                    continue  # gradient, as eager's engine delivers none there (not zeros)
            g = env[s]
            out[1 + pos] = g if isinstance(g, Tensor) else Tensor._wrap(g)
        env = ctxs = g = None  # (the engine adopts a gradient as .grad without a copy only if none holds it)
        return tuple(out)


class CompiledFunctionBackward(BackwardNode):
    """The node: a BackwardNode that also lets go of its call's slots when the engine frees it."""

    def release_saved(self):
        super().release_saved()
        self.call = None
        self._freed = True


# the node class with the slots' release (FunctionMeta makes a plain BackwardNode subclass)
CompiledFunction._backward_cls = type("CompiledFunctionBackward", (CompiledFunctionBackward,),
                                      {"_forward_cls": CompiledFunction, "__module__": __name__})


def replay(program, inputs, build_result):
    """The call's result: its tensors that require grad are the outputs of one CompiledFunction
    (`build_result`: program.py's, which the result's structure is built by)."""
    plan = program.autograd
    call = _Call(program)
    if plan.repeats:
        args = (*inputs, *program._external_tensors)
        outs = CompiledFunction.apply(call, *args, *[args[pos] for pos in plan.repeats])
    else:
        outs = CompiledFunction.apply(call, *inputs, *program._external_tensors)
    if type(outs) is not tuple:
        outs = (outs,)
    node = outs[0].grad_fn if outs else None
    if node is not None and plan.saved_outputs:  # (as an op saving its result: a later in-place write is caught)
        node._saved = (node._saved or []) + [SavedTensor(outs[k], is_output=True) for k in plan.saved_outputs]
    env = call.env
    result = build_result(program.output, env, made=dict(zip(plan.output_slots, outs)))
    for s in program.dropped_after_forward:  # (the caller holds these now; eager keeps them no longer)
        env[s] = None
    return result


def _array(v):
    return v.array if isinstance(v, Tensor) else v
