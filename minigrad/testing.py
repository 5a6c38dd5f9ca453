"""`minigrad.testing`: torch.testing's `assert_close` and `make_tensor` (and the deprecated `assert_allclose`).

    >>> import minigrad
    >>> minigrad.testing.assert_close(minigrad.tensor([1.0, 2.0]), minigrad.tensor([1.0, 2.0 + 1e-7]))

`assert_close` compares tensors (or numpy arrays), Python numbers, and lists, tuples and dicts of them
(nested), with PyTorch's default tolerances for the dtype when rtol and atol are not given:
float16 (1e-3, 1e-5), float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7), exact for integers and bools.
A mismatch raises AssertionError naming the mismatched count and the greatest absolute and relative
differences, as PyTorch's does.
"""
import collections.abc
import math
import numbers
import warnings

import numpy as np

from . import dtypes
from .tensor import Tensor

__all__ = ["assert_close", "make_tensor"]  # (and assert_allclose, deprecated in PyTorch)

# (rtol, atol) per dtype, as torch.testing's defaults; any other dtype (integers, bool) compares exactly
_DEFAULT_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
                       np.dtype(np.float64): (1e-7, 1e-7), np.dtype(np.complex64): (1.3e-6, 1e-5),
                       np.dtype(np.complex128): (1e-7, 1e-7)}


class _Failure(Exception):
    """A mismatch found somewhere inside the inputs: the exception type to raise and its text."""

    def __init__(self, kind, text):
        super().__init__(text)
        self.kind, self.text = kind, text


def _tensor_like(x):
    return isinstance(x, (Tensor, np.ndarray))


def _number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, np.ndarray)


def _array(x):
    if isinstance(x, Tensor):
        return np.asarray(x.detach().cpu().numpy())
    return np.asarray(x)


def _tolerances(*dts):
    pairs = [_DEFAULT_TOLERANCES.get(np.dtype(d), (0.0, 0.0)) for d in dts]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _item(x):
    return x.item() if isinstance(x, np.generic) else x


def _scalar_text(expected, actual, diff, rel, rtol, atol):
    exact = rtol == 0 and atol == 0
    return (f"Scalars are not {'equal' if exact else 'close'}!\n\nExpected {expected} but got {actual}.\n"
            f"Absolute difference: {diff}{'' if exact else f' (up to {atol} allowed)'}\n"
            f"Relative difference: {rel}{'' if exact else f' (up to {rtol} allowed)'}")


def _compare_values(a, e, rtol, atol, equal_nan, scalar_kind=None):
    """Compare two arrays of one shape; raise _Failure describing the mismatch as torch.testing does."""
    exact = rtol == 0 and atol == 0
    kind = a.dtype.kind
    if kind == "b" or e.dtype.kind == "b":
        matches = a == e
    elif exact and kind in "iu" and e.dtype.kind in "iu":
        matches = a == e
    else:
        matches = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(np.all(matches)):
        return
    adjective = "equal" if exact else "close"
    floating = a.dtype.kind in "fc" or e.dtype.kind in "fc"
    if floating:
        dt = np.result_type(a, e)
        af, ef = a.astype(dt), e.astype(dt)
    else:  # integers and bools: their differences as int64
        af, ef = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        abs_diff = np.abs(af - ef)
        abs_diff = np.where(matches, np.zeros((), abs_diff.dtype), abs_diff)
        # (integers' ratio in the default float dtype, as PyTorch's true division of them)
        rel_diff = abs_diff / np.abs(ef) if floating else \
            abs_diff.astype(dtypes.default_float.np) / np.abs(ef).astype(dtypes.default_float.np)
        rel_diff = np.where(matches, np.zeros((), rel_diff.dtype), rel_diff)
    if a.ndim == 0:  # in Python numbers, as PyTorch reports a scalar
        av, ev = _item(af[()]), _item(ef[()])
        diff = abs(av - ev)
        rel = diff / abs(ev) if ev != 0 else (math.inf if diff > 0 else math.nan)
        raise _Failure(AssertionError, _scalar_text(_item(e[()]), _item(a[()]), diff, rel, rtol, atol))
    up_to_abs = "" if exact else f" (up to {atol} allowed)"
    up_to_rel = "" if exact else f" (up to {rtol} allowed)"
    total = matches.size
    bad = total - int(np.count_nonzero(matches))
    ia = np.unravel_index(int(np.argmax(abs_diff)), a.shape)  # (argmax: the first nan, if any, as torch.max)
    ir = np.unravel_index(int(np.argmax(rel_diff)), a.shape)
    ia, ir = tuple(int(i) for i in ia), tuple(int(i) for i in ir)
    text = (f"Tensor-likes are not {adjective}!\n\nMismatched elements: {bad} / {total} ({100 * bad / total:.1f}%)\n"
            f"Greatest absolute difference: {_item(abs_diff[ia])} at index {ia}{up_to_abs}\n"
            f"Greatest relative difference: {_item(rel_diff[ir])} at index {ir}{up_to_rel}")
    raise _Failure(AssertionError, text)


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype):
    from .tensor import Size

    a, e = _array(actual), _array(expected)
    if a.shape != e.shape:
        raise _Failure(AssertionError, f"The values for attribute 'shape' do not match: {Size(a.shape)} != "
                                       f"{Size(e.shape)}.")
    if check_device and isinstance(actual, Tensor) and isinstance(expected, Tensor) and actual.device != expected.device:
        raise _Failure(AssertionError, f"The values for attribute 'device' do not match: {actual.device} != "
                                       f"{expected.device}.")
    if check_dtype and a.dtype != e.dtype:
        da = actual.dtype if isinstance(actual, Tensor) else a.dtype
        de = expected.dtype if isinstance(expected, Tensor) else e.dtype
        raise _Failure(AssertionError, f"The values for attribute 'dtype' do not match: {da} != {de}.")
    if rtol is None:
        rtol, atol = _tolerances(a.dtype, e.dtype)
    _compare_values(a, e, rtol, atol, equal_nan)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) != bool(expected):
            raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    if rtol is None:
        rtol, atol = _tolerances(*(np.float64 if isinstance(x, float) else np.complex128 if isinstance(x, complex)
                                   else np.dtype(type(x)) if isinstance(x, np.generic) else np.int64
                                   for x in (actual, expected)))
    if isinstance(actual, int) and isinstance(expected, int):  # Python ints: exact arithmetic, however large
        diff = abs(actual - expected)
        if diff <= atol + rtol * abs(expected):
            return
        rel = diff / abs(expected) if expected else math.inf
        raise _Failure(AssertionError, _scalar_text(expected, actual, diff, rel, rtol, atol))
    _compare_values(np.asarray(actual), np.asarray(expected), rtol, atol, equal_nan)


