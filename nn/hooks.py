"""A module's hooks, PyTorch's: code run around its forward (`register_forward_pre_hook`,
`register_forward_hook`) and when the gradients of its inputs and outputs are known
(`register_full_backward_pre_hook`, `register_full_backward_hook`).

A module with no hooks pays one attribute check a call (`Module.__call__`); a hooked one goes through
`call_with_hooks`. Backward hooks put an identity node in front of the module's tensor inputs and one
after its tensor outputs: the output one sees grad_output, the input one grad_input and calls the hooks.
"""
import warnings
from collections import OrderedDict

from minigrad import Tensor
from minigrad.autograd import Function, recording
from minigrad.autograd.function import RemovableHandle  # (the engine's: one handle class for every hook)

_NO_INPUT_GRADS = ("Full backward hook is firing when gradients are computed with respect to module outputs since no "
                   "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                   "#torch.nn.Module.register_full_backward_hook for more details.")


# a flag of a hook kept as PyTorch keeps it: the hook's id in a table of its own beside the hooks' table
_FLAG_TABLES = {("_forward_pre_hooks", "with_kwargs"): "_forward_pre_hooks_with_kwargs",
                ("_forward_hooks", "with_kwargs"): "_forward_hooks_with_kwargs",
                ("_forward_hooks", "always_call"): "_forward_hooks_always_called"}


def _table(module, name):
    table = module.__dict__.get(name)
    if table is None:
        table = OrderedDict()
        object.__setattr__(module, name, table)
    return table


def add_hook(module, name, hook, prepend=False, **flags):
    """Put `hook` in the module's table `name` (made on first use; id -> hook, as PyTorch's), its true
    flags in their tables beside it; -> its handle."""
    table = _table(module, name)
    extras = [_table(module, _FLAG_TABLES[name, flag]) for flag, on in flags.items() if on]
    handle = RemovableHandle(table, extra_tables=extras, changes=module._changes)
    for extra in extras:
        extra[handle.id] = True
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    object.__setattr__(module, "_has_hooks", True)
    module._changes[0] += 1  # (a compiled call captured without this hook captures again)
    return handle


_NONE = {}


def call_with_hooks(module, args, kwargs):
    """module(*args, **kwargs) with its hooks: pre-hooks (may replace the arguments), the backward
    hooks' input node, forward, forward hooks (may replace the output), the backward hooks' output node."""
    d = module.__dict__
    with_kwargs = d.get("_forward_pre_hooks_with_kwargs", _NONE)
    for key, hook in list(d.get("_forward_pre_hooks", _NONE).items()):
        if key in with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        if result is None:
            _ran_for_its_effects(module, hook, "forward pre-hook")
    backward = d.get("_backward_hooks") or d.get("_backward_pre_hooks")
    state = _BackwardState(module) if backward else None
    if state is not None:
        args = state.wrap_inputs(args)
    with_kwargs = d.get("_forward_hooks_with_kwargs", _NONE)
    try:
        out = module.forward(*args, **kwargs)
    except Exception:
        always = d.get("_forward_hooks_always_called", _NONE)
        for key, hook in list(d.get("_forward_hooks", _NONE).items()):
            if key in always:
                hook(module, args, kwargs, None) if key in with_kwargs else hook(module, args, None)
        raise
    for key, hook in list(d.get("_forward_hooks", _NONE).items()):
        result = hook(module, args, kwargs, out) if key in with_kwargs else hook(module, args, out)
        if result is not None:
            out = result
        else:
            _ran_for_its_effects(module, hook, "forward hook")
    if state is not None:
        out = state.wrap_outputs(out)
    return out


def _ran_for_its_effects(module, hook, kind):
    """A forward hook that returns nothing ran for what it did in Python (keeping the activations in a
    dict, logging): a compiled call's replay would not run it, so what it kept would stay the capture's.
    The capture stops there (the call runs eagerly, as do later ones with this hook)."""
    recording.escape(f"a {kind} that returns None ({getattr(hook, '__qualname__', type(hook).__name__)} on "
                     f"{type(module).__name__})", "it runs for its effects in Python (what it stores, logs or "
                     "changes), which a replay would not redo; return its value from the compiled function instead")


def choose_backward_hook_kind(module, full):
    """A module's backward hooks are all full ones or all older ones, as PyTorch allows (the kind kept on it)."""
    if module.__dict__.get("_is_full_backward_hook", full) is not full:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                           "Please use only one of them.")
    module.__dict__["_is_full_backward_hook"] = full


