"""minigrad.compile: capture one call's array work, replay it on later calls (docs/compile.md).

    step = minigrad.compile(train_step)   # or @minigrad.compile, or minigrad.compile(model)
    step(x, y)   # captured: runs eagerly while recording every op's forward and backward,
                 # the engine's gradient sums, the optimizer step and zero_grad
    step(x, y)   # replayed: the same steps on the new inputs, no Module calls, no graph

Files: capture.py (the recorder), program.py (the steps and their replay), guards.py (when a
program may be replayed), fusion.py (elementwise chains as one kernel), cuda_graph.py (on a GPU,
the replay as one CUDA graph).
"""
import copy
import functools
import os
import random as py_random
import sys
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from .. import random
from .._warn_once import user_stacklevel
from ..autograd import recording
from . import cuda_graph, guards
from .capture import GraphBreak, Recorder

CACHE_SIZE_LIMIT = 8  # programs kept per compiled function (PyTorch's torch._dynamo.config.cache_size_limit)
_compiled = weakref.WeakSet()  # every CompiledFunction alive, for reset()


class RecompileWarning(UserWarning):
    """One line each time a compiled function captures again, or falls back to eager, and why."""


class _Eager:
    """A cache entry for calls that cannot be replayed: they run eagerly."""

    def __init__(self, reason, objects=()):
        self.reason, self.objects = reason, objects


class Stats:
    """How a compiled function's calls went (tests and the benchmark read it)."""

    def __init__(self):
        self.captures = self.replays = self.eager_calls = 0

    def __repr__(self):
        return f"Stats(captures={self.captures}, replays={self.replays}, eager_calls={self.eager_calls})"


