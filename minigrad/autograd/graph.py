"""Saved-tensor hooks: control how the tensors saved for backward are stored.

`with saved_tensors_hooks(pack, unpack):` every tensor an op saves inside the block is passed
to `pack` and what pack returns is kept instead; backward calls `unpack` on it (possibly more
than once) to get a tensor back. Thread-local; the innermost pair wins.

`with scope("encoder.layer0"):` stamps that name on every backward node made inside the block
(`node._scope`), so tools such as `minigrad.memory` can say which layer holds what.
"""
from . import function
from .function import scope_state
from .grad_mode import state


class saved_tensors_hooks:
    """Context manager installing a (pack_hook, unpack_hook) pair for saved tensors."""

    def __init__(self, pack_hook, unpack_hook):
        self.pair = (pack_hook, unpack_hook)

    def __enter__(self):
        function.saved_tensors_hooks_used = True
        state.saved_tensors_hooks.append(self.pair)
        return self

    def __exit__(self, *exc):
        state.saved_tensors_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors of a GPU computation in host memory; copy them back for backward.

    Tensors already on the CPU are kept as they are (the round trip is a no-op). With
    `pin_memory=True` the host copies go to page-locked memory (faster transfers).
    """

    def __init__(self, pin_memory=False):
        from ..device import array_module, to_device

        def pack(t):
            a = t.array
            if t.device.type == "cpu":
                return ("cpu", a)
            if pin_memory:
                import cupyx

                host = cupyx.empty_pinned(a.shape, dtype=a.dtype)
                array_module(a).ascontiguousarray(a).get(out=host)
                return ("cuda", host)
            return ("cuda", to_device(a, "cpu"))

        def unpack(packed):
            from ..tensor import Tensor

            dev, a = packed
            return Tensor._wrap(a if dev == "cpu" else to_device(a, "cuda"))

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Run a block with no saved-tensor hooks active."""

    def __init__(self, error_message=""):
        self.msg = error_message

    def __enter__(self):
        self.saved = list(state.saved_tensors_hooks)
        state.saved_tensors_hooks.clear()

    def __exit__(self, *exc):
        state.saved_tensors_hooks[:] = self.saved


class scope:
    """`with scope(name):` names the backward nodes made inside (thread-local; innermost wins).

    Function.apply stamps the active name on each node it records as `node._scope`; nothing is
    stamped outside any scope. `minigrad.memory.module_scopes(model)` enters one per module.
    """

    def __init__(self, name):
        self.name = str(name)

    def __enter__(self):
        function.scopes_entered = True
        self.prev = scope_state.current
        scope_state.current = self.name
        return self

    def __exit__(self, *exc):
        scope_state.current = self.prev


def current_scope():
    """The innermost active scope name on this thread, or None."""
    return scope_state.current
