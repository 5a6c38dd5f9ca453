"""torch.fft's transforms on numpy's pocketfft, with their gradients; torch.stft and torch.istft built on them.

The backward of a transform is the adjoint transform: fft's is ifft with the dual norm ("backward" and
"forward" trade places, "ortho" is its own), resized back to the input's length. rfft's takes the real part
of that (its input is real); irfft's doubles the bins that stand for a conjugate pair.
"""

import numpy as np

from .autograd.function import Function
from ._warn_once import warn_once
from .dtypes import default_float, from_numpy_dtype, type_text
from .ops._util import normalize_dim
from .ops.complex import _scalar_type, complex_of, conj, real_of, view_as_real
from .ops.out import take_out
from .ops.scatter import _pad_to
from .tensor import Tensor, dtype_argument

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm):
    norm = "backward" if norm is None else norm
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _resized(g, dim, n):
    """`g` cut or zero-padded along `dim` to length `n` (what the forward did to its input, undone)."""
    have = g.shape[dim]
    if have == n:
        return g
    if have > n:
        return g.narrow(dim, 0, n)
    pad = list(g.shape)
    pad[dim] = n - have
    return _cat(g, g.new_zeros(pad), dim)


def _resized_all(g, dims, lengths):
    for d, n in zip(dims, lengths):
        g = _resized(g, d, n)
    return g


def _cat(a, b, dim):
    from .ops.shape import cat

    return cat([a, b], dim)


class FFT(Function):
    node_name = "FftC2CBackward0"

    @staticmethod
    def forward(ctx, a, s, dims, norm, inverse):
        x = a.array
        ctx.args = (tuple(x.shape[d] for d in dims), dims, norm, inverse)
        out_dt = x.dtype if x.dtype.kind == "c" else complex_of(x.dtype)
        return (np.fft.ifftn if inverse else np.fft.fftn)(x, s, dims, norm).astype(out_dt, copy=False)

    @staticmethod
    def backward(ctx, g):
        lengths, dims, norm, inverse = ctx.args
        return _resized_all(FFT.apply(g, None, dims, _DUAL[norm], not inverse), dims, lengths), None, None, None, None


class RFFT(Function):
    node_name = "FftR2CBackward0"

    @staticmethod
    def forward(ctx, a, s, dims, norm, onesided=True):
        x = a.array
        ctx.args = (tuple(x.shape[d] for d in dims), s, dims, norm, onesided)
        return (np.fft.rfftn if onesided else np.fft.fftn)(x, s, dims, norm).astype(complex_of(x.dtype), copy=False)

    @staticmethod
    def backward(ctx, g):  # the adjoint of "the first n//2+1 bins of fftn": ifftn of those bins, zeros after
        lengths, s, dims, norm, onesided = ctx.args
        full = _resized(g, dims[-1], s[-1]) if onesided else g
        return _resized_all(FFT.apply(full, None, dims, _DUAL[norm], True).real, dims, lengths), None, None, None, None


class IRFFT(Function):
    node_name = "FftC2RBackward0"

    @staticmethod
    def forward(ctx, a, s, dims, norm):
        x = a.array
        ctx.args = (tuple(x.shape[d] for d in dims), s, dims, norm)
        return np.fft.irfftn(x, s, dims, norm).astype(real_of(x.dtype), copy=False)

    @staticmethod
    def backward(ctx, g):
        lengths, s, dims, norm = ctx.args
        gy = RFFT.apply(g, s, dims, _DUAL[norm])
        bins, last = gy.shape[dims[-1]], dims[-1]
        twice = np.full(bins, 2.0, dtype=real_of(gy.array.dtype))  # each bin but 0 (and n/2) stands for two
        twice[0] = 1.0
        if s[-1] % 2 == 0:
            twice[-1] = 1.0
        shape = [1] * gy.ndim
        shape[last] = bins
        return _resized_all(gy * Tensor._wrap(twice.reshape(shape)), dims, lengths), None, None, None


