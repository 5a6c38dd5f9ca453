"""LBFGS against torch.optim.LBFGS (float64): the same parameters after every step, with and without the
strong Wolfe line search, the same counters and state, state dicts that resume, PyTorch's errors."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from nn.optim import LBFGS


@pytest.fixture
def torch(torch):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # dozens of tiny evaluations: a thread pool only adds overhead
    yield torch
    torch.set_num_threads(threads)


def rosenbrock(lib, xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


def closure_for(opt, loss_fn):
    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    return closure


def twins(torch, arrays):
    """The same float64 starting points as minigrad parameters and torch parameters."""
    mg = [nn.Parameter(minigrad.tensor(a.copy())) for a in arrays]
    th = [torch.nn.Parameter(torch.tensor(a.copy())) for a in arrays]
    return mg, th


def run_both(torch, mg_params, th_params, mg_loss, th_loss, steps, **kwargs):
    """Take `steps` step()s with each; after each compare parameters (1e-8), returned losses and counters."""
    mg_opt, th_opt = LBFGS(mg_params, **kwargs), torch.optim.LBFGS(th_params, **kwargs)
    mg_closure, th_closure = closure_for(mg_opt, mg_loss), closure_for(th_opt, th_loss)
    for _ in range(steps):
        got, want = mg_opt.step(mg_closure), th_opt.step(th_closure)
        assert got.item() == pytest.approx(want.detach().item(), rel=1e-8, abs=1e-12)
        for p, q in zip(mg_params, th_params):
            np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=1e-8, atol=1e-8)
        mg_state, th_state = mg_opt.state[mg_params[0]], th_opt.state[th_params[0]]
        assert (mg_state["func_evals"], mg_state["n_iter"]) == (th_state["func_evals"], th_state["n_iter"])
    return mg_opt, th_opt


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_rosenbrock_trajectory_matches_torch(torch, line_search_fn):
    mg, th = twins(torch, [np.array([-1.5, 2.0])])
    kwargs = dict(lr=1 if line_search_fn else 0.2, max_iter=10, history_size=5, line_search_fn=line_search_fn)
    mg_opt, _ = run_both(torch, mg, th, lambda: rosenbrock(minigrad, mg[0]), lambda: rosenbrock(torch, th[0]),
                         steps=6, **kwargs)
    if line_search_fn:
        assert rosenbrock(minigrad, mg[0]).item() < 1e-8  # it found the minimum at (1, 1)


def mlp_problem(torch):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 3)), rng.standard_normal((32, 2))
    shapes = [(8, 3), (8,), (2, 8), (2,)]
    mg, th = twins(torch, [rng.standard_normal(s) * 0.5 for s in shapes])
    mx, my, tx, ty = minigrad.tensor(x), minigrad.tensor(y), torch.tensor(x), torch.tensor(y)

    def mg_loss():
        h = F.linear(mx, mg[0], mg[1]).tanh()
        return F.mse_loss(F.linear(h, mg[2], mg[3]), my)

    def th_loss():
        h = torch.nn.functional.linear(tx, th[0], th[1]).tanh()
        return torch.nn.functional.mse_loss(torch.nn.functional.linear(h, th[2], th[3]), ty)

    return mg, th, mg_loss, th_loss


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_mlp_regression_matches_torch(torch, line_search_fn):
    mg, th, mg_loss, th_loss = mlp_problem(torch)
    mg_opt, th_opt = run_both(torch, mg, th, mg_loss, th_loss, steps=4, lr=1, max_iter=8, history_size=4,
                              line_search_fn=line_search_fn)
    mg_state, th_state = mg_opt.state[mg[0]], th_opt.state[th[0]]
    assert len(mg_state["old_dirs"]) == len(th_state["old_dirs"]) == 4  # the history was cut to history_size
    for key in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(mg_state[key].numpy(), th_state[key].numpy(), rtol=1e-7, atol=1e-9)
    for a, b in zip(mg_state["old_stps"], th_state["old_stps"]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7, atol=1e-10)
    assert float(mg_state["H_diag"]) == pytest.approx(float(th_state["H_diag"]), rel=1e-7)
    assert sorted(mg_opt.state_dict()["state"][0]) == sorted(th_opt.state_dict()["state"][0])


def test_least_squares_with_max_eval_and_tolerances_matches_torch(torch):
    rng = np.random.default_rng(1)
    A, b = rng.standard_normal((20, 5)), rng.standard_normal(20)
    mg, th = twins(torch, [np.zeros(5)])
    mA, mb, tA, tb = minigrad.tensor(A), minigrad.tensor(b), torch.tensor(A), torch.tensor(b)
    run_both(torch, mg, th, lambda: ((mA @ mg[0] - mb) ** 2).sum(), lambda: ((tA @ th[0] - tb) ** 2).sum(), steps=3,
             max_iter=50, max_eval=12, line_search_fn="strong_wolfe")
    np.testing.assert_allclose(mg[0].array, np.linalg.lstsq(A, b, rcond=None)[0], atol=1e-4)


def test_at_an_optimum_a_step_evaluates_once(torch):
    mg, th = twins(torch, [np.zeros(3)])
    evals = []

    def loss():
        evals.append(1)
        return (mg[0] ** 2).sum()

    opt = LBFGS(mg, line_search_fn="strong_wolfe")
    assert opt.step(closure_for(opt, loss)).item() == 0.0 and len(evals) == 1
    th_opt = torch.optim.LBFGS(th, line_search_fn="strong_wolfe")
    th_opt.step(closure_for(th_opt, lambda: (th[0] ** 2).sum()))
    assert opt.state[mg[0]] == th_opt.state[th[0]] == {"func_evals": 1, "n_iter": 0}
    assert mg[0].array.tolist() == [0.0, 0.0, 0.0]


def test_state_dict_resumes(torch):
    def fresh():
        mg, _, mg_loss, _ = mlp_problem(torch)
        opt = LBFGS(mg, max_iter=5, history_size=3, line_search_fn="strong_wolfe")
        return mg, opt, closure_for(opt, mg_loss)

    mg, opt, closure = fresh()
    for _ in range(2):
        opt.step(closure)
    saved = opt.state_dict()
    params_then = [p.array.copy() for p in mg]
    for _ in range(2):
        opt.step(closure)

    mg2, opt2, closure2 = fresh()
    for p, a in zip(mg2, params_then):
        p.array[...] = a
    opt2.load_state_dict(saved)
    assert opt2.state[mg2[0]]["d"] is not saved["state"][0]["d"]  # copied, not shared
    for _ in range(2):
        opt2.step(closure2)
    for p, q in zip(mg, mg2):
        np.testing.assert_array_equal(p.array, q.array)
    assert opt2.state[mg2[0]]["func_evals"] == opt.state[mg[0]]["func_evals"]


def test_nn_save_round_trip(tmp_path, torch):
    mg, _, mg_loss, _ = mlp_problem(torch)
    opt = LBFGS(mg, max_iter=3)
    opt.step(closure_for(opt, mg_loss))
    nn.save(opt.state_dict(), tmp_path / "opt.safetensors")
    loaded = nn.load(tmp_path / "opt.safetensors")
    opt2 = LBFGS(mg, max_iter=3)
    opt2.load_state_dict(loaded)
    np.testing.assert_array_equal(opt2.state[mg[0]]["d"].numpy(), opt.state[mg[0]]["d"].numpy())


def test_errors_match_torch(torch):
    for kwargs in (dict(lr=-1.0),):
        with pytest.raises(ValueError) as want:
            torch.optim.LBFGS([torch.zeros(1, requires_grad=True)], **kwargs)
        with pytest.raises(ValueError) as got:
            LBFGS([nn.Parameter(minigrad.zeros(1))], **kwargs)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        LBFGS([{"params": [nn.Parameter(minigrad.zeros(1))]}, {"params": [nn.Parameter(minigrad.zeros(1))]}])
    p = nn.Parameter(minigrad.ones(2))
    opt = LBFGS([p], line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure_for(opt, lambda: (p ** 2).sum()))
    with pytest.raises(TypeError):
        opt.step()  # the closure is required
