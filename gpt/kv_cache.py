"""The KV cache of generation: each layer's keys and values of the positions seen so far.

With it, generating a token runs the model on one position instead of the whole context. The
cache is read and extended only through ops (`CacheAppend`, `CachePositions`), which is what lets
minigrad.compile replay a cached step: a cache is a *live* argument of a compiled call
(`compile_guard`), read at each replay, never a constant of the captured program.
"""
import minigrad
from minigrad.device import array_module


class KVCache:
    """Keys and values of the positions seen so far, per layer: (B, nh, capacity, hs) buffers."""

    def __init__(self, n_layer):
        self.layers = [_LayerCache(self, i) for i in range(n_layer)]

    @property
    def length(self):
        return self.layers[0].length

    def reset(self):
        for layer in self.layers:
            layer.length = 0

    def compile_guard(self):
        """What a compiled call may assume about the cache it is given (the rest its ops read)."""
        return len(self.layers)


class _LayerCache:
    def __init__(self, cache, index):
        self.cache, self.index = cache, index
        self.k = self.v = None  # arrays (B, nh, capacity, hs)
        self.length = 0

    def append(self, k, v):
        """Write k, v (B, nh, T, hs) after the cached positions; return all keys and values so far."""
        return CacheAppend.apply(k, v, self.cache, self.index)

    def append_arrays(self, kd, vd):
        """`append` on arrays: returns views of the (B, nh, length, hs) keys and values."""
        B, nh, T, hs = kd.shape
        end = self.length + T
        self.reserve(end, B, nh, hs, kd)
        self.k[:, :, self.length:end] = kd
        self.v[:, :, self.length:end] = vd
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reserve(self, end, B, nh, hs, like):
        """Key and value buffers (B, nh, capacity, hs) with room for `end` positions, of array `like`'s dtype
        and device: grown by doubling (the cached positions kept), or made anew for another batch size."""
        if self.k is None or self.k.shape[0] != B or self.k.shape[2] < end:
            xp = array_module(like)
            grown = [xp.empty((B, nh, 2 * end, hs), dtype=like.dtype) for _ in range(2)]
            if self.length:
                grown[0][:, :, : self.length] = self.k[:, :, : self.length]
                grown[1][:, :, : self.length] = self.v[:, :, : self.length]
            self.k, self.v = grown


class CacheAppend(minigrad.autograd.Function):
    """Layer `i`'s keys and values so far, after writing k and v (B, nh, T, hs) behind them: views
    (B, nh, length, hs) of buffers that grow by doubling."""

    @staticmethod
    def forward(ctx, k, v, cache, i):
        return cache.layers[i].append_arrays(k.array, v.array)

    @staticmethod
    def backward(ctx, gk, gv):
        raise RuntimeError("the KV cache is for generation, under no_grad: nothing differentiates through it")


class CachePositions(minigrad.autograd.Function):
    """The positions (T,) of idx's T tokens, following the cache's: arange(length, length + T)."""

    @staticmethod
    def forward(ctx, idx, cache, block_size):
        T, start = idx.array.shape[1], cache.length
        if start + T > block_size:
            raise ValueError(f"Cannot forward sequence of length {start + T}, block size is only {block_size}")
        if T > 1 and start:
            raise ValueError("a prompt of several tokens can only fill an empty cache")
        return array_module(idx.array).arange(start, start + T)
