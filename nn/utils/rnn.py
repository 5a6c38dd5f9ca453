"""Padding variable-length sequences into one batch, as `torch.nn.utils.rnn`: pad_sequence, unpad_sequence.

Both are built from recorded ops (cat, stack, slicing), so gradients flow back into each sequence.
Packed sequences (PackedSequence, pack_padded_sequence, ...) are not here: the RNN modules take padded input.
"""
import minigrad
from minigrad import Tensor


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of lengths L_i (each (L_i, *), the same trailing dims) into one tensor, padding each to the
    longest with `padding_value` on the right (or the left). Shapes -> (max L, B, *), or (B, max L, *) with
    batch_first. The result has the first sequence's dtype. Differentiable in every sequence."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):  # a tensor (B, L, *) is its B sequences, as PyTorch takes it
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
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
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have the trailing dims {list(trailing)} of the "
                               f"first, but got one of size {list(s.shape)}")
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


__all__ = ["pad_sequence", "unpad_sequence"]
