"""torch.fft's transforms on numpy's pocketfft, with their gradients; torch.stft and torch.istft built on them.

The backward of a transform is the adjoint transform: fft's is ifft with the dual norm ("backward" and
"forward" trade places, "ortho" is its own), resized back to the input's length. rfft's takes the real part
of that (its input is real); irfft's doubles the bins that stand for a conjugate pair.
"""
import numpy as np

from .autograd.function import Function
from .dtypes import default_float
from .ops.complex import complex_of, real_of
from .tensor import Tensor

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm):
    norm = "backward" if norm is None else norm
    if norm not in _DUAL:
        raise ValueError(f"Invalid normalization mode: {norm}")
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


def _cat(a, b, dim):
    from .ops.shape import cat

    return cat([a, b], dim)


class FFT(Function):
    node_name = "FftC2CBackward0"

    @staticmethod
    def forward(ctx, a, n, dim, norm, inverse):
        ctx.args = (a.array.shape[dim], dim, norm, inverse)
        x = a.array
        out_dt = x.dtype if x.dtype.kind == "c" else complex_of(x.dtype)
        return (np.fft.ifft if inverse else np.fft.fft)(x, n, dim, norm).astype(out_dt, copy=False)

    @staticmethod
    def backward(ctx, g):
        length, dim, norm, inverse = ctx.args
        return _resized(_c2c(g, None, dim, _DUAL[norm], not inverse), dim, length), None, None, None, None


class RFFT(Function):
    node_name = "FftR2CBackward0"

    @staticmethod
    def forward(ctx, a, n, dim, norm):
        x = a.array
        n = x.shape[dim] if n is None else n
        ctx.args = (x.shape[dim], n, dim, norm)
        return np.fft.rfft(x, n, dim, norm).astype(complex_of(x.dtype), copy=False)

    @staticmethod
    def backward(ctx, g):  # the adjoint of "the first n//2+1 bins of fft": ifft of those bins, zeros after
        length, n, dim, norm = ctx.args
        full = _resized(g, dim, n)
        return _resized(_c2c(full, None, dim, _DUAL[norm], True).real, dim, length), None, None, None


class IRFFT(Function):
    node_name = "FftC2RBackward0"

    @staticmethod
    def forward(ctx, a, n, dim, norm):
        x = a.array
        n = 2 * (x.shape[dim] - 1) if n is None else n
        ctx.args = (x.shape[dim], n, dim, norm)
        return np.fft.irfft(x, n, dim, norm).astype(real_of(x.dtype), copy=False)

    @staticmethod
    def backward(ctx, g):
        length, n, dim, norm = ctx.args
        gy = rfft(g, None, dim, _DUAL[norm])
        bins = gy.shape[dim]
        twice = np.full(bins, 2.0, dtype=real_of(gy.array.dtype))  # each bin but 0 (and n/2) stands for two
        twice[0] = 1.0
        if n % 2 == 0:
            twice[-1] = 1.0
        shape = [1] * gy.ndim
        shape[dim] = bins
        return _resized(gy * Tensor._wrap(twice.reshape(shape)), dim, length), None, None, None


def _dim(x, dim):
    return dim + x.ndim if dim < 0 else dim


def _c2c(input, n, dim, norm, inverse):
    if input.array.dtype.kind not in "fc":
        input = input.to(default_float)
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return FFT.apply(input, n, _dim(input, dim), _norm(norm), inverse)


def fft(input, n=None, dim=-1, norm=None):
    """The one-dimensional discrete Fourier transform along `dim` (a real input is taken as complex)."""
    return _c2c(input, n, dim, norm, False)


def ifft(input, n=None, dim=-1, norm=None):
    return _c2c(input, n, dim, norm, True)


