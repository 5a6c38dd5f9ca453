"""Grad mode: whether ops record backward nodes. Thread-local, as in PyTorch."""
import functools
import inspect
import sys
import threading
import warnings


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True  # whether ops record: PyTorch's grad mode, and off in inference mode whatever it is
        self.inference = False
        # grad mode turned on under inference_mode (enable_grad, set_grad_enabled(True)): is_grad_enabled() says
        # True, as PyTorch's, yet nothing records (its inference mode leaves autograd out, whatever the grad mode)
        self.grad_shown = False
        self.saved_tensors_hooks = []  # stack of (pack, unpack); the innermost pair wins
        self.anomaly = False  # detect_anomaly: the engine checks each node's gradients for NaN
        self.anomaly_check_nan = True
        # the running backward's retain_graph (True outside one): whether a node's backward may free what it
        # saved as it goes, rather than after it returns (compile's node, whose backward is a whole program)
        self.retain_graph = True
        # False while autograd.grad or backward(inputs=...) runs its engine, whose backward PyTorch's reentrant
        # checkpoint refuses (this thread's: another thread's plain backward is unaffected)
        self.checkpoint_valid = True


state = _State()


def is_grad_enabled():
    """PyTorch's grad mode: True when ops on tensors that require grad record the graph, and inside
    enable_grad under inference_mode, where nothing records."""
    return state.grad_enabled or state.grad_shown


def _set_grad_mode(mode):
    state.grad_enabled, state.grad_shown = mode and not state.inference, mode and state.inference


def is_inference_mode_enabled():
    return state.inference


class _GradModeContext:
    """Base for context managers that are also decorators (PyTorch's _DecoratorContextManager)."""

    def __call__(self, func):
        if inspect.isclass(func):  # PyTorch still wraps the class's call, and warns
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)

        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamGradModeContext(_GradModeContext):
    """One that also decorates without parentheses: `@no_grad` is `@no_grad()`."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


def _wrap_generator(make_context, func):
    """A generator function whose body runs in the mode at each resume, and the caller's mode between
    yields (PyTorch's: a context around the whole generator would leak into the caller at each yield)."""

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with make_context():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        gen.close()
                    raise
                except BaseException:
                    with make_context():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_context():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator_context


class no_grad(_NoParamGradModeContext):
    """Run without recording: no backward node and no saved tensor is created. `with no_grad():`, `@no_grad()`
    or `@no_grad`."""

    def __enter__(self):
        self.prev = state.grad_enabled, state.grad_shown
        state.grad_enabled = state.grad_shown = False

    def __exit__(self, *exc):
        state.grad_enabled, state.grad_shown = self.prev


class enable_grad(_NoParamGradModeContext):
    """Turn recording back on inside a `no_grad` block (not inside inference_mode: grad mode is on there, as in
    PyTorch, and nothing records)."""

    def __enter__(self):
        self.prev = state.grad_enabled, state.grad_shown
        _set_grad_mode(True)

    def __exit__(self, *exc):
        state.grad_enabled, state.grad_shown = self.prev


class set_grad_enabled(_GradModeContext):
    """`set_grad_enabled(mode)`: sets grad mode at once, and restores it on exit if used with `with`."""

    def __init__(self, mode):
        if not isinstance(mode, bool):  # (`set_grad_enabled(0)`, a string: PyTorch's argument parser refuses)
            from ..tensor import type_name
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type_name(mode)}")
        self.prev = state.grad_enabled, state.grad_shown
        self.mode = mode
        _set_grad_mode(mode)

    def __call__(self, func):
        # used as a decorator, it must not change the mode now: undo what __init__ did
        state.grad_enabled, state.grad_shown = self.prev
        return super().__call__(func)

    def __enter__(self):
        _set_grad_mode(self.mode)

    def __exit__(self, *exc):
        state.grad_enabled, state.grad_shown = self.prev

    def clone(self):
        return self.__class__(self.mode)

    def __repr__(self):
        return f"minigrad.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


