"""`SummaryWriter`: scalars, histograms, text, images, figures, hparams, pr curves and embeddings
into TensorBoard event files (and the projector's files), as PyTorch's. add_graph writes nothing:
minigrad has no jit tracer to draw a module's graph with (it warns once, and points to minigrad.viz)."""
import os
import socket
import time
import types
import warnings
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


_NO_GRAPH = ("SummaryWriter.add_graph writes no graph: minigrad has no jit tracer to record a module's graph "
             "with (minigrad.viz draws the backward graph of a tensor, e.g. to_mermaid(model(x)))")


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

    _graph_warned = False  # add_graph's warning: once a process

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

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image: CHW by default, or as `dataformats` says ("HWC", "HW", "WH", ...), with 1
        (gray), 3 (RGB) or 4 (RGBA) channels. uint8 values are kept; other dtypes are read as
        [0, 1] and scaled to [0, 255] (clipped). PNG-encoded with Pillow."""
        s = summary.image(self._pb, tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(s, global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images (NCHW by default, or e.g. "NHWC"), shown as one grid of 8 a row."""
        s = summary.image(self._pb, tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(s, global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, as a grid) rendered to an image; `close`
        closes the figures after."""
        formats = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, summary.figure_to_image(figure, close), global_step, walltime, dataformats=formats)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """PyTorch's traces `model` with torch.jit; minigrad has no jit, so this writes nothing and
        warns (once a process) so that a script goes on. minigrad.viz draws backward graphs."""
        if not SummaryWriter._graph_warned:
            SummaryWriter._graph_warned = True
            warnings.warn(_NO_GRAPH, UserWarning, stacklevel=2)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """A set of hyperparameters and the metrics they gave, for TensorBoard's HPARAMS tab: the
        hparams plugin's summaries and each metric as a scalar go to the run log_dir/<run_name>
        (default: the current time.time()). Values: int, float, str, bool, or a one-element tensor."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = summary.hparams(self._pb, hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            w_hp.file_writer.add_summary(exp, global_step)
            w_hp.file_writer.add_summary(ssi, global_step)
            w_hp.file_writer.add_summary(sei, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """A precision-recall curve: binary `labels` against `predictions` in [0, 1], at
        `num_thresholds` (at most 127) thresholds."""
        s = summary.pr_curve(self._pb, tag, summary.make_np(labels), summary.make_np(predictions), num_thresholds,
                             weights)
        self._get_file_writer().add_summary(s, global_step, walltime)

    @staticmethod
    def _encode(rawstr):
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Data points for TensorBoard's projector: `mat` (N, D) written to
        log_dir/<global_step:05d>/<tag>/tensors.tsv, with `metadata` (N labels, or rows under
        `metadata_header`) in metadata.tsv and `label_img` (N, C, H, W) as sprite.png; the entry
        goes into log_dir/projector_config.pbtxt."""
        mat = summary.make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if os.path.exists(save_path):
            if os.path.isdir(save_path):
                print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
            else:
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            summary.make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            label_img = summary.make_np(label_img)
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            summary.make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        summary.make_mat(mat, save_path)
        if not hasattr(self, "_projector_config"):
            from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

            self._projector_config = ProjectorConfig()
        info = summary.embedding_info(metadata, label_img, subdir, global_step, tag)
        self._projector_config.embeddings.extend([info])
        from google.protobuf import text_format

        config = text_format.MessageToString(self._projector_config)
        with open(os.path.join(self._get_file_writer().get_logdir(), "projector_config.pbtxt"), "wb") as f:
            f.write(config.encode("utf_8"))

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
