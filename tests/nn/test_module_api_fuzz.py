"""A differential fuzzer of the nn.Module API against PyTorch's.

The same random module tree (layers, containers, custom modules with persistent and non-persistent
buffers, shared sub-modules and parameters, None members) is built in torch.nn and in nn, then the same
random sequence of API calls runs on both: walks, lookups, registration, state dicts, modes, dtypes, reprs,
hooks, copies. Each result is reduced to plain data (names, class names, values, the pattern of which
results are the same object, an exception's type and text) and the two must be equal.
"""
import copy

import numpy as np
import pytest

import minigrad
import nn
from tests.fuzz_settings import fuzz_rng

CASES = 300  # seeds of the fuzzer (each a tree and a sequence of calls)
STEPS = 12


# ---- the trees ------------------------------------------------------------------------------------------------
def make_spec(rng, depth=0, counts=None):
    """A random tree as plain data; both libraries build it the same way. counts: how many modules and
    Parameters the spec makes before this node (shared members refer to earlier ones by number)."""
    counts = counts if counts is not None else {"modules": 0, "params": 0}
    kinds = ["linear", "conv", "bn", "ln", "emb", "lstm", "relu", "plist", "pdict"]
    if depth < 3:
        kinds += ["seq", "list", "dict", "custom", "custom"]
    kind = kinds[rng.integers(len(kinds))]
    counts["modules"] += 1
    if kind == "linear":
        return ("linear", int(rng.integers(1, 4)), int(rng.integers(1, 4)), bool(rng.integers(2)))
    if kind == "conv":
        return ("conv", int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3)), bool(rng.integers(2)))
    if kind == "bn":
        return ("bn", int(rng.integers(1, 4)), bool(rng.integers(2)), bool(rng.integers(2)))
    if kind == "ln":
        return ("ln", int(rng.integers(1, 4)), bool(rng.integers(2)), bool(rng.integers(2)))
    if kind == "emb":
        return ("emb", int(rng.integers(2, 5)), int(rng.integers(1, 3)))
    if kind == "lstm":
        return ("lstm", int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3)), bool(rng.integers(2)))
    if kind == "relu":
        return ("relu",)
    if kind == "plist":
        counts["params"] += (n := int(rng.integers(0, 3)))
        return ("plist", [int(rng.integers(1, 3)) for _ in range(n)] + [None] * int(rng.integers(3) == 0))
    if kind == "pdict":
        counts["params"] += (n := int(rng.integers(0, 3)))
        return ("pdict", [(f"p{i}", int(rng.integers(1, 3))) for i in range(n)] + [("none", None)] * int(rng.integers(3) == 0))
    if kind in ("seq", "list"):
        return (kind, [make_spec(rng, depth + 1, counts) for _ in range(int(rng.integers(0, 3)))])
    if kind == "dict":
        return ("dict", [(f"k{i}", make_spec(rng, depth + 1, counts)) for i in range(int(rng.integers(0, 3)))])
    members = []
    for i in range(int(rng.integers(1, 6))):
        what = rng.integers(8)
        if what == 0:
            counts["params"] += 1
            members.append(("param", f"w{i}", int(rng.integers(1, 3))))
        elif what == 1:
            members.append(("param", f"w{i}", None))
        elif what == 2:
            members.append(("buf", f"b{i}", int(rng.integers(1, 3)) if rng.integers(3) else None, bool(rng.integers(2))))
        elif what == 3:
            members.append(("mod", f"m{i}", make_spec(rng, depth + 1, counts)))
        elif what == 4:
            members.append(("mod", f"m{i}", None))
        elif what == 5 and counts["modules"] > 1:
            members.append(("shared_mod", f"s{i}", int(rng.integers(counts["modules"] - 1))))
        elif what == 6 and counts["params"]:
            members.append(("shared_param", f"t{i}", int(rng.integers(counts["params"]))))
        else:
            members.append(("attr", f"a{i}", int(rng.integers(10))))
    return ("custom", members)


