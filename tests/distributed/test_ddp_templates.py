"""torch.distributed templates (templates.py) run on minigrad with only their imports changed: the
torchrun template under 2 ranks equals one process on the full batches, alone it runs without mpiexec,
and DDP's options and the collectives give PyTorch's results and texts (torch's gloo, world of one)."""
import json
import socket
import subprocess
import sys

import numpy as np
import pytest

from _mpi_launch import HAVE_MPI, ROOT, mpi_env

TEMPLATES = ROOT / "tests" / "distributed" / "templates.py"


def run_template(n, name, out):
    cmd = [sys.executable, "-m", "minigrad.distributed.run", f"--nproc_per_node={n}", str(TEMPLATES), name, str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, env=mpi_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_torchrun_template_on_two_ranks_equals_one_process_on_the_full_batch(mpirun, tmp_path):
    sys.path.insert(0, str(TEMPLATES.parent))
    import minigrad
    import templates
    from minigrad.nn import functional as F

    run_template(2, "template", tmp_path)
    runs = [json.loads((tmp_path / f"run_{r}.json").read_text()) for r in range(2)]
    assert runs[0]["losses"] == runs[1]["losses"] and runs[0]["elastic"]
    model, (x, y) = templates.model(), templates.data()
    opt = minigrad.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(2):
        a, b = runs[0]["orders"][epoch], runs[1]["orders"][epoch]
        assert len(a) == len(b) == 11 and not set(a) & set(b)  # drop_last: 22 keys, 11 each, none shared
        for i in range(0, 11, 2):  # each step: the mean of the two ranks' batch losses
            opt.zero_grad()
            loss = sum(F.mse_loss(model(minigrad.tensor(x[k[i:i + 2]])), minigrad.tensor(y[k[i:i + 2]])) for k in (a, b))
            (loss / 2).backward()
            opt.step()
    saved = np.load(tmp_path / "model.npz")
    for k, v in model.state_dict().items():
        np.testing.assert_allclose(saved[k], v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_the_template_alone_runs_without_mpiexec(tmp_path):
    if not HAVE_MPI:
        pytest.skip("mpi4py is not installed")
    proc = subprocess.run([sys.executable, str(TEMPLATES), "debug_alone", str(tmp_path)], cwd=ROOT, env=mpi_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = json.loads((tmp_path / "run_0.json").read_text())
    assert sorted(run["orders"][0]) == list(range(22)) and (tmp_path / "model.npz").exists()


def test_ddp_options_and_collectives_under_two_ranks(mpirun, tmp_path):
    import minigrad

    run_template(2, "features", tmp_path)
    r0, r1 = (json.loads((tmp_path / f"features_{r}.json").read_text()) for r in range(2))
    for key in ("mixed", "b_unused", "synced", "join", "gathered", "objs", "bl"):
        assert r0[key] == r1[key], key
    assert r0["b_unused"][0]  # used on no rank: .grad stays None, as PyTorch leaves it
    assert r0["mixed"]["a.bias"] == r0["mixed"]["b.bias"] == [0.5]  # used on one rank of two: half its gradient
    assert r0["no_sync"] == [[1.0, 1.0]] and r1["no_sync"] == [[2.0, 2.0]] and r0["synced"] == [[3.0, 3.0]]
    minigrad.manual_seed(0)
    w0 = minigrad.nn.Linear(2, 1, bias=False).weight.detach().numpy()
    np.testing.assert_allclose(r0["join"], w0 - 0.1 * (1.5 + 2.5 + 1.5), rtol=1e-6)  # the third step: 3 and a 0
    assert r0["gathered"] == [0, 1, 2, 3, 10, 11, 12, 13]
    assert (r0["scattered"], r1["scattered"]) == ([10, 12], [14, 16])
    assert r1["reduce"] == [10, 11, 12, 13] and r0["reduce"] == [0, 1, 2, 3]
    assert r0["gather"] == [[0, 1, 2, 3], [10, 11, 12, 13]] and r1["gather"] is None
    assert (r0["scatter"], r1["scatter"]) == ([1, 2], [3, 4])
    assert (r0["a2a"], r1["a2a"]) == ([0, 1, 10, 11], [2, 3, 12, 13])
    assert (r0["uneven"], r1["uneven"]) == ([0, 10, 11], [1, 2, 3, 12, 13])
    assert r0["objs"] == [{"rank": 0}, {"rank": 1}] and r0["bl"] == [1, "x"]
    assert r0["solo"] == [-1, -1, 1.0] and r1["solo"] == [0, 1, 1.0]


SAME_AS_TORCH = r'''
import os, sys, warnings
warnings.simplefilter("ignore")
lib = __import__(sys.argv[1])
import importlib
dist = importlib.import_module(sys.argv[1] + ".distributed")
nn = importlib.import_module(sys.argv[1] + ".nn")
DDP = importlib.import_module(sys.argv[1] + ".nn.parallel").DistributedDataParallel
out = []
def said(f):
    try:
        f()
        out.append("ok")
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}".splitlines()[0])
said(dist.get_world_size)
said(dist.get_rank)
out.append(dist.is_torchelastic_launched())
os.environ.update(MASTER_ADDR="localhost", MASTER_PORT=sys.argv[2], RANK="0", WORLD_SIZE="1")
said(lambda: dist.init_process_group(backend="bogus"))
said(lambda: dist.init_process_group(backend="nccl"))
dist.init_process_group(backend="gloo")
said(lambda: dist.init_process_group(backend="gloo"))
out.append(dist.get_backend())
t = lib.arange(4.0)
o = lib.empty(4); dist.all_gather_into_tensor(o, t); out.append(o.tolist())
o = lib.empty(4); dist.reduce_scatter_tensor(o, t, op=dist.ReduceOp.AVG); out.append(o.tolist())
o = lib.empty(4); dist.all_to_all_single(o, t); out.append(o.tolist())
g = dist.new_group([0]); out.append([dist.get_rank(g), dist.get_world_size(g)])
dist.monitored_barrier()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)
    def forward(self, x):
        return self.a(x)
m = DDP(M(), find_unused_parameters=True, static_graph=False, gradient_as_bucket_view=True)
m(lib.ones(1, 2)).sum().backward()
out.append([m.module.b.weight.grad is None, m.module.a.weight.grad.tolist()])
m2 = DDP(M())
m2(lib.ones(1, 2)).sum().backward()
said(lambda: m2(lib.ones(1, 2)))
out[-1] = out[-1][:300]  # (PyTorch's text goes on over several lines)
said(lambda: DDP(M(), device_ids=[0]))
with m.join():
    m(lib.ones(1, 2)).sum().backward()
dist.barrier()
dist.destroy_process_group()
print(repr(out))
'''


def free_port():
    """A port nothing listens on now: gloo's store binds MASTER_PORT, and a fixed one is taken whenever another
    run of this test (another worker, another checkout's suite) holds it."""
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_world_of_one_matches_torch_gloo(tmp_path):
    pytest.importorskip("torch")
    if not HAVE_MPI:
        pytest.skip("mpi4py is not installed")
    script = tmp_path / "same.py"
    script.write_text(SAME_AS_TORCH)
    outs = []
    for lib in ("torch", "minigrad"):
        proc = subprocess.run([sys.executable, str(script), lib, str(free_port())], cwd=ROOT, env=mpi_env(),
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outs.append(proc.stdout.strip().splitlines()[-1])
    assert outs[1] == outs[0]
