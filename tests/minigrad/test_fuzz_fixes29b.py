"""Differences the differential fuzzers found at MINIGRAD_FUZZ_SEED=47 and 48, reduced."""
import io
import pickle

import pytest

import minigrad


@pytest.mark.parametrize("writer", ["minigrad", "torch"])
def test_empty_bytes_load_as_pytorch_loads_them(writer):
    """Protocol 2 pickles b"" as a call to bytes(): the full reader rebuilds it, the weights_only one refuses it."""
    torch = pytest.importorskip("torch")
    obj = {"a": b"", "b": [b"", b"\x00raw"]}
    buf = io.BytesIO()
    (minigrad if writer == "minigrad" else torch).save(obj, buf)
    for lib in (torch, minigrad):
        buf.seek(0)
        assert lib.load(buf, weights_only=False) == obj
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL bytes was not an allowed global"):
            lib.load(buf, weights_only=True)


def test_bytes_with_arguments_stay_refused_in_one_line():
    torch = pytest.importorskip("torch")

    class Call:
        def __reduce__(self):
            return bytes, (3,)

    buf = io.BytesIO()
    torch.save({"a": Call()}, buf)  # (PyTorch's full reader would call bytes(3))
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="bytes\\(\\) without arguments only$"):
        minigrad.load(buf, weights_only=False)