def rfft(input, n=None, dim=-1, norm=None):
    """fft of a real input: its n//2 + 1 non-negative frequencies."""
    if input.array.dtype.kind == "c":
        raise RuntimeError("rfft expects a real input tensor, but got ComplexFloat")
    if input.array.dtype.kind != "f":
        input = input.to(default_float)
    return RFFT.apply(input, n, _dim(input, dim), _norm(norm))


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of rfft: a real signal of length n (2 * (bins - 1) when not given)."""
    if input.array.dtype.kind != "c":
        input = input.to(complex_of(default_float.np) if input.array.dtype.kind != "f" else
                          complex_of(input.array.dtype))
    return IRFFT.apply(input, n, _dim(input, dim), _norm(norm))


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kw):
    from .factory import tensor

    return tensor(np.fft.fftfreq(n, d), dtype=dtype or default_float, requires_grad=requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kw):
    from .factory import tensor

    return tensor(np.fft.rfftfreq(n, d), dtype=dtype or default_float, requires_grad=requires_grad)


def fftshift(input, dim=None):
    dims = tuple(range(input.ndim)) if dim is None else (dim if isinstance(dim, (tuple, list)) else (dim,))
    return input.roll([input.shape[d] // 2 for d in dims], tuple(dims))


def ifftshift(input, dim=None):
    dims = tuple(range(input.ndim)) if dim is None else (dim if isinstance(dim, (tuple, list)) else (dim,))
    return input.roll([-(input.shape[d] // 2) for d in dims], tuple(dims))


# ---- short-time transforms -------------------------------------------------------------------
def _frames(n, n_fft, hop):
    """The index array (frames, n_fft) of the windows of a signal of length n."""
    count = 1 + (n - n_fft) // hop
    return np.arange(count)[:, None] * hop + np.arange(n_fft)[None, :]


def _window(window, win_length, n_fft, like):
    """The window padded (centred) to n_fft, as PyTorch's stft pads it; ones where none is given."""
    win_length = n_fft if win_length is None else win_length
    if window is None:
        window = Tensor._wrap(np.ones(win_length, dtype=real_of(complex_of(like.array.dtype))
                                      if like.array.dtype.kind == "f" else like.array.dtype))
    if window.shape[0] != win_length:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but "
                           f"got window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or win_length != n_fft:
        window = _cat(_cat(window.new_zeros(left), window, 0), window.new_zeros(n_fft - win_length - left), 0)
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """Short-time Fourier transform of a 1D signal or a batch (B, N): (B?, n_fft//2 + 1, frames) complex.
    Framing and padding are index gathers, so the gradient flows through them and through rfft."""
    if return_complex is None and input.array.dtype.kind != "c" and (window is None or not window.is_complex()):
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if not return_complex:
        raise RuntimeError("stft with return_complex=False is not supported by minigrad: pass return_complex=True "
                           "and use torch.view_as_real on the result")
    if input.array.dtype.kind == "c":
        raise NotImplementedError("stft of a complex signal is not supported by minigrad")
    hop = n_fft // 4 if hop_length is None else hop_length
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        pad = n_fft // 2
        n = x.shape[-1]
        if pad_mode == "reflect":
            idx = np.abs(np.arange(-pad, n + pad))
            idx = np.where(idx >= n, 2 * (n - 1) - idx, idx)
        elif pad_mode == "replicate":
            idx = np.clip(np.arange(-pad, n + pad), 0, n - 1)
        elif pad_mode == "circular":
            idx = np.arange(-pad, n + pad) % n
        else:
            raise NotImplementedError(f"stft pad_mode={pad_mode!r} is not supported by minigrad")
        x = x[:, Tensor._wrap(idx)]
    if x.shape[-1] < n_fft:
        raise RuntimeError(f"stft: input length ({x.shape[-1]}) must be at least n_fft ({n_fft})")
    frames = x[:, Tensor._wrap(_frames(x.shape[-1], n_fft, hop))] * _window(window, win_length, n_fft, input)
    onesided = True if onesided is None else onesided
    out = (rfft if onesided else fft)(frames, dim=-1, norm="ortho" if normalized else None)
    out = out.transpose(1, 2)
    return out if input.ndim == 2 else out.squeeze(0)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft: each frame's irfft, windowed, overlapped and added, over the summed squared window."""
    if return_complex:
        raise NotImplementedError("istft with return_complex=True is not supported by minigrad")
    hop = n_fft // 4 if hop_length is None else hop_length
    spec = input if input.ndim == 3 else input.unsqueeze(0)
    if onesided is False:
        frames = ifft(spec.transpose(1, 2), dim=-1, norm="ortho" if normalized else None).real
    else:
        frames = irfft(spec.transpose(1, 2), n=n_fft, dim=-1, norm="ortho" if normalized else None)
    w = _window(window, win_length, n_fft, frames)
    frames = frames * w
    count = frames.shape[1]
    total = n_fft + hop * (count - 1)
    idx = Tensor._wrap(_frames(total, n_fft, hop).reshape(-1))
    signal = frames.new_zeros((frames.shape[0], total)).index_add(1, idx, frames.reshape(frames.shape[0], -1))
    envelope = np.zeros(total, dtype=w.array.dtype)
    np.add.at(envelope, idx.array, np.tile(w.array * w.array, count))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    end = min(end, total)
    env = envelope[start:end]
    if (np.abs(env) < 1e-11).any():
        raise RuntimeError("istft(...): window overlap add min: 0")
    out = signal[:, start:end] / Tensor._wrap(env)
    if length is not None and out.shape[-1] < length:
        out = _cat(out, out.new_zeros((out.shape[0], length - out.shape[-1])), 1)
    return out if input.ndim == 3 else out.squeeze(0)