class Side:
    """One library's end of a case: builds trees, and reduces results to comparable data."""

    def __init__(self, lib, mod):
        self.lib, self.nn, self.ids, self.keep = lib, mod, {}, []

        class Custom(mod.Module):  # (one class per library, as a user's own module)
            def forward(self, x):
                return x

        self.Custom = Custom

    def tensor(self, shape, seed, dtype=None):
        values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        return self.lib.tensor(values) if dtype is None else self.lib.tensor(values, dtype=dtype)

    def linear(self, seed):
        made = self.nn.Linear(1, 1)
        with self.lib.no_grad():
            made.weight.copy_(self.tensor((1, 1), seed))
            made.bias.fill_(0.5)
        return made

    def build(self, spec, pools=None):
        pools = pools if pools is not None else {"modules": [], "params": []}
        nn_, kind = self.nn, spec[0]
        made = None
        if kind == "linear":
            made = nn_.Linear(spec[1], spec[2], bias=spec[3])
        elif kind == "conv":
            made = nn_.Conv2d(spec[1], spec[2], spec[3], bias=spec[4])
        elif kind == "bn":
            made = nn_.BatchNorm1d(spec[1], affine=spec[2], track_running_stats=spec[3])
        elif kind == "ln":
            made = nn_.LayerNorm(spec[1], elementwise_affine=spec[2], bias=spec[3])
        elif kind == "emb":
            made = nn_.Embedding(spec[1], spec[2])
        elif kind == "lstm":
            made = nn_.LSTM(spec[1], spec[2], num_layers=spec[3], bias=spec[4])
        elif kind == "relu":
            made = nn_.ReLU()
        pools["modules"].append(made)
        index = len(pools["modules"]) - 1
        if kind == "plist":
            made = nn_.ParameterList()
            for n in spec[1]:
                made.append(None if n is None else nn_.Parameter(self.tensor((n,), len(pools["params"]))))
                if n is not None:
                    pools["params"].append(made[-1])
        elif kind == "pdict":
            made = nn_.ParameterDict()
            for key, n in spec[1]:
                made[key] = None if n is None else nn_.Parameter(self.tensor((n,), len(pools["params"])))
                if n is not None:
                    pools["params"].append(made[key])
        elif kind in ("seq", "list"):
            children = [self.build(s, pools) for s in spec[1]]
            made = nn_.Sequential(*children) if kind == "seq" else nn_.ModuleList(children)
        elif kind == "dict":
            made = nn_.ModuleDict({key: self.build(s, pools) for key, s in spec[1]})
        elif kind == "custom":
            made = self.Custom()
            for member in spec[1]:
                what, name = member[0], member[1]
                if what == "param":
                    p = None if member[2] is None else nn_.Parameter(self.tensor((member[2],), len(pools["params"])))
                    if p is not None:
                        pools["params"].append(p)
                    made.register_parameter(name, p)
                elif what == "buf":
                    b = None if member[2] is None else self.tensor((member[2],), 1000 + len(pools["params"]))
                    made.register_buffer(name, b, persistent=member[3])
                elif what == "mod":
                    made.add_module(name, None if member[2] is None else self.build(member[2], pools))
                elif what == "shared_mod":
                    target = pools["modules"][member[2]]
                    setattr(made, name, target if target is not None else self.nn.Identity())
                elif what == "shared_param":
                    setattr(made, name, pools["params"][member[2]])
                else:
                    setattr(made, name, member[2])
        pools["modules"][index] = made
        return made

    # ---- results as data ----
    def ident(self, obj):
        """The number of `obj` among the objects this side has seen (same pattern on both sides)."""
        key = id(obj)
        if key not in self.ids:
            self.ids[key] = len(self.ids)
            self.keep.append(obj)
        return self.ids[key]

    def text(self, s):
        # (PyTorch's layers live in torch.nn.modules, ours in the top-level package nn.modules)
        s = s.replace("torch.nn.modules.", "nn.modules.") if self.lib.__name__ == "torch" else s
        return s.replace("torch.", "minigrad.").replace("torch ", "minigrad ") if self.lib.__name__ == "torch" else s

    def data(self, x):
        lib = self.lib
        if isinstance(x, BaseException):
            return ("error", type(x).__name__, self.text(str(x)))
        if isinstance(x, lib.Tensor):
            kind = "Parameter" if isinstance(x, self.nn.Parameter) else "Tensor"
            return (kind, self.ident(x), self.text(str(x.dtype)), tuple(x.shape), x.requires_grad,
                    np.asarray(x.detach().float().numpy()).round(5).tolist())
        if isinstance(x, type):
            return ("class", x.__name__)
        if isinstance(x, self.nn.Module):
            return ("module", type(x).__name__, self.ident(x))
        if type(x).__name__ == "_IncompatibleKeys":
            return ("keys", list(x.missing_keys), list(x.unexpected_keys), self.text(repr(x)))
        if isinstance(x, dict):
            return (type(x).__name__, [(k, self.data(v)) for k, v in x.items()])
        if isinstance(x, (list, tuple)):
            return [self.data(v) for v in x]
        if isinstance(x, str):
            return self.text(x)
        if hasattr(x, "__next__"):
            return ("iterator", [self.data(v) for v in x])
        return x


