"""What a training run shows: one line at a time on the console (above the progress bar on a
terminal, quiet when the pipe closes), and the peak FLOP/s its MFU is a share of."""
import os
import sys
import time

import minigrad


def measure_peak_flops(device="cpu", n=None, runs=5):
    """This machine's float32 matmul FLOP/s, the best of `runs` (n, n) products: what MFU is a
    share of. By default n is the first of 512, 1024, 2048 whose product takes 1 ms or more here:
    large enough that a product's fixed costs (its threads' start and join) do not show, small
    enough not to delay the first step (docs/performance.md: 512 measures what 1024 does on 1 and 2
    threads, in a tenth of the time). The products are linear layers' (x W^T, F.linear), so they run
    as the run's own do: on the CPU shared out by the kernels' thread team, each thread calling BLAS
    on one thread (a numpy matmul there runs on one, the BLAS setting tune_process() leaves, and
    waking BLAS's own threads to measure would leave them competing with the team's). The operands
    are constants, so the measurement never draws from a random stream."""
    import nn.functional as F

    for size in (n,) if n else (512, 1024, 2048):
        a = minigrad.full((size, size), 0.5, dtype=minigrad.float32, device=device)
        with minigrad.no_grad():
            F.linear(a, a)  # warm-up (the team's threads, cuBLAS handles)
            best = _product_seconds(F.linear, a)
            if best >= 1e-3:
                break
    with minigrad.no_grad():
        for _ in range(runs - 1):
            best = min(best, _product_seconds(F.linear, a))
    return 2 * size**3 / best


def _product_seconds(linear, a):
    t0 = time.perf_counter()
    y = linear(a, a)
    if y.device.type != "cpu":
        minigrad.cuda.synchronize()
    return time.perf_counter() - t0


def memory_bytes(device="cpu"):
    """This machine's memory (or the GPU's), in bytes; None where it cannot be told."""
    try:
        if device == "cpu":
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        import cupy

        return cupy.cuda.Device().mem_info[1]
    except (AttributeError, ValueError, OSError, ImportError):
        return None


def gib(n):
    """A byte count as people read it: GiB, or TiB past 1024 of them."""
    return f"{n / 2**30:,.1f} GiB" if n < 2**40 else f"{n / 2**40:,.1f} TiB"


# ---- console ------------------------------------------------------------------------------------
class Console:
    """Prints lines to stdout, through the progress bar while one is shown, and goes quiet when
    stdout is a pipe that was closed (`train.py | head`): training goes on, and saves."""

    def __init__(self):
        self.bar = None
        self.quiet = False

    def __call__(self, msg):
        if self.quiet:
            return
        try:
            if self.bar is not None:
                self.bar.write(str(msg), file=sys.stdout)
                sys.stdout.flush()
            else:
                print(msg, flush=True)
        except BrokenPipeError:
            self.quiet = True
            # later writes (and the interpreter's own flush at exit) go nowhere instead of failing
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)


class Progress:
    """A tqdm bar on a terminal; plain log lines every log_interval when output is a file or pipe."""

    def __init__(self, cfg, start, console, draw=True):
        self.cfg = cfg
        self.console = console
        self.bar = None
        if sys.stderr.isatty() and cfg.progress and draw:
            from tqdm import tqdm

            self.bar = tqdm(total=cfg.max_iters, initial=start, dynamic_ncols=True, unit="it")
            if isinstance(console, Console):
                console.bar = self.bar  # evaluation lines are printed above the bar, not onto it

    def update(self, it, loss, lr, tok_s, mfu, dt):
        shown = f"{tok_s:,.0f} tok/s" + (f", mfu {mfu * 100:.1f}%" if mfu >= 0 else "")  # (-1: not measured yet)
        if self.bar is not None:
            self.bar.n = it
            self.bar.set_postfix_str(f"loss {loss:.4f}, lr {lr:.2e}, {shown}")
        elif it % self.cfg.log_interval == 0 or it == 1:
            self.console(f"iter {it}/{self.cfg.max_iters}: loss {loss:.4f}, lr {lr:.2e}, time {dt * 1e3:.1f} ms, {shown}")

    def close(self):
        if self.bar is not None:
            self.bar.close()
            if isinstance(self.console, Console):
                self.console.bar = None


# ---- the run ------------------------------------------------------------------------------------
