"""unfold (im2col) and fold (col2im): sliding blocks of an image as columns, and back (an unbatched input too).

unfold: (N, C, H, W) -> (N, C*kh*kw, L), column l the block at output position l (row-major), its rows
c*kh*kw + i*kw + j for channel c and kernel offset (i, j). fold sums columns back into the image, each block
added where it was taken: so fold is unfold's adjoint, and each one's backward is the other.
"""
from ._common import Function, check_tensor, xp_of


def _pair(v, name):
    v = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(v) != 2 or not all(isinstance(x, int) for x in v):
        raise RuntimeError(f"{name} must be an int or a pair of ints, got {v}")
    return v


def _blocks(size, k, d, p, s):
    """Blocks along one dim of `size` (padded by p on each side): kernel k, dilation d, stride s."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _offsets(k, d, s, n):
    """For each kernel offset along one dim, the slice of the padded dim its n blocks read."""
    return [slice(i * d, i * d + s * (n - 1) + 1, s) for i in range(k)]


def _unfold_array(x, k, d, p, s):
    xp = xp_of(x)
    n, c, h, w = x.shape
    oh, ow = _blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1])
    if p != (0, 0):
        x = xp.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    cols = xp.empty((n, c, k[0] * k[1], oh, ow), dtype=x.dtype)
    for i, rows in enumerate(_offsets(k[0], d[0], s[0], oh)):
        for j, across in enumerate(_offsets(k[1], d[1], s[1], ow)):
            cols[:, :, i * k[1] + j] = x[:, :, rows, across]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


def _fold_array(cols, size, k, d, p, s):
    xp = xp_of(cols)
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    oh, ow = _blocks(size[0], k[0], d[0], p[0], s[0]), _blocks(size[1], k[1], d[1], p[1], s[1])
    cols = cols.reshape(n, c, k[0] * k[1], oh, ow)
    out = xp.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]), dtype=cols.dtype)
    for i, rows in enumerate(_offsets(k[0], d[0], s[0], oh)):  # (offset by offset: a fixed order of the sums)
        for j, across in enumerate(_offsets(k[1], d[1], s[1], ow)):
            out[:, :, rows, across] += cols[:, :, i * k[1] + j]
    return out[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


class Im2Col(Function):
    node_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, k, d, p, s):  # y[n, c*K + i*kw + j, l] = x_padded[n, c, oy*sh + i*dh, ox*sw + j*dw]
        ctx.args = (tuple(x.shape[-2:]), k, d, p, s)
        a = x.array
        return _unfold_array(a, k, d, p, s) if a.ndim == 4 else _unfold_array(a[None], k, d, p, s)[0]

    @staticmethod
    def backward(ctx, g):  # the adjoint: fold the gradient's columns back
        size, k, d, p, s = ctx.args
        return Col2Im.apply(g, size, k, d, p, s), None, None, None, None


class Col2Im(Function):
    node_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, size, k, d, p, s):  # y = sum of each column added back at its block
        ctx.args = (k, d, p, s)
        a = cols.array
        return _fold_array(a, size, k, d, p, s) if a.ndim == 3 else _fold_array(a[None], size, k, d, p, s)[0]

    @staticmethod
    def backward(ctx, g):  # the adjoint: the gradient's blocks as columns
        return Im2Col.apply(g, *ctx.args), None, None, None, None, None


def _check_sizes(k, d, p, s):  # (PyTorch's texts)
    for what, (a, b), low in (("kernel size", k, 1), ("dilation", d, 1), ("stride", s, 1)):
        if min(a, b) < low:
            prefix = "kernel" if what == "kernel size" else what
            raise RuntimeError(f"{what} should be greater than zero, but got {prefix}_height: {a} {prefix}_width: {b}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of an image as columns (im2col). Shapes: (N, C, H, W) or (C, H, W) -> (N, C*kh*kw, L)
    or (C*kh*kw, L), L the number of blocks. One `Im2ColBackward0` node."""
    check_tensor(input, "input", "unfold")
    k, d, p, s = (_pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"), _pair(padding, "padding"),
                  _pair(stride, "stride"))
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    _check_sizes(k, d, p, s)
    h, w = input.shape[-2:]
    blocks = (_blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1]))
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={k}, dilation={d}, padding={p}, "
                           f"calculated shape of the array of sliding blocks as {blocks}, but its components must be "
                           "at least one.")
    return Im2Col.apply(input, k, d, p, s)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns of sliding blocks summed back into an image (col2im), unfold's adjoint. Shapes: (N, C*kh*kw, L)
    or (C*kh*kw, L) -> (N, C, *output_size) or (C, *output_size). One `Col2ImBackward0` node."""
    check_tensor(input, "input", "fold")
    size, k, d, p, s = (_pair(output_size, "output_size"), _pair(kernel_size, "kernel_size"),
                        _pair(dilation, "dilation"), _pair(padding, "padding"), _pair(stride, "stride"))
    if input.ndim not in (2, 3):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    _check_sizes(k, d, p, s)
    cols = input if input.ndim == 3 else input.unsqueeze(0)  # (for its sizes)
    if cols.shape[1] % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={cols.shape[1]} and kernel_size={k}.")
    oh, ow = _blocks(size[0], k[0], d[0], p[0], s[0]), _blocks(size[1], k[1], d[1], p[1], s[1])
    if oh * ow != cols.shape[2]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{oh} * {ow} = {oh * ow}, but got input.size(2)={cols.shape[2]}.")
    return Col2Im.apply(input, size, k, d, p, s)
