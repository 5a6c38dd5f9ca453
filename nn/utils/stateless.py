"""A module called with other tensors in place of its parameters and buffers (`torch.func.functional_call`,
`torch.nn.utils.stateless`), and the stacked state of an ensemble of modules (`torch.func.stack_module_state`)."""
import contextlib

from minigrad.ops.shape import stack


def _merged(parameter_and_buffer_dicts):
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (tuple, list)) or not all(isinstance(d, dict) for d in dicts):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(dicts)}")
    merged, repeated = {}, []
    for d in dicts:
        for name, value in d.items():
            if name in merged:
                repeated.append(name)
            merged[name] = value
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return merged


def _owner(module, name):
    """(the submodule holding dotted `name`, its last part)."""
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


@contextlib.contextmanager
def _swapped(module, tensors, tie_weights, strict):
    """Within: each dotted name of `tensors` reads that tensor in `module` (and, with tie_weights, every
    name tied to the same parameter or buffer); afterwards the module's own are back."""
    own = dict(module.named_parameters(remove_duplicate=False))
    own.update(module.named_buffers(remove_duplicate=False))
    if strict:
        missing = sorted(k for k in own if k not in tensors)
        unexpected = sorted(k for k in tensors if k not in own)
        if missing or unexpected:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError("\n\t".join(lines))
    tensors = dict(tensors)
    if tie_weights:  # a name sharing the given name's parameter (embedding and lm_head tied) reads the new one too
        by_id = {}
        for name, t in own.items():
            by_id.setdefault(id(t), []).append(name)
        for names in by_id.values():  # two different tensors for one tied weight: which one is meant is unclear
            if len({id(tensors[n]) for n in names if n in tensors}) > 1:
                raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                                 "Consider using tie_weights=False")
        for name in list(tensors):
            for other in by_id.get(id(own.get(name)), ()):
                tensors.setdefault(other, tensors[name])
    saved = []
    try:
        for name, value in tensors.items():
            owner, leaf = _owner(module, name)
            table = (owner._parameters if leaf in owner._parameters else owner._buffers if leaf in owner._buffers
                     else None)
            if table is None:  # not a parameter or buffer (strict=False lets it through): an attribute for the call
                saved.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _ABSENT)))
                object.__setattr__(owner, leaf, value)
            else:
                saved.append((table, leaf, table[leaf]))
                table[leaf] = value
        yield
    finally:
        for table, leaf, value in reversed(saved):
            if value is _ABSENT:
                del table[leaf]
            else:
                table[leaf] = value


_ABSENT = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """`module(*args, **kwargs)` with the named tensors of `parameter_and_buffer_dicts` (a dict, or a tuple of
    dicts, keyed as `state_dict`) in place of the module's parameters and buffers for this call. Gradients
    flow to the given tensors, not to the module's own; the module is left as it was, even if the call raises.
    strict: the dicts must name every parameter and buffer, and nothing else."""
    tensors = _merged(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """(params, buffers): each name's tensors across `models` stacked along a new first dim; the stacked
    parameters are new leaves that require grad (where the models' do)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {name: stack([dict(m.named_parameters())[name] for m in models]).detach().requires_grad_(p.requires_grad)
              for name, p in models[0].named_parameters()}
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models]) for name, _ in models[0].named_buffers()}
    return params, buffers

