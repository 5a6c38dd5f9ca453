"""unfold (im2col), fold (col2im) and local_response_norm, composed of recorded minigrad ops (so autograd
differentiates them, twice too): unfold gathers each sliding block by advanced indexing into the padded input
(its backward adds the overlaps back: fold), fold adds the blocks into a zero image with index_put(accumulate)
and crops the padding, and local_response_norm is PyTorch's own composition (a windowed mean of the squares
over channels)."""
import minigrad

from ._common import check_tensor
from .padding import pad
from .pooling import avg_pool2d

__all__ = ["unfold", "fold", "local_response_norm"]


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _check_params(kernel_size, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (_pair(v) for v in (kernel_size, dilation, padding, stride))
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} stride_width: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dh} dilation_width: {dw}")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} pad_width: {pw}")
    return (kh, kw), (dh, dw), (ph, pw), (sh, sw)


def _blocks(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _block_index(kernel, dilation, stride, blocks, device):
    """Row (or column) indices into the padded image: (kernel, blocks), index [k, b] = k * dilation + b * stride."""
    return (minigrad.arange(kernel, device=device) * dilation).reshape(kernel, 1) + \
        (minigrad.arange(blocks, device=device) * stride).reshape(1, blocks)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of input (N, C, H, W) or (C, H, W) as columns: (N, C * kh * kw, L), L the number of
    blocks (row-major), each column's entries channel-major then kernel row, kernel column."""
    check_tensor(input, "input", "unfold")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _check_params(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    x = input if input.ndim == 4 else input.unsqueeze(0)
    n, c, h, w = x.shape
    oh, ow = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({kh}, {kw}), dilation=({dh}, "
                           f"{dw}), padding=({ph}, {pw}), calculated shape of the array of sliding blocks as ({oh}, "
                           f"{ow}), but its components must be at least one.")
    if ph or pw:
        x = pad(x, (pw, pw, ph, ph))
    rows = _block_index(kh, dh, sh, oh, x.device).reshape(kh, 1, oh, 1)
    cols = _block_index(kw, dw, sw, ow, x.device).reshape(1, kw, 1, ow)
    out = x[:, :, rows, cols].reshape(n, c * kh * kw, oh * ow)  # (N, C, kh, kw, oh, ow) flattened
    return out if input.ndim == 4 else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """unfold's adjoint: the columns of input (N, C * kh * kw, L) or (C * kh * kw, L) added back into an image
    (N, C, *output_size), overlapping blocks summed."""
    check_tensor(input, "input", "fold")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _check_params(kernel_size, dilation, padding, stride)
    oh_, ow_ = _pair(output_size)
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    x = input if input.ndim == 3 else input.unsqueeze(0)
    n, ckk, length = x.shape
    if ckk % (kh * kw):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ckk} and kernel_size=({kh}, {kw}).")
    bh, bw = _blocks(oh_, kh, dh, ph, sh), _blocks(ow_, kw, dw, pw, sw)
    if bh * bw != length:
        raise RuntimeError(f"Given output_size=({oh_}, {ow_}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), "
                           f"padding=({ph}, {pw}), stride=({sh}, {sw}), expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={length}.")
    c = ckk // (kh * kw)
    blocks = x.reshape(n, c, kh, kw, bh, bw)
    rows = _block_index(kh, dh, sh, bh, x.device).reshape(1, 1, kh, 1, bh, 1)
    cols = _block_index(kw, dw, sw, bw, x.device).reshape(1, 1, 1, kw, 1, bw)
    batch = minigrad.arange(n, device=x.device).reshape(n, 1, 1, 1, 1, 1)
    chans = minigrad.arange(c, device=x.device).reshape(1, c, 1, 1, 1, 1)
    image = minigrad.zeros(n, c, oh_ + 2 * ph, ow_ + 2 * pw, dtype=x.dtype, device=x.device)
    image = image.index_put((batch, chans, rows, cols), blocks, accumulate=True)
    if ph or pw:
        image = image[:, :, ph:ph + oh_, pw:pw + ow_]
    return image if input.ndim == 3 else image.squeeze(0)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of the squares over `size` neighbouring channels) ** beta, as PyTorch composes it.
    Shape: (N, C, *) -> (N, C, *)."""
    check_tensor(input, "input", "local_response_norm")
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    sizes = input.shape
    div = div.reshape(sizes[0], 1, sizes[1], -1)  # the channels as a spatial axis, the rest flattened
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).squeeze(1).reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