def _checked_count(result, expected, hook, grads):
    """A backward (pre) hook's new gradients: one per slot it was given, as PyTorch checks them."""
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(result) != expected:
        raise RuntimeError(f"{hook} returned an invalid number of {grads}, got {len(result)}, but expected {expected}")
    return result


class _BackwardState:
    """One call's backward hooks: grad_output, set by the output node, waits there for the input node."""

    def __init__(self, module):
        self.module, self.grad_output, self.n_inputs, self.input_positions = module, None, 0, ()
        self.n_outputs, self.output_positions = 0, ()
        self.constants = {}  # position -> a tensor argument that needs no gradient (its grad_input: zeros)

    def wrap_inputs(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        self.n_inputs, self.input_positions = len(args), positions
        self.constants = {i: a for i, a in enumerate(args) if isinstance(a, Tensor) and not a.requires_grad}
        if not positions:
            return args
        outs = _BackwardHookNode.apply(self, "input", *[args[i] for i in positions])
        outs = outs if isinstance(outs, tuple) else (outs,)
        args = list(args)
        for i, t in zip(positions, outs):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        outs = (out,) if single else out
        if not isinstance(outs, tuple) or not any(isinstance(t, Tensor) and t.requires_grad for t in outs):
            return out
        positions = [i for i, t in enumerate(outs) if isinstance(t, Tensor) and t.requires_grad]
        self.n_outputs, self.output_positions = len(outs), positions
        wrapped = _BackwardHookNode.apply(self, "output", *[outs[i] for i in positions])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        outs = list(outs)
        for i, t in zip(positions, wrapped):
            outs[i] = t
        return outs[0] if single else tuple(outs)

    def on_output_grads(self, grads):
        # PyTorch's grad_output: an entry per output, None for one that needs no gradient (or is no tensor)
        full = [None] * self.n_outputs
        for i, g in zip(self.output_positions, grads):
            full[i] = g
        grads, module = tuple(full), self.module
        for hook in list(module.__dict__.get("_backward_pre_hooks", _NONE).values()):
            result = hook(module, grads)
            if result is not None:
                grads = _checked_count(result, len(grads), "Backward pre hook", "grad_output")
        self.grad_output = grads
        if not self.input_positions:  # no input needs a gradient: the hooks run now, with grad_input of Nones
            warnings.warn(_NO_INPUT_GRADS, UserWarning, stacklevel=2)
            self._call_hooks((None,) * self.n_inputs)
        return tuple(grads[i] for i in self.output_positions)

    def on_input_grads(self, grads):
        # PyTorch's grad_input: zeros for a tensor argument that needs no gradient, None for any other argument
        grad_input = [None] * self.n_inputs
        for i, t in self.constants.items():
            grad_input[i] = t.new_zeros(t.shape)
        for i, g in zip(self.input_positions, grads):
            grad_input[i] = g
        new = self._call_hooks(tuple(grad_input))
        return tuple(new[i] for i in self.input_positions) if new is not None else grads

    def _call_hooks(self, grad_input):
        module, result = self.module, None
        for hook in list(module.__dict__.get("_backward_hooks", _NONE).values()):
            out = hook(module, grad_input, self.grad_output)
            if out is not None:
                grad_input = result = _checked_count(out, len(grad_input), "Backward hook", "grad_input")
        return result


class _BackwardHookNode(Function):
    """Identity on a module's tensor inputs or outputs whose backward hands their gradients to the hooks."""

    node_name = "BackwardHookFunctionBackward"
    backward_runs_user_code = True  # (a compiled forward's capture must not run it on stand-in gradients)

    @staticmethod
    def forward(ctx, state, side, *tensors):
        ctx.state, ctx.side = state, side
        if side == "output":  # an output that got no gradient is None in grad_output, as in PyTorch
            ctx.set_materialize_grads(False)
        arrays = tuple(t.array for t in tensors)
        return arrays if len(arrays) > 1 else arrays[0]

    @staticmethod
    def backward(ctx, *grads):
        grads = ctx.state.on_output_grads(grads) if ctx.side == "output" else ctx.state.on_input_grads(grads)
        return (None, None) + tuple(grads)
