"""SummaryWriter's add_image, add_images, add_figure, add_hparams, add_pr_curve, add_embedding and
add_graph: the same calls made with minigrad's writer and torch's, read back with TensorBoard's
EventAccumulator (skipped without the tensorboard extra), give the same tags, steps, pixels and
plugin protos; add_graph warns once and writes nothing."""
import io
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.utils.tensorboard import SummaryWriter

pytest.importorskip("tensorboard")
PIL_Image = pytest.importorskip("PIL.Image")


def pixels(event):
    """An image event's PNG decoded as a numpy array."""
    return np.asarray(PIL_Image.open(io.BytesIO(event.encoded_image_string)))


def same_images(got, want, tag):
    g, w = got.Images(tag), want.Images(tag)
    assert [e.step for e in g] == [e.step for e in w] and len(g) > 0
    for a, b in zip(g, w):
        assert (a.width, a.height) == (b.width, b.height)
        pa, pb = pixels(a), pixels(b)
        assert pa.shape == pb.shape and pa.dtype == pb.dtype == np.uint8
        np.testing.assert_array_equal(pa, pb)
    return g


rng = np.random.default_rng(0)
IMAGES = {  # name: (array, dataformats, batch?)
    "chw_float": (rng.random((3, 6, 7)), "CHW", False),
    "chw_gray": (rng.random((1, 5, 4)).astype(np.float32), "CHW", False),
    "chw_rgba": (rng.random((4, 5, 6)).astype(np.float32), "CHW", False),
    "hwc_float": (rng.random((6, 7, 3)), "HWC", False),
    "hwc_uint8": (rng.integers(0, 256, (6, 7, 3), dtype=np.uint8), "HWC", False),
    "hw": (rng.random((5, 9)), "HW", False),
    "wh": (rng.random((5, 9)).astype(np.float32), "WH", False),
    "out_of_range": (rng.standard_normal((3, 4, 4)) * 2, "CHW", False),
    "nchw": (rng.random((10, 3, 4, 5)).astype(np.float32), "NCHW", True),  # 8 a row: 2 rows, the last padded
    "nchw_gray": (rng.random((3, 1, 4, 5)), "NCHW", True),
    "nhwc_uint8": (rng.integers(0, 256, (5, 4, 3, 3), dtype=np.uint8), "NHWC", True),
    "chw_as_batch": (rng.random((3, 4, 5)), "CHW", True),  # add_images takes any format
}


@pytest.mark.parametrize("name", list(IMAGES))
def test_images_equal_torch(tmp_path, read, torch, TorchWriter, name):
    array, fmt, batch = IMAGES[name]
    for root, writer, as_tensor in ((tmp_path / "mg", SummaryWriter, minigrad.tensor),
                                    (tmp_path / "th", TorchWriter, torch.tensor)):
        with writer(root) as w:
            add = w.add_images if batch else w.add_image
            add("pic", as_tensor(array), 3, dataformats=fmt)
            add("pic", array, 4, walltime=1234.0, dataformats=fmt)  # numpy, as it is
    got, want = read(tmp_path / "mg"), read(tmp_path / "th")
    assert got.Tags()["images"] == want.Tags()["images"] == ["pic"]
    g = same_images(got, want, "pic")
    assert [e.step for e in g] == [3, 4] and g[1].wall_time == 1234.0
    if fmt == "CHW" and not batch and array.shape[0] == 4:
        assert pixels(g[0]).shape[2] == 4  # RGBA kept


def test_image_defaults_and_tensor_inputs(tmp_path, read):
    img = rng.random((3, 8, 8)).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_image("a", minigrad.tensor(img, requires_grad=True))  # CHW by default, no step
        w.add_image("b", img, 0)
        w.add_images("c", minigrad.tensor(img[None]), 0)  # NCHW by default
    acc = read(tmp_path)
    a, b, c = (pixels(acc.Images(t)[0]) for t in "abc")
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(a, (img.transpose(1, 2, 0) * 255).astype(np.uint8))


