"""erf on raw arrays: the code lives in minigrad.special (the engine's erf op uses it too)."""
from minigrad.special import _ALPHA, _BETA, BLOCK, blocks, erf, erf32_block  # noqa: F401
