"""Gradient checkpointing: keep less in the forward pass, recompute it in backward.

`y = checkpoint(fn, x)` runs `fn(x)` as usual, but the tensors its ops save for backward are not
kept: each is replaced by a small handle (an index), through the saved-tensor hooks of
`minigrad.autograd.graph`. The first time backward needs one of them, `fn` is run again on the
same inputs (with grad enabled and, by default, the random generators rewound to where they were,
so dropout draws the same masks), the tensors that recomputation saves are collected in order, and
each handle gets its own back. This is PyTorch's non-reentrant design: the checkpointed ops stay
ordinary nodes of the one graph, so `backward()`, `autograd.grad`, keyword arguments, nested
checkpoints and inputs that do not require grad all work as without it, and gradients are
identical (the same ops run on the same values).

The trade: memory for the activations inside `fn` is held only while backward goes through `fn`,
at the cost of running `fn`'s forward twice.

If the recomputation does not save the same tensors (same number, shapes and dtypes) as the
original forward, `fn` is not deterministic and backward raises `CheckpointError` instead of
returning wrong gradients.
"""
import contextlib
import sys
import warnings
import weakref

from .. import random as _random
from ..autograd.engine import _is_checkpoint_valid
from ..autograd.function import Function, SavedTensor
from ..autograd.grad_mode import enable_grad, no_grad, state
from ..autograd.graph import saved_tensors_hooks
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn"]


_UNSAID = ("{}: the use_reentrant parameter should be passed explicitly. {} "
           "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
           "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
           "variants.")


class CheckpointError(RuntimeError):
    """The recomputation in backward did not match the original forward."""