def test_image_format_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="size of input tensor and input format are different"):
            w.add_image("x", np.zeros((4, 4)))  # HW data, CHW default
        with pytest.raises(AssertionError, match="same dimension shorthand twice"):
            w.add_image("x", np.zeros((3, 4, 4)), dataformats="CHH")
        with pytest.raises(AssertionError, match="4D numpy array with 3 channels"):
            w.add_images("x", np.zeros((2, 4, 4, 4)))  # RGBA batch: make_grid takes 1 or 3 channels


def test_missing_pillow_is_one_clear_line(tmp_path, monkeypatch):
    with SummaryWriter(tmp_path) as w:
        monkeypatch.setitem(sys.modules, "PIL", None)  # what an environment without Pillow gives
        with pytest.raises(ImportError) as info:
            w.add_image("x", np.zeros((3, 2, 2)))
    assert "pip install pillow" in str(info.value) and "minigrad[tensorboard]" in str(info.value)
    assert "\n" not in str(info.value) and info.value.__suppress_context__


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def make_figure(plt, k):
    fig = plt.figure(figsize=(3 + k, 2), dpi=50)
    plt.plot([0, 1, 2], [k, 2, 1])
    plt.title(f"figure {k}")
    return fig


def test_figures_equal_torch(tmp_path, read, torch, TorchWriter, plt):
    for root, writer in ((tmp_path / "mg", SummaryWriter), (tmp_path / "th", TorchWriter)):
        with writer(root) as w:
            w.add_figure("one", make_figure(plt, 0), 1)
            w.add_figure("many", [make_figure(plt, 0), make_figure(plt, 0)], 2)
            w.add_figure("many", [make_figure(plt, 1)], 3)
    got, want = read(tmp_path / "mg"), read(tmp_path / "th")
    assert sorted(got.Tags()["images"]) == sorted(want.Tags()["images"]) == ["many", "one"]
    [one] = got.Images("one")
    assert (one.width, one.height) == (150, 100) and one.step == 1  # 3 x 2 inches at 50 dpi
    many = got.Images("many")
    assert [(e.step, e.width, e.height) for e in many] == [(2, 300, 100), (3, 200, 100)]  # a grid of two; one
    for tag in ("one", "many"):  # the same figures drawn by the same matplotlib: the same pixels
        same_images(got, want, tag)
    assert not plt.get_fignums()  # close=True closed them all


def test_figure_close_false_keeps_it_open(tmp_path, read, plt):
    fig = make_figure(plt, 2)
    with SummaryWriter(tmp_path) as w:
        w.add_figure("f", fig, close=False)
    assert plt.fignum_exists(fig.number)
    plt.close(fig)
    [e] = read(tmp_path).Images("f")
    assert (e.width, e.height) == (250, 100) and pixels(e).shape == (100, 250, 3)


def hparams_content(acc):
    """{tag: HParamsPluginData} of a run's hparams summaries."""
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    return {tag: HParamsPluginData.FromString(content) for tag, content in acc.PluginTagToContent("hparams").items()}