def attempt(side, fn, *args):
    try:
        return side.data(fn(*args))
    except Exception as e:  # (the error itself is what is compared)
        return side.data(e)


# ---- the calls ------------------------------------------------------------------------------------------------
def paths(root):
    """The dotted names of the reference tree's modules, parameters and buffers, duplicates included."""
    mods = [n for n, _ in root.named_modules(remove_duplicate=False)]
    params = [n for n, _ in root.named_parameters(remove_duplicate=False)]
    bufs = [n for n, _ in root.named_buffers(remove_duplicate=False)]
    return mods, params, bufs


CONTAINERS = ("ParameterList", "ParameterDict")


def registrable(root, mods, skip=CONTAINERS):
    """The modules the generic registration calls run on: not the parameter containers (KNOWN)."""
    return [n for n in mods if type(root.get_submodule(n)).__name__ not in skip]


def pick(rng, seq):
    return seq[int(rng.integers(len(seq)))] if len(seq) else None


def bad_paths(rng, mods, params, bufs):
    """Paths to look up: good ones and each kind of bad one."""
    base = pick(rng, mods) or ""
    head = base + "." if base else ""
    return pick(rng, [base, head + "nope", head + "training", head + "forward", "nope.x", base + "..",
                      pick(rng, params) or "x", pick(rng, bufs) or "y", head + "0", (pick(rng, params) or "") + ".x"])


def new_value(side, code, seed):
    """A value to register or assign, by code: each kind the API treats differently."""
    lib, nn_ = side.lib, side.nn
    return {"param": lambda: nn_.Parameter(side.tensor((2,), seed)), "tensor": lambda: side.tensor((2,), seed),
            "buffer": lambda: nn_.Buffer(side.tensor((2,), seed), persistent=bool(seed % 2)),
            "module": lambda: side.linear(seed), "none": lambda: None, "int": lambda: 3,
            "list": lambda: [1], "class": lambda: nn_.ReLU, "double": lambda: side.tensor((2,), seed, lib.float64),
            }[code]()


VALUE_CODES = ["param", "tensor", "buffer", "module", "none", "int", "list", "class", "double"]
NAME_CODES = ["fresh", "member", "training", "forward", "dotted", "empty", "number", "dunder"]


def member_name(rng, module, code):
    if code == "member":
        names = list(module._parameters) + list(module._buffers) + list(module._modules)
        return pick(rng, names) or "fresh"
    return {"fresh": "fresh", "training": "training", "forward": "forward", "dotted": "a.b", "empty": "",
            "number": 3, "dunder": "__x"}[code]


def op_walk(rng, root, mods, params, bufs):
    method = pick(rng, ["named_parameters", "named_buffers", "named_modules"])
    kw = {}
    if rng.integers(2):
        kw["prefix"] = pick(rng, ["", "pre", "a.b"])
    if method != "named_modules" and rng.integers(2):
        kw["recurse"] = bool(rng.integers(2))
    if rng.integers(2):
        kw["remove_duplicate"] = bool(rng.integers(2))
    target = pick(rng, mods)
    return f"{target!r}.{method}({kw})", lambda s, m: list(getattr(m.get_submodule(target), method)(**kw))


def op_plain_walk(rng, root, mods, params, bufs):
    method = pick(rng, ["parameters", "buffers", "modules", "children", "named_children"])
    kw = {"recurse": bool(rng.integers(2))} if method in ("parameters", "buffers") else {}
    target = pick(rng, mods)
    return f"{target!r}.{method}({kw})", lambda s, m: getattr(m.get_submodule(target), method)(**kw)


def op_get(rng, root, mods, params, bufs):
    method = pick(rng, ["get_submodule", "get_parameter", "get_buffer"])
    path = bad_paths(rng, mods, params, bufs)
    return f"{method}({path!r})", lambda s, m: getattr(m, method)(path)


def op_set_submodule(rng, root, mods, params, bufs):
    path = bad_paths(rng, mods, params, bufs)
    code, strict = pick(rng, ["module", "module", "int", "none"]), bool(rng.integers(2))

    def call(s, m):
        m.set_submodule(path, new_value(s, code, 0), strict=strict)
        return list(m.named_modules(remove_duplicate=False))
    return f"set_submodule({path!r}, {code}, strict={strict})", call