class CompiledFunction:
    """`fn` behind a cache of captured programs, one per guard key."""

    def __init__(self, fn, fullgraph=False, modules=()):
        self.fn, self.fullgraph, self.modules = fn, fullgraph, tuple(modules)
        self.name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self.cache = OrderedDict()
        self.stats = Stats()
        self.warn = True  # a RecompileWarning when it captures again or runs eagerly (off for library-internal steps)
        self.cache_size_limit = None  # programs kept: None is CACHE_SIZE_LIMIT as it is at each capture
        self.always_eager = None  # why every call runs eagerly (a capture stopped at a module's attribute set)
        self.misses_when_full = 0  # calls since the last replay that found the program cache full
        self.seen_call = False  # (set_stance("eager_then_compile") runs the first call eagerly)
        self.eager = False  # backend="eager": every call runs fn, nothing is captured (reset() keeps it)
        self.targets = guards.code_targets(fn)  # the functions whose closures and globals the guard reads
        functools.update_wrapper(self, fn, updated=())
        _compiled.add(self)

    def __deepcopy__(self, memo):
        """A copy (of a compiled module, `copy.deepcopy(model)` for an EMA, say) captures anew: its
        programs must read the copy's parameters, not these."""
        new = CompiledFunction(copy.deepcopy(self.fn, memo), self.fullgraph, copy.deepcopy(self.modules, memo))
        new.warn, new.cache_size_limit, new.name = self.warn, self.cache_size_limit, self.name
        new.eager = self.eager
        return new

    def __get__(self, obj, objtype=None):
        # @minigrad.compile on a method: bound to each instance, which the guard key then names (so two
        # instances never share a program that reads the other's parameters)
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        if recording.hook.recorder is not None:  # called inside another capture: its ops belong to that program
            return self.fn(*args, **kwargs)
        if _stance[0] != "default" or _stance[2] == "eager":
            return self._call_in_stance(args, kwargs)
        if self.always_eager or self.eager:
            self.stats.eager_calls += 1
            return self.fn(*args, **kwargs)
        try:
            key, objects, inputs = guards.call_key(self.fn, args, kwargs, self.modules, self.targets)
        except guards.Unsupported as e:
            self._warn(f"running eagerly: {e}")
            self.stats.eager_calls += 1
            return self.fn(*args, **kwargs)
        entry = self.cache.get(key)
        if entry is None:
            return self._capture(key, objects, inputs, args, kwargs)
        if isinstance(entry, _Eager):
            self.stats.eager_calls += 1
            return self.fn(*args, **kwargs)
        why = entry.check()
        if why is not None:
            del self.cache[key]
            self._warn(f"capturing again: {why}")
            return self._capture(key, objects, inputs, args, kwargs, warned=True)
        self.stats.replays += 1
        self.misses_when_full = 0
        return entry.replay(inputs)

    def _call_in_stance(self, args, kwargs):
        """A call under `set_stance(...)` other than the default (PyTorch's stances)."""
        stance = _stance[0]
        if stance not in _STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{_stance_repr()}'")
        first = not self.seen_call
        self.seen_call = True
        if stance == "force_eager" or _stance[2] == "eager" or first and stance.endswith("eager_then_compile"):
            self.stats.eager_calls += 1
            return self.fn(*args, **kwargs)
        if stance.endswith("eager_then_compile"):
            with set_stance("default"):
                return self(*args, **kwargs)
        key, objects, inputs = guards.call_key(self.fn, args, kwargs, self.modules, self.targets)
        entry = self.cache.get(key)
        if entry is not None and not isinstance(entry, _Eager) and entry.check() is None:
            self.stats.replays += 1
            return entry.replay(inputs)
        if stance == "fail_on_recompile":  # (any capture: PyTorch's check runs on every frame it would compile)
            code = getattr(getattr(self.fn, "__func__", self.fn), "__code__", None)
            where = "" if code is None else (f"filename: '{code.co_filename}', function name: '{code.co_name}', "
                                             f"line number: {code.co_firstlineno}")
            raise RuntimeError("Detected recompile when torch.compile stance is 'fail_on_recompile'. " + where)
        self.stats.eager_calls += 1  # eager_on_recompile: cached programs replay, nothing is captured
        return self.fn(*args, **kwargs)

    def _capture(self, key, objects, inputs, args, kwargs, warned=False):
        limit = self.cache_size_limit or CACHE_SIZE_LIMIT
        if len(self.cache) >= limit:
            why = f"the cache of {limit} programs is full (the calls keep changing: " \
                  f"{guards.explain(key, next(reversed(self.cache)))})"
            self.misses_when_full += 1
            if self.misses_when_full > limit:  # as many misses again, no replay between: stop paying for the key
                self.always_eager = why
                self._warn(f"running eagerly from now on: {why}")
            elif self.misses_when_full == 1:
                self._warn(f"running eagerly: {why}")
            self.stats.eager_calls += 1
            return self.fn(*args, **kwargs)
        if self.cache and not warned:
            self._warn(f"capturing again: {guards.explain(key, next(reversed(self.cache)))}")
        rec = Recorder(self.name, self.fullgraph, _known_tensors(objects))
        for v in inputs:
            if _is_tensor(v):
                rec.add_input(v)
            else:
                rec.add_live_object(v)
        self.stats.captures += 1
        rng_before = random.get_rng_state()
        containers_before = guards.container_states(objects)
        arguments_before = guards.argument_containers(args, kwargs)
        names_before = guards.rebound_names(self.targets)
        python_rng_before = _python_rng_state(objects)
        recording.hook.recorder = rec
        try:
            out = self.fn(*args, **kwargs)
        finally:
            recording.hook.recorder = None
        changed = guards.changed_container(containers_before)
        if changed is not None:
            container, label = changed
            label = label or _name_of(container, self.fn, type(container).__name__)
            rec.on_escape(f"a change to {label} (a counter, a log or a state kept in a list or dict)",
                          "a replay would neither change it again nor read its new values; pass the value as an "
                          "argument, or update it outside the compiled function",
                          every_call=True)  # (each call changes it: a log's items would change the key too)
        changed = guards.changed_container(arguments_before, grown=True)
        if changed is not None:
            rec.on_escape(f"a change to {changed[1]} (a list or dict passed in)",
                          "a replay would not change the caller's list or dict; return the values instead",
                          every_call=True)
        rebound = guards.rebound(names_before)
        if rebound is not None:
            rec.on_escape(f"an assignment to {rebound}",
                          "a replay would not assign it again; return the value instead", every_call=True)
        if _python_rng_state(objects) != python_rng_before:
            rec.on_escape("a draw from Python's random module or a numpy generator (random.random(), "
                          "np.random.rand(), rng.random())",
                          "a replay would not draw again, and would take the capture's numbers and branches every "
                          "call; draw with minigrad (minigrad.rand(()) ...) or outside the compiled function and "
                          "pass the value in")
        try:
            rec.record_backward(out)  # (where the result requires grad: aot.py)
            program = rec.finish(out, key, _known_tensors(objects))
            program.objects = objects
            program.draws_random = random.get_rng_state() != rng_before
            program.graph_reason = cuda_graph.unsuitable(program, inputs) if cuda_graph.ENABLED else "disabled"
            if program.graph_reason is None:
                program.graph = cuda_graph.GraphReplay(program)
            self.cache[key] = program
        except GraphBreak as e:
            if self.fullgraph:
                raise RuntimeError(f"minigrad.compile(fullgraph=True): {self.name}: {e}") from None
            if rec.every_call:
                self.always_eager = str(e)
                self._warn(f"running eagerly from now on: {e}")
            else:
                self._warn(f"running eagerly: {e}")
                self.cache[key] = _Eager(str(e), objects)
        return out

    def _warn(self, msg):
        if self.warn:
            warnings.warn(f"minigrad.compile: {self.name}: {msg}", RecompileWarning, stacklevel=user_stacklevel())

    def reset(self):
        """Forget every captured program (the next call captures again)."""
        self.cache.clear()
        self.always_eager = None
        self.misses_when_full = 0


