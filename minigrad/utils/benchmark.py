"""`torch.utils.benchmark`'s Timer and Measurement, for the tutorials that time two ways of computing the same
thing (`Timer(stmt=..., globals=globals()).timeit(100)`, `blocked_autorange()`, `adaptive_autorange()`), printed
as PyTorch prints them. Python statements only (`language='c++'` is not there); `num_threads` sets minigrad's
thread count while timing. `Compare` prints their table as PyTorch lays it out (its numbers to one decimal)."""
import math
import textwrap
import timeit as _timeit

__all__ = ["Timer", "Measurement", "Compare", "select_unit"]

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def select_unit(t):
    """(unit, scale) to print a time of t seconds in: ns, us, ms or s."""
    exponent = math.floor(math.log10(t) // 3) if t > 0 else 0
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exponent, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


class _TaskSpec:
    def __init__(self, stmt, setup, global_setup, label, sub_label, description, env, num_threads):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup in ("pass", ""):
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


def _quantile(sorted_times, q):
    """Linear interpolation between the nearest ranks, as torch.quantile's default."""
    pos = q * (len(sorted_times) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_times) - 1)
    return sorted_times[lo] + (sorted_times[hi] - sorted_times[lo]) * (pos - lo)


class Measurement:
    """The times of a Timer's runs: `times` (seconds per run, one per measurement), `median`, `mean`, `iqr`."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run, self.raw_times, self.task_spec, self.metadata = number_per_run, raw_times, task_spec, metadata
        self.times = [t / number_per_run for t in raw_times]
        s = sorted(self.times)
        self._median, self._mean = _quantile(s, 0.5), sum(s) / len(s)
        self._p25, self._p75 = _quantile(s, 0.25), _quantile(s, 0.75)
        self._warnings = ()
        if len(s) >= 4 and self.median > 0:
            rel = self.iqr / self.median * 100
            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                self._warnings = (f"  WARNING: Interquartile range is {rel:.1f}% of the median measurement.\n"
                                  "           This suggests significant environmental influence.",)
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                self._warnings = (f"  WARNING: Interquartile range is {rel:.1f}% of the median measurement.\n"
                                  "           This could indicate system fluctuation.",)

    stmt = property(lambda self: self.task_spec.stmt)
    label = property(lambda self: self.task_spec.label)
    sub_label = property(lambda self: self.task_spec.sub_label)
    description = property(lambda self: self.task_spec.description)
    num_threads = property(lambda self: self.task_spec.num_threads)
    title = property(lambda self: self.task_spec.title)
    median = property(lambda self: self._median)
    mean = property(lambda self: self._mean)
    iqr = property(lambda self: self._p75 - self._p25)
    has_warnings = property(lambda self: bool(self._warnings))

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    def __repr__(self):
        n = len(self.times)
        unit, scale = select_unit(self._median)
        lines = [f"<minigrad.utils.benchmark.utils.common.Measurement object at {id(self):#x}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} thread"
                     f"{'s' if self.num_threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()


class Timer:
    """Times `stmt` (Python source) after `setup`, in `globals`: `timeit(number)`, `blocked_autorange()`,
    `adaptive_autorange()`, as PyTorch's Timer."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=_timeit.default_timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language="python"):
        if str(getattr(language, "value", language)).lower() not in ("python", "py"):
            raise NotImplementedError("minigrad's Timer times Python statements only")
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._task_spec = _TaskSpec(textwrap.dedent(stmt).strip() or "pass", textwrap.dedent(setup).strip(),
                                    global_setup, label, sub_label, description, env, num_threads)
        self._globals = dict(globals or {})
        self._timer = _timeit.Timer(stmt=self._task_spec.stmt, setup=self._task_spec.setup or "pass", timer=timer,
                                    globals=self._globals)

    def _timeit(self, number):
        from minigrad.backends.process import num_threads

        with num_threads(self._task_spec.num_threads):  # (then the count as it was, set or from the environment)
            return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """One measurement of `number` runs (after a warm-up of number // 100)."""
        self._timeit(max(int(number // 100), 2))
        return Measurement(number, [self._timeit(number)], self._task_spec)

    def _estimate_block_size(self, min_run_time):
        overhead = sorted(self._timeit(0) for _ in range(5))[2]
        number = 1
        while True:
            time_taken = self._timeit(number)
            if overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000:
                break
            if time_taken > min_run_time or number * 10 > 2147483647:
                break
            number *= 10
        return number

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, times, can_stop = 0.0, [], False
        while total < min_run_time or not can_stop:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
            can_stop = stop(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs (each long enough to time well) until min_run_time seconds have passed."""
        number = self._estimate_block_size(min_run_time)
        return Measurement(number, self._loop(number, lambda times: True, min_run_time, callback=callback),
                           self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks of runs until the interquartile range is within `threshold` of the median (or max_run_time)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            if len(times) <= 3:
                return False
            return Measurement(number, times, self._task_spec).meets_confidence(threshold)

        return Measurement(number, self._loop(number, stop, min_run_time, max_run_time, callback), self._task_spec)


_UNIT_NAMES = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}
_BEST, _END = "\x1b[92m\x1b[1m", "\x1b[0m\x1b[0m"


class Compare:
    """Measurements as tables, one per label: a column per description, a row per sub_label, grouped by thread
    count; every median in the unit of the table's fastest. colorize() marks the fastest of each column (or row)."""

    def __init__(self, results):
        self._results = []
        self._trim, self._colorize, self._rowwise, self._highlight_warnings = False, False, False, False
        self.extend_results(results)

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize, self._rowwise = True, rowwise

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def __str__(self):
        groups = {}
        for r in self._results:
            groups.setdefault(r.label, []).append(r)
        return "\n".join(self._layout(label, rs) for label, rs in groups.items())

    def _layout(self, label, results):
        columns = list(dict.fromkeys(r.description for r in results))
        rows = list(dict.fromkeys((r.num_threads, r.sub_label) for r in results))
        median = {(r.num_threads, r.sub_label, r.description): r.median for r in results}
        unit, scale = select_unit(min(median.values()))

        def number(key):
            v = median[key] / scale
            # trimmed: two significant figures, in fixed notation
            return f"{v:.{max(0, 1 - math.floor(math.log10(v)))}f}" if self._trim and v > 0 else f"{v:.1f}"

        def best(key):
            times = [median[k] for k in median if (k[:2] == key[:2] if self._rowwise else k[2] == key[2])]
            return self._colorize and len(times) > 1 and median[key] == min(times)

        cells = {}
        for d in columns:  # a column's numbers right-aligned to one another
            width = max(len(number((t, s, d))) for t, s in rows if (t, s, d) in median)
            for t, s in rows:
                key, text = (t, s, d), number((t, s, d)).rjust(width) if (t, s, d) in median else ""
                cells.setdefault((t, s), []).append(f"{_BEST}{text}{_END}" if key in median and best(key) else text)
        visible = [max(len(_plain(c)) for c in [d or ""] + [cells[row][i] for row in rows]) for i, d in enumerate(columns)]
        first = max(len(s or "") for _, s in rows) + 6

        def line(head, values):
            return (head and "      " + head).ljust(first) + "".join(f"  |  {_center(v, w)}" for v, w in zip(values, visible))

        header = line("", [d or "" for d in columns])
        out = [header]
        for threads in dict.fromkeys(t for t, _ in rows):
            lead = f"{threads} threads: "
            out.append(lead + "-" * (len(header) - len(lead)))
            out += [line(s or "", cells[(t, s)]) for t, s in rows if t == threads]
        title = f" {label} " if label else ""
        left = (len(header) - 2 - len(title)) // 2
        out.insert(0, "[" + "-" * left + title + "-" * (len(header) - 2 - len(title) - left) + "]")
        return "\n".join(out) + f"\n\nTimes are in {_UNIT_NAMES[unit]} ({unit}).\n"


def _plain(cell):
    return cell.replace(_BEST, "").replace(_END, "")


def _center(cell, width):
    plain = _plain(cell)
    return plain.center(width).replace(plain, cell, 1) if plain else " " * width