def _plan(x, s, dim, one_sided_out=False):
    """torch.fft's (s, dim) resolved on x: the dims (in [0, ndim)) and each one's length (s's -1 and None
    mean the input's; for irfft the last is 2 * (bins - 1))."""
    if s is not None and not isinstance(s, (tuple, list)):
        s = (s,)
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        dim = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
        if s is not None and len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions.")
    if x.ndim == 0 and len(dim):  # (an fft takes no 0-d tensor as 1-d, as other ops' dims do)
        raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
    dims = tuple(normalize_dim(d, x.ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes = [x.shape[d] for d in dims]
    if one_sided_out and dims:
        sizes[-1] = 2 * (sizes[-1] - 1)
    if s is not None:
        sizes = [n if m == -1 else m for n, m in zip(sizes, s)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, tuple(sizes)


def _floating(input):
    return input if input.array.dtype.kind in "fc" else input.to(default_float)


def _fit(input, dims, sizes):
    """The input cut (a slice) or zero-padded (one constant pad) to the transform's sizes before it, as
    PyTorch records it, so the transform itself sees its full length."""
    for d, n in zip(dims, sizes):
        if input.array.shape[d] > n:
            input = input.narrow(d, 0, n)
    shape = list(input.array.shape)
    for d, n in zip(dims, sizes):
        shape[d] = n
    return _pad_to(input, shape)


def _c2c(input, s, dim, norm, inverse, one_dim=False):
    input = _floating(input)
    dims, sizes = _plan(input, s, dim)
    if one_dim and input.array.dtype.kind != "c":  # fft of a real input: PyTorch's two-sided r2c (ifft's its conjugate)
        x = RFFT.apply(_fit(input, dims, sizes), sizes, dims, _DUAL[_norm(norm)] if inverse else _norm(norm), False)
        return conj(x) if inverse else x
    if input.array.dtype.kind != "c":  # made complex by a recorded cast, so a real input's gradient is real
        input = input.to(from_numpy_dtype(complex_of(input.array.dtype)))
    return FFT.apply(_fit(input, dims, sizes), sizes, dims, _norm(norm), inverse)


def _r2c(input, s, dim, norm, name):
    if input.array.dtype.kind == "c":
        raise RuntimeError(f"{name} expects a real{'-valued' if name[-1] == 'n' else ''} input tensor, but got "
                           f"{_scalar_type(input.array.dtype)}")
    input = _floating(input)
    dims, sizes = _plan(input, s, dim)
    return RFFT.apply(_fit(input, dims, sizes), sizes, dims, _norm(norm))


def _fit_half(input, s, dim):
    """A half-spectrum's (s, dim) planned, and the input fitted to the bins the output's sizes take."""
    if input.array.dtype.kind != "c":
        input = input.to(from_numpy_dtype(complex_of(_floating(input).array.dtype)))
    dims, sizes = _plan(input, s, dim, one_sided_out=True)
    return _fit(input, dims, sizes[:-1] + (sizes[-1] // 2 + 1,)), dims, sizes


def _c2r(input, s, dim, norm):
    input, dims, sizes = _fit_half(input, s, dim)
    return IRFFT.apply(input, sizes, dims, _norm(norm))


def _one(n):
    if n is not None and n < 1:  # (a 1-D transform's n; fftn's s may say -1 for "the input's length")
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return None if n is None else (n,)


def fft(input, n=None, dim=-1, norm=None):
    """The one-dimensional discrete Fourier transform along `dim` (a real input is taken as complex)."""
    return _c2c(input, _one(n), dim, norm, False, one_dim=True)


def ifft(input, n=None, dim=-1, norm=None):
    return _c2c(input, _one(n), dim, norm, True, one_dim=True)


def rfft(input, n=None, dim=-1, norm=None):
    """fft of a real input: its n//2 + 1 non-negative frequencies."""
    return _r2c(input, _one(n), dim, norm, "rfft")


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of rfft: a real signal of length n (2 * (bins - 1) when not given)."""
    return _c2r(input, _one(n), dim, norm)


def fftn(input, s=None, dim=None, norm=None):
    """fft over each of `dim` (all dims, or the last len(s), when not given)."""
    return _c2c(input, s, dim, norm, False)


def ifftn(input, s=None, dim=None, norm=None):
    return _c2c(input, s, dim, norm, True)


def rfftn(input, s=None, dim=None, norm=None):
    """fftn of a real input, one-sided along the last of `dim`."""
    return _r2c(input, s, dim, norm, "rfftn")


def irfftn(input, s=None, dim=None, norm=None):
    return _c2r(input, s, dim, norm)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return ifftn(input, s, dim, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _r2c(input, s, dim, norm, "rfftn")


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return irfftn(input, s, dim, norm)


# hfft's forward transform of a Hermitian half-spectrum is irfft's of its conjugate under the dual norm
def hfftn(input, s=None, dim=None, norm=None):
    input, dims, sizes = _fit_half(_floating(input), s, dim)
    return IRFFT.apply(conj(input), sizes, dims, _DUAL[_norm(norm)])


def hfft(input, n=None, dim=-1, norm=None):
    return hfftn(input, _one(n), dim, norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return hfftn(input, s, dim, norm)


def ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of hfftn: the conjugate of rfft along the last of `dim` (dual norm), then ifft along the rest."""
    if input.array.dtype.kind == "c":
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {_scalar_type(input.array.dtype)}")
    input = _floating(input)
    dims, sizes = _plan(input, s, dim)
    half = conj(RFFT.apply(_fit(input, dims, sizes), sizes[-1:], dims[-1:], _DUAL[_norm(norm)]))
    return FFT.apply(half, sizes[:-1], dims[:-1], _norm(norm), True) if len(dims) > 1 else half


def ihfft(input, n=None, dim=-1, norm=None):
    if input.array.dtype.kind == "c":
        raise RuntimeError(f"ihfft expects a real input tensor, but got {_scalar_type(input.array.dtype)}")
    return ihfftn(input, _one(n), dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return ihfftn(input, s, dim, norm)


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kw):
    from .factory import tensor

    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return tensor(np.fft.fftfreq(n, d) if n else np.zeros(0), dtype=dtype_argument(dtype, "fft_fftfreq") or default_float, requires_grad=requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kw):
    from .factory import tensor

    return tensor(np.fft.rfftfreq(n, d), dtype=dtype_argument(dtype, "fft_rfftfreq") or default_float, requires_grad=requires_grad)


def _shift_dims(input, dim):
    dims = tuple(range(input.ndim)) if dim is None else (dim if isinstance(dim, (tuple, list)) else (dim,))
    return tuple(normalize_dim(d, input.ndim) for d in dims)


def fftshift(input, dim=None):
    dims = _shift_dims(input, dim)
    return input.roll([input.shape[d] // 2 for d in dims], tuple(dims))


def ifftshift(input, dim=None):
    dims = _shift_dims(input, dim)
    return input.roll([-(input.shape[d] // 2) for d in dims], tuple(dims))


# ---- short-time transforms -------------------------------------------------------------------
def _frames(n, n_fft, hop):
    """The index array (frames, n_fft) of the windows of a signal of length n."""
    count = 1 + (n - n_fft) // hop
    return np.arange(count)[:, None] * hop + np.arange(n_fft)[None, :]


def _window(window, win_length, n_fft, like):
    """The window padded (centred) to n_fft, as PyTorch's stft pads it; ones where none is given."""
    if window is None:
        window = Tensor._wrap(np.ones(win_length, dtype=real_of(complex_of(like.array.dtype))
                                      if like.array.dtype.kind == "f" else like.array.dtype))
    left = (n_fft - win_length) // 2
    if left or win_length != n_fft:
        window = _cat(_cat(window.new_zeros(left), window, 0), window.new_zeros(n_fft - win_length - left), 0)
    return window


def _warn_once(text):
    warn_once(text, text)


def _window_text(window):
    return "None" if window is None else f"{type_text(window.dtype)}{{{list(window.shape)}}}"


def _flag(value):
    return "None" if value is None else int(value)


_REAL_STFT = ("stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex "
              "tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still call "
              "torch.view_as_real on the complex output to recover the old return format.")


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """Short-time Fourier transform of a 1D signal or a batch (B, N): (B?, n_fft//2 + 1, frames) complex.
    Framing and padding are index gathers, so the gradient flows through them and through rfft."""
    if return_complex is None and input.array.dtype.kind != "c" and (window is None or not window.is_complex()):
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if return_complex is False:  # (PyTorch's deprecated form: the complex result's real view)
        _warn_once(_REAL_STFT)
        return view_as_real(stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                                 onesided, return_complex=True))
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    pad = n_fft // 2 if center else 0
    shape = list(input.shape[:-1]) + [input.shape[-1] + 2 * pad] if input.ndim else []  # (checked once padded)

    call = (f"stft({type_text(input.dtype)}{shape}, n_fft={n_fft}, hop_length={hop}, win_length={win_length}, "
            f"window={_window_text(window)}, normalized={int(normalized)}, onesided={_flag(onesided)}, "
            "return_complex=1, align_to_window=None)")  # (PyTorch's texts begin with the call)

    def check(ok, problem):
        if not ok:
            raise RuntimeError(f"{call} : {problem}")

    check(input.ndim in (1, 2), "expected a 1D or 2D tensor")
    check(input.array.dtype.kind in "fc", "expected a tensor of floating point or complex values")
    check(0 < n_fft <= shape[-1], f"expected 0 < n_fft < {shape[-1]}, but got n_fft={n_fft}")
    check(hop > 0, f"expected hop_length > 0, but got hop_length={hop}")
    check(0 < win_length <= n_fft, f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    check(window is None or (window.ndim == 1 and window.shape[0] == win_length),
          f"expected a 1D window tensor of size equal to win_length={win_length}, but got window with size "
          f"{list(window.shape) if window is not None else []}")
    if input.array.dtype.kind == "c":
        raise NotImplementedError("stft of a complex signal is not supported by minigrad")
    if window is None:
        _warn_once("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
                   "leakage. Other windows such as minigrad.hann_window or minigrad.hamming_window are recommended to "
                   "reduce spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=minigrad.ones(n_fft, device=<device>)`.")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        n = x.shape[-1]
        # (PyTorch pads the (1, B, N) view with F.pad: its modes, and its refusals of too short a signal)
        if pad_mode == "reflect" and pad >= n:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({pad}, {pad}) at dimension 2 of input [1, {x.shape[0]}, {n}]")
        if pad_mode == "circular" and pad > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if pad_mode == "constant":
            zeros = x.new_zeros((x.shape[0], pad))
            x = _cat(_cat(zeros, x, 1), zeros, 1)
        else:
            if pad_mode == "reflect":
                idx = np.abs(np.arange(-pad, n + pad))
                idx = np.where(idx >= n, 2 * (n - 1) - idx, idx)
            elif pad_mode == "replicate":
                idx = np.clip(np.arange(-pad, n + pad), 0, n - 1)
            elif pad_mode == "circular":
                idx = np.arange(-pad, n + pad) % n
            else:
                raise NotImplementedError(f"Unrecognised padding mode {pad_mode}")
            x = x[:, Tensor._wrap(idx)]
    frames = x[:, Tensor._wrap(_frames(x.shape[-1], n_fft, hop))] * _window(window, win_length, n_fft, input)
    onesided = True if onesided is None else onesided
    out = (rfft if onesided else fft)(frames, dim=-1, norm="ortho" if normalized else None)
    out.transpose_(1, 2)  # (in place, as PyTorch's stft: its grad_fn names)
    return out if input.ndim == 2 else out.squeeze_(0)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft: each frame's inverse transform, windowed, overlapped and added, over the summed squared
    window. A full spectrum (n_fft bins) is taken as onesided=False unless told; its real inverse uses only the
    first n_fft // 2 + 1 bins, as PyTorch's."""
    if not input.is_complex():  # (a real (..., 2) spectrum is PyTorch's removed older form)
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    call = (f"istft({type_text(input.dtype)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, win_length="
            f"{win_length}, window={_window_text(window)}, center={int(center)}, normalized={int(normalized)}, "
            f"onesided={_flag(onesided)}, length={length}, return_complex={int(return_complex)})")

    def check(ok, problem):
        if not ok:
            raise RuntimeError(f"{call} : {problem}")

    dims = input.ndim + 1  # (PyTorch checks the real view: (..., bins, frames, 2))
    for d in (-2, -3):
        if dims < -d:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-dims}, {dims - 1}], but got {d})")
    check(input.numel() > 0, "input tensor cannot be empty.")
    check(dims in (3, 4), f"expected a tensor with 3 or 4 dimensions, but got {dims}")
    bins = input.shape[-2]
    onesided = bins != n_fft if onesided is None else onesided
    if onesided:
        check(bins == n_fft // 2 + 1, "expected the frequency dimension (3rd to the last) of the input tensor to "
                                      f"match n_fft / 2 + 1 when onesided=True, but got {bins}")
    else:
        check(bins == n_fft, "expected the frequency dimension (3rd to the last) of the input tensor to match "
                             f"n_fft when onesided=False, but got {bins}")
    check(0 < hop <= win_length, "expected 0 < hop_length <= win_length")
    check(0 < win_length <= n_fft, "expected 0 < win_length <= n_fft")
    check(window is None or (window.ndim == 1 and window.shape[0] == win_length),
          "Invalid window shape. window has to be 1D and length of `win_length`")
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if not return_complex and window is not None and window.is_complex():
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    if window is None:
        _warn_once("A window was not provided. A rectangular window will be applied.Please provide the same window "
                   "used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
                   "window, explicitly set `window=minigrad.ones(n_fft, device=<device>)`.")
    spec = input if input.ndim == 3 else input.unsqueeze(0)
    norm = "ortho" if normalized else None
    if return_complex:
        frames = ifft(spec.transpose(1, 2), dim=-1, norm=norm)
    else:
        frames = irfft(spec.narrow(1, 0, n_fft // 2 + 1).transpose(1, 2), n=n_fft, dim=-1, norm=norm)
    w = _window(window, win_length, n_fft, frames.real if frames.is_complex() else frames)
    frames = frames * w
    count = frames.shape[1]
    total = n_fft + hop * (count - 1)
    idx = Tensor._wrap(_frames(total, n_fft, hop).reshape(-1))
    signal = frames.new_zeros((frames.shape[0], total)).index_add(1, idx, frames.reshape(frames.shape[0], -1))
    envelope = np.zeros(total, dtype=w.array.dtype)
    np.add.at(envelope, idx.array, np.tile(w.array * w.array, count))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    env = envelope[start:min(end, total)]
    if (np.abs(env) < 1e-11).any():
        raise RuntimeError(f"{call} window overlap add min: 1\n[ CPUBoolType{{}} ]")
    out = signal[:, start:end] / Tensor._wrap(env)
    out = out if input.ndim == 3 else out.squeeze(0)
    if end > total:
        _warn_once("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                   "in the tail. Please check your center and hop_length settings.")
        out = _pad_to(out, (*out.shape[:-1], out.shape[-1] + end - total))
    return out


take_out(globals(), "fft")  # PyTorch's out= (minigrad/ops/out.py)
