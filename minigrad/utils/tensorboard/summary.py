"""The summaries SummaryWriter writes, as TensorBoard's protocol buffers: scalars, histograms, text.

`pb` is the namespace of tensorboard's proto modules (writer.py imports them on first use)."""
import numpy as np


def to_numpy(value):
    """A tensor (any device, requiring grad or not), an array or a number as a numpy array."""
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
