"""DistributedDataParallel's communication hooks under two ranks (one mpiexec run of
ddp_comm_hooks_worker.py for every case): the default hooks against DDP without a hook, one process
on the full batch, and PyTorch's float16 / bfloat16 arithmetic; a custom then() chain; PyTorch's errors."""
import json
import sys

import numpy as np
import pytest

from _mpi_launch import ROOT

sys.path.insert(0, str(ROOT / "tests" / "distributed"))
import ddp_comm_hooks_worker as W  # noqa: E402

N_PARAMS = 4


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    from _mpi_launch import HAVE_MPI, launch

    if not HAVE_MPI:
        pytest.skip("mpi4py or mpiexec is not installed (pip install -e '.[mpi]')")
    out = tmp_path_factory.mktemp("ddp_comm_hooks")
    proc = launch(2, ROOT / "tests" / "distributed" / "ddp_comm_hooks_worker.py", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = []
    for r in range(2):
        npz = np.load(out / f"rank_{r}.npz")
        grads = {}
        for key in npz.files:
            case, i = key.split("/")
            grads.setdefault(case, [None] * N_PARAMS)[int(i)] = npz[key]
        runs.append((grads, json.loads((out / f"rank_{r}.json").read_text())))
    return runs


def full_batch(lib):
    """One process's gradients on the whole batch (lib: minigrad or torch)."""
    nn = lib.nn
    m = W.model(nn, lib)
    x, y = W.data()
    nn.functional.mse_loss(m(lib.tensor(x)), lib.tensor(y)).backward()
    return [p.grad.numpy() for p in m.parameters()]


def test_allreduce_hook_equals_ddp_without_a_hook_and_one_process(ranks):
    one = full_batch(__import__("minigrad"))
    for grads, _ in ranks:
        for case in ("allreduce", "allreduce_2", "after_errors"):
            for a, b, c in zip(grads[case], grads["default"], one):
                np.testing.assert_array_equal(a, b)  # halve then sum == sum then halve, in float32
                np.testing.assert_allclose(a, c, rtol=1e-6, atol=1e-7)
    for a, b in zip(ranks[0][0]["allreduce"], ranks[1][0]["allreduce"]):
        np.testing.assert_array_equal(a, b)


def test_allreduce_hook_equals_torch_on_the_full_batch(ranks):
    torch = pytest.importorskip("torch")
    for a, b in zip(ranks[0][0]["allreduce"], full_batch(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_fp16_compress_hook_is_torchs_float16_arithmetic(ranks):
    locals_ = [grads["local"] for grads, _ in ranks]
    for i in range(N_PARAMS):
        half = [g[i].astype(np.float16) / np.float16(2) for g in locals_]
        expect = (half[0] + half[1]).astype(np.float32)  # numpy's float16 sum: the float32 sum rounded once
        for grads, _ in ranks:
            np.testing.assert_array_equal(grads["fp16"][i], expect)
            np.testing.assert_array_equal(grads["fp16_2"][i], expect)
            np.testing.assert_array_equal(grads["fp16_wrapper"][i], expect)  # fp16_compress_wrapper(allreduce_hook)
    assert any(not np.array_equal(a, b) for a, b in zip(ranks[0][0]["fp16"], ranks[0][0]["allreduce"]))


def test_fp16_and_bf16_compress_hooks_match_torch_single_process_math(ranks):
    torch = pytest.importorskip("torch")
    locals_ = [torch.tensor(grads["local"][i]) for grads, _ in ranks for i in range(N_PARAMS)]
    for dtype, case in ((torch.float16, "fp16"), (torch.bfloat16, "bf16")):
        for i in range(N_PARAMS):
            a, b = locals_[i], locals_[N_PARAMS + i]
            expect = (a.to(dtype).div_(2) + b.to(dtype).div_(2)).float().numpy()
            np.testing.assert_array_equal(ranks[0][0][case][i], expect)
            np.testing.assert_array_equal(ranks[1][0][case][i], expect)


def test_a_custom_hook_doubling_through_then_doubles_the_gradients(ranks):
    for grads, _ in ranks:
        for case in ("doubled", "doubled_2", "doubled_later"):
            for a, b in zip(grads[case], grads["default"]):
                np.testing.assert_allclose(a, 2 * b, rtol=1e-6)


def test_the_hook_gets_state_and_each_bucket_in_order(ranks):
    buckets = ranks[0][1]["buckets"]
    assert len(buckets) == 2 * 4  # two steps of four buckets
    assert [b["index"] for b in buckets] == [0, 1, 2, 3] * 2
    assert [b["is_last"] for b in buckets] == [False, False, False, True] * 2
    assert all(b["state"] == "the state" and b["views_equal"] and b["shapes"] == b["grad_shapes"] for b in buckets)
    # reverse registration order, one parameter each: the last layer's bias first
    assert [b["shapes"] for b in buckets[:4]] == [[[3]], [[3, 5]], [[5]], [[5, 6]]]
    assert [b["numel"] for b in buckets[:4]] == [3, 15, 5, 30]


def test_pytorchs_errors(ranks):
    for _, seen in ranks:
        assert seen["twice"] == ["RuntimeError",
                                 "register_comm_hook or register_builtin_comm_hook can only be called once."]
        assert seen["not_callable"] == ["TypeError", "Communication hook must be callable."]
        assert seen["bucket_annotation"] == ["ValueError",
                                             "Communication hook: bucket annotation should be dist.GradBucket."]
        assert seen["return_annotation"] == [
            "ValueError", "Communication hook: return annotation should be torch.futures.Future[torch.Tensor]."]
        assert seen["not_a_future"] == [
            "RuntimeError", "DDP communication hook's callback must return a torch.futures.Future object, "
                            "but got builtins.int"]
        assert seen["a_list"][0] == "RuntimeError" and seen["a_list"][1].startswith("Unable to cast [tensor(")
        assert seen["a_list"][1].endswith("] to Tensor")
        assert seen["short"] == ["RuntimeError", "DDP communication hook: the Future's tensor has numel 1, "
                                                 "bucket 0's gradients have numel 3"]


def test_work_get_future_holds_the_output_tensors(ranks):
    for _, seen in ranks:
        # [one tensor, the one reduced in place], its value; a then() child completed by the wait
        assert seen["get_future"] == [1, True, [3.0, 6.0], True, [4.0, 7.0]]
