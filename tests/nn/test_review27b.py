"""Second review of the merges after 6ab23a2: fixes, each with its test."""
import glob
import os
import struct

import numpy as np
import pytest

from tests.nn.test_runtime_from_file import _run



def _damage_machine_code(path):
    """Overwrite the executable sections of the ELF object inside `path` with int3 (a trap if run)."""
    data = bytearray(open(path, "rb").read())
    elf = data.index(b"\x7fELF")
    shoff, = struct.unpack_from("<Q", data, elf + 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, elf + 0x3A)
    damaged = 0
    for i in range(shnum):
        _, _, flags, _, offset, size = struct.unpack_from("<IIQQQQ", data, elf + shoff + i * shentsize)
        if flags & 0x4 and size:  # SHF_EXECINSTR
            data[elf + offset:elf + offset + size] = b"\xcc" * size
            damaged += size
    assert damaged
    with open(path, "wb") as f:
        f.write(data)


def test_a_runtime_file_with_damaged_machine_code_is_rebuilt_not_run(tmp_path):
    pytest.importorskip("numba")
    if not struct.pack("=H", 1) == b"\x01\x00":
        pytest.skip("the damage is written for little-endian ELF objects")
    # a cache directory of its own: in the package's __pycache__, any other process starting meanwhile (another
    # test worker's) would find the damage first and write the file again, whole
    cache = dict(NUMBA_CACHE_DIR=str(tmp_path))
    _run("file", **cache)  # (writes the file where it is not there yet)
    paths = glob.glob(os.path.join(tmp_path, "**", "nrt-*.nbo"), recursive=True)
    if not paths:
        pytest.skip("the runtime's file could not be written here")
    for path in paths:
        try:
            _damage_machine_code(path)
        except ValueError:  # (not an ELF object: another platform's)
            pytest.skip("the runtime's object code is not ELF here")
    built, result = _run("file", **cache)  # before the fix: the process died on the trap
    assert built == 1
    assert result == _run("numba")[1]


@pytest.mark.parametrize("xs, bs", [((3, 4), (2, 5)), ((3, 4), (1, 3)), ((3, 4), (2, 1, 5)), ((2, 3, 4), (2, 5)),
                                    ((2, 3, 4), (2, 3, 3)), ((2, 3, 4), (1, 3)), ((2, 2, 3, 4), (3,)), ((4,), (2, 5)),
                                    ((4,), (3,))])
def test_linear_with_a_bias_that_does_not_fit_says_pytorchs_words(xs, bs):
    """A bias of any shape that does not fit the product: PyTorch's RuntimeError, not numpy's ValueError."""
    torch = pytest.importorskip("torch")
    import minigrad
    import nn.functional as F

    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal(xs), rng.standard_normal((5, 4)), rng.standard_normal(bs)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b))
    with pytest.raises(RuntimeError) as ours:
        F.linear(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b))
    assert str(ours.value) == str(theirs.value).replace("torch.", "minigrad.")
