"""torch.library's custom ops: `custom_op("ns::name", mutates_args=())` makes a function an op, a node of the
autograd graph (its backward given by `register_autograd`, through autograd.Function's machinery).

    @minigrad.library.custom_op("mylib::mysin", mutates_args=())
    def mysin(x: minigrad.Tensor) -> minigrad.Tensor:
        return x.sin()

    mysin.register_autograd(lambda ctx, g: g * ctx.x.cos(), setup_context=lambda ctx, inputs, out: setattr(ctx, "x", inputs[0]))

PyTorch's other route, a schema string and a kernel per device, runs too; the op is then minigrad.ops.<ns>.<name>
(torch.ops.<ns>.<name>: minigrad.ops, the engine's op package, looks its unknown names up here):

    lib = minigrad.library.Library("mylib", "FRAGMENT")
    lib.define("mysin(Tensor x) -> Tensor")
    lib.impl("mysin", lambda x: x.sin(), "CPU")
    minigrad.ops.mylib.mysin(x)
"""
import inspect

from .autograd.function import Function

_ops = {}  # "ns::name" -> CustomOpDef


class CustomOpDef:
    """The op `custom_op` returns: called as the function it wraps."""

    def __init__(self, namespace, name, fn, mutates_args, schema=None):
        self._namespace, self._name, self._init_fn, self._mutates_args = namespace, name, fn, mutates_args
        self._kernels, self._fake_fn, self._backward_fn, self._setup_context_fn = {}, None, None, None
        self._schema, self._autocast = schema, {}
        _namespaces.setdefault(namespace, _OpNamespace(namespace))
        op = self
        # the node named as PyTorch's (GeneratedBackwardFor_mylib_mysin_defaultBackward), in the user's module
        self._function = type(f"GeneratedBackwardFor_{namespace}_{name}_default", (Function,), {
            "__module__": getattr(fn, "__module__", __name__),
            "forward": staticmethod(lambda *args: op._kernel(args)(*args)),
            "setup_context": staticmethod(lambda ctx, inputs, output: op._setup_context_fn and
                                          op._setup_context_fn(ctx, inputs, output)),
            "backward": staticmethod(lambda ctx, *grads: op._backward(ctx, grads))})

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    @property
    def default(self):  # (torch.ops.ns.name.default: the overload; minigrad's ops have one each)
        return self

    def __call__(self, *args, **kwargs):
        args = self._autocasted(args)
        if kwargs:  # (autograd.Function takes positional arguments: kwargs bound to their schema's places)
            args = args + tuple(kwargs[name] for name in self._arg_names()[len(args):] if name in kwargs)
        if self._init_fn is None and self._backward_fn is None:
            return self._kernel(args)(*args)  # a schema-defined op without a formula: autograd sees the kernel's ops
        return self._function.apply(*args)

    def _arg_names(self):
        if self._init_fn is not None:
            return list(inspect.signature(self._init_fn).parameters)
        return [a.split("=")[0].split()[-1] for a in _schema_args(self._schema)]

    def _autocasted(self, args):
        if not self._autocast:
            return args
        from .amp import is_autocast_enabled  # (amp: loaded only for an op that asked for it)

        for device, dtype in self._autocast.items():
            if is_autocast_enabled(device):
                return tuple(a.to(dtype) if hasattr(a, "is_floating_point") and a.is_floating_point() else a
                             for a in args)
        return args

    def _kernel(self, args):
        device = next((a.device.type for a in args if hasattr(a, "device")), None)
        kernel = self._kernels.get(device, self._init_fn)
        if kernel is None:
            raise NotImplementedError(f"Could not run '{self._qualname}' with arguments from the '{(device or 'cpu').upper()}' "
                                      "backend: no kernel registered for it (Library.impl or register_kernel)")
        return kernel

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