def op_register(rng, root, mods, params, bufs):
    method = pick(rng, ["register_parameter", "register_buffer", "add_module", "register_module"])
    target, name_code, code = pick(rng, registrable(root, mods)), pick(rng, NAME_CODES), pick(rng, VALUE_CODES)
    persistent = bool(rng.integers(2))
    seed = int(rng.integers(1000))

    def call(s, m):
        if target is None:
            return None
        sub = m.get_submodule(target)
        name = member_name(np.random.default_rng(seed), sub, name_code)
        args = (name, new_value(s, code, 1)) + ((persistent,) if method == "register_buffer" else ())
        getattr(sub, method)(*args)
        return list(sub.named_parameters()) + list(sub.named_buffers()) + list(m.state_dict(keep_vars=True))
    return f"{target!r}.{method}({name_code}, {code}, persistent={persistent})", call


def op_setattr(rng, root, mods, params, bufs):
    target, name_code, code = pick(rng, registrable(root, mods, CONTAINERS + ("LSTM",))), pick(rng, ["member", "member", "fresh", "training"]), pick(rng, VALUE_CODES)
    seed = int(rng.integers(1000))

    def call(s, m):
        if target is None:
            return None
        sub = m.get_submodule(target)
        name = member_name(np.random.default_rng(seed), sub, name_code)
        setattr(sub, name, new_value(s, code, 2))
        return (list(sub.named_parameters(recurse=False)) + list(sub.named_buffers(recurse=False))
                + list(sub.named_children()) + [getattr(sub, name)] + list(m.state_dict(keep_vars=True)))
    return f"{target!r}.{name_code} = {code}", call


def op_delattr(rng, root, mods, params, bufs):
    target, name_code = pick(rng, registrable(root, mods)), pick(rng, ["member", "member", "fresh", "training"])
    seed = int(rng.integers(1000))

    def call(s, m):
        if target is None:
            return None
        sub = m.get_submodule(target)
        name = member_name(np.random.default_rng(seed), sub, name_code)
        delattr(sub, name)
        return [hasattr(sub, name)] + list(m.state_dict(keep_vars=True)) + list(m.named_buffers())
    return f"del {target!r}.{name_code}", call


def op_getattr(rng, root, mods, params, bufs):
    target, name = pick(rng, mods), pick(rng, ["foo", "training", "weight", "bias", "w1", "b2", "m3"])
    return f"{target!r}.{name}", lambda s, m: getattr(m.get_submodule(target), name)


def op_state_dict(rng, root, mods, params, bufs):
    kw = {}
    if rng.integers(2):
        kw["prefix"] = pick(rng, ["", "pre.", "x"])
    if rng.integers(2):
        kw["keep_vars"] = bool(rng.integers(2))
    target, dest = pick(rng, mods), bool(rng.integers(2))

    def call(s, m):
        args = dict(kw, destination={"given": s.tensor((1,), 7)}) if dest else kw
        out = m.get_submodule(target).state_dict(**args)
        return [out, ("same", out is args.get("destination"))]
    return f"{target!r}.state_dict({kw}, destination={dest})", call


def op_load_state_dict(rng, root, mods, params, bufs):
    strict, drop, add, reshape = bool(rng.integers(2)), rng.integers(3), rng.integers(2), rng.integers(3)
    assign = bool(rng.integers(4) == 0)
    seed = int(rng.integers(1000))

    def call(s, m):
        state = m.state_dict()
        keys = list(state)
        r = np.random.default_rng(seed)
        new = {k: s.lib.tensor(np.asarray(v.detach().numpy()) + 1) for k, v in state.items()}
        for _ in range(int(drop)):
            if keys:
                new.pop(pick(r, keys), None)
        if add:
            new[pick(r, ["extra", (pick(r, keys) or "z") + ".extra", "0.weight"])] = s.tensor((1,), 3)
        for _ in range(int(reshape)):
            if keys and (k := pick(r, keys)) in new and new[k].ndim:
                new[k] = s.tensor((2, 3), 4)
        kw = {"strict": strict} | ({"assign": True} if assign else {})
        result = m.load_state_dict(new, **kw)
        return [result, list(m.state_dict(keep_vars=True).items())]
    return f"load_state_dict(strict={strict}, drop={drop}, add={add}, reshape={reshape}, assign={assign})", call


