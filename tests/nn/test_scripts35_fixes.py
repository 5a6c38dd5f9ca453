"""Focused checks of the minigrad differences that tests/nn/test_dl_scripts35.py's scripts found, each against
torch 2.13."""
import numpy as np
import pytest

import minigrad
import nn
from nn.optim import swa_utils


def test_swa_multi_avg_fn_lerps_by_the_float32_weight_of_an_int64_count():
    # AveragedModel hands its int64 n_averaged buffer to multi_avg_fn; 1 / (n + 1) of it is a float32 tensor,
    # and PyTorch's lerp takes that rounded weight even for float64 parameters
    torch = pytest.importorskip("torch")
    a, b = np.array([1.0, 2.0, -0.25]), np.array([0.3, 5.0, 7.0])
    for n in (torch.tensor(2), 2, torch.tensor(6)):
        ours = [minigrad.tensor(a)]
        theirs = [torch.tensor(a)]
        torch.optim.swa_utils.get_swa_multi_avg_fn()(theirs, [torch.tensor(b)], n)
        count = minigrad.tensor(int(n)) if isinstance(n, torch.Tensor) else n
        swa_utils.get_swa_multi_avg_fn()(ours, [minigrad.tensor(b)], count)
        np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())


def test_averaged_model_with_swa_multi_avg_fn_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    theirs_model = torch.nn.Linear(3, 2).double()
    ours_model = nn.Linear(3, 2).double()
    theirs = torch.optim.swa_utils.AveragedModel(theirs_model,
                                                 multi_avg_fn=torch.optim.swa_utils.get_swa_multi_avg_fn())
    ours = swa_utils.AveragedModel(ours_model, multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    for _ in range(4):
        w, bias = rng.standard_normal((2, 3)), rng.standard_normal(2)
        with torch.no_grad():
            theirs_model.weight.copy_(torch.tensor(w))
            theirs_model.bias.copy_(torch.tensor(bias))
        with minigrad.no_grad():
            ours_model.weight.copy_(minigrad.tensor(w))
            ours_model.bias.copy_(minigrad.tensor(bias))
        theirs.update_parameters(theirs_model)
        ours.update_parameters(ours_model)
    for p, q in zip(theirs.module.parameters(), ours.module.parameters()):
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