class _OpNamespace:
    """minigrad.ops.<ns> (torch.ops.<ns>): its ops as attributes."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"<module 'minigrad.ops.{self._name}' from 'minigrad.ops'>"

    def __getattr__(self, name):
        op = _ops.get(f"{self._name}::{name}")
        if op is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{name}'")
        return op


_namespaces = {}  # "ns" -> its _OpNamespace


def _schema_args(schema):
    inside = schema[schema.index("(") + 1:schema.rindex(")", 0, schema.index("->"))].strip()
    return [a.strip() for a in inside.split(",")] if inside else []


def _op(qualname, api):
    if not isinstance(qualname, str):  # a CustomOpDef (minigrad.ops.ns.name, or custom_op's)
        return qualname
    if qualname not in _ops:
        raise ValueError(f"{api}: no custom op named {qualname!r} (define it with custom_op, define or Library.define first)")
    return _ops[qualname]


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
    _op(op, "register_autograd").register_autograd(backward, setup_context=setup_context)


def register_fake(op, fn=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    op = _op(op, "register_fake")
    return op.register_fake if fn is None else op.register_fake(fn)


impl_abstract = register_fake  # (PyTorch's older name)


def register_kernel(op, device_types, fn=None, /, *, lib=None):
    return _op(op, "register_kernel").register_kernel(device_types, fn)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Under autocast on device_type, the op's floating-point tensor inputs are cast to cast_inputs first."""
    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"Unknown device type: {device_type}")
    _op(op, "register_autocast")._autocast[device_type] = cast_inputs


def define(qualname, schema, *, lib=None, tags=()):
    """Declares the op qualname ("ns::name") with schema "(Tensor x, float a) -> Tensor"; its kernels come with impl."""
    namespace, name = qualname.split("::")
    if qualname in _ops:
        raise RuntimeError(f"Tried to register an operator ({qualname}{schema}) with the same name and overload name "
                           "multiple times.")
    _ops[qualname] = CustomOpDef(namespace, name, None, (), schema=f"{name}{schema}")


def impl(qualname, types, func=None, *, lib=None):
    """Registers func as qualname's kernel on the device types ("cpu", "CPU", "default"); a decorator without func."""
    types = [types] if isinstance(types, str) else list(types)
    devices = [None if t in ("default", "CompositeImplicitAutograd", "CompositeExplicitAutograd") else t.lower()
               for t in types]

    def register(func):
        op = _op(qualname, "impl")
        for device in devices:
            if device is None:
                op._init_fn = op._init_fn or func
            else:
                op._kernels[device] = func
        return func

    return register if func is None else register(func)


class Library:
    """A namespace's ops: kind "DEF" (the namespace's first, one only) or "FRAGMENT" defines them; "IMPL" only
    registers kernels for them."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _libraries and kind == "DEF":
            raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all "
                               "of your definitions in a single TORCH_LIBRARY block.")
        if kind == "DEF":
            _libraries.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """schema "name(Tensor x) -> Tensor": the op ns::name; returns its name as PyTorch's."""
        name = schema[:schema.index("(")]
        define(f"{self.ns}::{name}", schema[len(name):])
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        name = op_name if isinstance(op_name, str) else op_name._name
        impl(f"{self.ns}::{name}", dispatch_key or self.dispatch_key or "default", fn)


_libraries = set()


def _schema_type(annotation, what, signature):
    import typing

    from .tensor import Tensor

    names = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str"}
    if annotation in names:
        return names[annotation]
    origin, inner = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) and len(inner) == 2 and type(None) in inner:
        return _schema_type(next(a for a in inner if a is not type(None)), what, signature) + "?"
    if origin in (list, tuple) and inner and inner[0] in names:
        return names[inner[0]] + "[]"
    raise ValueError(f"infer_schema(func): {what} has unsupported type {annotation}. Got func with signature {signature})")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The schema PyTorch derives from the function's annotations: "(Tensor x, SymInt n, float s=1.0) -> Tensor"."""
    signature = inspect.signature(prototype_function)
    args = []
    for i, p in enumerate(signature.parameters.values()):
        if p.annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {p.name} must have a type annotation. Got func with "
                             f"signature {signature})")
        kind = _schema_type(p.annotation, f"Parameter {p.name}", signature)
        if kind.startswith("Tensor") and (mutates_args == "unknown" or p.name in mutates_args):
            kind = f"Tensor(a{i}!)" + kind[6:]
        default = "" if p.default is inspect.Parameter.empty else "=" + (
            f'"{p.default}"' if isinstance(p.default, str) else repr(p.default))
        args.append(f"{kind} {p.name}{default}")
    ret = signature.return_annotation
    if ret is None or ret is inspect.Parameter.empty:
        out = "()"
    elif getattr(ret, "__origin__", None) is tuple:
        out = "(" + ", ".join(_schema_type(r, "Return", signature) for r in ret.__args__) + ")"
    else:
        out = _schema_type(ret, "Return", signature)
    return f"{op_name or ''}({', '.join(args)}) -> {out}"


