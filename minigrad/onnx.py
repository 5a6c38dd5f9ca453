"""`torch.onnx`'s names, so that scripts import it: minigrad has no ONNX exporter."""


def export(*args, **kwargs):
    raise NotImplementedError("minigrad.onnx.export: ONNX export is not built in minigrad (save the weights with "
                              "minigrad.save(model.state_dict(), path) and export from PyTorch)")


def is_in_onnx_export():
    """False: no ONNX export ever runs (model code asks this to take an export-only branch)."""
    return False
