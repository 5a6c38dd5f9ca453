"""affine_grid and grid_sample (2-D and 3-D: 4-D and 5-D inputs), as `torch.nn.functional`'s.

Both are composed of recorded minigrad ops, so autograd differentiates them with no backward of their own:
affine_grid is a constant base grid of (x, y, 1) rows times theta^T (a matmul, theta's gradient through it);
grid_sample unnormalizes the grid to pixel coordinates, applies the padding mode to them (border: clipped,
reflection: reflected then clipped, both with PyTorch's zero gradient at and beyond the borders), takes the
neighbours' integer indices from a detached floor (bilinear) or round-half-to-even (nearest), gathers the
input's values from its flattened H*W plane, and sums them times weights that are differentiable expressions
of the grid, zeroed for neighbours outside the input. The input's gradient is the gather's (a scatter-add),
the grid's the weights'. 5-D inputs (3-D volumes) take the same steps with a third coordinate and eight
neighbours (trilinear). Not there: mode 'bicubic' (NotImplementedError).
"""
import warnings

import minigrad
from minigrad.autograd.composite import composite_node
from minigrad.factory import _fma64

from ._common import check_tensor

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def _sizes(t):
    return str(list(t.shape))


def _dtype_name(dtype):
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}
    s = str(dtype).replace("minigrad.", "").replace("torch.", "")
    return names.get(s, s)


def _base_coords(n, align_corners, dtype, device):
    """PyTorch's linspace_from_neg_one: n points in [-1, 1] (pixel centres scaled by (n - 1) / n without
    align_corners); a single point at 0."""
    if n <= 1:
        return minigrad.zeros(max(n, 0), dtype=dtype, device=device)
    r = minigrad.linspace(-1, 1, n, dtype=dtype, device=device)
    return r if align_corners else r * (n - 1) / n  # two roundings, as PyTorch's


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) of the affine maps theta (N, 2, 3) for an output of size (N, C, H, W):
    grid[n, i, j] = theta[n] @ (x_j, y_i, 1), x and y spanning [-1, 1] (pixel centres without align_corners);
    (N, D, H, W, 3) from theta (N, 3, 4) for a size (N, C, D, H, W). Differentiable with respect to theta."""
    check_tensor(theta, "theta", "affine_grid")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, tuple(int(s) for s in size)  # (the texts show the size as given, as PyTorch's)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {given}. "
                             f"Got {theta.size()}.")
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {given}. "
                             f"Got {theta.size()}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {given}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    if theta.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {len(size) - 1}] "
                           f"but got: [{theta.shape[0]}, {len(size) - 1}].")
    return _affine_grid(theta, n, spatial, align_corners)


@composite_node("AffineGridGeneratorBackward0")
def _affine_grid(theta, n, spatial, align_corners):
    dtype, device = theta.dtype, theta.device
    k = len(spatial)  # 2 (H, W) or 3 (D, H, W)
    axes = []  # x along the last dim, then y, then z: each coordinate broadcast over the whole grid
    for i, m in enumerate(reversed(spatial)):
        shape = [1] * k
        shape[k - 1 - i] = m
        axes.append(_base_coords(m, align_corners, dtype, device).reshape(shape).expand(*spatial))
    base = minigrad.stack(axes + [minigrad.ones(*spatial, dtype=dtype, device=device)], dim=-1)  # (.., k + 1)
    points = 1
    for m in spatial:
        points *= m
    grid = base.reshape(points, k + 1) @ theta.transpose(1, 2)  # (N, points, k)
    return grid.reshape(n, *spatial, k)


def _fused(a, b, c):
    """a * b + c (b, c numbers) rounded once, as PyTorch's CPU kernels compute it (a fused multiply-add):
    float32 products are exact in float64; float64 rounds the exact value through a two-product, the
    plain expression carrying the gradient. Other dtypes round twice."""
    if a.dtype == minigrad.float32:
        return (a.double() * b + c).float()
    plain = a * b + c
    if a.dtype != minigrad.float64:
        return plain
    return plain + (_fma64(a.detach(), b, c) - plain.detach())  # the difference is exact: a few ulps


def _unnormalize(coord, size, align_corners):
    """Pixel coordinates as PyTorch's CPU grid sampler computes them: (coord + 1) * (size - 1) / 2 with
    align_corners, else (coord + 1) * size / 2 - 0.5 fused into one rounding."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return _fused(coord + 1, size / 2, -0.5)


def _clip(coord, size):
    """Clip to [0, size - 1], PyTorch's clip_coordinates: the gradient is zero at and beyond either border."""
    c = coord.detach()
    inside = (c > 0) & (c < size - 1)
    return minigrad.where(inside, coord, c.clamp(0, size - 1))


def _reflect(coord, twice_low, twice_high):
    """PyTorch's reflect_coordinates: fold coord into [twice_low / 2, twice_high / 2] by reflections."""
    if twice_low == twice_high:
        return coord * 0
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    d = (coord - lo).abs()
    flips = (d.detach() / span).floor()
    extra = d - flips * span  # fmod(d, span), d >= 0
    even = (flips.remainder(2) == 0)
    return minigrad.where(even, extra + lo, (span + lo) - extra)