def op_modes(rng, root, mods, params, bufs):
    target, which, flag = pick(rng, mods), pick(rng, ["train", "eval", "requires_grad_", "train_bad"]), bool(rng.integers(2))

    def call(s, m):
        sub = m.get_submodule(target)
        out = {"train": lambda: sub.train(flag), "eval": sub.eval, "requires_grad_": lambda: sub.requires_grad_(flag),
               "train_bad": lambda: sub.train(1)}[which]()
        return [out, [x.training for x in m.modules()], [p.requires_grad for p in m.parameters()]]
    return f"{target!r}.{which}({flag})", call


def op_zero_grad(rng, root, mods, params, bufs):
    set_to_none, target = bool(rng.integers(2)), pick(rng, mods)

    def call(s, m):
        for i, p in enumerate(m.parameters()):
            if i % 2 == 0:
                p.grad = s.lib.ones_like(p)
        m.get_submodule(target).zero_grad(set_to_none=set_to_none)
        return [None if p.grad is None else s.data(p.grad)[2:] for p in m.parameters()]
    return f"{target!r}.zero_grad({set_to_none})", call


def op_apply(rng, root, mods, params, bufs):
    target = pick(rng, mods)

    def call(s, m):
        seen = []
        out = m.get_submodule(target).apply(lambda x: seen.append(x))
        return [out, seen]
    return f"{target!r}.apply", call


def op_dtype(rng, root, mods, params, bufs):
    how = pick(rng, ["double", "float", "half", "to64", "to16", "type64", "to_int", "type_int", "share_memory"])

    def call(s, m):
        lib = s.lib
        out = {"double": m.double, "float": m.float, "half": m.half, "to64": lambda: m.to(lib.float64),
               "to16": lambda: m.to(dtype=lib.float16), "type64": lambda: m.type(lib.float64),
               "to_int": lambda: m.to(lib.int32), "type_int": lambda: m.type(lib.float32),
               "share_memory": m.share_memory}[how]()
        return [out, [(n, s.text(str(t.dtype))) for n, t in m.state_dict(keep_vars=True).items()],
                [type(p).__name__ for p in m.parameters()]]
    return how, call


DTYPE_CALLS = ("double", "float", "half", "to64", "to16", "type64", "to_int", "type_int", "share_memory")


def op_repr(rng, root, mods, params, bufs):
    target, which = pick(rng, mods), pick(rng, ["repr", "extra_repr", "dir", "str"])

    def call(s, m):
        sub = m.get_submodule(target)
        if which == "dir" and type(sub).__name__ in CONTAINERS:  # (KNOWN: their None entries)
            return None
        if which == "dir":
            members = set(sub._parameters) | set(sub._buffers) | set(sub._modules)
            return [k for k in dir(sub) if k in members]
        return {"repr": repr, "str": str, "extra_repr": lambda x: x.extra_repr()}[which](sub)
    return f"{which}({target!r})", call


def op_copy(rng, root, mods, params, bufs):
    def call(s, m):
        c = copy.deepcopy(m)
        names = [n for n, _ in c.named_parameters(remove_duplicate=False)]
        mine = {id(p) for p in m.parameters()}
        return [names, list(c.state_dict().items()), [id(p) in mine for p in c.parameters()],
                [n for n, _ in c.named_modules()], c == m, m == m, hash(m) == hash(m), c != m, type(c).__name__]
    return "deepcopy", call


def op_forward_hooks(rng, root, mods, params, bufs):
    """Forward hooks and pre-hooks (with_kwargs, prepend, always_call) on a fresh Linear, some removed."""
    plan = [(pick(rng, ["pre", "post"]), bool(rng.integers(2)), bool(rng.integers(2)), bool(rng.integers(2)),
             bool(rng.integers(3) == 0)) for _ in range(int(rng.integers(1, 5)))]
    bad_input = bool(rng.integers(4) == 0)

    def call(s, m):
        lin, log = s.nn.Linear(2, 2), []
        with s.lib.no_grad():
            lin.weight.copy_(s.tensor((2, 2), 5))
            lin.bias.copy_(s.tensor((2,), 6))
        handles = []
        for i, (kind, kwargs, prepend, always, remove) in enumerate(plan):
            def hook(*args, i=i, kind=kind):
                log.append((i, kind, len(args), [a is None for a in args[1:]]))
            if kind == "pre":
                h = lin.register_forward_pre_hook(hook, prepend=prepend, with_kwargs=kwargs)
            else:
                h = lin.register_forward_hook(hook, prepend=prepend, with_kwargs=kwargs, always_call=always)
            handles.append((h, remove))
        for h, remove in handles:
            if remove:
                h.remove()
        try:
            out = lin(s.tensor((3, 3 if bad_input else 2), 8))
        except Exception as e:  # (always_call hooks run before it propagates)
            out = e
        return [out, log]
    return f"forward hooks {plan} bad={bad_input}", call


