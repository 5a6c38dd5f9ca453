"""Review of the day's merges: fixes found there, each checked against PyTorch where it is the reference."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.ops._util import overlaps

torch = pytest.importorskip("torch")


class _OtherDevice(np.ndarray):
    """An array of another type, as a GPU array is to a CPU one: its bounds check refuses an array not of its own
    type, as cupy's does a numpy array (its may_share_memory takes cupy arrays only)."""

    def __array_function__(self, func, types, args, kwargs):
        if func is np.may_share_memory and not all(type(a) is _OtherDevice for a in args[:2]):
            raise TypeError("Argument 'b' has incorrect type (expected cupy.ndarray, got numpy.ndarray)")
        return super().__array_function__(func, types, args, kwargs)


def test_arrays_of_two_devices_never_overlap():
    a, b = np.arange(4.0), np.zeros(4).view(_OtherDevice)
    assert not overlaps(a, b) and not overlaps(b, a) and not overlaps(a, b, full=False)
    assert overlaps(a, a[::-1].copy()[::-1]) is False and overlaps(a[1:], a[:-1])  # (one type: the bounds decide)


def test_copy_from_another_device_is_no_overlap():
    # copy_ reads src before it moves it to self's device: a src on another device shares nothing with self
    x = mg.zeros(4)
    x.copy_(mg.Tensor._wrap(np.arange(4.0).view(_OtherDevice)))
    want = torch.zeros(4).copy_(torch.arange(4.0))
    np.testing.assert_array_equal(x.numpy(), want.numpy())


def test_setitem_with_ids_from_another_device():
    # an index tensor on the CPU into a GPU tensor (PyTorch takes it) is read, not written
    x = mg.zeros(5)
    x[mg.Tensor._wrap(np.array([1, 3]).view(_OtherDevice))] = mg.ones(2)
    t = torch.zeros(5)
    t[torch.tensor([1, 3])] = torch.ones(2)
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_reentrant_checkpoint_in_another_thread_during_autograd_grad():
    """autograd.grad in one thread does not make a reentrant checkpoint's plain backward refuse in another
    (PyTorch's flag is per thread)."""
    import threading

    import minigrad as mg
    from minigrad.utils.checkpoint import checkpoint

    results = []

    def other_thread():
        x = mg.tensor([1.0, 2.0], requires_grad=True)
        try:
            checkpoint(lambda a: (a * a).sum(), x, use_reentrant=True).backward()
            results.append(x.grad.tolist())
        except RuntimeError as e:
            results.append(str(e))

    class RunsTheOtherThread(mg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):  # (runs inside autograd.grad's engine pass)
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
            return g * 2

    y = mg.tensor([3.0], requires_grad=True)
    (gy,) = mg.autograd.grad(RunsTheOtherThread.apply(y).sum(), y)
    assert gy.tolist() == [2.0]
    assert results == [[2.0, 4.0]]


def test_row_written_back_onto_itself_as_torch():
    """`dC[ix] += g` (the write back of the very row) bumps the version once more and changes nothing else;
    another row of the same tensor is copied; as PyTorch."""
    torch = pytest.importorskip("torch")
    import minigrad as mg

    out = []
    for lib in (torch, mg):
        with lib.no_grad():
            d = lib.zeros(4, 3)
            ix = lib.tensor(2)
            v0 = d._version
            d[ix] += lib.tensor([1.0, 2.0, 3.0])
            d[1] = d[2]
            out.append((d.tolist(), d._version - v0))
    assert out[0] == out[1]
