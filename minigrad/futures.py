"""torch.futures for minigrad: a Future holds a value (or an exception) that arrives later.

    fut = dist.all_reduce(t, async_op=True).get_future()    # completes with [t]
    doubled = fut.then(lambda f: f.value()[0] * 2)         # a new Future: the callback's result
    doubled.wait()

minigrad runs in one thread, so nothing completes a Future behind the caller's back: a Future
made by a collective, or chained to one, knows how to drive its source to completion (`wait()`
finishes the collective, then runs the callbacks in the order they were added). A Future that
nothing can complete (no set_result yet, no collective behind it) raises on `wait()` instead of
hanging as PyTorch's would.
"""
import logging
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
_NOT_YET = object()
_COMPLETED_TWICE = ("Attempting to mark a completed Future as complete again. Note that a Future can only be "
                    "marked completed once.")


class Future(Generic[T]):
    """A value that arrives later (PyTorch's torch.futures.Future). `devices` is accepted and unused
    (there are no CUDA streams to synchronise here)."""

    def __init__(self, *, devices=None):
        self._value, self._exception = _NOT_YET, None
        self._callbacks = []
        self._drive = None  # (poll, finish): whether the source is ready, and what completes this Future from it

    def done(self):
        """Whether the Future has a value or an exception (a collective behind it is polled, not waited)."""
        if not self._completed() and self._drive is not None and self._drive[0]():
            self._drive[1]()
        return self._completed()

    def wait(self):
        """The value, once complete (a collective behind it is waited for); raises the Future's exception."""
        if not self._completed() and self._drive is not None:
            self._drive[1]()
        if not self._completed():
            raise RuntimeError("Future.wait(): this Future would never complete: nothing set its result "
                               "(set_result / set_exception) and no collective is behind it")
        return self.value()

    def value(self):
        """The value of a completed Future (raises its exception); does not wait."""
        if not self._completed():
            raise RuntimeError("Future.value() called before the Future completed: call wait() first")
        if self._exception is not None:
            raise self._exception
        return self._value

    def then(self, callback):
        """A new Future, completed with `callback(self)` once this one completes (or with a RuntimeError
        naming the callback's exception, when it raises)."""
        _check_callable(callback, "then")
        child = Future()
        child._drive = (self.done, self._settle)

        def run(fut):
            try:
                result = callback(fut)
            except Exception as e:
                child.set_exception(RuntimeError(f"Got the following error when running the callback: "
                                                 f"{type(e).__name__}: {e}"))
                child._exception.__cause__ = e
                return
            child.set_result(result)

        self._add(run)
        return child

    def add_done_callback(self, callback):
        """Call `callback(self)` once complete (now, if already). Its exceptions are logged, not raised:
        use then() to see them."""
        _check_callable(callback, "add_done_callback")

        def run(fut):
            try:
                callback(fut)
            except Exception as e:
                logging.getLogger(__name__).error("Got the following error when running the callback: %s: %s",
                                                  type(e).__name__, e)

        self._add(run)

    def set_result(self, result):
        """Complete with `result` and run the callbacks."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete with the exception `result`: wait() and value() raise it."""
        assert isinstance(result, Exception), f"{result} is of type {type(result)}, not an Exception."
        self._complete(None, result)

    # ---- inner workings -------------------------------------------------------------------------
    def _settle(self):
        """Drive this Future to completion; its exception, if any, stays in it for the callbacks to meet."""
        try:
            self.wait()
        except Exception:
            pass

    def _completed(self):
        return self._value is not _NOT_YET or self._exception is not None

    def _complete(self, value, exception):
        if self._completed():
            raise RuntimeError(_COMPLETED_TWICE)
        self._value, self._exception = value, exception
        callbacks, self._callbacks = self._callbacks, []
        for run in callbacks:
            run(self)

    def _add(self, run):
        if self._completed():
            run(self)
        else:
            self._callbacks.append(run)


def _check_callable(callback, what):
    if not callable(callback):
        raise TypeError(f"{what}(): the callback must be callable, got {type(callback).__name__}")


def _check_futures(futures, what):
    if not isinstance(futures, (list, tuple)) or not all(isinstance(f, Future) for f in futures):
        kind = type(futures).__name__ if not isinstance(futures, (list, tuple)) else "a list holding non-Futures"
        raise TypeError(f"{what}(): expected a list of Futures, got {kind}")


def collect_all(futures):
    """A Future completed with the list `futures` once every one of them has completed (with a value
    or an exception)."""
    _check_futures(futures, "collect_all")
    out, left = Future(), [len(futures)]

    def one_more(_):
        left[0] -= 1
        if left[0] == 0:
            out.set_result(list(futures))

    out._drive = (lambda: all(f.done() for f in futures), lambda: [f._settle() for f in futures])
    for f in futures:
        f._add(one_more)
    if not futures:
        out.set_result([])
    return out


def wait_all(futures):
    """Every Future's value, in order, once all have completed (raises the first exception met)."""
    return [f.value() for f in collect_all(futures).wait()]