def _source_index(coord, size, padding_mode, align_corners):
    coord = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        coord = _clip(coord, size)
    elif padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        coord = _clip(coord, size)
    return coord


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample input (N, C, H, W) at the points of grid (N, H_out, W_out, 2) (x then y, normalized to [-1, 1]):
    out (N, C, H_out, W_out). mode 'bilinear' or 'nearest' (round half to even); padding_mode 'zeros',
    'border' or 'reflection'. Differentiable with respect to input and (bilinear) grid. A 5-D input (N, C, D, H, W)
    takes a grid (N, D_out, H_out, W_out, 3) (x, y, z), 'bilinear' then trilinear. Mode 'bicubic' raises
    NotImplementedError."""
    check_tensor(input, "input", "grid_sample")
    check_tensor(grid, "grid", "grid_sample")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if input.ndim == 0 or grid.ndim == 0:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"input with sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but "
                           f"got grid with sizes {_sizes(grid)}")
    for i in range(2, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                               f"has sizes {_sizes(input)} with dimension {i} being empty")
    if (input.ndim, grid.ndim) not in ((4, 4), (5, 5)):
        d = 4 if input.ndim == 4 else 5
        raise RuntimeError(f"grid_sampler(): expected {d}D input and grid with same number of dimensions, but got "
                           f"input with sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(input.dtype)} but found {_dtype_name(grid.dtype)}")
    if mode == "bicubic":
        if input.ndim == 5:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        raise NotImplementedError("grid_sample: mode 'bicubic' is not supported by minigrad; use 'bilinear' or "
                                  "'nearest'")
    if input.ndim == 5:
        return _grid_sample_3d(input, grid, mode, padding_mode, align_corners)
    return _grid_sample_2d(input, grid, mode, padding_mode, align_corners)


@composite_node("GridSampler2DBackward0", "none")
def _grid_sample_2d(input, grid, mode, padding_mode, align_corners):
    n, c, h, w = input.shape
    _, ho, wo, _ = grid.shape
    flat = input.reshape(n, c, h * w)
    gx = grid[..., 0].reshape(n, 1, ho * wo)
    gy = grid[..., 1].reshape(n, 1, ho * wo)
    ix = _source_index(gx, w, padding_mode, align_corners)
    iy = _source_index(gy, h, padding_mode, align_corners)

    def tap(xi, yi):
        """input at the integer pixel (xi, yi) (detached float tensors (N, 1, P)), 0 outside: (N, C, P)."""
        inside = ((xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)).to(input.dtype)
        idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long().expand(n, c, ho * wo)
        return flat.gather(2, idx), inside

    if mode == "nearest":
        xn, yn = ix.round(), iy.round()  # round half to even, as nearbyint; a zero gradient
        v, inside = tap(xn.detach(), yn.detach())
        never = minigrad.zeros(xn.shape, dtype=minigrad.bool, device=xn.device)
        out = v * inside + minigrad.where(never, xn + yn, 0.0)  # 0, linking the grid: its gradient is zeros
    else:
        # PyTorch's CPU kernel's arithmetic: the distances to each side (west = ix - x0, east = 1 - west;
        # north and south for y), each corner's weight the product of the two distances away from it, and the four terms added in one fused chain
        x0, y0 = ix.detach().floor(), iy.detach().floor()
        x1, y1 = x0 + 1, y0 + 1
        west, north = ix - x0, iy - y0
        east, south = 1 - west, 1 - north
        out = None
        for xi, yi, wgt in ((x0, y0, south * east), (x1, y0, south * west), (x0, y1, north * east),
                            (x1, y1, north * west)):
            v, inside = tap(xi, yi)
            v = v * inside
            if out is None:
                out = v * wgt
            elif out.dtype == minigrad.float32:
                out = (out.double() + v.double() * wgt.double()).float()
            else:
                out = out + v * wgt
    return out.reshape(n, c, ho, wo)



@composite_node("GridSampler3DBackward0", "none")
def _grid_sample_3d(input, grid, mode, padding_mode, align_corners):
    """The 2-D sampler's steps with z added: each output point the weighted sum of its 8 neighbours (a corner's
    weight the product of its three distances away from the point), or the nearest one."""
    n, c, d, h, w = input.shape
    _, do, ho, wo, _ = grid.shape
    p = do * ho * wo
    flat = input.reshape(n, c, d * h * w)
    sizes = (w, h, d)  # the grid's x, y, z index the input's W, H, D
    coords = [_source_index(grid[..., k].reshape(n, 1, p), sizes[k], padding_mode, align_corners) for k in range(3)]

    def tap(corner):
        """input at the integer voxel `corner` (detached (x, y, z) float tensors (N, 1, P)), 0 outside."""
        inside, idx = None, 0
        for ci, size, stride in zip(corner, sizes, (1, w, w * h)):
            ok = (ci >= 0) & (ci <= size - 1)
            inside = ok if inside is None else inside & ok
            idx = idx + ci.clamp(0, size - 1) * stride
        return flat.gather(2, idx.long().expand(n, c, p)) * inside.to(input.dtype)

    if mode == "nearest":
        near = [x.round() for x in coords]  # round half to even, as nearbyint; a zero gradient
        never = minigrad.zeros(near[0].shape, dtype=minigrad.bool, device=input.device)
        out = tap([x.detach() for x in near]) + minigrad.where(never, near[0] + near[1] + near[2], 0.0)
    else:
        lows = [x.detach().floor() for x in coords]
        out = None
        for corner in range(8):  # bit k set: the upper neighbour along axis k
            wgt, at = None, []
            for k, (x, lo) in enumerate(zip(coords, lows)):
                upper = (corner >> k) & 1
                at.append(lo + upper)
                dist = x - lo if upper else (lo + 1) - x
                wgt = dist if wgt is None else wgt * dist
            term = tap(at) * wgt
            out = term if out is None else out + term
    return out.reshape(n, c, do, ho, wo)
