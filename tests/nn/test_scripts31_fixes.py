"""Fixes found by the scripts of test_dl_scripts31.py (nn.DataParallel without a GPU), each checked against
PyTorch."""
import pytest

import minigrad
import nn


def test_data_parallel_without_a_gpu_keeps_only_the_module(torch):
    if torch.cuda.is_available() or minigrad.cuda.is_available():
        pytest.skip("PyTorch's DataParallel without a GPU")
    for kw in ({}, dict(device_ids=[0], output_device=0, dim=1)):
        ours, theirs = nn.DataParallel(nn.Linear(2, 2), **kw), torch.nn.DataParallel(torch.nn.Linear(2, 2), **kw)
        assert ours.device_ids == theirs.device_ids == []
        for name in ("dim", "output_device"):
            with pytest.raises(AttributeError) as ours_error:
                getattr(ours, name)
            with pytest.raises(AttributeError) as theirs_error:
                getattr(theirs, name)
            assert str(ours_error.value) == str(theirs_error.value)
