"""The summaries SummaryWriter writes, as TensorBoard's protocol buffers: scalars, histograms, text,
images (PNG, with Pillow), matplotlib figures, hparams and pr curves; and the projector's files.

`pb` is the namespace of tensorboard's proto modules (writer.py imports them on first use); the
plugins' own protos are imported where they are used."""
import math
import os

import numpy as np


def to_numpy(value):
    """A tensor (any device, requiring grad or not), an array or a number as a numpy array."""
    if hasattr(value, "detach"):  # (a tensor: np.asarray refuses one requiring grad, as PyTorch's does)
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def scalar(pb, tag, value, new_style=False, double_precision=False):
    a = to_numpy(value).squeeze()
    if a.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {a.size} and "
                             f"{a.ndim} dimensions.")
    x = float(a)
    if not new_style:
        return pb.Summary(value=[pb.Summary.Value(tag=tag, simple_value=x)])
    tensor = (pb.TensorProto(double_val=[x], dtype="DT_DOUBLE") if double_precision
              else pb.TensorProto(float_val=[x], dtype="DT_FLOAT"))
    metadata = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name="scalars"))
    return pb.Summary(value=[pb.Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


def tensorflow_bins():
    """TensorFlow's default histogram edges: +-1e-12 growing by 10% to +-1e20, and 0."""
    edges = []
    v = 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


def histogram(pb, tag, values, bins, max_bins=None):
    """A histogram of `values` over `bins` (edges, a count or a numpy rule such as "auto"), at most
    `max_bins` of them (neighbours are merged)."""
    values = to_numpy(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        k = len(counts) // max_bins  # merge runs of k neighbouring bins
        counts = np.pad(counts, (0, -len(counts) % k)).reshape(-1, k).sum(axis=1)
        edges = np.append(edges[:-1:k], edges[-1])
    # TensorBoard reads bucket i as (limit[i-1], limit[i]]: the bins from the first to the last
    # non-empty one, after an empty one whose limit is where the first starts
    nonempty = np.flatnonzero(counts)
    first, last = nonempty[0], nonempty[-1]
    proto = pb.HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                              sum_squares=values.dot(values), bucket_limit=edges[first:last + 2].tolist(),
                              bucket=[0.0] + counts[first:last + 1].tolist())
    return pb.Summary(value=[pb.Summary.Value(tag=tag, histo=proto)])


def text(pb, tag, string):
    """Text (markdown) for TensorBoard's text plugin, under `tag + "/text_summary"`."""
    plugin = pb.SummaryMetadata.PluginData(plugin_name="text", content=pb.TextPluginData(version=0).SerializeToString())
    tensor = pb.TensorProto(dtype="DT_STRING", string_val=[string.encode("utf_8")],
                            tensor_shape=pb.TensorShapeProto(dim=[pb.TensorShapeProto.Dim(size=1)]))
    return pb.Summary(value=[pb.Summary.Value(tag=tag + "/text_summary", metadata=pb.SummaryMetadata(plugin_data=plugin),
                                              tensor=tensor)])


# ---- images, figures, hparams, pr curves and embeddings, as torch.utils.tensorboard writes them ----

_NO_PIL = ("SummaryWriter's images need Pillow to encode PNGs: pip install pillow (the tensorboard extra, "
           "pip install 'minigrad[tensorboard]', brings it)")
_NO_MATPLOTLIB = "add_figure needs matplotlib: pip install 'minigrad[plot]'"


def make_np(x):
    """As PyTorch's make_np: an array as it is, a number as a one-element array, a tensor (any
    device, requiring grad or not) as its numpy array."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    return to_numpy(x)


def _pil_image():
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(_NO_PIL) from None
    return Image


def make_grid(images, ncols=8):
    """N1HW or N3HW images side by side, `ncols` to a row, as one 3HW image (zeros fill the last row)."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = int(np.ceil(float(n) / ncols))
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor, input_format):  # noqa: N802 (PyTorch's name)
    """An image in `input_format` (letters of "NCHW": NCHW, NHWC, CHW, HWC, HW, WH, ...) as HWC; a
    batch (N) becomes a grid, gray (one channel or none) three equal channels."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {tensor.shape}, "
                             f"input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        return make_grid(tensor.transpose([input_format.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        return np.concatenate([hwc, hwc, hwc], 2) if hwc.shape[2] == 1 else hwc
    if len(input_format) == 2:
        hw = tensor.transpose([input_format.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    return tensor  # (PyTorch's falls through the same way: a 1-d or 5-d image then fails in make_image)


def make_image(pb, hwc, rescale=1):
    """A uint8 HWC array as a PNG-encoded Summary.Image."""
    import io

    Image = _pil_image()
    height, width, channel = hwc.shape
    image = Image.fromarray(hwc)
    if rescale != 1:
        image = image.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    with io.BytesIO() as out:
        image.save(out, format="PNG")
        encoded = out.getvalue()
    return pb.Summary.Image(height=height, width=width, colorspace=channel, encoded_image_string=encoded)


def image(pb, tag, tensor, rescale=1, dataformats="NCHW"):
    """An image (a batch: a grid of them) under `tag`: uint8 values as they are, any other dtype
    read as [0, 1] and scaled by 255; out of range values are clipped."""
    hwc = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    hwc = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return pb.Summary(value=[pb.Summary.Value(tag=tag, image=make_image(pb, hwc, rescale=rescale))])


def figure_to_image(figures, close=True):
    """A matplotlib figure rendered as a CHW uint8 RGB array (a list of them: NCHW); `close` closes them."""
    try:
        import matplotlib.backends.backend_agg as backend_agg
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(_NO_MATPLOTLIB) from None

    def render_to_rgb(figure):
        canvas = backend_agg.FigureCanvasAgg(figure)
        canvas.draw()
        data = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        w, h = figure.canvas.get_width_height()
        chw = np.moveaxis(data.reshape([h, w, 4])[:, :, 0:3], source=2, destination=0)
        if close:
            plt.close(figure)
        return chw

    if isinstance(figures, list):
        return np.stack([render_to_rgb(f) for f in figures])
    return render_to_rgb(figures)


def hparams(pb, hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The hparams plugin's three summaries (experiment, session start info, session end info), as
    PyTorch's: numbers (bools included) as float64 hparams, strings as strings, a one-element
    tensor or array as its number; `hparam_domain_discrete` lists the values a hparam can take."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.metadata import (EXPERIMENT_TAG, PLUGIN_DATA_VERSION, PLUGIN_NAME,
                                                      SESSION_END_INFO_TAG, SESSION_START_INFO_TAG)
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as hparam_dict[{k}].")

    def domain(k, field):
        if k not in hparam_domain_discrete:
            return None
        return struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in hparam_domain_discrete[k]])

    hps = []
    ssi = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, (int, float)):  # (bool too, as PyTorch's: a number 0/1)
            ssi.hparams[k].number_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64"),
                                  domain_discrete=domain(k, "number_value")))
        elif isinstance(v, str):
            ssi.hparams[k].string_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_STRING"),
                                  domain_discrete=domain(k, "string_value")))
        elif hasattr(v, "__array__"):  # a tensor (PyTorch's make_np(v)[0]) or a numpy number
            ssi.hparams[k].number_value = float(to_numpy(v).reshape(-1)[0])
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")

    def plugin_summary(tag, **content):
        data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
        metadata = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME, content=data))
        return pb.Summary(value=[pb.Summary.Value(tag=tag, metadata=metadata)])

    ssi = plugin_summary(SESSION_START_INFO_TAG, session_start_info=ssi)
    exp = Experiment(hparam_infos=hps, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    exp = plugin_summary(EXPERIMENT_TAG, experiment=exp)
    sei = plugin_summary(SESSION_END_INFO_TAG, session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")))
    return exp, ssi, sei


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """tp, fp, tn, fn, precision and recall at `num_thresholds` thresholds over [0, 1] (TensorBoard's
    pr_curve summary), stacked as a (6, num_thresholds) array."""
    minimum_count = 1e-7
    if weights is None:
        weights = 1.0
    bucket_indices = np.int32(np.floor(predictions * (num_thresholds - 1)))
    float_labels = labels.astype(np.float64)
    histogram_range = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(bucket_indices, bins=num_thresholds, range=histogram_range,
                                 weights=float_labels * weights)
    fp_buckets, _ = np.histogram(bucket_indices, bins=num_thresholds, range=histogram_range,
                                 weights=(1.0 - float_labels) * weights)
    tp = np.cumsum(tp_buckets[::-1])[::-1]  # reverse cumulative sums
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(minimum_count, tp + fp)
    recall = tp / np.maximum(minimum_count, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve(pb, tag, labels, predictions, num_thresholds=127, weights=None):
    """A precision-recall curve for TensorBoard's pr_curves plugin (at most 127 thresholds, as PyTorch's)."""
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

    num_thresholds = min(num_thresholds, 127)  # (PyTorch's: more breaks the protobuf)
    weights = None if weights is None else make_np(weights)
    data = compute_curve(make_np(labels), make_np(predictions), num_thresholds=num_thresholds, weights=weights)
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    metadata = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name="pr_curves", content=content))
    tensor = pb.TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                            tensor_shape=pb.TensorShapeProto(dim=[pb.TensorShapeProto.Dim(size=data.shape[0]),
                                                                  pb.TensorShapeProto.Dim(size=data.shape[1])]))
    return pb.Summary(value=[pb.Summary.Value(tag=tag, metadata=metadata, tensor=tensor)])


# the projector's files (add_embedding), as torch.utils.tensorboard._embedding writes them

def make_tsv(metadata, save_path, metadata_header=None):
    """metadata.tsv: one label a line (with `metadata_header`: a header line, then tab-separated rows)."""
    if not metadata_header:
        lines = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode("utf_8"))


def make_sprite(label_img, save_path):
    """sprite.png: the N label images (NCHW, values in [0, 1]) in a square grid of ceil(sqrt(N)) a row."""
    import io

    Image = _pil_image()
    nrow = math.ceil(label_img.shape[0] ** 0.5)
    grid_chw = make_grid(label_img, ncols=nrow)
    square = np.zeros((grid_chw.shape[2], grid_chw.shape[2], 3))
    grid_hwc = grid_chw.transpose(1, 2, 0)
    square[:grid_hwc.shape[0], :, :] = grid_hwc
    im = Image.fromarray(np.uint8((square * 255).clip(0, 255)))
    with io.BytesIO() as buf:
        im.save(buf, format="PNG")
        data = buf.getvalue()
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(data)


def make_mat(mat, save_path):
    """tensors.tsv: the embedding matrix, a row a line, tab-separated."""
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(("\t".join(str(x.item()) for x in row) + "\n").encode("utf_8"))


def embedding_info(metadata, label_img, subdir, global_step, tag):
    """The projector config's entry of one embedding."""
    from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

    info = EmbeddingInfo()
    info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
    info.tensor_path = os.path.join(subdir, "tensors.tsv")
    if metadata is not None:
        info.metadata_path = os.path.join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = os.path.join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    return info