inference_tensors_made = False  # True once any thread of the process entered inference_mode: a cheap first test


class inference_mode(_GradModeContext):
    """Like `no_grad`, for code that will never need gradients (generation, evaluation). `inference_mode(False)`
    leaves it, turning recording on, as PyTorch's. `@inference_mode` decorates without parentheses too."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):  # (PyTorch's test: anything else is the function to decorate)
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        global inference_tensors_made
        self.prev = (state.grad_enabled, state.inference, state.grad_shown)
        state.grad_enabled, state.inference, state.grad_shown = not self.mode, self.mode, False
        inference_tensors_made = inference_tensors_made or self.mode

    def __exit__(self, *exc):
        state.grad_enabled, state.inference, state.grad_shown = self.prev

    def clone(self):
        return self.__class__(self.mode)


# ---- anomaly mode ----------------------------------------------------------------------------------------
def is_anomaly_enabled():
    """True inside detect_anomaly / set_detect_anomaly(True)."""
    return state.anomaly


def is_anomaly_check_nan_enabled():
    return state.anomaly_check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly mode (see detect_anomaly) on or off for good, as set_detect_anomaly without restoring."""
    for pos, (arg, v) in enumerate((("enabled", enabled), ("check_nan", check_nan)), 1):
        if not isinstance(v, bool):
            raise TypeError(f"set_anomaly_enabled(): argument '{arg}' (position {pos}) must be bool, not "
                            f"{type(v).__name__}")
    state.anomaly, state.anomaly_check_nan = enabled, check_nan


class detect_anomaly(_GradModeContext):
    """Anomaly mode for the backward passes inside it: a node whose backward returns a NaN gradient raises
    RuntimeError("Function 'SqrtBackward0' returned nan values in its 0th output."), naming the node, as PyTorch
    (unless check_nan=False). PyTorch also prints the forward traceback that created the node; minigrad keeps
    no such traceback. A context manager and a decorator."""

    def __init__(self, check_nan=True):
        self.check_nan = bool(check_nan)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (state.anomaly, state.anomaly_check_nan)
        state.anomaly, state.anomaly_check_nan = True, self.check_nan

    def __exit__(self, *exc):
        state.anomaly, state.anomaly_check_nan = self.prev

    def clone(self):
        return _quiet(detect_anomaly, self.check_nan)


class set_detect_anomaly(_GradModeContext):
    """`set_detect_anomaly(mode, check_nan=True)`: turns anomaly mode (see detect_anomaly) on or off at once,
    and restores the previous setting on exit when used with `with`."""

    def __init__(self, mode, check_nan=True):
        self.prev = (state.anomaly, state.anomaly_check_nan)
        self.mode, self.check_nan = bool(mode), bool(check_nan)
        state.anomaly, state.anomaly_check_nan = self.mode, self.check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.anomaly, state.anomaly_check_nan = self.prev

    def clone(self):
        return self.__class__(self.mode, self.check_nan)


def _quiet(cls, *args):
    """cls(*args) without its warning (a decorator's context is made again at each call)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(*args)


_multithreading = [True]  # minigrad's engine runs every backward on the calling thread: the flag is kept, not used


def is_multithreading_enabled():
    """Whether backward may run device work on its own threads (PyTorch's flag; True by default)."""
    return _multithreading[0]


class set_multithreading_enabled(_GradModeContext):
    """`set_multithreading_enabled(mode)`: sets the flag at once, and restores it on exit when used with `with`."""

    def __init__(self, mode):
        self.prev = _multithreading[0]
        self.mode = bool(mode)
        _multithreading[0] = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _multithreading[0] = self.prev

    def clone(self):
        return self.__class__(self.mode)


def is_view_replay_enabled():
    """Whether views are replayed rather than as_strided'ed in backward: minigrad never replays (PyTorch's default)."""
    return False
