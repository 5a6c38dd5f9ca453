"""numpy's floating-point warnings switched off around minigrad's own array arithmetic.

PyTorch computes inf and nan silently: x / 0, exp(1000.), inf - inf. numpy gives the same values but warns
("divide by zero encountered in divide"), and under `-W error` raises. minigrad enters numpy's "ignore
everything" state around its calls (each op's forward, a whole backward pass, a compiled replay) and puts
the caller's state back on the way out: the user's own numpy code keeps the state they chose (except
what runs inside those calls: a user Function's forward and backward, and backward hooks, run quiet too).

numpy 2 keeps that state in a ContextVar; setting it directly costs a fraction of `np.errstate`'s
context manager, which stays the fallback where that private name is gone.

    token = quiet()
    try:
        ...numpy arithmetic...
    finally:
        restore(token)
"""
import functools

import numpy as np

try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _state
except ImportError:  # (another numpy: its public context manager, entered and left by hand)
    _state = None

if _state is not None:
    with np.errstate(all="ignore"):
        _QUIET = _state.get()  # numpy's state object for "ignore all"
    # quiet(): enter numpy's ignore-all state, returning the token that `restore` takes (a partial of the
    # ContextVar's own set: no Python frame per op)
    quiet = functools.partial(_state.set, _QUIET)
    restore = _state.reset
else:
    def quiet():
        errstate = np.errstate(all="ignore")
        errstate.__enter__()
        return errstate

    def restore(token):
        token.__exit__(None, None, None)
