"""`torch._inductor`'s config, which PyTorch scripts set before compiling (`coordinate_descent_tuning`,
`triton.unique_kernel_names`, `fx_graph_cache`): accepted and read back, changing nothing here (minigrad.compile
replays the ops' own kernels; docs/compile.md)."""
from ._dynamo import Settings

config = Settings("torch._inductor.config", {
    "coordinate_descent_tuning": False, "fx_graph_cache": True, "fx_graph_remote_cache": None, "max_autotune": False,
    "max_autotune_gemm": False, "freezing": False, "epilogue_fusion": True, "aggressive_fusion": False},
    triton=Settings("torch._inductor.config.triton", {"unique_kernel_names": True, "cudagraphs": False,
                                                       "cudagraph_trees": True}))
