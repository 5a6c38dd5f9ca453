"""Turning a list of samples into a batch: `default_collate` (the DataLoader's default when it
batches) and `default_convert` (when it does not).

default_collate keeps the samples' structure and batches the leaves:

    tensors                    -> stacked along a new first dim
    numpy arrays               -> tensors (sharing memory), stacked
    numpy scalars              -> a tensor of their dtype
    Python float / int / bool  -> a float64 / int64 / bool tensor
    str, bytes                 -> the batch as it is
    dicts, namedtuples, lists  -> the same container, each field collated
    tuples                     -> a list, each field collated

`collate(batch, collate_fn_map=...)` is the same walk with one's own table of leaf types.
"""
import collections.abc
import copy
import re

import numpy as np

from .... import Tensor, as_tensor, float64, stack, tensor

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map"]

# numpy dtypes a tensor cannot hold: bytes, str and Python objects
_NON_NUMERIC = re.compile("[SaUO]")
_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy(x):
    return type(x).__module__ == "numpy" and not isinstance(x, (np.str_, np.bytes_))


def default_convert(data):
    """numpy arrays and scalars inside `data` (walking dicts, namedtuples, lists, tuples) become
    tensors; everything else stays as it is (tuples become lists)."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if isinstance(data, np.ndarray) and _NON_NUMERIC.search(data.dtype.str):
            return data
        return as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _same_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate `batch` (a sequence of samples of one structure): leaves are batched by the
    function `collate_fn_map` has for their type (or a base of it); containers are walked."""
    elem = batch[0]
    if collate_fn_map is not None:
        fn = collate_fn_map.get(type(elem))
        if fn is None:
            fn = next((f for types, f in collate_fn_map.items() if isinstance(elem, types)), None)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _same_mapping(elem, {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(collate(field, collate_fn_map=collate_fn_map) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [collate(field, collate_fn_map=collate_fn_map) for field in zip(*batch)]
        return fields if isinstance(elem, tuple) else _same_sequence(elem, fields)
    raise TypeError(_ERROR.format(type(elem)))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if _NON_NUMERIC.search(batch[0].dtype.str):
        raise TypeError(_ERROR.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(np.asarray(batch))  # (numpy's dtype is kept: float32 scalars give a float32 tensor)


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(list(batch), dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(list(batch))  # int64; bools (an int subclass) give a bool tensor


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    (np.ndarray, np.memmap): collate_numpy_array_fn,
    (np.bool_, np.number): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """A batch of tensors from a list of samples (see the module's table)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


def _same_mapping(like, items):
    """`items` (a dict) in the mapping type of `like`, or a plain dict when that type can't be built so."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            out = copy.copy(like)  # keeps a defaultdict's factory, an OrderedDict's class, ...
            out.update(items)
            return out
        return type(like)(items)
    except TypeError:
        return items


def _same_sequence(like, items):
    """`items` (a list) in the sequence type of `like`, or the list when that type can't be built so."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            out = copy.copy(like)
            for i, x in enumerate(items):
                out[i] = x
            return out
        return type(like)(items)
    except TypeError:
        return items
