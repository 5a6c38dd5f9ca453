"""DistributedDataParallel's default communication hooks, as PyTorch's: `state` is the process group
(None: the world), `bucket` a GradBucket; each returns a Future of the bucket's new flat gradients.
The hooks divide by the group's size themselves: DDP does not average when a hook is registered."""
import minigrad
import minigrad.distributed as dist
from minigrad.dtypes import bfloat16_round

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook", "fp16_compress_wrapper",
           "bf16_compress_wrapper"]


def _allreduce_fut(process_group, tensor):
    # divide first, so that a float16 sum cannot overflow
    tensor.div_(dist.get_world_size(process_group))
    return dist.all_reduce(tensor, group=process_group, async_op=True).get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The mean of the bucket over the ranks: the same gradients as DDP without a hook."""
    return _allreduce_fut(process_group, bucket.buffer())


def _to_bfloat16(tensor):
    """`tensor` at bfloat16's precision, held in float32 (minigrad has no bfloat16 arrays)."""
    return minigrad.Tensor._wrap(bfloat16_round(tensor.array))


def _compress_hook(compress, process_group, bucket):
    buffer = bucket.buffer()
    compressed = compress(buffer)
    # the division is in the compressed precision: for bfloat16 its result is rounded back to it
    compressed.div_(dist.get_world_size(process_group))
    if compress is _to_bfloat16:
        compressed = _to_bfloat16(compressed)

    def decompress(fut):
        value = fut.value()[0]
        if compress is _to_bfloat16:
            value = _to_bfloat16(value)  # the sum, rounded to bfloat16 once (gloo and NCCL round each step)
        buffer.copy_(value)
        return buffer

    return dist.all_reduce(compressed, group=process_group, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The mean of the bucket over the ranks in float16: the bucket cast to float16 and divided by the
    group's size, summed in float16 (halving the traffic), cast back to the bucket's dtype."""
    return _compress_hook(lambda t: t.to(minigrad.float16), process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """fp16_compress_hook in bfloat16. minigrad has no bfloat16 arrays (numpy has none): the bucket is
    rounded to bfloat16's precision and kept in float32, the division's result is rounded to it, and the
    float32 sum over the ranks is rounded to it once, so the values are bfloat16 values but the traffic
    is not halved. (PyTorch runs it on NCCL only; this runs on every backend.)"""
    return _compress_hook(_to_bfloat16, process_group, bucket)


def _compress_wrapper(compress, hook):
    def wrapper(hook_state, bucket):
        bucket.set_buffer(compress(bucket.buffer()))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            decompressed = bucket.buffer()
            decompressed.copy_(fut.value())
            return decompressed

        return fut.then(decompress)

    return wrapper


def fp16_compress_wrapper(hook):
    """`hook` run on the bucket cast to float16; fp16_compress_wrapper(allreduce_hook) is fp16_compress_hook."""
    wrapper = _compress_wrapper(lambda t: t.to(minigrad.float16), hook)
    wrapper.__name__ = wrapper.__qualname__ = "fp16_compress_wrapper_hook"
    return wrapper


def bf16_compress_wrapper(hook):
    """`hook` run on the bucket rounded to bfloat16 (kept in float32, as bf16_compress_hook)."""
    wrapper = _compress_wrapper(_to_bfloat16, hook)
    wrapper.__name__ = wrapper.__qualname__ = "bf16_compress_wrapper_hook"
    return wrapper

