"""minigrad.parallel: parallel_for covers its range exactly once, on every path, and fails cleanly."""
import os
import sys
import threading

import numpy as np
import pytest

from minigrad import parallel


def fill(n, **kw):
    """parallel_for writing each index's own value; returns the array and the threads that ran."""
    out = np.full(n, -1, dtype=np.int64)
    hits = np.zeros(n, dtype=np.int64)
    threads = set()

    def kernel(lo, hi):
        threads.add(threading.current_thread().name)
        out[lo:hi] = np.arange(lo, hi)
        hits[lo:hi] += 1

    parallel.parallel_for(n, kernel, **kw)
    return out, hits, threads


@pytest.mark.parametrize("n, block, min_parallel", [(1, 4, 1), (10, 3, 1), (1000, 7, 1), (1000, 64, 10**6), (0, 4, 1)])
def test_every_index_exactly_once(n, block, min_parallel):
    out, hits, _ = fill(n, block=block, min_parallel=min_parallel)
    assert np.array_equal(out, np.arange(n)) and np.all(hits == 1)


def test_large_jobs_use_the_pool_and_small_ones_run_inline(monkeypatch):
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    _, _, threads = fill(1000, block=10, min_parallel=1)
    assert len(threads) == 2 and threading.current_thread().name in threads
    _, _, threads = fill(1000, block=10, min_parallel=10**6)
    assert threads == {threading.current_thread().name}


def test_more_threads_asked_for_grows_the_pool(monkeypatch):
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "3")
    out, hits, threads = fill(999, block=5, min_parallel=1)
    assert len(threads) == 3 and np.all(hits == 1)


@pytest.mark.parametrize("where", ["worker", "caller"])
def test_an_error_in_any_part_reaches_the_caller_and_the_pool_still_works(monkeypatch, where):
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    caller = threading.current_thread().name

    def kernel(lo, hi):
        on_caller = threading.current_thread().name == caller
        if on_caller == (where == "caller"):
            raise ValueError(f"bad block {lo}")

    with pytest.raises(ValueError, match="bad block"):
        parallel.parallel_for(100, kernel, block=10, min_parallel=1)
    out, hits, threads = fill(100, block=10, min_parallel=1)  # nothing left half-finished
    assert np.all(hits == 1) and len(threads) == 2


def test_nested_calls_run_inline():
    inner_threads = []

    def outer(lo, hi):
        _, hits, threads = fill(50, block=5, min_parallel=1)
        assert np.all(hits == 1)
        inner_threads.append((threading.current_thread().name, threads))

    parallel.parallel_for(4, outer, block=1, min_parallel=1)
    assert inner_threads and all(threads == {name} for name, threads in inner_threads)


def test_callers_on_several_threads_at_once(monkeypatch):
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    errors = []

    def user_thread():
        try:
            for _ in range(30):
                _, hits, _ = fill(2000, block=37, min_parallel=1)
                assert np.all(hits == 1)
        except BaseException as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=user_thread) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="fork is Linux-only here")
def test_a_forked_child_gets_its_own_pool(monkeypatch):
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    fill(100, block=10, min_parallel=1)  # the parent's pool exists
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: the parent's worker threads are gone; a call must not wait for them
        try:
            _, hits, threads = fill(100, block=10, min_parallel=1)
            os.write(w, b"ok" if np.all(hits == 1) and len(threads) == 2 else b"bad")
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 10) == b"ok"


def test_balanced_cuts_give_the_caller_the_items_it_does_while_a_worker_wakes(monkeypatch):
    key = object()
    monkeypatch.setattr(parallel, "_start_delay", 40e-6)
    monkeypatch.setitem(parallel._item_seconds, key, 1e-6)  # 40 items while a worker wakes
    cuts = parallel._cuts(1000, 2, 8, key)
    assert cuts[0] == 0 and cuts[-1] == 1000 and cuts[1] % 8 == 0
    assert abs(cuts[1] - 520) <= 4  # 520 for the caller, 480 for the worker: both done at 520 us
    cuts = parallel._cuts(1000, 4, 1, key)
    assert cuts == sorted(cuts) and cuts[-1] == 1000 and cuts[1] - cuts[0] > cuts[2] - cuts[1]
    assert parallel._cuts(1000, 2, None, key) == [0, 500, 1000]  # no grain: always the even split
    monkeypatch.setattr(parallel, "_start_delay", 1.0)  # a worker slower to wake than the whole job
    assert parallel._cuts(1000, 2, 8, key) == [0, 1000, 1000]


def test_the_split_adapts_after_a_few_calls(monkeypatch):
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    seen = []

    def kernel(lo, hi):
        seen.append((threading.current_thread().name, lo, hi))

    for _ in range(3):
        seen.clear()
        parallel.parallel_for(4096, kernel, block=4096, min_parallel=1, grain=16)
        assert sorted((lo, hi) for _, lo, hi in seen)[0][0] == 0 and sum(hi - lo for _, lo, hi in seen) == 4096
    assert kernel.__code__ in parallel._item_seconds and parallel._start_delay > 0


def test_one_outlier_moves_the_running_averages_little():
    avg = None
    for _ in range(20):
        avg = parallel._average(avg, 40e-6)
    assert abs(avg - 40e-6) < 1e-9
    assert parallel._average(avg, 0.08) <= 1.41 * avg  # a worker woken after a long pause
    high = avg
    for _ in range(10):  # a lasting change is followed within a few calls
        high = parallel._average(high, 400e-6)
    assert high > 300e-6


def test_ctrl_c_while_waiting_for_a_worker_is_raised_after_the_wait_and_the_pool_recovers(monkeypatch):
    # an interrupt that arrives while the caller waits (here from the worker's job, as a SIGINT
    # delivered to that thread would): raised once the worker is done writing, never a hang
    import _thread
    import signal
    import time

    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("needs the main thread")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    written = np.zeros(100, dtype=np.int64)

    def kernel(lo, hi):
        if threading.current_thread() is not threading.main_thread():
            time.sleep(0.1)  # the caller is waiting by now
            _thread.interrupt_main()
            time.sleep(0.05)
        written[lo:hi] += 1

    try:
        with pytest.raises(KeyboardInterrupt):
            parallel.parallel_for(100, kernel, block=10, min_parallel=1)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert np.all(written == 1)  # the worker's half was complete when the interrupt surfaced
    out, hits, threads = fill(100, block=10, min_parallel=1)
    assert np.all(hits == 1) and len(threads) == 2
