"""Loss curves of train.py runs:

    python -m gpt.plot OUT_DIR [OUT_DIR ...] [--out IMAGE]   (default: OUT_DIR/loss.png for one run)

Reads each run's OUT_DIR/log.jsonl (train.py appends a line every log_interval iterations and one
per evaluation) and draws the estimated train and val losses against iterations, and against
tokens seen, one colour per run (train solid, val dashed, the per-step training loss faint
behind them), so runs compare on one figure (e.g. from scratch vs fine-tuned from GPT-2).
train.py draws OUT_DIR/loss.png itself at each evaluation. Needs matplotlib (`pip install
'minigrad[plot]'`).
"""
import json
import sys
from pathlib import Path

from minigrad._atomic_files import atomic_write

LOG_NAME, PLOT_NAME = "log.jsonl", "loss.png"
INSTALL = "pip install 'minigrad[plot]' (matplotlib)"


class PlotError(ValueError):
    """A run that cannot be plotted; the message names the folder or file."""


def read_log(out_dir):
    """A run's log.jsonl as {"evals": [entry], "steps": [entry]}, each list in iteration order.

    Evaluation entries hold iter, train_loss, val_loss (and tokens); step entries iter, loss.
    Lines that do not parse (a line cut short by a crash) are skipped. When the iteration goes
    back (a run resumed from an earlier checkpoint, or started again in the same folder), the
    later entries replace the earlier ones from that iteration on.
    """
    path = Path(out_dir) / LOG_NAME
    if not Path(out_dir).is_dir():
        raise PlotError(f"{out_dir} does not exist (a folder train.py wrote: its out_dir)")
    if not path.is_file():
        raise PlotError(f"{out_dir} has no {LOG_NAME}: train.py writes it there during training")
    runs = {"evals": [], "steps": []}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                e = json.loads(line)
                it = int(e["iter"])
            except (ValueError, KeyError, TypeError):
                continue
            kind = "evals" if "val_loss" in e and "train_loss" in e else "steps" if "loss" in e else None
            if kind is None:
                continue
            seq = runs[kind]
            while seq and seq[-1]["iter"] >= it:
                seq.pop()
            seq.append(dict(e, iter=it))
    if not runs["evals"] and not runs["steps"]:
        raise PlotError(f"{path} holds no losses yet")
    return runs


_KINDS = ("train, each step", "train (estimate)", "val (estimate)")


def figure(runs, labels):
    """A matplotlib Figure of the runs' losses: against iterations and, where the log records
    them, against tokens seen."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import EngFormatter

    with_tokens = any("tokens" in e for run in runs for e in run["evals"] + run["steps"])
    # the legend goes below the axes, a row per run, where it can hide no curve
    legend_in = 0.1 + 0.2 * len(runs)
    height = 4.2 + legend_in
    fig = Figure(figsize=(12 if with_tokens else 7, height))
    axes = fig.subplots(1, 2 if with_tokens else 1, squeeze=False)[0]
    # fixed margins: a layout engine would double the time of a redraw, which train.py does at each evaluation
    fig.subplots_adjust(left=0.07 if with_tokens else 0.11, right=0.98, bottom=(0.55 + legend_in) / height,
                        top=1 - 0.35 / height, wspace=0.2)
    xs = [("iter", "iteration")] + ([("tokens", "tokens seen")] if with_tokens else [])
    for ax, (key, name) in zip(axes, xs):
        for i, (run, label) in enumerate(zip(runs, labels)):
            color = f"C{i % 10}"
            steps = [e for e in run["steps"] if key in e]
            evals = [e for e in run["evals"] if key in e]
            if steps:
                ax.plot([e[key] for e in steps], [e["loss"] for e in steps], color=color, alpha=0.25, lw=0.8,
                        label=f"{label}: {_KINDS[0]}")
            if evals:
                ax.plot([e[key] for e in evals], [e["train_loss"] for e in evals], color=color, marker=".",
                        label=f"{label}: {_KINDS[1]}")
                ax.plot([e[key] for e in evals], [e["val_loss"] for e in evals], color=color, ls="--", marker=".",
                        label=f"{label}: {_KINDS[2]}")
        ax.set_xlabel(name)
        ax.set_ylabel("loss (cross-entropy, nats per token)")
        ax.set_title(f"loss against {name}")
        ax.grid(True, alpha=0.3)
        if key == "tokens":
            ax.xaxis.set_major_formatter(EngFormatter())
    # the legend fills its 3 columns one after the other: ordered by kind of line, each run gets a row
    entries = sorted(zip(*axes[0].get_legend_handles_labels()), key=lambda e: _KINDS.index(e[1].rsplit(": ", 1)[1]))
    fig.legend(*zip(*entries), loc="lower center", ncol=3, fontsize="small", frameon=False)
    return fig


def write_plot(out_dirs, out, labels=None):
    """Draw the runs of `out_dirs` into the image file `out` (written atomically; the format from
    its suffix, e.g. .png, .pdf or .svg)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise PlotError(f"drawing needs matplotlib, which is not installed: {INSTALL}") from None
    runs = [read_log(d) for d in out_dirs]
    fig = figure(runs, labels or [str(d) for d in out_dirs])
    fmt = Path(out).suffix.lstrip(".").lower()
    if fmt not in fig.canvas.get_supported_filetypes():
        raise PlotError(f"cannot write a {fmt or 'suffix-less'} image {out}: use .png, .pdf or .svg")
    if not Path(out).resolve().parent.is_dir():
        raise PlotError(f"the folder of {out} does not exist")
    atomic_write(out, lambda tmp: fig.savefig(tmp, format=fmt, dpi=110))


def update_run_plot(out_dir, log, say_missing=True):
    """train.py's hook at each evaluation: redraw OUT_DIR/loss.png. Without matplotlib, says so
    when `say_missing` (train.py: at the first evaluation of a new log, so once per out_dir);
    a plot that fails is reported and training goes on."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if say_missing:
            log(f"note: no {PLOT_NAME} is drawn without matplotlib: {INSTALL}")
        return
    try:
        write_plot([out_dir], Path(out_dir) / PLOT_NAME, labels=[Path(out_dir).name or str(out_dir)])
    except (OSError, ValueError, RuntimeError) as e:  # a picture is never worth stopping a run for
        log(f"note: could not draw {Path(out_dir) / PLOT_NAME}: {e}")


def main(argv=None):
    import argparse  # (here: train.py imports this module for update_run_plot, and needs no parser)

    p = argparse.ArgumentParser(prog="python -m gpt.plot", description="Draw train.py runs' loss curves.")
    p.add_argument("out_dirs", nargs="+", metavar="OUT_DIR", help="a folder train.py wrote (holding log.jsonl)")
    p.add_argument("--out", default=None,
                   help=f"image to write (.png, .pdf, .svg); default: OUT_DIR/{PLOT_NAME} for one run, ./{PLOT_NAME} "
                        "for several")
    args = p.parse_args(argv)
    if args.out is None:  # one run's picture goes with its run, where train.py draws it too
        args.out = str(Path(args.out_dirs[0]) / PLOT_NAME) if len(args.out_dirs) == 1 else PLOT_NAME
    try:
        write_plot(args.out_dirs, args.out)
    except (PlotError, OSError) as e:
        print(f"gpt.plot: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
