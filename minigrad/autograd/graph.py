"""Saved-tensor hooks: control how the tensors saved for backward are stored.

`with saved_tensors_hooks(pack, unpack):` every tensor an op saves inside the block is passed
to `pack` and what pack returns is kept instead; backward calls `unpack` on it (possibly more
than once) to get a tensor back. Thread-local; the innermost pair wins.
"""
from .grad_mode import state


class saved_tensors_hooks:
    """Context manager installing a (pack_hook, unpack_hook) pair for saved tensors."""

    def __init__(self, pack_hook, unpack_hook):
        self.pair = (pack_hook, unpack_hook)

    def __enter__(self):
        state.saved_tensors_hooks.append(self.pair)
        return self

    def __exit__(self, *exc):
        state.saved_tensors_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors of a GPU computation in host memory; copy them back for backward."""

    def __init__(self, pin_memory=False):
        def pack(t):
            from ..tensor import Tensor

            return (t.device, Tensor(t.cpu().data) if t.device.type != "cpu" else t)

        def unpack(packed):
            dev, t = packed
            return t if dev.type == "cpu" else t.to(dev)

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
