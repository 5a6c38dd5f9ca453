"""Focused tests for what the scripts of test_dl_scripts17.py found in minigrad."""
import pytest

import nn


@pytest.mark.parametrize("name", ["Conv1d", "Conv2d", "Conv3d"])
def test_conv_bad_padding_judged_before_bad_padding_mode(name):
    torch = pytest.importorskip("torch")
    errors = []
    for lib in (torch.nn, nn):
        with pytest.raises(ValueError) as e:
            getattr(lib, name)(2, 2, 3, padding="foo", padding_mode="bar")
        errors.append(str(e.value).split(",")[0])
    assert errors[1] == errors[0] == "Invalid padding string 'foo'"