def op_backward_hooks(rng, root, mods, params, bufs):
    """Full backward hooks and pre-hooks on a fresh Sequential and its layers: their order and gradients."""
    plan = [(int(rng.integers(3)), pick(rng, ["pre", "post"]), bool(rng.integers(2))) for _ in range(int(rng.integers(1, 5)))]

    def call(s, m):
        net, log = s.nn.Sequential(s.nn.Linear(2, 3), s.nn.Tanh(), s.nn.Linear(3, 1)), []
        for i, p in enumerate(net.parameters()):
            with s.lib.no_grad():
                p.copy_(s.tensor(tuple(p.shape), 20 + i))
        where = [net, net[0], net[2]]
        for i, (at, kind, prepend) in enumerate(plan):
            def hook(module, *grads, i=i, kind=kind):
                log.append((i, kind, type(module).__name__, [[g is None for g in gs] for gs in grads]))
            if kind == "pre":
                where[at].register_full_backward_pre_hook(hook, prepend=prepend)
            else:
                where[at].register_full_backward_hook(hook, prepend=prepend)
        x = s.tensor((4, 2), 9)
        x.requires_grad_(True)
        net(x).sum().backward()
        return [log, x.grad]
    return f"backward hooks {plan}", call


def op_state_hooks(rng, root, mods, params, bufs):
    """The state-dict hooks: pre, post (private form), load post; their calls and what they see."""
    target = pick(rng, mods)
    which = [bool(rng.integers(2)) for _ in range(3)]

    def call(s, m):
        sub, log = m.get_submodule(target), []
        if which[0]:
            sub.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))
        if which[1]:
            sub._register_state_dict_hook(lambda mod, sd, prefix, meta: log.append(("post", prefix, list(sd))))
        if which[2]:
            sub.register_load_state_dict_post_hook(lambda mod, keys: log.append(("load", list(keys.missing_keys))))
        sd = m.state_dict(prefix="r.")
        m.load_state_dict({k[2:]: v for k, v in sd.items()}, strict=False)
        return log
    return f"{target!r} state hooks {which}", call


OPS = [op_walk, op_walk, op_plain_walk, op_get, op_get, op_set_submodule, op_register, op_register, op_setattr,
       op_setattr, op_delattr, op_getattr, op_state_dict, op_load_state_dict, op_load_state_dict, op_modes,
       op_zero_grad, op_apply, op_dtype, op_repr, op_repr, op_copy, op_forward_hooks, op_backward_hooks,
       op_state_hooks]


def sync(t_root, m_root):
    """Give our tree the reference's values (both start from their own random layers; a failed
    load_state_dict leaves PyTorch's partly loaded and ours unchanged, see KNOWN)."""
    pairs = zip(list(t_root.named_parameters(remove_duplicate=False)) + list(t_root.named_buffers(remove_duplicate=False)),
                list(m_root.named_parameters(remove_duplicate=False)) + list(m_root.named_buffers(remove_duplicate=False)))
    with minigrad.no_grad():
        for (tn, t), (mn, m) in pairs:
            if tn == mn and tuple(t.shape) == tuple(m.shape):
                m.copy_(minigrad.tensor(t.detach().numpy()))


def torch_fault(want):
    """PyTorch's own fault, not a check (KNOWN: bn_count_module): BatchNorm's upgrade of a state dict with no
    version (load_state_dict's, a state hook's) reads `num_batches_tracked.device`, which fails where the fuzzer
    made num_batches_tracked a module."""
    return (isinstance(want, tuple) and want[:2] == ("error", "AttributeError")
            and want[2].endswith(" object has no attribute 'device'"))