def _known_tensors(objects):
    """The ids of the tensors a call's guard names (closure and global tensors, a module's attributes,
    parameters and buffers, a list's items): those from before the call, which a result may be as is."""
    from ..tensor import Tensor

    known = set()
    for o in objects:
        if isinstance(o, Tensor):
            known.add(id(o))
        elif guards.is_module(o):
            known.update(id(t) for t in o.parameters())
            known.update(id(t) for t in o.buffers())
        elif type(o) in (list, tuple, dict):
            known.update(id(t) for t in (o.values() if type(o) is dict else o) if isinstance(t, Tensor))
    return known


def _python_rng_state(objects):
    """Where Python's and numpy's global generators are, and the generators the function reads (a numpy
    Generator or RandomState, a random.Random, among the guard's objects): taken around a capture, as the
    draws a function makes from them are Python the replay does not run."""
    _, keys, pos, *_ = np.random.get_state()
    own = [repr(o.bit_generator.state) if isinstance(o, np.random.Generator) else
           repr(o.get_state()) if isinstance(o, np.random.RandomState) else o.getstate()
           for o in objects if isinstance(o, (np.random.Generator, np.random.RandomState, py_random.Random))]
    return py_random.getstate(), keys.tobytes(), pos, own


def _name_of(obj, fn, default):
    """How the function names `obj` (a closure variable, a global or a default it reads), for a message."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is not None:
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                if cell.cell_contents is obj:
                    return f"closure variable {name!r}"
            except ValueError:  # (an empty cell)
                continue
        for name in code.co_names:
            if fn.__globals__.get(name) is obj:
                return f"global {name!r}"
        for name, v in guards.defaults(fn):
            if v is obj:
                return f"the default of {name!r}"
    return f"a {default} it reads"


def _is_tensor(v):
    from ..tensor import Tensor

    return isinstance(v, Tensor)



class OptimizedModule:
    """What `minigrad.compile(module)` returns for a module-like object that does not name its own
    wrapper (an nn.Module does: nn's OptimizedModule, a Module). Calls go through the compiled
    `module.__call__`; every other attribute is the module's (`_orig_mod` is the module itself)."""

    def __init__(self, module, fullgraph=False):
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled", CompiledFunction(module.__call__, fullgraph, modules=(module,)))
        self._compiled.name = type(module).__name__  # (its warnings name the module, not Module.__call__)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __repr__(self):
        return f"OptimizedModule({self._orig_mod!r})"


_BACKENDS = ("minigrad", "inductor", "aot_eager", "cudagraphs", "eager")  # all but "eager" capture and replay
_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")  # (PyTorch's)


class InvalidBackend(RuntimeError):
    """PyTorch's `torch._dynamo.exc.InvalidBackend`: `compile(backend=...)` names no backend."""

    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="minigrad", mode=None, options=None,
            disable=False):
    """Compile a function or a module (`torch.compile`'s signature; also a decorator, with or without
    arguments). The first call with new shapes captures, later ones replay (docs/compile.md).

    fullgraph=True: what would make a call run eagerly (`item()` inside, a hook, ...) raises instead.
    dynamic, mode, options: accepted for PyTorch's sake (a mode is one of PyTorch's names, and not given
    with options, as PyTorch checks); shapes are always static here.
    backend: "minigrad" (or PyTorch's names "inductor", "aot_eager", "cudagraphs") captures and replays;
    "eager" only calls; another name is PyTorch's InvalidBackend error.
    disable=True returns `model` unchanged."""
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    # PyTorch's checks, in its order, with its errors
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if backend in ("minigrad", "inductor") and mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend not in _BACKENDS:
        raise InvalidBackend(backend)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable or backend == "eager" and not guards.is_module(model):
        return model
    if guards.is_module(model):  # (with backend="eager" too: PyTorch's wrapper, `_orig_mod.` keys, eager calls)
        wrap = getattr(model, "_optimized_module", None)  # (nn.Module's: minigrad does not import nn)
        wrapper = wrap(fullgraph) if wrap is not None else OptimizedModule(model, fullgraph)
        wrapper._compiled.eager = backend == "eager"
        return wrapper
    return CompiledFunction(model, fullgraph)