def test_hparams_equal_torch(tmp_path, read, torch, TorchWriter):
    hp = {"lr": 0.1, "bsize": 32, "optim": "adam", "nesterov": True, "dropout": None}
    metrics = {"hparam/accuracy": 0.75, "hparam/loss": 1.5}
    domains = {"optim": ["adam", "sgd"], "bsize": [16, 32]}
    for root, writer, as_tensor in ((tmp_path / "mg", SummaryWriter, minigrad.tensor),
                                    (tmp_path / "th", TorchWriter, torch.tensor)):
        with writer(root) as w:
            w.add_scalar("train/loss", 2.0, 0)
            w.add_hparams(hp, metrics, hparam_domain_discrete=domains, run_name="trial0", global_step=5)
            w.add_hparams({"lr": as_tensor([0.01]), "momentum": np.float64(0.9)},
                          {"hparam/accuracy": as_tensor(0.5)}, run_name="trial1")
    for root in (tmp_path / "mg", tmp_path / "th"):  # one sub-run per add_hparams, named run_name
        assert sorted(d for d in os.listdir(root) if not d.startswith("events")) == ["trial0", "trial1"]
    for run in ("trial0", "trial1"):
        got, want = read(tmp_path / "mg" / run), read(tmp_path / "th" / run)
        g, t = hparams_content(got), hparams_content(want)
        assert sorted(g) == sorted(t) == ["_hparams_/experiment", "_hparams_/session_end_info",
                                          "_hparams_/session_start_info"]
        assert g == t  # the experiment (hparam and metric infos, domains), the values, the status
        assert got.Tags()["scalars"] == want.Tags()["scalars"] and got.Tags()["scalars"]
        for tag in got.Tags()["scalars"]:
            assert [(e.step, e.value) for e in got.Scalars(tag)] == [(e.step, e.value) for e in want.Scalars(tag)]
    start = hparams_content(read(tmp_path / "mg" / "trial0"))["_hparams_/session_start_info"].session_start_info
    assert start.hparams["optim"].string_value == "adam" and start.hparams["bsize"].number_value == 32
    assert start.hparams["nesterov"].number_value == 1.0 and "dropout" not in start.hparams  # as PyTorch's
    [acc] = read(tmp_path / "mg" / "trial0").Scalars("hparam/accuracy")
    assert (acc.step, acc.value) == (5, 0.75)
    assert read(tmp_path / "mg").Scalars("train/loss")[0].value == 2.0  # the main run keeps its own


def test_hparams_default_run_name_and_errors(tmp_path, read):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1}, {"m": 1.0})
        with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary"):
            w.add_hparams([("lr", 0.1)], {"m": 1.0})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\] should be a list"):
            w.add_hparams({"lr": 0.1}, {"m": 1.0}, hparam_domain_discrete={"lr": [1, 2]})
        with pytest.raises(ValueError, match="value should be one of int, float, str, bool"):
            w.add_hparams({"lr": [0.1]}, {"m": 1.0})
    [run] = [d for d in os.listdir(tmp_path) if not d.startswith("events")]
    assert float(run) > 1e9  # str(time.time()), as PyTorch's
    assert [e.value for e in read(tmp_path / run).Scalars("m")] == [1.0]


def test_pr_curve_equal_torch(tmp_path, read, torch, TorchWriter):
    labels = rng.integers(0, 2, 200)
    predictions = rng.random(200)
    weights = rng.random(200)
    for root, writer, as_tensor in ((tmp_path / "mg", SummaryWriter, minigrad.tensor),
                                    (tmp_path / "th", TorchWriter, torch.tensor)):
        with writer(root) as w:
            w.add_pr_curve("pr", as_tensor(labels), as_tensor(predictions), 1)
            w.add_pr_curve("pr", labels, predictions, 2, num_thresholds=10, walltime=99.0)
            w.add_pr_curve("pr_w", labels, predictions, 0, num_thresholds=500, weights=weights)  # 500 -> 127
    got, want = read(tmp_path / "mg"), read(tmp_path / "th")
    assert sorted(got.Tags()["tensors"]) == sorted(want.Tags()["tensors"]) == ["pr", "pr_w"]
    for tag in ("pr", "pr_w"):
        assert got.SummaryMetadata(tag) == want.SummaryMetadata(tag)  # pr_curves plugin, num_thresholds
        g, t = got.Tensors(tag), want.Tensors(tag)
        assert [(e.step, e.wall_time == 99.0) for e in g] == [(e.step, e.wall_time == 99.0) for e in t]
        for a, b in zip(g, t):
            assert a.tensor_proto == b.tensor_proto
    assert [e.tensor_proto.tensor_shape.dim[1].size for e in got.Tensors("pr")] == [127, 10]


