"""Variable-length sequences in one batch, as `torch.nn.utils.rnn`: padding (pad_sequence, unpad_sequence) and
packing (PackedSequence, pack_padded_sequence, pad_packed_sequence, pack_sequence, unpack_sequence).

All are built from recorded ops (cat, stack, slicing, reshape, index_select), so gradients flow back into each
sequence. A packed batch holds its sequences sorted by decreasing length, time step after time step: step t is
the first batch_sizes[t] sequences' elements. The RNN modules take it as input (nn/modules/rnn.py).
"""
from collections import namedtuple

import minigrad
from minigrad import Tensor
from minigrad.tensor import type_name

_SORTED = ("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
           "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
           "do not need ONNX exportability.")


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of lengths L_i (each (L_i, *), trailing dims broadcastable to the first's) into one tensor, padding each to the
    longest with `padding_value` on the right (or the left). Shapes -> (max L, B, *), or (B, max L, *) with
    batch_first. The result has the first sequence's dtype. Differentiable in every sequence."""
    if isinstance(sequences, Tensor):  # a tensor (B, L, *) is its B sequences, as PyTorch takes it
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    for i, s in enumerate(sequences):  # (PyTorch's argument parser, before the op's own checks)
        if not isinstance(s, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(s).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"pad_sequence(): argument 'batch_first' (position 2) must be bool, not "
                        f"{type_name(batch_first)}")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    for s in sequences:
        if s.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        slot = (s.shape[0],) + trailing
        if tuple(s.shape) != slot:  # PyTorch copies it into its slot: broadcast there, else copy_'s error
            s = minigrad.zeros(slot, dtype=first.dtype, device=s.device).copy_(s)
        if s.dtype != first.dtype:
            s = s.to(first.dtype)
        short = longest - s.shape[0]
        if short:
            # the padding is a constant: cat gives its gradient to `s`'s rows only
            fill = minigrad.full((short,) + trailing, padding_value, dtype=first.dtype, device=s.device)
            s = minigrad.cat([s, fill] if padding_side == "right" else [fill, s], dim=0)
        padded.append(s)
    return minigrad.stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """pad_sequence's inverse: the list of each batch entry's first lengths[i] steps (right-padded input)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]



def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None for None): inverse[permutation[i]] = i."""
    return None if permutation is None else minigrad.argsort(permutation)


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A packed batch: data (sum of the lengths, *), every sequence's step t after all of step t - 1;
    batch_sizes (T,) int64 on the CPU, how many sequences have a step t; sorted_indices (B,) the batch entries in
    decreasing length (None when they were given sorted) and unsorted_indices its inverse. Made by
    pack_padded_sequence and pack_sequence, not by hand; PackedSequence((data, batch_sizes)) works as in PyTorch."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. "
                "They should be instantiated by functions like pack_sequence and pack_padded_sequences in "
                "nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """`data.to(...)`; the indices follow data's device, batch_sizes stays on the CPU. self if nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: None if t is None else t.to(data.device)
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cuda(self, *args, **kwargs):
        device = minigrad.empty(0, dtype=self.data.dtype).cuda(*args, **kwargs).device  # (resolves the index)
        return self.to(device)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(minigrad.float64)

    def float(self):
        return self.to(minigrad.float32)

    def half(self):
        return self.to(minigrad.float16)

    def long(self):
        return self.to(minigrad.int64)

    def int(self):
        return self.to(minigrad.int32)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def _runs(batch_sizes):
    """The steps grouped into runs of one batch size: (steps, batch size, first row in data) for each run, in
    time order. A run is one (steps, batch, *) block of the packed data, so packing, unpacking and the RNNs move
    whole blocks, not single steps. batch_sizes: a list of ints."""
    runs, row, start = [], 0, 0
    for t in range(1, len(batch_sizes) + 1):
        if t == len(batch_sizes) or batch_sizes[t] != batch_sizes[start]:
            runs.append((t - start, batch_sizes[start], row))
            row += (t - start) * batch_sizes[start]
            start = t
    return runs


def _lengths(lengths):
    """lengths (a tensor, a list, ...) as PyTorch takes them: a 1-D int64 tensor on the CPU."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(minigrad.int64)
    else:
        lengths = minigrad.as_tensor(lengths, dtype=minigrad.int64, device="cpu")
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                           f"{lengths.device} Long tensor")
    return lengths


def _pack(input, lengths):
    """Time-first padded input (T, B, *) and sorted lengths -> (data, batch_sizes), with PyTorch's checks."""
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.size(1)
    n = [int(k) for k in lengths.tolist()]
    if len(n) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(n)} (batch_size={batch})")
    if n[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if any(a < b for a, b in zip(n, n[1:])):
        raise RuntimeError(_SORTED)
    if n[0] > input.size(0):  # (PyTorch reads past the input's end here)
        raise RuntimeError(f"pack_padded_sequence: a length of {n[0]} is longer than the input's {input.size(0)} steps")
    batch_sizes = [sum(k > t for k in n) for t in range(n[0])]
    blocks, t = [], 0
    for steps, b, _ in _runs(batch_sizes):
        blocks.append(input[t:t + steps, :b].reshape((steps * b,) + tuple(input.shape[2:])))
        t += steps
    data = blocks[0] if len(blocks) == 1 else minigrad.cat(blocks)
    return data, minigrad.tensor(batch_sizes, dtype=minigrad.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch input (T, B, *) ((B, T, *) with batch_first) of sequences of the given lengths (a CPU
    tensor or a list) into a PackedSequence. With enforce_sorted the lengths must decrease; otherwise the batch
    is sorted here (stably) and the order kept in sorted_indices. Differentiable in input."""
    lengths = _lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = minigrad.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack(input.transpose(0, 1) if batch_first else input, lengths)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """pack_padded_sequence's inverse: a PackedSequence -> (padded (T, B, *) or (B, T, *) with batch_first, in
    the original batch order, padded with padding_value up to total_length steps if given; lengths (B,) int64).
    Differentiable in sequence.data."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch, trailing = batch_sizes[0], tuple(data.shape[1:])
    fill = lambda *shape: minigrad.full(shape + trailing, padding_value, dtype=data.dtype, device=data.device)
    blocks = []
    for n, b, row in _runs(batch_sizes):
        block = data[row:row + n * b].reshape((n, b) + trailing)
        blocks.append(block if b == batch else minigrad.cat([block, fill(n, batch - b)], dim=1))
    if steps > len(batch_sizes):
        blocks.append(fill(steps - len(batch_sizes), batch))
    padded = blocks[0] if len(blocks) == 1 else minigrad.cat(blocks)
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = minigrad.tensor([sum(b > i for b in batch_sizes) for i in range(batch)], dtype=minigrad.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (each (L_i, *)) into a PackedSequence; see pack_padded_sequence for enforce_sorted."""
    lengths = minigrad.as_tensor([s.size(0) for s in sequences], dtype=minigrad.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """pack_sequence's inverse: a PackedSequence -> the list of its sequences, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]