def _compare(actual, expected, path, options):
    rtol, atol, equal_nan, check_device, check_dtype = options
    try:
        if _tensor_like(actual) and _tensor_like(expected):
            _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype)
        elif _number(actual) and _number(expected):
            _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype)
        elif actual is None and expected is None:
            pass
        elif isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
            if set(actual) != set(expected):
                missing = sorted((k for k in expected if k not in actual), key=repr)
                extra = sorted((k for k in actual if k not in expected), key=repr)
                raise _Failure(AssertionError, f"The keys of the mappings do not match:\n"
                                               f"Missing keys in the actual mapping: {missing}\n"
                                               f"Additional keys in the actual mapping: {extra}")
            for k in expected:
                _compare(actual[k], expected[k], path + [k], options)
        elif _sequence(actual) and _sequence(expected):
            if len(actual) != len(expected):
                raise _Failure(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
            for i, (x, y) in enumerate(zip(actual, expected)):
                _compare(x, y, path + [i], options)
        else:
            raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                                      f"{type(expected)}.")
    except _Failure as f:
        if path and not getattr(f, "located", False):
            f.text += "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in path)
            f.located = True
        raise


def _sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, (str, bytes))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False, check_device=True,
                 check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Assert that `actual` and `expected` are close: |actual - expected| <= atol + rtol * |expected| elementwise
    (nan equal to nan only when equal_nan). Tensors must match in shape, device and (with check_dtype) dtype;
    rtol and atol default to PyTorch's per dtype and must be given together. `msg` (a string, or a function of
    the generated text) replaces the message. allow_subclasses, check_layout and check_stride are accepted for
    PyTorch's signature."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    try:
        _compare(actual, expected, [], (rtol, atol, equal_nan, check_device, check_dtype))
    except _Failure as f:
        text = f.text
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise f.kind(text) from None


# assert_allclose's older (rtol, atol) per dtype; integers and bools compare exactly
_ALLCLOSE_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-3), np.dtype(np.float32): (1e-4, 1e-5),
                        np.dtype(np.float64): (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """torch.testing.assert_allclose, deprecated in PyTorch (and warned of as there) but still in older
    scripts: `assert_close` of the two made tensors (numbers and lists too), their dtypes free to differ,
    NaN equal to NaN, and by default the looser of the two dtypes' older tolerances: float16 (1e-3, 1e-3),
    float32 (1e-4, 1e-5), float64 (1e-5, 1e-8)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from .factory import as_tensor

    actual, expected = (x if isinstance(x, Tensor) else as_tensor(x) for x in (actual, expected))
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t.array.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of `shape` with values drawn uniformly from [low, high) by the default generator. Defaults by
    dtype (as PyTorch's): bool [0, 2), unsigned [0, 10), signed integers [-9, 10), floats [-9, 9).
    exclude_zero replaces zeros (by 1 for integers, the dtype's smallest normal number for floats)."""
    import minigrad
    from .random import generator

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if not isinstance(dtype, minigrad.dtype):  # (PyTorch's own test helper: its dtypes only, not float or numpy's)
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). To request "
                        "support, file an issue at: https://github.com/pytorch/pytorch/issues")
    dt = dtype
    npd = dt.np
    rng = generator(np)
    if requires_grad and npd.kind != "f":
        raise ValueError("make_tensor: requires_grad must be False for integral dtype")
    if npd.kind == "b":
        arr = rng.integers(0, 2, size=shape).astype(np.bool_)
    elif npd.kind in "iu":
        info = np.iinfo(npd)
        lo = (0 if npd.kind == "u" else -9) if low is None else max(math.ceil(low), info.min)
        hi = 10 if high is None else min(math.ceil(high), info.max)
        _check_range(lo, hi)
        arr = np.full(shape, lo, dtype=npd) if lo == hi else rng.integers(lo, hi, size=shape).astype(npd)
        if exclude_zero:
            arr[arr == 0] = 1
    else:
        info = np.finfo(npd)
        lo = -9.0 if low is None else max(float(low), float(info.min))
        hi = 9.0 if high is None else min(float(high), float(info.max))
        _check_range(lo, hi)
        arr = np.full(shape, lo, dtype=npd) if lo == hi else rng.uniform(lo, hi, size=shape).astype(npd)
        if exclude_zero:
            arr[arr == 0] = info.tiny
    if noncontiguous and arr.size > 1:  # the same values, every other element of a twice-as-long last dim
        wide = np.repeat(arr, 2, axis=-1)
        wide[..., 1::2] = 0
        arr = wide[..., ::2]
    return minigrad.tensor(arr, dtype=dt, device=device, requires_grad=requires_grad)


def _check_range(low, high):
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
