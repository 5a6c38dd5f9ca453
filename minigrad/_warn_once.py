"""PyTorch's warnings given once a process (its TORCH_WARN_ONCE), and the switch that has them given every time.

One mechanism for every such warning: `warn_once(key, text)`, keyed per warning as PyTorch keys them per place
in its source. `set_warn_always(True)` makes each say every time, as PyTorch's does. A warning names the user's
line, the first outside the library, as PyTorch's warnings from C++ name the line that called into it."""
import os
import sys
import warnings

_warn_always = False
_said_once = set()  # the keys of the warnings given already

# the library's own folders (minigrad and its sibling nn): a warning names the first line outside them
_LIBRARY = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) + os.sep
                 for d in ("minigrad", "nn"))


def set_warn_always(b):
    """PyTorch's switch for warnings it gives once a process (minigrad's others keep Python's filters)."""
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled():
    return _warn_always


def warn_once(key, text):
    """A UserWarning `text` the first time `key` is said, and every time under set_warn_always(True)."""
    if key not in _said_once or _warn_always:
        _said_once.add(key)
        warnings.warn(text, UserWarning, stacklevel=user_stacklevel())


def user_stacklevel():
    """warnings.warn's stacklevel, for a warning given in a function of the library, that names the first line
    outside the library (the user's); 2 (the caller's) where every line is the library's."""
    frame, level = sys._getframe(2), 2  # (the frame that called the warning's giver, as stacklevel=2 would)
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2
