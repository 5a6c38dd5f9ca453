"""`SummaryWriter`: scalars, histograms and text into TensorBoard event files, as PyTorch's."""
import os
import socket
import time
import types
from datetime import datetime

from . import summary

_MISSING = ("SummaryWriter needs the tensorboard package, an optional extra of minigrad: "
            "pip install 'minigrad[tensorboard]'")


def _tensorboard():
    """tensorboard's event-file writer and proto classes; one clear ImportError when it is not installed."""
    try:
        from tensorboard.compat.proto.event_pb2 import Event, SessionLog
        from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
        from tensorboard.compat.proto.tensor_pb2 import TensorProto
        from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
        from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError:
        raise ImportError(_MISSING) from None
    return types.SimpleNamespace(**{c.__name__: c for c in (
        Event, SessionLog, HistogramProto, Summary, SummaryMetadata, TensorProto, TensorShapeProto, TextPluginData,
        EventFileWriter)})


class FileWriter:
    """One event file in `log_dir`, written by a background thread (every `flush_secs`, or once
    `max_queue` events wait)."""

    def __init__(self, pb, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.pb = pb
        self.event_writer = pb.EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)  # (a numpy or tensor step: protobuf wants a Python int)
        self.event_writer.add_event(event)

    def add_summary(self, summary_, global_step=None, walltime=None):
        self.add_event(self.pb.Event(summary=summary_), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


class SummaryWriter:
    """Write TensorBoard event files into `log_dir` (default `runs/<Mon>DD_HH-MM-SS_<host><comment>`).

    purge_step: on resuming a crashed run in the same log_dir, TensorBoard hides the events the
        old files hold from this step on.
    max_queue, flush_secs: events are written after `max_queue` are pending or every
        `flush_secs` seconds, and at flush() / close().
    filename_suffix: appended to the event file's name.
    Values may be minigrad tensors (on any device), numpy arrays or numbers. After close() the
    next add_* opens a new event file.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        self._pb = _tensorboard()
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = summary.tensorflow_bins()

    def _get_file_writer(self):
        """The writer of log_dir's own event file (a new file after close())."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self._pb, self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:  # a restart: TensorBoard drops what older files hold from here on
                Event, SessionLog = self._pb.Event, self._pb.SessionLog
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False, double_precision=False):
        """One point of the curve `tag`. new_style writes it as a tensor (double_precision: float64)."""
        s = summary.scalar(self._pb, tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(s, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several curves in one chart: each `tag` goes to its own run, log_dir/<main_tag>_<tag>,
        under the tag `main_tag`."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = root + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = FileWriter(self._pb, path, self.max_queue, self.flush_secs,
                                                             self.filename_suffix)
            writer.add_summary(summary.scalar(self._pb, main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """The distribution of `values`: over TensorFlow's default edges ("tensorflow"), or `bins`
        as numpy.histogram takes them (a count, edges, or a rule such as "auto")."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        s = summary.histogram(self._pb, tag, values, bins, max_bins=max_bins)
        self._get_file_writer().add_summary(s, global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Text (markdown), shown under `tag` in TensorBoard's text tab."""
        self._get_file_writer().add_summary(summary.text(self._pb, tag, text_string), global_step, walltime)

    def flush(self):
        """Write every pending event to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        """Flush and close the event files (a second close does nothing)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()
