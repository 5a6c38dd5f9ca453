"""`composite_node(name)`: one node, named as PyTorch names it, for an op built from smaller ops.

PyTorch computes `linalg.lstsq` or `margin_ranking_loss`'s clamp as one native op with one backward
node (`LinalgLstsqBackward0`); minigrad writes many such ops as a few recorded ops, whose last node
would otherwise be the grad_fn users see (`MmBackward0`). The decorated function still does the
work: its forward runs it on detached stand-ins of the tensor arguments, keeping that small graph;
its backward is the engine's gradient through it. Under create_graph the backward runs the
composite again on the saved inputs themselves, so the gradient it returns is differentiable in
turn (double backward). Saving the inputs also lets their version check catch an in-place edit.
"""
import functools

from . import function as _function
from . import grad_mode
from .engine import grad as _grad


def _split(out):
    """(flat items, rebuild(items)) of an op's result: a tensor, or a (named) tuple of them."""
    if not isinstance(out, tuple):
        return [out], lambda items: items[0]
    if hasattr(out, "_fields"):
        return list(out), lambda items: type(out)(*items)
    return list(out), tuple


def composite_node(name, second=None, second_name=None):
    """Decorate an op written with recorded ops so that its outputs' grad_fn is one `name` node. `second`: where
    PyTorch's gradient of the first tensor argument, under create_graph, reaches that argument beyond what the
    composite's own graph says (function.second_order's rule: "zero", "none", or the exception PyTorch raises
    there), and `second_name` the name of PyTorch's node for it, if not `name`'s double backward's."""
    def decorate(fn):
        node_fn = type(name.removesuffix("Backward0").removesuffix("Backward1"), (CompositeFunction,),
                       {"node_name": name, "second": second, "second_name": second_name, "__module__": __name__})

        @functools.wraps(fn)
        def op(*args, **kwargs):
            Tensor = _function.Tensor
            if not grad_mode.is_grad_enabled():
                return fn(*args, **kwargs)
            places = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            if not any(args[i]._requires_grad for i in places):
                return fn(*args, **kwargs)

            def on_tensors(*tensors):
                full = list(args)
                for i, t in zip(places, tensors):
                    full[i] = t
                return fn(*full, **kwargs)
            box = []  # the outer result's structure, filled by forward
            out = node_fn.apply(on_tensors, box, *(args[i] for i in places))
            items, rebuild, where = box[0]
            outs = out if isinstance(out, tuple) else (out,)
            for k, t in zip(where, outs):
                items[k] = t
            return rebuild(items)
        return op
    return decorate


class CompositeFunction(_function.Function):
    """The Function behind every composite_node: forward keeps the composite's graph, backward runs it."""

    second = second_name = None

    @staticmethod
    def forward(ctx, on_tensors, box, *inputs):
        ctx.save_for_backward(*inputs)
        ctx.on_tensors = on_tensors
        stand_ins = [t.detach().requires_grad_(t._requires_grad) if t.array.dtype.kind in "fc"
                     else t.detach() for t in inputs]
        with grad_mode.enable_grad():
            out = on_tensors(*stand_ins)
        items, rebuild = _split(out)
        Tensor = _function.Tensor
        where = [k for k, t in enumerate(items) if isinstance(t, Tensor)]
        ctx.inner = (stand_ins, [items[k] for k in where])
        box.append((items, rebuild, where))
        arrays = [items[k].array for k in where]
        no_grad = [a for a, k in zip(arrays, where) if not items[k]._requires_grad]
        if no_grad:
            ctx.mark_non_differentiable(*no_grad)
        return arrays[0] if len(arrays) == 1 else tuple(arrays)

    @staticmethod
    def backward(ctx, *grads):
        inputs = ctx.saved_tensors  # (the version check: an input edited in place since forward is refused)
        wanted = [i for i, t in enumerate(inputs) if ctx.needs_input_grad[2 + i]]
        if grad_mode.is_grad_enabled():  # create_graph: differentiate the composite on the inputs themselves
            with grad_mode.enable_grad():
                items, _ = _split(ctx.on_tensors(*inputs))
            outs, sources = [t for t in items if isinstance(t, _function.Tensor)], inputs
        else:
            sources, outs = ctx.inner
        pairs = [(o, g) for o, g in zip(outs, grads) if o._requires_grad and g is not None]
        result = [None] * (2 + len(inputs))
        if pairs and wanted:
            gs = _grad([o for o, _ in pairs], [sources[i] for i in wanted], [g for _, g in pairs],
                       retain_graph=True, create_graph=grad_mode.is_grad_enabled(), allow_unused=True)
            for i, g in zip(wanted, gs):
                result[2 + i] = g
        cls = ctx._forward_cls
        if cls.second is not None and result[2] is not None and grad_mode.is_grad_enabled():
            incoming = [g for g in grads if g is not None and g._requires_grad]
            result[2] = _function.second_order(ctx, result[2], cls.second, *incoming, name=cls.second_name)
        return tuple(result)
