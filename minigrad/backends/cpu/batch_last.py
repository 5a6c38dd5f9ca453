"""A convolution's input or output gradient moved batch last, (N, C, *spatial) -> (C, *spatial, N), compiled.

numpy's copy of the moved view walks the destination in order and reads the source C * H * W apart,
entry by entry: for a CNN's maps that stride is a multiple of 4 KiB (64 channels of 24 x 24 floats),
so the N rows it reads at once alias in the cache, and the copy runs at a third of memory's speed.
Here, channel by channel, tiles of 8 images x 64 positions are copied position by position: a
destination run of 8 images from 8 source rows read along, each row read in runs long enough for the
prefetcher (docs/performance.md has the tile sizes measured). A copy: the same bits. Channels are
independent: on the team (channels cut in shares) the bits are those of one thread.
"""
import numpy as np

from . import floats, team

TILE = 8
TILE_L = 64


def supports(a):
    """float32 / float64 numpy arrays of 3 or more dims whose images lie a multiple of 4 KiB apart (elsewhere
    numpy's copy is faster: 1.4 ms against 2.4 for 64 x 32 x 26 x 26)."""
    return floats(a) and a.ndim >= 3 and a.size > 0 and (a[0].size * a.itemsize) % 4096 == 0


def forward(a):
    """a (N, C, *spatial) -> (C, *spatial, N), C-contiguous."""
    N, C = a.shape[:2]
    x = np.ascontiguousarray(a).reshape(N, C, -1)
    out = np.empty((C, x.shape[2], N), dtype=a.dtype)
    if out.size >= team.TEAM_MIN_ELEMENTS and _batch_last_team.on_team():
        _batch_last_team(out, x, _batch_last_team.threads())
    else:
        _batch_last(out, x, 0, C)
    return out.reshape(a.shape[1:] + (N,))


@team.kernel
def _batch_last(out, x, c0, c1):  # out[c, l, n] = x[n, c, l] for channels [c0, c1)
    N, L = x.shape[0], x.shape[2]
    for c in range(c0, c1):
        for n0 in range(0, N, TILE):
            n1 = min(n0 + TILE, N)
            for l0 in range(0, L, TILE_L):
                # a destination run of TILE images at a time, from TILE source rows read TILE_L long
                for l in range(l0, min(l0 + TILE_L, L)):
                    for n in range(n0, n1):
                        out[c, l, n] = x[n, c, l]


@team.kernel(parallel=True)
def _batch_last_team(out, x, parts):
    for t in team.prange(parts):
        lo, hi = team.share(x.shape[1], t, parts, 1)
        _batch_last(out, x, lo, hi)