# ---- torch.compiler's functions ------------------------------------------------------------------
def reset():
    """Forget every captured program of every compiled function (the next calls capture again)."""
    for fn in list(_compiled):
        fn.reset()


_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
            "aot_eager_then_compile")
_stance = ("default", False, None)  # (stance, skip_guard_eval_unsafe, force_backend), as set_stance set them


def _stance_repr():
    return f"DynamoStance(stance={_stance[0]!r}, skip_guard_eval_unsafe={_stance[1]!r}, backend={_stance[2]!r})"


def _set_stance(stance):
    global _stance
    if recording.hook.recorder is not None:
        raise RuntimeError("attempted to set_stance in a torch.compile region")
    prior, _stance = _stance, stance
    return prior


class set_stance:
    """`torch.compiler.set_stance`: what compiled functions do, as a function, a context manager or a
    decorator. "default"; "force_eager": every call runs eagerly; "eager_on_recompile": cached programs
    replay, a call that would capture runs eagerly; "fail_on_recompile": a call that would capture raises;
    "eager_then_compile" (and "aot_eager_then_compile"): a function's first call runs eagerly.
    `force_backend="eager"` (with "default") runs every call eagerly; skip_guard_eval_unsafe changes nothing."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = (stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set_stance(self.stance)

    def __enter__(self):
        _set_stance(self.stance)

    def __exit__(self, *exc):
        _set_stance(self.prev)

    def __call__(self, fn):
        _set_stance(self.prev)
        stance, skip, backend = self.stance

        @functools.wraps(fn)
        def in_stance(*args, **kwargs):
            with set_stance(stance, skip_guard_eval_unsafe=skip, force_backend=backend):
                return fn(*args, **kwargs)

        return in_stance


def is_compiling():
    """True while a compiled call is being captured (the Python of a replay does not run at all)."""
    return recording.hook.recorder is not None


is_dynamo_compiling = is_compiling


def is_exporting():
    """False: minigrad has no torch.export, so no code ever runs under it."""
    return False


def disable(fn=None, recursive=True):
    """`fn` never runs inside a capture: a compiled call that reaches it runs eagerly, from then on
    (a graph break, with the usual one-line warning). Also a decorator, with or without arguments."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)

    @functools.wraps(fn)
    def eager_only(*args, **kwargs):
        rec = recording.hook.recorder
        if rec is not None:
            msg = f"{getattr(fn, '__qualname__', fn)} is marked minigrad.compiler.disable"
            if rec.fullgraph:
                rec.stop(msg)
                raise RuntimeError(f"minigrad.compile(fullgraph=True): {rec.name}: {msg}")
            rec.stop(msg)
        return fn(*args, **kwargs)

    return eager_only


def graph_break(msg=""):
    """`torch._dynamo.graph_break()`: where PyTorch splits its graph, a capture here stops: the call runs
    eagerly (the usual one-line warning; an error under fullgraph=True, as PyTorch's)."""
    recording.escape("graph_break()" + (f" ({msg})" if msg else ""), "a graph break was asked for")


def allow_in_graph(fn):
    """PyTorch's hint that dynamo may put `fn` in the graph as it is: every op is captured here anyway."""
    return fn


def assume_constant_result(fn):
    """PyTorch's hint that `fn`'s result is a constant: a Python value a captured call computes is
    frozen into the program here anyway (and guarded where it is an argument or a global)."""
    return fn


def cudagraph_mark_step_begin():
    """PyTorch's marker between CUDA-graph replays: a replay here never overwrites what the previous
    call returned (docs/compile.md), so there is nothing to mark."""


def list_backends(exclude_tags=("debug", "experimental")):
    """The `backend=` names compile accepts (as torch.compiler.list_backends, 'eager' left out)."""
    if not exclude_tags:  # (PyTorch's `exclude_tags=()` or None: every backend, the debug ones too)
        return sorted(_BACKENDS)
    return sorted(b for b in _BACKENDS if b not in ("eager", "aot_eager"))  # (PyTorch's debug backends)
