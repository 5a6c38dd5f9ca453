"""Grad mode: whether ops record backward nodes. Thread-local, as in PyTorch."""
import functools
import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        self.saved_tensors_hooks = []  # stack of (pack, unpack); the innermost pair wins


state = _State()


def is_grad_enabled():
    """True when ops on tensors that require grad record the graph."""
    return state.grad_enabled


def is_inference_mode_enabled():
    return state.inference


class _GradModeContext:
    """Base for context managers that are also decorators."""

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_GradModeContext):
    """Run without recording: no backward node and no saved tensor is created."""

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class enable_grad(_GradModeContext):
    """Turn recording back on inside a `no_grad` block."""

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class set_grad_enabled(_GradModeContext):
    """`set_grad_enabled(mode)`: sets grad mode at once, and restores it on exit if used with `with`."""

    def __init__(self, mode):
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __call__(self, func):
        # used as a decorator, it must not change the mode now: undo what __init__ did
        state.grad_enabled = self.prev
        return super().__call__(func)

    def __enter__(self):
        state.grad_enabled = self.mode

    def __exit__(self, *exc):
        state.grad_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_GradModeContext):
    """Like `no_grad`, for code that will never need gradients (generation, evaluation)."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self.prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled, state.inference = False, True

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self.prev

    def clone(self):
        return self.__class__(self.mode)