def test_embedding_equal_torch(tmp_path, torch, TorchWriter):
    mat = rng.standard_normal((10, 4)).astype(np.float32)
    meta = [f"w{i}" for i in range(10)]
    rows = [[f"w{i}", i % 3] for i in range(10)]
    imgs = rng.random((10, 3, 6, 6)).astype(np.float32)
    for root, writer, as_tensor in ((tmp_path / "mg", SummaryWriter, minigrad.tensor),
                                    (tmp_path / "th", TorchWriter, torch.tensor)):
        with writer(root) as w:
            w.add_embedding(as_tensor(mat), metadata=meta, label_img=as_tensor(imgs))
            w.add_embedding(mat, metadata=rows, metadata_header=["word", "class"], global_step=3, tag="a/b")
            w.add_embedding(as_tensor(mat[:5]), global_step=7)
    mg, th = tmp_path / "mg", tmp_path / "th"
    files = sorted(os.path.relpath(os.path.join(d, f), mg) for d, _, fs in os.walk(mg) for f in fs
                   if not f.startswith("events"))
    assert files == sorted(os.path.relpath(os.path.join(d, f), th) for d, _, fs in os.walk(th) for f in fs
                           if not f.startswith("events"))
    assert "00003/a%2fb/metadata.tsv" in files and "00000/default/sprite.png" in files
    for f in files:
        if f.endswith(".png"):
            np.testing.assert_array_equal(np.asarray(PIL_Image.open(mg / f)), np.asarray(PIL_Image.open(th / f)))
        else:
            assert (mg / f).read_bytes() == (th / f).read_bytes(), f  # tsv files and projector_config.pbtxt
    assert (mg / "00003/a%2fb/metadata.tsv").read_text().splitlines()[:2] == ["word\tclass", "w0\t0"]


def test_embedding_errors(tmp_path, capsys):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="#labels should equal with #data points"):
            w.add_embedding(np.zeros((3, 2)), metadata=["a"])
        with pytest.raises(AssertionError, match="mat should be 2D"):
            w.add_embedding(np.zeros(3), global_step=1)
        w.add_embedding(np.zeros((2, 2)), global_step=2)
        w.add_embedding(np.zeros((2, 2)), global_step=2)
    assert "Embedding dir exists" in capsys.readouterr().out


def test_add_graph_warns_once_and_writes_nothing(tmp_path, read, monkeypatch):
    monkeypatch.setattr(SummaryWriter, "_graph_warned", False)
    model = minigrad.nn.Linear(3, 2)
    with SummaryWriter(tmp_path) as w:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            w.add_graph(model, minigrad.randn(4, 3))
            w.add_graph(model, minigrad.randn(4, 3), verbose=True, use_strict_trace=False)
            w.add_scalar("after", 1.0, 0)  # the script goes on
    [warning] = caught
    message = str(warning.message)
    assert "add_graph writes no graph" in message and "minigrad.viz" in message and "\n" not in message
    assert warning.filename == __file__  # points at the caller's line
    acc = read(tmp_path)
    assert acc.Tags()["graph"] is False and [e.value for e in acc.Scalars("after")] == [1.0]


def test_works_without_torch(tmp_path, plt):
    """Every add_* here runs with torch unimportable (minigrad's writer never imports it)."""
    script = textwrap.dedent(f"""
        import sys, warnings
        sys.modules["torch"] = None
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
        import minigrad
        from minigrad.utils.tensorboard import SummaryWriter
        warnings.simplefilter("ignore")
        with SummaryWriter({str(tmp_path)!r}) as w:
            w.add_image("i", minigrad.rand(3, 4, 4), 0)
            w.add_images("b", np.zeros((2, 3, 4, 4), np.uint8), 0)
            w.add_figure("f", plt.figure(figsize=(1, 1), dpi=10), 0)
            w.add_hparams({{"lr": 0.1}}, {{"m": minigrad.tensor(1.0)}}, run_name="hp")
            w.add_pr_curve("pr", np.array([0, 1, 1]), minigrad.tensor([0.2, 0.9, 0.4]), 0)
            w.add_embedding(minigrad.randn(3, 2), metadata=["a", "b", "c"], label_img=minigrad.rand(3, 3, 2, 2))
            w.add_graph(minigrad.nn.Linear(2, 2))
        assert "torch" not in [m.split(".")[0] for m in sys.modules if sys.modules[m] is not None]
        print("ok")
    """)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    assert sorted(os.listdir(tmp_path / "00000" / "default")) == ["metadata.tsv", "sprite.png", "tensors.tsv"]