def run_case(torch, seed):
    """Build seed's tree on both sides and run its calls; -> the first difference (or None)."""
    rng = fuzz_rng(seed)
    spec = make_spec(rng)
    theirs, ours = Side(torch, torch.nn), Side(minigrad, nn)
    t_root, m_root = theirs.build(spec), ours.build(spec)
    for step in range(STEPS):
        sync(t_root, m_root)
        mods, params, bufs = paths(t_root)
        label, call = pick(rng, OPS)(rng, t_root, mods, params, bufs)
        want, got = attempt(theirs, call, theirs, t_root), attempt(ours, call, ours, m_root)
        if torch_fault(want):
            return None
        if want != got:
            return dict(seed=seed, step=step, call=label, spec=spec, want=want, got=got)
        failed_load = label.startswith("load_state_dict") and want[0] == "error"
        if failed_load and "assign=True" in label:  # (KNOWN: PyTorch's half-assigned tree is another tree now)
            return None
        if failed_load or label in DTYPE_CALLS:  # (the KNOWN identity differences: number objects afresh)
            theirs.ids, ours.ids = {}, {}
    return None


def test_module_api_fuzz_matches_torch(torch):
    diffs = [d for d in (run_case(torch, seed) for seed in range(CASES)) if d is not None]
    assert not diffs, f"{len(diffs)} of {CASES} cases differ; the first: {diffs[0]}"


# ---- what the fuzzer found, one case each -------------------------------------------------------------------------
def outcome(fn, *args):
    """fn(*args)'s result, or its error as (type, text) in minigrad's words."""
    try:
        return fn(*args)
    except Exception as e:  # (the error itself is what is compared)
        text = str(e).replace("torch.nn.modules.", "nn.modules.").replace("torch.", "minigrad.")
        return type(e).__name__, text.replace("torch ", "minigrad ")


def both(torch, fn, *args):
    """fn(lib, nn, *args) on PyTorch and on minigrad: the two outcomes."""
    return [outcome(fn, lib, mod, *args) for lib, mod in ((torch, torch.nn), (minigrad, nn))]


def test_get_submodule_through_a_member_that_is_not_a_module(torch):
    def build(lib, mod):
        m = mod.Sequential(mod.Linear(1, 1))
        m.add_module("gone", None)
        return m
    for path in ("0.weight.x", "gone.x", "training", "0.bias", "nope.x"):
        for call in ("get_submodule", "get_parameter", "get_buffer"):
            want, got = both(torch, lambda lib, mod, c, p: type(getattr(build(lib, mod), c)(p)).__name__, call, path)
            assert want == got, (path, call)
    want, got = both(torch, lambda lib, mod: build(lib, mod).set_submodule("0.weight.x", mod.ReLU()))
    assert want == got


def test_add_module_checks_the_module_then_the_name(torch):
    for name, value in (("a.b", 3), ("", "tensor"), (3, None), ("forward", None), ("a.b", None), ("", None)):
        want, got = both(torch, lambda lib, mod, n, v: mod.Module().add_module(n, lib.ones(1) if v == "tensor" else v),
                         name, value)
        assert want is not None and want == got, (name, value)


def test_wrong_member_type_errors_name_the_object_class_with_its_module(torch):
    def assign(lib, mod):
        m = mod.Linear(1, 1)
        m.weight = mod.ReLU()
    want, got = both(torch, assign)
    assert want == got
    want, got = both(torch, lambda lib, mod: mod.Linear(1, 1).register_buffer("x", mod.ReLU()))
    assert want == got


def test_dir_leaves_out_names_that_start_with_a_digit(torch):
    want, got = both(torch, lambda lib, mod: [k for k in dir(mod.Sequential(mod.Linear(1, 1))) if k[0].isdigit()])
    assert want == got == []


def test_a_buffer_assigned_over_another_member_is_refused(torch):
    def assign(lib, mod, name):
        m = mod.Linear(1, 1)
        setattr(m, name, mod.Buffer(lib.ones(1)))
        return list(m.state_dict())
    for name in ("weight", "training", "in_features", "fresh"):
        want, got = both(torch, assign, name)
        assert want == got, name


def test_state_dict_prefix_is_taken_as_given(torch):
    want, got = both(torch, lambda lib, mod: list(mod.Linear(1, 1).state_dict(prefix="x")))
    assert want == got == ["xweight", "xbias"]


