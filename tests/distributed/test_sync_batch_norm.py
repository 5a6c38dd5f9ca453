"""SyncBatchNorm under two ranks (one mpiexec run of sync_batch_norm_worker.py for every case) equals one
process's BatchNorm on the full batch, minigrad's and torch's: outputs, input gradients, the ranks' weight and
bias gradients summed (or DDP-averaged), running statistics; and convert_sync_batchnorm's tree as torch's."""
import sys

import numpy as np
import pytest

from _mpi_launch import ROOT

sys.path.insert(0, str(ROOT / "tests" / "distributed"))
import sync_batch_norm_worker as W  # noqa: E402

TOL = dict(rtol=1e-5, atol=2e-5)


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    from _mpi_launch import HAVE_MPI, launch

    if not HAVE_MPI:
        pytest.skip("mpi4py or mpiexec is not installed (pip install -e '.[mpi]')")
    out = tmp_path_factory.mktemp("syncbn")
    proc = launch(2, ROOT / "tests" / "distributed" / "sync_batch_norm_worker.py", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [dict(np.load(out / f"rank_{r}.npz")) for r in range(2)]


def _full_batch(lib, case):
    """One process's BatchNorm{1,2,3}d (lib: minigrad or torch) through the case's steps on the full batch."""
    name, shape, affine, track, momentum, rows = case
    cls = {2: "BatchNorm1d", 3: "BatchNorm1d", 4: "BatchNorm2d", 5: "BatchNorm3d"}[len(shape)]
    m = getattr(lib.nn, cls)(shape[1], affine=affine, track_running_stats=track, momentum=momentum)
    if affine:
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.linspace(0.5, 1.5, shape[1], dtype=np.float32)))
            m.bias.copy_(lib.tensor(np.linspace(-0.2, 0.3, shape[1], dtype=np.float32)))
    out = {}
    for step in range(W.STEPS):
        x, r = W.data(shape, step)
        x = lib.tensor(x, requires_grad=True)
        y = m(x)
        (y * lib.tensor(r)).sum().backward()
        out[f"{step}/y"], out[f"{step}/gx"] = y.detach().numpy(), x.grad.numpy()
        if affine:
            out[f"{step}/gw"], out[f"{step}/gb"] = m.weight.grad.numpy().copy(), m.bias.grad.numpy().copy()
            m.weight.grad = m.bias.grad = None
        if track:
            out[f"{step}/running_mean"] = m.running_mean.detach().numpy().copy()
            out[f"{step}/running_var"] = m.running_var.detach().numpy().copy()
            out[f"{step}/tracked"] = m.num_batches_tracked.numpy().copy()
    m.eval()
    x = W.data(shape, 0)[0]
    if track:
        out["eval"] = m(lib.tensor(x)).detach().numpy()
    else:  # no running statistics: eval normalizes by the batch's own, which is each rank's part (PyTorch's)
        out["eval"] = np.concatenate([m(lib.tensor(part)).detach().numpy() for part in (x[:rows], x[rows:])])
    return out


@pytest.mark.parametrize("case", W.CASES, ids=[c[0] for c in W.CASES])
def test_two_ranks_equal_one_batchnorm_on_the_full_batch(ranks, case):
    import minigrad

    torch = pytest.importorskip("torch")
    name = case[0]
    r0, r1 = ({k[len(name) + 1:]: v for k, v in r.items() if k.startswith(name + "/")} for r in ranks)
    assert str(r0["grad_fn"]) == str(r1["grad_fn"]) == "SyncBatchNormBackward"
    for lib in (minigrad, torch):
        full = _full_batch(lib, case)
        for key, want in full.items():
            if key.endswith(("/y", "/gx")) or key == "eval":  # each rank holds its rows of the full batch's
                got = np.concatenate([r0[key], r1[key]])
            elif key.endswith(("/gw", "/gb")):  # each rank's share of the sum over the batch
                got = r0[key] + r1[key]
            else:  # running statistics: the full batch's, on every rank
                np.testing.assert_allclose(r1[key], want, **TOL, err_msg=f"{lib.__name__} {key} (rank 1)")
                got = r0[key]
            np.testing.assert_allclose(got, want, **TOL, err_msg=f"{lib.__name__} {key}")


