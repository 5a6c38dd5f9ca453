"""minigrad.futures against torch.futures, single-process: then() chains, callbacks, errors, collect_all."""
import pytest

import minigrad
from minigrad.futures import Future, collect_all, wait_all

torch = pytest.importorskip("torch")
LIBS = [pytest.param((Future, collect_all, wait_all), id="minigrad"),
        pytest.param((torch.futures.Future, torch.futures.collect_all, torch.futures.wait_all), id="torch")]


def outcome(f):
    """(value,) or (exception type, message's first line)."""
    try:
        return (f(),)
    except Exception as e:
        return type(e).__name__, str(e).splitlines()[0]


def both(scenario):
    """The scenario's outcome with minigrad's futures and with torch's: they must agree."""
    return [scenario(*p.values[0]) for p in LIBS]


def test_then_chains_run_in_order_once_the_root_completes():
    def scenario(Future, *_):
        f, calls = Future(), []
        g = f.then(lambda x: x.value() + 1)
        h = g.then(lambda x: x.value() * 10)
        f.add_done_callback(lambda x: calls.append(("done", x.value())))
        before = (f.done(), g.done(), h.done())
        f.set_result(1)
        return before, h.wait(), g.value(), f.value(), calls, f.then(lambda x: x.value() - 1).value()

    mine, theirs = both(scenario)
    assert mine == theirs == ((False, False, False), 20, 2, 1, [("done", 1)], 0)


def test_errors_of_completing_twice_and_of_set_exception_match_torch():
    def scenario(Future, *_):
        f = Future()
        f.set_result(1)
        return (outcome(lambda: f.set_result(2)), outcome(lambda: f.set_exception(ValueError("x"))),
                outcome(lambda: Future().set_exception("str")))

    mine, theirs = both(scenario)
    assert mine == theirs
    assert mine[0][1].startswith("Attempting to mark a completed Future as complete again")


def test_value_before_completion_raises():
    for Future_, *_ in (p.values[0] for p in LIBS):
        with pytest.raises(RuntimeError):
            Future_().value()
    with pytest.raises(RuntimeError, match="before the Future completed"):
        Future().value()


def test_a_callbacks_exception_completes_the_child_with_torchs_error():
    def scenario(Future, *_):
        f = Future()
        bad = f.then(lambda x: 1 / 0)
        after = bad.then(lambda x: x.value() + 1)
        recovered = bad.then(lambda x: "ran")  # a callback that does not look at the value still runs
        f.set_result(3)
        return outcome(bad.wait), outcome(bad.value), bad.done(), outcome(after.wait), recovered.wait()

    mine, theirs = both(scenario)
    assert mine == theirs
    assert mine[0] == ("RuntimeError", "Got the following error when running the callback: ZeroDivisionError: "
                                       "division by zero")


def test_set_exception_reaches_wait_value_and_then():
    def scenario(Future, *_):
        f = Future()
        f.set_exception(ValueError("v"))
        return outcome(f.wait), outcome(f.value), f.done(), f.then(lambda x: 7).value()

    mine, theirs = both(scenario)
    assert mine == theirs == (("ValueError", "v"), ("ValueError", "v"), True, 7)


def test_an_add_done_callback_exception_is_logged_not_raised(caplog):
    f = Future()
    seen = []
    f.add_done_callback(lambda x: 1 / 0)
    f.add_done_callback(lambda x: seen.append(x.value()))
    f.set_result(5)  # torch logs the error too, and goes on
    assert seen == [5] and "ZeroDivisionError" in caplog.text


def test_collect_all_and_wait_all_match_torch():
    def scenario(Future, collect_all, wait_all):
        a, b = Future(), Future()
        c = collect_all([a, b])
        a.set_result(1)
        half = c.done()
        b.set_result(2)
        ok = [x.value() for x in c.wait()]
        d, e = Future(), Future()
        d.set_result(1)
        e.set_exception(RuntimeError("r"))
        failed = collect_all([d, e])
        return half, ok, failed.done(), outcome(lambda: wait_all([d, e])), wait_all([d]), collect_all([]).wait()

    mine, theirs = both(scenario)
    assert mine == theirs == (False, [1, 2], True, ("RuntimeError", "r"), [1], [])


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("call", ["then", "add_done_callback", "collect_non_futures", "collect_non_list"])
def test_bad_arguments_raise_type_errors_as_torch(lib, call):
    Future_, collect_all_, _ = lib
    with pytest.raises(TypeError):
        {"then": lambda: Future_().then(3), "add_done_callback": lambda: Future_().add_done_callback(3),
         "collect_non_futures": lambda: collect_all_([1]), "collect_non_list": lambda: collect_all_(3)}[call]()


def test_a_future_nothing_completes_raises_instead_of_hanging():
    with pytest.raises(RuntimeError, match="would never complete"):
        Future().then(lambda f: f.value()).wait()


def test_futures_of_tensors_and_the_annotations_hooks_carry():
    f = Future()
    f.set_result(minigrad.ones(2))
    assert f.then(lambda x: (x.value() * 2).tolist()).wait() == [2.0, 2.0]
    assert Future[minigrad.Tensor] == Future[minigrad.Tensor]  # torch.futures.Future[torch.Tensor] in signatures
    assert minigrad.futures.Future is Future
