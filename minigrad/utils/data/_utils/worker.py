"""The DataLoader's worker processes: each fetches the batches it is sent, in a loop, and sends
back (task number, batch), or the exception the fetch raised (with its traceback as text).

A worker is seeded as PyTorch seeds one: `base_seed + worker_id` for Python's `random` and for
minigrad's generators (numpy's global generator gets a seed derived from both), so two workers
never draw the same numbers and a seeded run repeats.
"""
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from .... import manual_seed
from .fetch import create_fetcher

# seconds between a waiting side's checks that the other side is still alive
MP_STATUS_CHECK_INTERVAL = 5.0
# seconds between an idle worker's checks of the done event: the None that tells it to exit can be lost when
# the iterator is garbage in a reference cycle (the collector may close its queues' feeder threads first)
WORKER_POLL_INTERVAL = 0.2


@dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info()` returns in a worker: its `id` (0..num_workers-1), `num_workers`,
    the `seed` it was given, and `dataset`, this process's own copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info = None


def get_worker_info():
    """This worker's `WorkerInfo` inside a DataLoader worker process; None in the main process.

    An `IterableDataset` reads it in `__iter__` to take its own share of the stream, and a
    `worker_init_fn` to set each worker up differently."""
    return _worker_info


class KeyErrorMessage(str):
    """A str whose repr is itself: KeyError shows the repr of its argument, which would quote the
    whole traceback onto one line."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """The exception being handled, carried to another process as its type and traceback text."""

    def __init__(self, where="in background"):
        exc_type, exc, tb = sys.exc_info()
        try:
            pickle.dumps(exc_type)
        except Exception:  # a class defined inside a function can't travel: its text still does
            exc_type = RuntimeError
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(type(exc), exc, tb))
        self.where = where

    def reraise(self):
        """Raise the exception here: same type, message "Caught T in <where>.\\nOriginal Traceback ..."."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type that can't be built from one message
            raise RuntimeError(msg) from None
        raise exception


class IterableDatasetStopIteration:
    """A worker's message that its copy of an iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """The main process's message to a persistent worker: a new pass begins."""


def seed_worker(base_seed, worker_id):
    """Seed Python's, minigrad's and numpy's global generators for this worker; returns its seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers):
    """A worker process's life: seed, call `init_fn(worker_id)`, then answer each (task, index)
    from `index_queue` on `data_queue` until it gets None or the main process is gone."""
    global _worker_info
    try:
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")  # every task reports it
        ended = False  # this worker's stream is exhausted: it waits for None (or a new pass)
        parent = os.getppid()
        while os.getppid() == parent:  # (a worker whose main process died is handed to another parent: it stops)
            try:
                r = index_queue.get(timeout=WORKER_POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if isinstance(r, ResumeIteration):
                data_queue.put((r, None))
                ended = False
                fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or ended:
                continue
            task, index = r
            if init_error is not None:
                data = init_error
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if iterable and isinstance(e, StopIteration):
                        data, ended = IterableDatasetStopIteration(worker_id), True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((task, data))
            del data, r, index  # a batch is not kept alive while waiting for the next task
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the main process too, which stops the workers
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
