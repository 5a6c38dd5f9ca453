"""Join: training on uneven inputs. A rank whose data has run out leaves the `with Join(...)` block and
then shadows the others' collectives (each joinable's `main_hook`, once per step they still take)
until every rank has joined; their steps stay matched and nobody waits for ever.

Each step, every rank still training calls `Join.notify_join_context(joinable)` (DistributedDataParallel
does in its forward): an all_reduce of 1, which the joined ranks answer with 0. The sum is the number
of ranks still training; 0 ends the shadowing.
"""
from .. import all_reduce, get_rank


class JoinHook:
    """What a joinable does on a joined rank: `main_hook()` each step the others take, `post_hook()` once at the end."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable:
    """A class that takes part in Join: join_hook() gives its JoinHook; join_device and join_process_group."""

    def join_hook(self, **kwargs):
        raise NotImplementedError

    @property
    def join_device(self):
        raise NotImplementedError

    @property
    def join_process_group(self):
        raise NotImplementedError


class Join:
    _active = None  # the Join whose block is running (its joinables notify it)

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables, self._enable, self._throw = list(joinables), enable, throw_on_early_termination
        self._hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._group = self._joinables[0].join_process_group

    def __enter__(self):
        if Join._active is not None:
            raise ValueError("nested Join contexts are not supported")
        Join._active = self if self._enable else None
        return self

    def __exit__(self, kind, value, tb):
        Join._active = None
        if not self._enable or kind is not None:
            return False
        from minigrad import zeros

        last = True  # among the last to join: no step was shadowed
        while True:  # shadow the steps the others still take
            still = zeros(1)
            all_reduce(still, group=self._group)
            if still.item() == 0:
                break
            if self._throw:
                raise RuntimeError(f"Rank {get_rank()} exhausted all inputs.")
            last = False
            for hook in self._hooks:
                hook.main_hook()
        for hook in self._hooks:
            hook.post_hook(last)
        return False

    @staticmethod
    def notify_join_context(joinable):
        """Called by each joinable once per step while its rank still trains: tells the joined ranks."""
        join = Join._active
        if join is None or joinable is not join._joinables[0]:
            return None
        from minigrad import ones

        still = ones(1)
        all_reduce(still, group=join._group)
        if join._throw and still.item() < _world(join._group):
            raise RuntimeError(f"Rank {get_rank()} exhausted all inputs.")  # another rank has joined
        return None


def _world(group):
    from .. import get_world_size

    return get_world_size(group)
