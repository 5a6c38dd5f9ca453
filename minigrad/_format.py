"""`repr(tensor)` as PyTorch prints it (its default print options: precision 4, threshold 1000,
edgeitems 3, linewidth 80): `tensor([1.5000, 2.2500])`, `tensor(28.)`, `tensor([ True, False])`."""
import math

import numpy as np

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80
SCI_MODE = None  # None: chosen per tensor; True / False: always / never scientific
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """PyTorch's print options: digits after the point, the element count past which a tensor is summarized,
    the items kept at each edge then, the line width; a profile ('default', 'short', 'full') sets all four
    first. sci_mode True / False forces scientific notation on or off (None: chosen per tensor)."""
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"Unknown profile {profile!r}: use 'default', 'short' or 'full'")
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = _PROFILES[profile]
    PRECISION = PRECISION if precision is None else int(precision)
    THRESHOLD = THRESHOLD if threshold is None else threshold
    EDGEITEMS = EDGEITEMS if edgeitems is None else int(edgeitems)
    LINEWIDTH = LINEWIDTH if linewidth is None else int(linewidth)
    SCI_MODE = sci_mode


class _Formatter:
    """One width and style (integer-valued, fixed or scientific) for every element, as PyTorch picks them."""

    def __init__(self, a):
        self.floating = a.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = a.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(_plain(v)))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if vals.size == 0:
            return
        absv = np.abs(vals)
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        if SCI_MODE is not None:
            self.sci_mode = bool(SCI_MODE)
        for v in vals.tolist():
            if self.sci_mode:
                s = f"{v:.{PRECISION}e}"
            elif self.int_mode:
                s = f"{v:.0f}."
            else:
                s = f"{v:.{PRECISION}f}"
            self.max_width = max(self.max_width, len(s))

    def format(self, v):
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                s = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
            else:
                s = f"{v:.{PRECISION}f}"
        else:
            s = _plain(v)
        return (self.max_width - len(s)) * " " + s


def _plain(v):
    return str(v)


def _summarized(a):
    """The elements shown when summarizing (the edge items of every dim), for the formatter's width."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * EDGEITEMS:
        a = np.concatenate([a[:EDGEITEMS], a[-EDGEITEMS:]])
    if a.ndim == 1:
        return a
    return np.stack([_summarized(x) for x in a])


def _vector(a, indent, summarize, fmt):
    per_line = max(1, math.floor((LINEWIDTH - indent) / (fmt.max_width + 2)))
    if summarize and not EDGEITEMS:
        return "[...]"
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        data = [fmt.format(v) for v in a[:EDGEITEMS].tolist()] + [" ..."]
        data += [fmt.format(v) for v in a[-EDGEITEMS:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _body(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    if summarize and not EDGEITEMS:
        rows = ["..."]
    elif summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = [_body(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."]
        rows += [_body(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - EDGEITEMS, a.shape[0])]
    else:
        rows = [_body(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


class _ComplexFormatter:
    """PyTorch's complex style: the real parts formatted as one real tensor, the imaginary parts as
    another, joined as `1.+2.0000j`."""

    def __init__(self, a):
        self.re, self.im = _Formatter(a.real), _Formatter(a.imag)
        self.max_width = self.re.max_width + self.im.max_width + 1  # the sign is in the imaginary width; the "j" is not

    def format(self, v):
        imag = (self.im.format(v.imag) + "j").lstrip()
        return self.re.format(v.real) + (imag if imag[0] in "+-" else "+" + imag)


def tensor_repr(a, suffixes, prefix="tensor("):
    """The repr of array `a` (on the CPU) with `suffixes` (device=, dtype=, grad_fn=, ...) appended."""
    indent = len(prefix)
    if a.dtype.kind == "c":
        a_fmt = a.astype(np.complex128)
    elif a.dtype.kind == "f" and a.dtype != np.float64:
        a_fmt = a.astype(np.float64)  # format float16/float32 values with Python floats, as PyTorch does
    else:
        a_fmt = a
    if a.size == 0:
        body = "[]"
    else:
        summarize = a.size > THRESHOLD
        fmt = (_ComplexFormatter if a.dtype.kind == "c" else _Formatter)(_summarized(a_fmt) if summarize else a_fmt)
        body = _body(a_fmt, indent, summarize, fmt)
    return add_suffixes(prefix + body, suffixes, indent)


def add_suffixes(text, suffixes, indent, force_newline=False):
    """`text, suffix, ...)`: each suffix on the line if it fits in LINEWIDTH, else on a new line at `indent`
    (the first one there anyway with `force_newline`)."""
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        width = len(s.replace("minigrad.", "torch."))  # (measured as PyTorch spells it: lines break where its do)
        if force_newline or last + width + 2 > LINEWIDTH:
            out.append(",\n" + " " * indent + s)
            last, force_newline = indent + width, False
        else:
            out.append(", " + s)
            last += width + 2
    return "".join(out) + ")"
