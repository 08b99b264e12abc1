"""A Lightning-like checkpoint whose pickle names classes this tool does not know, saved by
``torch.save``: hyper-parameters in an omegaconf-like ``DictConfig`` (a fake ``omegaconf`` package
put in ``sys.modules`` at save time, pickled as the real one is: NEWOBJ + BUILD, nodes naming
their parent, ``typing.Any``, ``defaultdict(dict)``), an object of a class from a throwaway module
written to tmp_path, a tensor subclass and a tensor rebuilt by an unknown function.

The throwaway module touches ``CANARY`` when imported and when any of its code runs: a reader
that imports or calls anything of it leaves the canary behind. The modules are removed from
``sys.modules`` (and the folder from ``sys.path``) as soon as the file is written.
"""

from __future__ import annotations

import collections
import importlib
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path

MODULE = "lab_hparams"
FAKE_OMEGACONF = ("omegaconf", "omegaconf.base", "omegaconf.dictconfig", "omegaconf.nodes")

# what the file imports outside the allowlist, in the order the pickle names them
UNKNOWN = [
    f"{MODULE}.Scaled",
    f"{MODULE}.rebuild_packed",
    "omegaconf.dictconfig.DictConfig",
    "omegaconf.base.ContainerMetadata",
    "typing.Any",
    "__builtin__.dict",
    "collections.defaultdict",
    "omegaconf.nodes.AnyNode",
    "omegaconf.base.Metadata",
    f"{MODULE}.Settings",
    f"{MODULE}.AttrDict",
]
UNREAD = {
    "state_dict.head.scaled": f"{MODULE}.Scaled",
    "state_dict.head.packed": f"{MODULE}.rebuild_packed",
}

_SOURCE = '''
import torch

def _touch(what):
    with open({canary!r}, "a") as f:
        f.write(what + "\\n")

_touch("imported")

class Settings:
    """Plain attributes, pickled by NEWOBJ + BUILD (its __setstate__ would run on load)."""

    def __init__(self, lr, scale):
        self.lr, self.scale = lr, scale

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        _touch("setstate")
        self.__dict__.update(state)

class AttrDict(dict):
    """A dict subclass (Lightning's AttributeDict): NEWOBJ, then its items by SETITEMS."""

class Scaled(torch.Tensor):
    """A tensor subclass: torch rebuilds it by _rebuild_from_type_v2 with this class."""

def rebuild_packed(storage, n):
    _touch("rebuild_packed")
    return torch.tensor([], dtype=torch.float32).set_(storage, 0, (n,), (1,))

class Packed:
    """Rebuilt by this module's own function, from a torch storage."""

    def __init__(self, t):
        self.t = t

    def __reduce__(self):  # a typed storage: the legacy layout holds no untyped one
        typed = torch.storage.TypedStorage(
            wrap_storage=self.t.untyped_storage(), dtype=self.t.dtype, _internal=True
        )
        return (rebuild_packed, (typed, self.t.numel()))
'''


@dataclass
class Made:
    path: Path
    canary: Path
    state_dict: dict  # name -> the torch tensor saved
    settings_scale: object  # the tensor inside the throwaway object's attributes
    hparams_mask: object  # the tensor among the items of the throwaway dict subclass


def _fake_omegaconf() -> dict[str, types.ModuleType]:
    mods = {name: types.ModuleType(name) for name in FAKE_OMEGACONF}

    def cls(module: str, name: str, body: dict) -> type:
        made = type(name, (), {**body, "__module__": module, "__qualname__": name})
        setattr(mods[module], name, made)
        return made

    metadata_init = {
        "__init__": lambda self, **kw: self.__dict__.update(kw),
        "__getstate__": lambda self: dict(self.__dict__),
    }
    container_metadata = cls("omegaconf.base", "ContainerMetadata", metadata_init)
    metadata = cls("omegaconf.base", "Metadata", metadata_init)
    any_node = cls("omegaconf.nodes", "AnyNode", {"__getstate__": lambda self: self.__dict__})

    def dict_config_init(self, content: dict) -> None:
        self.__dict__["_metadata"] = container_metadata(
            ref_type=typing.Any,
            object_type=dict,
            optional=True,
            key=None,
            flags={"allow_objects": True},
            resolver_cache=collections.defaultdict(dict),
            key_type=typing.Any,
            element_type=typing.Any,
        )
        self.__dict__["_parent"] = None
        nodes = {}
        for key, value in content.items():
            node = any_node()
            node.__dict__.update(
                _metadata=metadata(ref_type=typing.Any, key=key, optional=True),
                _parent=self,  # a node names its container: a cycle through placeholders
                _val=value,
            )
            nodes[key] = node
        self.__dict__["_content"] = nodes

    cls(
        "omegaconf.dictconfig",
        "DictConfig",
        {"__init__": dict_config_init, "__getstate__": lambda self: dict(self.__dict__)},
    )
    return mods


def make_checkpoint(folder: Path, legacy: bool = False) -> Made:
    """Write ``folder/model.ckpt`` (and the throwaway module beside it); nothing of either stays
    importable afterwards."""
    import torch

    canary = folder / "CANARY"
    module_dir = folder / "throwaway"
    module_dir.mkdir()
    (module_dir / f"{MODULE}.py").write_text(_SOURCE.format(canary=str(canary)))
    fakes = _fake_omegaconf()
    sys.path.insert(0, str(module_dir))
    sys.modules.update(fakes)
    try:
        lab = importlib.import_module(MODULE)
        gen = torch.Generator().manual_seed(29)
        w = torch.randn(4, 6, generator=gen)
        state_dict = collections.OrderedDict(
            [
                ("encoder.weight", w),
                ("encoder.weight_t", w.t()),  # a strided view of the same storage
                ("encoder.bias", torch.randn(6, generator=gen).to(torch.bfloat16)),
                ("head.weight", torch.randn(3, 4, generator=gen).to(torch.float16)),
                ("head.steps", torch.arange(5, dtype=torch.int64) * (2**40)),
                ("head.scaled", torch.ones(2).as_subclass(lab.Scaled)),
                ("head.packed", lab.Packed(torch.full((3,), 7.0))),
            ]
        )
        scale = torch.linspace(0, 1, 5, dtype=torch.float64)
        mask = torch.tensor([True, False, True])
        hparams = fakes["omegaconf.dictconfig"].DictConfig(
            {"lr": 3e-4, "layers": 4, "activation": "leaky"}
        )
        torch.save(
            {
                "state_dict": state_dict,
                "hyper_parameters": hparams,
                "settings": lab.Settings(lr=0.1, scale=scale),
                "hparams": lab.AttrDict(lr=0.1, mask=mask),
                "epoch": 3,
                "optimizer_states": [{"state": {}, "param_groups": [{"lr": 3e-4}]}],
                "pytorch-lightning_version": "2.1.3",
            },
            folder / "model.ckpt",
            _use_new_zipfile_serialization=not legacy,
        )
    finally:
        sys.path.remove(str(module_dir))
        sys.modules.pop(MODULE, None)
        for name in FAKE_OMEGACONF:
            sys.modules.pop(name, None)
    canary.unlink()  # importing it at save time touched it
    readable = {k: v for k, v in state_dict.items() if k not in ("head.scaled", "head.packed")}
    return Made(folder / "model.ckpt", canary, readable, scale, mask)
