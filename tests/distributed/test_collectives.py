"""minigrad.distributed's collectives and DistributedDataParallel, run as 2 processes under mpiexec."""
import subprocess
import sys

import numpy as np
import pytest

from _mpi_launch import HAVE_MPI, ROOT, WORKERS, mpi_env


def ok(proc, out, ranks):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in out.glob("ok_*")) == [f"ok_{r}" for r in range(ranks)], proc.stdout + proc.stderr


def test_collectives_ops_async_and_timeout(mpirun, tmp_path):
    ok(mpirun(2, WORKERS, "collectives", tmp_path), tmp_path, 2)


def test_ddp_checks_models_unused_parameters_and_no_sync(mpirun, tmp_path):
    ok(mpirun(2, WORKERS, "ddp_errors", tmp_path), tmp_path, 2)


def test_nccl_backend_takes_rank_0s_unique_id_over_mpi(mpirun, tmp_path):
    ok(mpirun(2, WORKERS, "fake_nccl", tmp_path), tmp_path, 2)


def test_abort_names_the_failed_rank_on_the_others(mpirun, tmp_path):
    proc = mpirun(2, WORKERS, "aborting", tmp_path, timeout=30)
    assert "rank 0 saw: rank 1 failed: ValueError: bad batch" in proc.stdout, proc.stdout + proc.stderr


def test_an_uncaught_exception_ends_the_job_instead_of_hanging_it(mpirun, tmp_path):
    # rank 0 waits in all_reduce under the default 30-minute timeout: only MPI_Abort ends it in time
    proc = mpirun(2, WORKERS, "raising_while_another_waits", tmp_path, timeout=30)
    assert proc.returncode != 0
    assert "ValueError: a bug in rank 1's own code" in proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "rank0_went_on").exists()


def test_a_world_of_one_without_mpiexec_and_its_errors(tmp_path):
    if not HAVE_MPI:
        pytest.skip("mpi4py is not installed")
    proc = subprocess.run([sys.executable, str(WORKERS), "single", str(tmp_path)], cwd=ROOT, env=mpi_env(),
                          capture_output=True, text=True, timeout=60)
    ok(proc, tmp_path, 1)


def test_without_mpi4py_the_error_says_what_to_install(monkeypatch):
    import minigrad.distributed as dist

    monkeypatch.setitem(sys.modules, "mpi4py", None)  # as if it were not installed
    with pytest.raises(RuntimeError, match=r"needs mpi4py and an MPI library: pip install -e '\.\[mpi\]'"):
        dist.init_process_group()
    assert not dist.is_initialized() and not dist.is_mpi_available()


def test_before_init_the_error_is_pytorchs():
    import minigrad.distributed as dist

    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_world_size()


def _rel(a, b):
    da = np.concatenate([a[k].ravel() for k in a]).astype(np.float64)
    db = np.concatenate([b[k].ravel() for k in a]).astype(np.float64)
    return np.linalg.norm(da - db) / np.linalg.norm(da)


def test_two_ranks_of_batch_b_train_as_one_process_of_batch_2b(mpirun, tmp_path):
    """20 AdamW steps, with and without gradient accumulation: the same weights, to float32's
    rounding (the weights as one vector within 1e-6 relative) and float64's (1e-12)."""
    for n in (1, 2):
        proc = mpirun(n, WORKERS, "equivalence", tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    for accum, dtype, tol in ((1, "float32", 1e-6), (2, "float32", 1e-6), (2, "float64", 1e-12)):
        one = np.load(tmp_path / f"weights_1_{accum}_{dtype}.npz")
        two = np.load(tmp_path / f"weights_2_{accum}_{dtype}.npz")
        assert list(one) == list(two)
        assert one["lm_head.weight"].dtype == np.dtype(dtype)
        rel = _rel(one, two)
        assert rel < tol, (accum, dtype, rel)
        assert _rel(np.load(tmp_path / f"init_{accum}_{dtype}.npz"), one) > 1e-2  # it did train


def test_the_guides_example_runs_on_two_ranks(mpirun, tmp_path):
    """docs/distributed.md's DDP program (a ```py block: it needs mpiexec, so it is no doctest)."""
    import re

    text = (ROOT / "docs" / "distributed.md").read_text()
    (block,) = re.findall(r"^```py\n(.*?)^```", text, re.M | re.S)
    script = tmp_path / "ddp_example.py"
    script.write_text(block)
    proc = mpirun(2, script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # local gradients 16 (rank 0) and 32 (rank 1) per weight, accumulated over two backwards, averaged
    # (the two ranks share the pipe: a line of one may run into the other's, so the lines are found, not split)
    assert sorted(re.findall(r"rank \d: grad \[[^\]]*\]", proc.stdout)) == [
        "rank 0: grad [24. 24. 24. 24.]", "rank 1: grad [24. 24. 24. 24.]"]
    assert "rank" not in re.sub(r"rank \d: grad \[[^\]]*\]", "", proc.stdout)  # and nothing else printed
