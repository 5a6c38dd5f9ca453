"""CUDA graph replay: on a GPU, a program's kernel launches recorded once by the driver, then relaunched
as one graph per call (cupy's stream capture), so the per-kernel launch cost and the Python between
launches are paid once.

A graph replays fixed kernels on fixed memory with fixed arguments. That is right only for programs
that are a pure function of their inputs and of the tensors they read live (parameters):
  - no random draws (a graph would replay the same dropout mask every call),
  - no library calls (an optimizer step reads its lr and step count in Python each call) and no
    accumulation into `.grad` (the warm-up run before the capture would accumulate twice),
  - no input returned as a result, every array on the GPU.
`unsuitable` says which rule a program breaks (CPU-testable); the others replay step by step.

Memory: the graph's arrays come from a memory pool of its own (as PyTorch's graph pools), so no other
code is ever handed memory the graph writes; its inputs are copied into the graph's input buffers
before each launch and its results copied out after, so a result the caller keeps is never
overwritten. A parameter whose array is replaced (load_state_dict assigning new arrays) is new
memory the graph does not read: the graph is captured again.

Not run here: this machine has no GPU. bench/compile_gpu_check.py runs it (bench/gpu_check.sh).
"""
import warnings

ENABLED = True  # replay eligible GPU programs through CUDA graphs


def unsuitable(program, inputs):
    """Why `program` cannot run through a CUDA graph (one line), or None."""
    from .program import Accumulate, Call

    if program.autograd is not None:
        return "its result requires grad: the backward runs later, from the caller's backward()"
    if program.draws_random:
        return "it draws random numbers (dropout in training): a graph would replay the same ones"
    for step in program.steps:
        if isinstance(step, Call):
            name = getattr(step.fn, "__qualname__", "a library call")
            return f"it calls {name}, whose Python reads live state (the lr, the step count) at each call"
    if any(isinstance(step, Accumulate) for step in program.steps):
        return "it accumulates gradients into .grad (the capture's warm-up run would add them twice)"
    if _returns_input(program.output):
        return "it returns one of its inputs"
    if program.object_slots:
        return "it reads a live object (a KV cache), whose arrays change shape from call to call"
    arrays = [t.array for t in inputs] + [t.array for t, *_ in program.externals]
    if not arrays or not all(hasattr(a, "__cuda_array_interface__") for a in arrays):
        return "its arrays are not all on a GPU"
    return None


def _returns_input(out):
    if out[0] == "input":
        return True
    if out[0] == "seq":
        return any(_returns_input(o) for o in out[2])
    if out[0] == "dict":
        return any(_returns_input(o) for _, o in out[1])
    return False


class GraphReplay:
    """The CUDA graph of one program, captured at its first replay."""

    def __init__(self, program):
        self.program = program
        self.graph = None

    def replay(self, inputs):
        import cupy

        from .program import build_result

        if self.graph is None or any(t.array is not a for t, a in self.external_arrays):
            try:
                self._capture(inputs)
            except Exception as e:  # the driver refused something in the capture (a host sync, ...)
                warnings.warn(f"minigrad.compile: CUDA graph capture failed ({type(e).__name__}: {e}); "
                              "replaying step by step", RuntimeWarning, stacklevel=3)
                self.program.graph = None
                return build_result(self.program.output, self.program.run(inputs), made={})
        for buf, t in zip(self.static_inputs, inputs):
            cupy.copyto(buf, t.array)
        stream = cupy.cuda.get_current_stream()
        self.graph.launch(stream)
        return build_result(self.program.output, self.env, copy=True, made={})

    def _capture(self, inputs):
        import cupy

        from ..tensor import Tensor

        self.graph = None
        self.pool = cupy.cuda.MemoryPool()  # the graph's own memory (see the module docstring)
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.external_arrays = [(t, t.array) for t, *_ in self.program.externals]
        cupy.cuda.get_current_stream().synchronize()  # the caller's work on the inputs is done
        with cupy.cuda.using_allocator(self.pool.malloc), self.stream:
            self.static_inputs = [t.array.copy() for t in inputs]
            static = [Tensor._wrap(a) for a in self.static_inputs]
            self.program.run(static)  # warm-up: kernels compiled and loaded, the pool's blocks made
            self.stream.synchronize()
            self.stream.begin_capture()
            try:
                self.env = self.program.run(static)  # the results' arrays stay: the graph writes them
            finally:
                graph = self.stream.end_capture()
        self.graph = graph
