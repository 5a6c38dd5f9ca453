"""`torch.hub`: pretrained weights from the hub cache, and models from a local `hubconf.py`.

minigrad never opens a network connection. The cache is PyTorch's own (`$TORCH_HOME/hub`, by default
`~/.cache/torch/hub`), so weights a PyTorch install has downloaded are found here as they are:

    state = minigrad.hub.load_state_dict_from_url("https://download.pytorch.org/models/resnet18-f37072fd.pth")
    # reads <hub_dir>/checkpoints/resnet18-f37072fd.pth; if it is not there, says where to put it

A checkpoint loads through minigrad.load, which never runs code from the file. `load`, `list` and `help` take
a local directory with a hubconf.py (source="local"): that file is the user's own code and runs, as in PyTorch.
"""
import hashlib
import os
import re
import shutil
import sys
import warnings
from urllib.parse import urlparse

ENV_TORCH_HOME, ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR = "TORCH_HOME", "XDG_CACHE_HOME", "~/.cache"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # (the sha256 prefix in a file name like resnet18-f37072fd.pth)
MODULE_HUBCONF, VAR_DEPENDENCY = "hubconf.py", "dependencies"
_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR),
                                                                      "torch")))


def get_dir():
    """The hub cache directory: set_dir's, else `$TORCH_HOME/hub` ($TORCH_HOME defaults to $XDG_CACHE_HOME/torch,
    $XDG_CACHE_HOME to ~/.cache), as PyTorch's."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    return _hub_dir if _hub_dir is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _no_network(url, dst):
    return RuntimeError(f"minigrad has no network access and cannot download {url}: put the file at {dst} "
                        "(download it with a browser, curl, or PyTorch's hub) and call again")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Copy the object at `url` to `dst`: only a local `file://` URL here (minigrad has no network access),
    checked against `hash_prefix` (the start of its sha256) when given."""
    parts = urlparse(url)
    if parts.scheme != "file":
        raise _no_network(url, dst)
    sha256 = hashlib.sha256()
    with open(parts.path, "rb") as f:
        sha256.update(f.read())
    digest = sha256.hexdigest()
    if hash_prefix is not None and digest[:len(hash_prefix)] != hash_prefix:
        raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
    shutil.copyfile(parts.path, dst)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None,
                             weights_only=False):
    """The object saved at `url`, read from `<model_dir>/<file name>` (model_dir: `<hub_dir>/checkpoints`).
    Either weights_only reads without running code from the file (see minigrad.load)."""
    from .serialization import load

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress=progress)
    return load(cached_file, map_location=map_location, weights_only=weights_only)


# ---- models from a hubconf.py ---------------------------------------------------------------------------------

def _hubconf(repo_or_dir, source):
    """The hubconf module of a local directory (imported with the directory first on sys.path, as PyTorch)."""
    import importlib.util

    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        raise RuntimeError(f"minigrad has no network access and cannot fetch the GitHub repo {repo_or_dir}: clone it "
                           f"and pass its directory with source='local'")
    sys.path.insert(0, repo_or_dir)
    try:
        spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, os.path.join(repo_or_dir, MODULE_HUBCONF))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_or_dir)
    return module


def _entry(module, model):
    import importlib.util

    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [m for m in getattr(module, VAR_DEPENDENCY, None) or [] if importlib.util.find_spec(m) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _local_or_github(github):  # (list and help take no source=: a directory is read, anything else is GitHub's)
    return "local" if os.path.isdir(github) else "github"


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):
    """The entrypoints (public callables) of the hubconf.py in directory `github`."""
    module = _hubconf(github, _local_or_github(github))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    """The docstring of entrypoint `model` of the hubconf.py in directory `github`."""
    return _entry(_hubconf(github, _local_or_github(github)), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """hubconf.model(*args, **kwargs) from a local directory (source="local"; GitHub needs the network)."""
    return _entry(_hubconf(repo_or_dir, source), model)(*args, **kwargs)

