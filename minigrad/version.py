"""`torch.version`: the library's version, and the GPU toolkits it was built with (none: cupy brings
its own CUDA)."""
__version__ = "0.1.0"
cuda = None
hip = None
git_version = None
debug = False
