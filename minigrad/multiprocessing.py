"""`torch.multiprocessing`: Python's multiprocessing (Process, Queue, set_start_method, cpu_count, ...), plus
PyTorch's `spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn')`. minigrad's tensors are
numpy arrays, which pickle by value: they need none of PyTorch's shared-memory reductions.

    import minigrad.multiprocessing as mp
    mp.spawn(train, args=(world_size,), nprocs=world_size)   # train(rank, world_size) in each process
"""
import multiprocessing
import multiprocessing.connection
import traceback
import warnings
from multiprocessing import *  # noqa: F401,F403 (PyTorch's module is Python's, re-exported)

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies",
           *multiprocessing.__all__]

_strategy = "file_descriptor"


def get_all_sharing_strategies():
    return {"file_system", "file_descriptor"}


def get_sharing_strategy():
    return _strategy


def set_sharing_strategy(new_strategy):
    """Accepted for PyTorch's scripts (numpy arrays are sent by value whatever the strategy)."""
    global _strategy
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(new_strategy)
    _strategy = new_strategy


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process died with a non-zero exit code (or a signal)."""

    def __init__(self, msg, error_index, pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, pid)
        self.exit_code, self.signal_name = exit_code, signal_name


def _run(fn, i, args, errors):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # (the parent is being interrupted too)
    except Exception:
        errors.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    """The processes of a `spawn(..., join=False)`; `join()` waits for them and raises the first failure."""

    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """True once every process has ended well; raises (ending the others) when one failed."""
        running = [p.sentinel for p in self.processes if p.exitcode is None]
        if running:  # (wait for the first to end, not each in turn: a failed one must not wait behind a hung one)
            multiprocessing.connection.wait(running, timeout)
        failed = next((i for i, p in enumerate(self.processes) if p.exitcode not in (0, None)), None)
        if failed is None:
            return all(p.exitcode == 0 for p in self.processes)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        proc, queue = self.processes[failed], self.error_queues[failed]
        if queue.empty():
            raise ProcessExitedException(f"process {failed} terminated with exit code {proc.exitcode}", failed,
                                         proc.pid, proc.exitcode)
        raise ProcessRaisedException(f"\n\n-- Process {failed} terminated with the following error:\n{queue.get()}",
                                     failed, proc.pid)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    context = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        errors = context.SimpleQueue()
        p = context.Process(target=_run, args=(fn, i, args, errors), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(errors)
    ctx = ProcessContext(processes, queues)
    if not join:
        return ctx
    while not ctx.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run `fn(i, *args)` in `nprocs` new processes, i = 0..nprocs-1; wait for them (join=True) and raise
    ProcessRaisedException with the child's traceback if one raised."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different "
                      "start_method use:\n\t\t torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
