"""torch.library's custom ops: `custom_op("ns::name", mutates_args=())` makes a function an op, a node of the
autograd graph (its backward given by `register_autograd`, through autograd.Function's machinery).

    @minigrad.library.custom_op("mylib::mysin", mutates_args=())
    def mysin(x: minigrad.Tensor) -> minigrad.Tensor:
        return x.sin()

    mysin.register_autograd(lambda ctx, g: g * ctx.x.cos(), setup_context=lambda ctx, inputs, out: setattr(ctx, "x", inputs[0]))

`torch.ops.<ns>.<name>` is not provided: minigrad.ops is the engine's op package (its modules, linalg, complex,
special, ..., would clash with namespaces). Ops are found by name through `register_autograd("ns::name", ...)`.
"""
import inspect

from .autograd.function import Function

_ops = {}  # "ns::name" -> CustomOpDef


class CustomOpDef:
    """The op `custom_op` returns: called as the function it wraps."""

    def __init__(self, namespace, name, fn, mutates_args):
        self._namespace, self._name, self._init_fn, self._mutates_args = namespace, name, fn, mutates_args
        self._kernels, self._fake_fn, self._backward_fn, self._setup_context_fn = {}, None, None, None
        op = self
        # the node named as PyTorch's (GeneratedBackwardFor_mylib_mysin_defaultBackward), in the user's module
        self._function = type(f"GeneratedBackwardFor_{namespace}_{name}_default", (Function,), {
            "__module__": fn.__module__,
            "forward": staticmethod(lambda *args: op._kernel(args)(*args)),
            "setup_context": staticmethod(lambda ctx, inputs, output: op._setup_context_fn and
                                          op._setup_context_fn(ctx, inputs, output)),
            "backward": staticmethod(lambda ctx, *grads: op._backward(ctx, grads))})

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args):
        return self._function.apply(*args)

    def _kernel(self, args):
        device = next((a.device.type for a in args if hasattr(a, "device")), None)
        return self._kernels.get(device, self._init_fn)

    def _backward(self, ctx, grads):
        if self._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {self._namespace}.{self._name}.default but no autograd "
                               "formula was registered. Please use register_autograd to add one.")
        out = self._backward_fn(ctx, *grads)
        return out if isinstance(out, tuple) else (out,)

    def register_autograd(self, backward, /, *, setup_context=None):
        """backward(ctx, *grads) -> a gradient per input (None for non-tensors); setup_context(ctx, inputs, output)
        saves on ctx what backward needs. A later registration replaces an earlier one (as PyTorch's)."""
        if not callable(backward) or setup_context is not None and not callable(setup_context):
            raise TypeError(f"register_autograd({self._qualname}): backward and setup_context must be callables")
        self._backward_fn, self._setup_context_fn = backward, setup_context

    def register_kernel(self, device_types, fn=None, /):
        """fn runs the op for inputs on those devices ('cpu', 'cuda'), instead of the decorated function."""
        def register(fn):
            for device in [device_types] if isinstance(device_types, str) or device_types is None else device_types:
                self._kernels[device] = fn
            return fn

        return register if fn is None else register(fn)

    def register_fake(self, fn, /):
        """Stored only: PyTorch's fake (meta) implementation serves its tracing compilers, which minigrad has not."""
        self._fake_fn = fn
        return fn


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Wraps fn (its tensor arguments and results annotated, as PyTorch infers the op's schema from them) as the op
    `name` ("namespace::name"). mutates_args, device_types, schema: recorded (minigrad checks no schema)."""
    def wrap(fn):
        if schema is None:
            signature = inspect.signature(fn)
            for p in signature.parameters.values():
                if p.annotation is inspect.Parameter.empty:
                    raise ValueError(f"infer_schema(func): Parameter {p.name} must have a type annotation. Got func "
                                     f"with signature {signature})")
        namespace, opname = name.split("::")
        op = CustomOpDef(namespace, opname, fn, mutates_args)
        if device_types is not None:
            op.register_kernel(device_types, fn)
        _ops[name] = op
        return op

    return wrap if fn is None else wrap(fn)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """`op` a CustomOpDef or its "ns::name"."""
    if isinstance(op, str):
        if op not in _ops:
            raise ValueError(f"register_autograd: no custom op named {op!r} (define it with custom_op first)")
        op = _ops[op]
    op.register_autograd(backward, setup_context=setup_context)


def register_fake(op, fn=None, /, *, lib=None):
    op = _ops[op] if isinstance(op, str) else op
    return op.register_fake if fn is None else op.register_fake(fn)


__all__ = ["custom_op", "CustomOpDef", "register_autograd", "register_fake"]