def noop_context_fn():
    """checkpoint's default context_fn: no context around the forward, none around its recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """`function(*args, **kwargs)`, without keeping its intermediate tensors: backward recomputes them.

    Tensor arguments are remembered (they are needed to re-run `function`); other arguments and
    `kwargs` are passed to both runs as they are. With `preserve_rng_state` (the default) the
    recomputation sees the random generators (numpy's and cupy's) in the state the forward did,
    so random ops such as dropout draw the same values. `determinism_check="none"` skips the
    check that the recomputation saved the same tensors. `context_fn()` gives two context managers: the forward
    runs inside the first, the recomputation inside the second. `debug` and `early_stop` are taken and change
    nothing here (PyTorch's detailed error report; the recomputation runs whole). Outside grad mode this is just
    `function(*args, **kwargs)`. `use_reentrant=True` takes no `kwargs` and gives no gradients when no input
    requires grad, as PyTorch's; otherwise it recomputes as the non-reentrant variant does (the same gradients),
    under one CheckpointFunctionBackward node that refuses autograd.grad and backward(inputs=...) as PyTorch's.
    """
    if use_reentrant is None:
        # PyTorch warns when the variant is left unsaid (its default is still the reentrant one);
        # minigrad warns alike, then runs the only variant it has, which gives the same gradients.
        warnings.warn(_UNSAID.format("torch.utils.checkpoint", "Starting in PyTorch 2.9, calling checkpoint without "
                                     "use_reentrant will raise an exception."), stacklevel=2)
        use_reentrant = False
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if state.grad_enabled and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            # PyTorch's reentrant variant is a graph node over the inputs only: with none requiring grad, no
            # gradient reaches the parameters inside `function`.
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
            with no_grad():
                return function(*args)
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if not state.grad_enabled:
        return function(*args, **kwargs)
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, preserve_rng_state, determinism_check == "default", recompute_context)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        out = function(*args, **kwargs)
    frame.forward_done()
    return _reentrant_outputs(out) if use_reentrant else out


class CheckpointFunction(Function):
    """The reentrant variant's node over its outputs: PyTorch's name, and its refusal of autograd.grad and
    backward(inputs=...), under which PyTorch's reentrant backward cannot run. (Its outputs share memory with
    fn's, which nothing keeps: the tensors fn's ops save are recomputed in backward.)"""
    node_name = "CheckpointFunctionBackward"

    @staticmethod
    def forward(ctx, *outputs):
        return tuple(t.array.view() for t in outputs)

    @staticmethod
    def backward(ctx, *grads):
        if not _is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                               "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
                               "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        return grads


def _reentrant_outputs(out):
    single = isinstance(out, Tensor)
    outs = (out,) if single else out
    if not isinstance(outs, tuple) or not all(isinstance(t, Tensor) for t in outs):
        return out
    if not any(t.requires_grad for t in outs):
        return out
    views = CheckpointFunction.apply(*outs)
    views = views if isinstance(views, tuple) else (views,)
    return views[0] if single else views


def checkpoint_sequential(functions, segments, input, use_reentrant=None, preserve_rng_state=True):
    """Run `functions` (a list, or a module with `children()`) in order on `input`, in `segments`
    chunks: every chunk but the last is checkpointed (the last one's activations are needed at
    once by backward, so checkpointing it would only cost time)."""
    if use_reentrant is None:
        warnings.warn(_UNSAID.format("torch.utils.checkpoint.checkpoint_sequential", "In version 2.9 we will raise "
                                     "an exception if use_reentrant is not passed."), stacklevel=2)
        use_reentrant = False
    if isinstance(functions, (list, tuple)):
        functions = list(functions)
    elif hasattr(functions, "children"):
        functions = list(functions.children())
    else:
        functions = list(functions)
    n = len(functions)
    if not isinstance(segments, int) or not 1 <= segments <= max(n, 1):
        raise ValueError(f"segments must be an int between 1 and the number of functions ({n}), got {segments!r}")

    def run(start, end):
        def forward(x):
            for f in functions[start:end]:
                x = f(x)
            return x

        return forward

    size = n // segments
    start = 0
    for _ in range(segments - 1):
        input = checkpoint(run(start, start + size), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve_rng_state)
        start += size
    return run(start, n)(input)


class _Handle:
    """What the graph keeps for one tensor saved inside a checkpoint: its index in the frame."""

    __slots__ = ("frame", "index", "value", "__weakref__")

    def __init__(self, frame, index):
        self.frame, self.index, self.value = frame, index, None

    def _memory_parts(self):
        """For `minigrad.memory`: what this handle keeps alive (the recomputed tensor once
        backward has recomputed it; before that, a share of the checkpoint's inputs)."""
        if self.value is not None:
            return [(None, self.value)]
        frame = self.frame
        return [("CheckpointInputs", s) for s in frame.saved_inputs()] if frame is not None else []


class _Frame:
    """One checkpoint call: the function, its inputs, the RNG state and the handles given out."""

    def __init__(self, fn, args, kwargs, preserve_rng_state, check, context=None):
        self.fn, self.kwargs, self.check = fn, kwargs, check
        self.context = contextlib.nullcontext() if context is None else context  # (around the recomputation)
        # tensor inputs are saved as saved tensors, so an enclosing checkpoint's hooks pack them
        # too (nested checkpoints keep nothing of the outer function) and in-place edits are caught
        self.inputs = [(SavedTensor(a), a._requires_grad) if isinstance(a, Tensor) else a for a in args]
        self.rng = _rng_snapshot(args) if preserve_rng_state else None
        self.meta = []  # (shape, dtype) of each tensor the forward saved, in order
        self.handles = []  # weak references to the handles given out
        self.recomputed = False

    def name(self):
        return "checkpoint"

    def saved_inputs(self):
        return [a[0] for a in self.inputs if isinstance(a, tuple)] if self.inputs is not None else []

    def pack(self, t):
        h = _Handle(self, len(self.meta))
        self.meta.append((tuple(t.array.shape), t.array.dtype))
        self.handles.append(weakref.ref(h))
        return h

    def unpack(self, h):
        if h.value is None:
            self.recompute()
        return h.value

    def forward_done(self):
        # no random numbers drawn: nothing to replay (and no copy of a device generator to keep)
        if self.rng is not None and not _rng_changed(self.rng):
            self.rng = None

    def recompute(self):
        if self.recomputed:
            raise CheckpointError("checkpoint: a saved tensor was needed after its recomputed value was released")
        args = []
        for a in self.inputs:
            if isinstance(a, tuple):
                saved, requires_grad = a
                t = saved.unpack(self)
                d = Tensor._wrap(t.array, version_counter=t._version_counter)  # detached, as the original
                d._requires_grad = requires_grad
                args.append(d)
            else:
                args.append(a)
        recorded = []
        meta, check = self.meta, self.check

        def pack(t):
            i = len(recorded)
            if check:
                if i >= len(meta):
                    raise CheckpointError(
                        "checkpoint: the checkpointed function is not deterministic: its recomputation in "
                        f"backward saved more tensors for backward than the original forward ({len(meta)})"
                    )
                shape, dtype = meta[i]
                if tuple(t.array.shape) != shape or t.array.dtype != dtype:
                    raise CheckpointError(
                        "checkpoint: the checkpointed function is not deterministic: the tensor saved for "
                        f"backward at index {i} had shape {shape} and dtype {dtype} in the original forward, "
                        f"but shape {tuple(t.array.shape)} and dtype {t.array.dtype} in the recomputation"
                    )
            recorded.append(Tensor._wrap(t.array, version_counter=t._version_counter))  # no graph kept
            return None

        rng_now = _rng_snapshot(()) if self.rng is not None else None
        try:
            if self.rng is not None:
                _rng_restore(self.rng)
            with enable_grad(), saved_tensors_hooks(pack, _no_unpack), self.context:
                self.fn(*args, **self.kwargs)
        finally:
            if rng_now is not None:
                _rng_restore(rng_now)
        if check and len(recorded) != len(meta):
            raise CheckpointError(
                "checkpoint: the checkpointed function is not deterministic: the original forward saved "
                f"{len(meta)} tensors for backward but its recomputation saved {len(recorded)}"
            )
        for ref in self.handles:
            h = ref()
            if h is not None and h.index < len(recorded):
                h.value = recorded[h.index]
                h.frame = None
        # every live handle now holds its tensor: the inputs and the RNG copy are no longer needed
        self.recomputed = True
        self.inputs = self.handles = self.rng = None


def _no_unpack(_):
    raise CheckpointError("checkpoint: a tensor saved during recomputation was unpacked")


# ---- random state ------------------------------------------------------------------------------
def _rng_snapshot(args):
    """The generators' state: `minigrad.random.get_rng_state()`, plus a device copy of cupy's
    state, which lives in a device array (bit_generator._state) rather than in `.state`."""
    cp = _cupy()
    if cp is None and any(isinstance(a, Tensor) and a.device.type == "cuda" for a in args):
        cp = sys.modules["minigrad.device"]._import_cupy()
    if cp is not None:
        _random.generator(cp)  # create it now, so the snapshot covers what the function will draw
    st = dict(_random.get_rng_state())
    dev = None
    if callable(st.get("cuda")) or ("cuda" in st and st["cuda"] is None):
        st.pop("cuda")
        gen = _random.generator(cp)
        dev = gen.bit_generator._state.copy() if hasattr(gen.bit_generator, "_state") else None
    return st, dev


def _rng_restore(snap):
    st, dev = snap
    _random._set_rng_state(st)
    if dev is not None:
        _random.generator(_cupy()).bit_generator._state[...] = dev


def _rng_changed(snap):
    st, dev = snap
    now = _random.get_rng_state()
    if any(not _same(now.get(k), v) for k, v in st.items()):
        return True
    if dev is not None:
        return not bool((_random.generator(_cupy()).bit_generator._state == dev).all())
    return False


def _same(a, b):
    """Equal generator states (dicts of numbers, or arrays)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "shape") or hasattr(b, "shape"):
        return getattr(a, "shape", None) == getattr(b, "shape", None) and bool((a == b).all())
    return a == b


def _cupy():
    """cupy, if minigrad has loaded it (a CUDA tensor was made), else None."""
    return sys.modules["minigrad.device"]._cupy
