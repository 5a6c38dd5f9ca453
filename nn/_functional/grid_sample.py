"""affine_grid and grid_sample (2-D: 4-D inputs), as `torch.nn.functional`'s.

Both are composed of recorded minigrad ops, so autograd differentiates them with no backward of their own:
affine_grid is a constant base grid of (x, y, 1) rows times theta^T (a matmul, theta's gradient through it);
grid_sample unnormalizes the grid to pixel coordinates, applies the padding mode to them (border: clipped,
reflection: reflected then clipped, both with PyTorch's zero gradient at and beyond the borders), takes the
neighbours' integer indices from a detached floor (bilinear) or round-half-to-even (nearest), gathers the
input's values from its flattened H*W plane, and sums them times weights that are differentiable expressions
of the grid, zeroed for neighbours outside the input. The input's gradient is the gather's (a scatter-add),
the grid's the weights'. Not there: 5-D inputs (3-D volumes) and mode 'bicubic' (NotImplementedError).
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
    grid[n, i, j] = theta[n] @ (x_j, y_i, 1), x and y spanning [-1, 1] (pixel centres without align_corners).
    Differentiable with respect to theta. 5-D sizes (3-D affine maps) raise NotImplementedError."""
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
        raise NotImplementedError("affine_grid: 5-D sizes (3-D affine grids) are not supported by minigrad; "
                                  "only 4-D sizes (N, C, H, W)")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {given}.")
    spatial = size[-2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n, _, h, w = size
    if theta.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, 3] but got: "
                           f"[{theta.shape[0]}, 3].")
    return _affine_grid_2d(theta, n, h, w, align_corners)


@composite_node("AffineGridGeneratorBackward0")
def _affine_grid_2d(theta, n, h, w, align_corners):
    dtype, device = theta.dtype, theta.device
    xs = _base_coords(w, align_corners, dtype, device)
    ys = _base_coords(h, align_corners, dtype, device)
    base = minigrad.stack([xs.reshape(1, w).expand(h, w), ys.reshape(h, 1).expand(h, w),
                           minigrad.ones(h, w, dtype=dtype, device=device)], dim=-1)  # (H, W, 3): x, y, 1
    grid = base.reshape(h * w, 3) @ theta.transpose(1, 2)  # (N, H*W, 2)
    return grid.reshape(n, h, w, 2)


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
    'border' or 'reflection'. Differentiable with respect to input and (bilinear) grid. 5-D inputs and mode
    'bicubic' raise NotImplementedError."""
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
    if input.ndim == 5 and grid.ndim == 5:
        raise NotImplementedError("grid_sample: 5-D inputs (3-D volumes) are not supported by minigrad; only 4-D "
                                  "inputs (N, C, H, W)")
    if input.ndim != 4 or grid.ndim != 4:
        d = 4 if input.ndim == 4 else 5
        raise RuntimeError(f"grid_sampler(): expected {d}D input and grid with same number of dimensions, but got "
                           f"input with sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(input.dtype)} but found {_dtype_name(grid.dtype)}")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode 'bicubic' is not supported by minigrad; use 'bilinear' or "
                                  "'nearest'")
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