class _FakeImplCtx:
    """What get_ctx() gives inside a fake implementation (PyTorch's: for ops whose output size depends on data)."""

    def new_dynamic_size(self, *, min=0, max=None):
        raise NotImplementedError("new_dynamic_size: minigrad runs no fake (meta) tensors, so no size is symbolic")


def get_ctx():
    return _FakeImplCtx()


class OpCheckError(Exception):
    pass


_OPCHECK_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


def opcheck(op, args, kwargs=None, *, test_utils=_OPCHECK_TESTS, raise_exception=True, atol=None, rtol=None):
    """PyTorch's checks of a custom op's registrations, each run on args: the op mutates only what its schema says
    (test_schema), an output needing grad has a formula (test_autograd_registration), a fake implementation is
    registered (test_faketensor, test_aot_dispatch_dynamic). A dict of each test's "SUCCESS" or exception."""
    from .tensor import Tensor

    kwargs = kwargs or {}
    op = _op(op, "opcheck")
    tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
    mutable = op._mutates_args
    if op._schema is not None:
        mutable = [a.split()[-1].split("=")[0] for a in _schema_args(op._schema) if "!" in a.split()[0]]
    names = op._arg_names()

    def test_schema():
        before = [(a._version, a.detach().clone()) for a in tensors]
        op(*args, **kwargs)
        for name, a, (version, old) in zip(names, tensors, before):
            if mutable != "unknown" and name not in mutable and (a._version != version or not (a.detach() == old).all()):
                raise OpCheckError(f"{op._namespace}::{op._name}: Argument {name} is not defined as mutable but was "
                                   "mutated")

    def test_autograd_registration():
        out = op(*args, **kwargs)
        if op._init_fn is None and op._backward_fn is None and any(o.requires_grad for o in _leaves(out)):
            raise AssertionError(
                f"{op._qualname}: at least one output of this operator has requires_grad=True but the operator does "
                "not have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean "
                "that you have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may lead "
                "to silently incorrect results. If your operator consists of regular PyTorch operations, consider not "
                "using an operator at all or registering your operator as CompositeImplicitAutograd. If you have an "
                "autograd.Function registered to a backend (CPU/CUDA/XPU) key, the correct location for it is the "
                "Autograd key.")

    def test_faketensor():
        if op._fake_fn is None:
            raise NotImplementedError(f"{op._qualname}: attempted to run this operator with Meta tensors, but there "
                                      "was no fake impl or Meta kernel registered.")
        real, fake = _leaves(op(*args, **kwargs)), _leaves(op._fake_fn(*args, **kwargs))
        for r, f in zip(real, fake):
            if tuple(r.shape) != tuple(f.shape) or r.dtype != f.dtype:
                raise AssertionError(f"{op._qualname}: the fake implementation gives {tuple(f.shape)} {f.dtype}, the "
                                     f"kernel {tuple(r.shape)} {r.dtype}")

    checks = {"test_schema": test_schema, "test_autograd_registration": test_autograd_registration,
              "test_faketensor": test_faketensor, "test_aot_dispatch_dynamic": test_faketensor}
    results = {}
    for name in [test_utils] if isinstance(test_utils, str) else test_utils:
        try:
            checks[name]()
            results[name] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)") from e
            results[name] = e
    return results


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


__all__ = ["custom_op", "CustomOpDef", "register_autograd", "register_fake", "impl_abstract", "register_kernel",
           "register_autocast", "define", "impl", "Library", "infer_schema", "get_ctx", "opcheck"]
