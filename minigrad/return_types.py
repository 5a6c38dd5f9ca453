"""`torch.return_types`: the named tuples max(dim=), sort, topk, svd, linalg.qr, ... return, for scripts that test
`isinstance(r, minigrad.return_types.max)`. Each class is made on first use, the same class the op's results have."""
from .ops._util import RETURN_FIELDS, return_type

__all__ = sorted(RETURN_FIELDS)


def __getattr__(name):
    if name in RETURN_FIELDS:
        return return_type(name, RETURN_FIELDS[name])
    if name == "all_return_types":
        return [return_type(op, fields) for op, fields in sorted(RETURN_FIELDS.items())]
    raise AttributeError(f"module 'minigrad.return_types' has no attribute '{name}'")


def __dir__():
    return [*__all__, "all_return_types"]
