"""`DataLoader`: batches from a dataset, in the order a sampler gives, in this process or in
worker processes.

What one pass does: the index sampler (a `BatchSampler` over the sampler when batching, else the
sampler) yields keys; each is fetched (`dataset[key]`, or the next samples of an iterable
dataset) and collated into a batch. With `num_workers > 0` the keys are dealt round-robin to
worker processes, at most `prefetch_factor` tasks per worker ahead, and the batches come back in
the sampler's order (or as they arrive, with `in_order=False`).
"""
import itertools
import math
import multiprocessing
import os
import queue
import sys
import warnings

from ._utils.collate import default_collate, default_convert
from ._utils.fetch import create_fetcher
from ._utils.worker import (
    MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, IterableDatasetStopIteration, ResumeIteration, get_worker_info,
    worker_loop,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, draw_seed

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


class _InfiniteConstantSampler(Sampler):
    """An iterable dataset's sampler: None forever (the dataset, not a key, says what comes next)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over `dataset` in batches, as `torch.utils.data.DataLoader`.

    dataset: map-style (`dataset[i]`, `len`) or an `IterableDataset`.
    batch_size, drop_last: samples per batch (None: no batching); drop a short last batch.
    shuffle: a fresh random order each pass (a `RandomSampler` drawing from `generator`, else
        from the default generator, so `minigrad.manual_seed` repeats it).
    sampler / batch_sampler: the order of keys, or of lists of keys, instead.
    collate_fn: samples -> batch (`default_collate`; `default_convert` without batching).
    num_workers: worker processes (0: load in this process). Each is seeded with
        `base_seed + worker_id`, where the base seed is drawn from `generator` at each pass;
        `worker_init_fn(worker_id)` then runs in it; an exception in a worker is raised here, with
        the worker's traceback in its message.
    timeout: seconds to wait for a worker's batch (0: forever).
    prefetch_factor: tasks sent ahead per worker (2 with workers).
    persistent_workers: keep the workers between passes.
    multiprocessing_context: a start method ("fork", "spawn", "forkserver") or context.
    in_order: give batches in the sampler's order (else as workers finish them).
    pin_memory, pin_memory_device: accepted; minigrad has no pinned memory, so nothing is pinned.
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # an iterable dataset says itself what comes next: no sampler may, nor a shuffle
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True
        self._IterableDataset_len_called = None  # len(loader) of an iterable dataset, to warn when it yields more
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                          "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What yields the fetches' keys: the batch sampler when batching, else the sampler."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if not self.persistent_workers:
            return _MultiProcessingIter(self)
        if self._iterator is None:
            self._iterator = _MultiProcessingIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if not self._iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
        return length

    def check_worker_number_rationality(self):
        """Warn when there are more workers than CPUs this process may use."""
        if not self.num_workers:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cpus is not None and self.num_workers <= cpus:
            return
        suggestion = ("DataLoader is not able to compute a suggested max number of worker in current system."
                      if cpus is None else
                      f"Our suggested max number of worker in current system is {cpus}"
                      f"{'' if hasattr(os, 'sched_getaffinity') else ' (`cpuset` is not taken into account)'}, "
                      "which is smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {suggestion} "
                      "Please be aware that excessive worker creation might get DataLoader running slow or even "
                      "freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
                      stacklevel=3)


class _BaseIter:
    """One pass over a DataLoader (several, for persistent workers)."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent = loader.persistent_workers
        if loader.pin_memory and not _gpu_present():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=3)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = draw_seed(loader.generator)  # drawn at every pass, with or without workers
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _reset(self, loader):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._len_called is not None and self._num_yielded > self._len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._len_called}(when accessing "
                   f"len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker (see get_worker_info).")
            warnings.warn(msg, stacklevel=2)
        return data

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = create_fetcher(self._iterable, self._dataset, self._auto_collation, self._collate_fn,
                                       self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(next(self._sampler_iter))  # either may raise StopIteration


class _MultiProcessingIter(_BaseIter):
    """Tasks (task number, key) go to the workers' own queues, round-robin over the workers still
    active; results (task number, batch) come back on one shared queue and are handed out in task
    order. `_task_info[task]` is (worker,) while outstanding, (worker, batch) once it arrived early."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context or multiprocessing
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._shutdown = False
        self._index_queues, self._workers = [], []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()  # exiting never waits on tasks a dead worker left unread
            w = ctx.Process(target=worker_loop, daemon=True, args=(
                self._iterable, self._dataset, index_queue, self._result_queue, self._done_event,
                self._auto_collation, self._collate_fn, self._drop_last, self._base_seed, loader.worker_init_fn,
                i, self._num_workers))
            try:
                w.start()
            except BaseException:
                self._shutdown_workers()
                raise
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first=True)

    def _reset(self, loader, first=False):
        super()._reset(loader)
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to hand out
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first:  # persistent workers: start a new pass, dropping what the last one left in the queue
            for q in self._index_queues:
                q.put(ResumeIteration())
            acks = self._num_workers
            while acks:
                task, _ = self._get_data()
                acks -= isinstance(task, ResumeIteration)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return  # every worker's stream has ended
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout=MP_STATUS_CHECK_INTERVAL):
        try:
            return True, self._result_queue.get(timeout=timeout)
        except queue.Empty:
            dead = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
            if dead:
                for i, w in enumerate(self._workers):
                    if w in dead:
                        self._mark_worker_as_unavailable(i)
                pids = ", ".join(str(w.pid) for w in dead)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip tasks that will never come back (sent to a worker whose stream has ended)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # it arrived earlier
                _, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data)
            task, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, IterableDatasetStopIteration):
                if self._persistent:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task == self._rcvd_idx or not self._in_order:
                del self._task_info[task]
                if task == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data)
            self._task_info[task] += (data,)  # early: kept until its turn

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker):
        """Tell a worker to exit (it finishes the task in hand first) and send it nothing more."""
        self._index_queues[worker].put(None)
        self._workers_status[worker] = False

    def _shutdown_workers(self):
        if self._shutdown or sys.is_finalizing():  # (at exit, multiprocessing ends its daemon workers itself)
            return
        self._shutdown = True
        try:
            self._done_event.set()  # workers skip any task still queued
            for i in range(len(self._workers)):
                if self._persistent or self._workers_status[i]:
                    self._mark_worker_as_unavailable(i)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self):
        if hasattr(self, "_shutdown"):  # (__init__ got that far)
            self._shutdown_workers()


def _gpu_present():
    from ...device import cuda_is_available

    return cuda_is_available()