def test_ddp_conv_model_with_converted_batchnorms_equals_one_process(ranks):
    import minigrad

    torch = pytest.importorskip("torch")
    r0, r1 = ranks
    minigrad.manual_seed(0)
    mg = W.conv_model(minigrad.nn)
    tm = W.conv_model(torch.nn)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mg.state_dict().items()})
    for lib, model in ((minigrad, mg), (torch, tm)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for step in range(W.STEPS):
            x, r = W.data((6, 2, 4, 4), step, seed=1)
            x = lib.tensor(x, requires_grad=True)
            opt.zero_grad()
            y = model(x)
            # DDP averages the two ranks' gradients of their sums: the full batch's sum over 2
            ((y * lib.tensor(r[:, :2])).sum() / 2).backward()
            what = f"{lib.__name__} step {step}"
            np.testing.assert_allclose(np.concatenate([r0[f"ddp/{step}/y"], r1[f"ddp/{step}/y"]]),
                                       y.detach().numpy(), **TOL, err_msg=what)
            np.testing.assert_allclose(np.concatenate([r0[f"ddp/{step}/gx"], r1[f"ddp/{step}/gx"]]),
                                       2 * x.grad.numpy(), **TOL, err_msg=what)
            for k, p in model.named_parameters():
                for r in (r0, r1):
                    np.testing.assert_allclose(r[f"ddp/{step}/grad/{k}"], p.grad.numpy(), **TOL, err_msg=f"{what} {k}")
            opt.step()
        for k, v in model.state_dict().items():
            for r in (r0, r1):
                np.testing.assert_allclose(r[f"ddp/state/{k}"], v.detach().numpy(), **TOL, err_msg=f"{lib.__name__} {k}")
        model.eval()
        want = model(lib.tensor(W.data((6, 2, 4, 4), 0, seed=1)[0])).detach().numpy()
        np.testing.assert_allclose(np.concatenate([r0["ddp/eval"], r1["ddp/eval"]]), want, **TOL)


def test_process_group_restricts_the_statistics_to_its_ranks(ranks):
    torch = pytest.importorskip("torch")
    x = W.data((8, 3), 0)[0]
    alone = [torch.nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)]
    halves = [alone[r](torch.tensor(x[4 * r:4 * r + 4])).detach().numpy() for r in range(2)]
    full = torch.nn.BatchNorm1d(3)
    y = full(torch.tensor(x)).detach().numpy()
    for r in range(2):  # a group of one: this rank's half alone
        np.testing.assert_allclose(ranks[r]["own_group/y"], halves[r], **TOL)
        np.testing.assert_allclose(ranks[r]["own_group/running_var"], alone[r].running_var.detach().numpy(), **TOL)
        np.testing.assert_allclose(ranks[r]["both_group/y"], y[4 * r:4 * r + 4], **TOL)
        np.testing.assert_allclose(ranks[r]["both_group/running_var"], full.running_var.detach().numpy(), **TOL)


def _tree(lib):
    nn = lib.nn
    inner = nn.Sequential(nn.BatchNorm1d(4, affine=False, momentum=None), nn.Linear(4, 4))
    model = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3, eps=1e-3), inner,
                          nn.BatchNorm3d(5, bias=False, track_running_stats=False), nn.InstanceNorm2d(3))
    model[2][0].eval()
    model[1].qconfig = "q"
    return model


def test_convert_sync_batchnorm_gives_torchs_tree_and_state():
    import minigrad

    torch = pytest.importorskip("torch")
    minigrad.manual_seed(0)
    mg = _tree(minigrad)
    tm = _tree(torch)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mg.state_dict().items()})
    before = {k: v for k, v in mg.named_parameters()}
    mg_out, tm_out = (lib.nn.SyncBatchNorm.convert_sync_batchnorm(m) for lib, m in ((minigrad, mg), (torch, tm)))
    assert repr(mg_out) == repr(tm_out)
    assert [(n, type(m).__name__, m.training) for n, m in mg_out.named_modules()] == \
        [(n, type(m).__name__, m.training) for n, m in tm_out.named_modules()]
    assert mg_out[1].qconfig == tm_out[1].qconfig == "q"
    assert all(p is before[k] for k, p in mg_out.named_parameters())  # the same parameters, shared
    mine, theirs = mg_out.state_dict(), tm_out.state_dict()
    assert list(mine) == list(theirs)
    for k in mine:
        np.testing.assert_array_equal(mine[k].numpy(), theirs[k].numpy(), err_msg=k)
    alone = minigrad.nn.SyncBatchNorm.convert_sync_batchnorm(minigrad.nn.BatchNorm1d(3))
    assert type(alone).__name__ == "SyncBatchNorm"


def test_one_process_is_plain_batchnorm_and_errors_are_torchs():
    import minigrad

    torch = pytest.importorskip("torch")
    x = W.data((6, 3, 4), 0)[0]
    m, t = minigrad.nn.SyncBatchNorm(3), torch.nn.BatchNorm1d(3)
    np.testing.assert_allclose(m(minigrad.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), **TOL)
    np.testing.assert_allclose(m.running_var.numpy(), t.running_var.detach().numpy(), **TOL)
    for bad in (np.zeros((2, 0, 3), np.float32), np.zeros(3, np.float32)):
        with pytest.raises(ValueError) as want:
            torch.nn.SyncBatchNorm(3)(torch.tensor(bad))
        with pytest.raises(ValueError) as got:
            minigrad.nn.SyncBatchNorm(3)(minigrad.tensor(bad))
        assert str(got.value) == str(want.value)