def test_load_state_dict_assign_makes_the_given_tensors_the_modules(torch):
    def load(lib, mod):
        m = mod.Sequential(mod.Linear(2, 1), mod.BatchNorm1d(1))
        m[0].weight.requires_grad_(False)
        state = {k: lib.zeros(v.shape, dtype=lib.float64) for k, v in m.state_dict().items()}
        state["1.num_batches_tracked"] = lib.tensor(3)
        result = m.load_state_dict(state, assign=True)
        kept = [m.get_parameter(k) is state[k] for k, _ in m.named_parameters()]
        kept += [m.get_buffer(k) is state[k] for k, _ in m.named_buffers()]
        return (repr(result), kept, [(n, str(t.dtype), type(t).__name__, t.requires_grad)
                                     for n, t in m.state_dict(keep_vars=True).items()])
    want, got = both(torch, load)
    assert want[0] == got[0] and want[1] == got[1]
    assert [(n, d.replace("torch.", "minigrad."), t, r) for n, d, t, r in want[2]] == got[2]


def test_parameter_containers_print_none_entries(torch):
    want, got = both(torch, lambda lib, mod: repr(mod.ParameterDict({"a": None, "b": lib.ones(2)})))
    assert want.replace("torch.", "minigrad.") == got
    want, got = both(torch, lambda lib, mod: repr(mod.ParameterList([None, lib.ones(2)])))
    assert want.replace("torch.", "minigrad.") == got


def test_batchnorm_without_running_stats_adds_no_count_to_a_loaded_dict(torch):
    def load(lib, mod):
        bn = mod.BatchNorm1d(2, track_running_stats=False)
        bn.num_batches_tracked = mod.Buffer(lib.tensor(1), persistent=False)
        return repr(bn.load_state_dict(dict(bn.state_dict()), strict=False))
    want, got = both(torch, load)
    assert want == got


# ---- known differences: deliberate, each kept out of the fuzzer (see above) -------------------------------------
KNOWN = {
    "load_state_dict checks every entry before it copies any: a failed load leaves the module as it was, "
    "where PyTorch's is left partly loaded (and, with assign=True, with ties it broke)": "failed_load",
    "to(dtype), double(), half(), type() convert buffers in place, keeping the Tensor objects, as they do parameters; "
    "PyTorch makes new buffer objects": "dtype_buffers",
    "ParameterList and ParameterDict read their entries from _parameters: one registered by register_parameter or "
    "setattr shows in them, where PyTorch's keep a count and a key table of their own; a None entry is a None "
    "parameter, where PyTorch's is a plain attribute (dir)": "containers",
    "PyTorch's RNN modules put a value that Module.__setattr__ then refuses in their _flat_weights, after which "
    "deepcopy fails (a PyTorch bug, not copied)": "rnn_setattr",
    "PyTorch's BatchNorm, loading a state dict with no version and no num_batches_tracked, reads that member's "
    "device: where it is a module, the load fails with an AttributeError (a PyTorch bug, not copied)": "bn_count_module",
}


@pytest.mark.xfail(strict=True, reason="KNOWN: failed_load")
def test_known_a_failed_load_leaves_pytorch_partly_loaded(torch):
    def load(lib, mod):
        m = mod.Sequential(mod.Linear(1, 1), mod.Linear(1, 2))
        state = {k: lib.zeros(v.shape) for k, v in m.state_dict().items()}
        state["1.weight"] = lib.zeros(5)
        outcome(lambda: m.load_state_dict(state))
        return float(m[0].weight.detach().sum())
    want, got = both(torch, load)
    assert want == got


@pytest.mark.xfail(strict=True, reason="KNOWN: dtype_buffers")
def test_known_dtype_conversion_keeps_buffer_objects(torch):
    def convert(lib, mod):
        bn = mod.BatchNorm1d(2)
        before = bn.running_mean
        return bn.double().running_mean is before
    want, got = both(torch, convert)
    assert want == got


@pytest.mark.xfail(strict=True, reason="KNOWN: containers")
def test_known_parameter_containers_list_generically_registered_entries(torch):
    def register(lib, mod):
        pd = mod.ParameterDict({"a": mod.Parameter(lib.ones(1))})
        pd.register_parameter("b", mod.Parameter(lib.ones(1)))
        return list(pd.keys())
    want, got = both(torch, register)
    assert want == got


@pytest.mark.xfail(strict=True, reason="KNOWN: bn_count_module")
def test_known_batchnorm_load_with_a_module_for_its_count(torch):
    def load(lib, mod):
        bn = mod.BatchNorm1d(3)
        bn.num_batches_tracked = mod.Linear(1, 1)  # (its state dict's keys: num_batches_tracked.weight, .bias)
        return repr(bn.load_state_dict(dict(bn.state_dict()), strict=False))
    want, got = both(torch, load)
    assert want == got
