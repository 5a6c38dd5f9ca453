"""`torch._logging.set_logs`, which scripts call to see recompiles and graph breaks: minigrad.compile always
says those in one RecompileWarning line each (docs/compile.md), so the settings are accepted and change
nothing."""


def set_logs(**settings):
    """PyTorch's log settings (`recompiles=True`, `graph_breaks=True`, `dynamo=logging.INFO`, ...)."""
