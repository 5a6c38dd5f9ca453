"""The one hook `minigrad.compile` needs: `recorder`, None except while a compiled call is captured.

Eager code never depends on compile. The few places that make or change arrays outside a
`Function` check `recording.hook.recorder is not None` (one attribute read) and, when a capture is on,
hand the work to the recorder, which runs it eagerly and writes down how to replay it:

    Function.apply                            an op's forward       (autograd/function.py)
    BackwardNode.apply                        an op's backward      (autograd/function.py)
    accumulate_into_leaf, _add_to_buffer      the engine's sums     (autograd/engine.py)
    Optimizer.step, zero_grad, clip_grad_norm_, LRScheduler.step   replayed as calls  (nn/)
    add_, sub_, mul_, div_, t[i] = v, fill_, copy_, masked_fill_,   replayed as calls, where they record
    clamp_                                                           no gradient  (ops/inplace.py)
    Tensor.item / tolist / numpy / repr, random draws, ops whose    `escape(what)`: the call runs
    result's shape is data, Python decisions on a tensor's values    eagerly, with the reason

The recorder sets `recorder` back to None while it runs an op, so the ops an op calls internally
are not recorded twice. minigrad/compiler/capture.py is the recorder.

The hook is per thread (as grad mode is): a capture records the ops of the thread that runs the
compiled call, never those another thread runs meanwhile.
"""
import threading


class _Hook(threading.local):
    recorder = None


hook = _Hook()
# True once a recorder was made in this process (compiler/capture.py's Recorder sets it). Until then the
# checks that run for every op (Function.apply's, the engine's) stop at this module global: reading the
# thread-local costs several times more.
recorders_made = False


def escape(what, why=None, every_call=False):
    """A value is about to leave the trace for Python (`item()`, a draw outside an op, a shape or a
    decision made from the data), or Python is about to do what a replay would not redo (reseed a
    generator): a capture in progress stops, and the call runs eagerly with `what` (and `why`, else
    "a replay would freeze the value") as the reason (or raises, with fullgraph=True). `every_call`:
    what stops it also changes what the guards see (a module's attribute set), so every later call
    of the function runs eagerly, not only calls like this one. Outside a capture, nothing."""
    if hook.recorder is not None:
        hook.recorder.on_escape(what, why, every_call)
