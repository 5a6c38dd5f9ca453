"""Differences the fuzzers found at seeds 45-48, each reduced to a small case and compared with PyTorch."""
import pytest

import minigrad

torch = pytest.importorskip("torch")


def outcome(fn):
    """fn()'s value as a list, or its error as (type, text) in minigrad's words."""
    try:
        out = fn()
    except Exception as e:  # (the error itself is what is compared)
        return type(e).__name__, str(e).replace("torch.", "minigrad.")
    return [t.tolist() for t in out] if isinstance(out, tuple) else out.tolist()


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (3,), (2, 3), ()])
@pytest.mark.parametrize("name, dim", [("median", None), ("nanmedian", None), ("median", 0), ("nanmedian", 0),
                                       ("median", -1), ("kthvalue", 0), ("kthvalue", -1)])
def test_bool_median_and_kthvalue_check_in_pytorch_order(shape, name, dim):
    # an empty reduction dim is refused before the bool dtype; the whole tensor's median of nothing is NaN
    # (True as a bool); kthvalue refuses bool tensors (except 0-d ones)
    def run(lib):
        x = lib.zeros(shape, dtype=lib.bool)
        if name == "kthvalue":
            return x.kthvalue(1, dim)
        return getattr(x, name)() if dim is None else getattr(x, name)(dim)
    assert outcome(lambda: run(minigrad)) == outcome(lambda: run(torch))
