"""Write torch checkpoints byte by byte (no torch needed): a protocol-2 pickle assembler for the
objects torch.save writes (globals, calls, BUILD, persistent ids, shared objects) and the zip and
legacy layouts around it. Tests use it for files torch.save cannot produce."""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class G:
    """A global, ``module.name``."""

    module: str
    name: str


@dataclass(eq=False)
class R:
    """``func(*args)`` by REDUCE; memoized, so the same R written twice is one object."""

    func: Any
    args: tuple


@dataclass(eq=False)
class N:
    """``cls.__new__(cls, *args)`` by NEWOBJ; memoized."""

    cls: Any
    args: tuple


@dataclass(eq=False)
class B:
    """``obj`` then BUILD with ``state`` (obj is memoized before its state, as pickle does)."""

    obj: Any
    state: Any


@dataclass(eq=False)
class P:
    """A persistent id (BINPERSID)."""

    pid: Any


@dataclass(eq=False)
class Raw:
    """Opcodes written as given (a Python 2 string, say)."""

    data: bytes


@dataclass
class _Writer:
    out: bytearray = field(default_factory=lambda: bytearray(b"\x80\x02"))
    memo: dict[int, int] = field(default_factory=dict)

    def put(self, obj: Any) -> None:
        self.memo[id(obj)] = n = len(self.memo)
        self.out += b"r" + struct.pack("<I", n)

    def write(self, obj: Any) -> None:
        if id(obj) in self.memo:
            self.out += b"j" + struct.pack("<I", self.memo[id(obj)])
            return
        if isinstance(obj, G):
            self.out += f"c{obj.module}\n{obj.name}\n".encode()
            return
        if isinstance(obj, Raw):
            self.out += obj.data
            return
        if isinstance(obj, R):
            self.write(obj.func)
            self.write(tuple(obj.args))
            self.out += b"R"
            self.put(obj)
            return
        if isinstance(obj, N):
            self.write(obj.cls)
            self.write(tuple(obj.args))
            self.out += b"\x81"
            self.put(obj)
            return
        if isinstance(obj, B):
            self.write(obj.obj)
            self.write(obj.state)
            self.out += b"b"
            return
        if isinstance(obj, P):
            self.write(obj.pid)
            self.out += b"Q"
            return
        if isinstance(obj, tuple):
            self.out += b"("
            for x in obj:
                self.write(x)
            self.out += b"t"
            return
        if isinstance(obj, list):
            self.out += b"]"
            self.put(obj)
            for x in obj:
                self.write(x)
                self.out += b"a"
            return
        if isinstance(obj, dict):
            self.out += b"}"
            self.put(obj)
            for k, v in obj.items():
                self.write(k)
                self.write(v)
                self.out += b"s"
            return
        self.out += pickle.dumps(obj, protocol=2)[2:-1]  # None, bool, int, float, str


def dumps(obj: Any) -> bytes:
    w = _Writer()
    w.write(obj)
    return bytes(w.out + b".")


# -- torch's objects ----------------------------------------------------------------------
def storage(cls: str, key: str, numel: int, *view: Any) -> P:
    """``('storage', torch.<cls>, key, 'cpu', numel)``; a legacy view adds a sixth item."""
    return P(("storage", G("torch", cls), key, "cpu", numel, *view))


def v2(stor: Any, offset: int, shape: tuple, stride: tuple, *extra: Any) -> R:
    """``torch._utils._rebuild_tensor_v2(storage, offset, shape, stride, False, OrderedDict())``."""
    hooks = R(G("collections", "OrderedDict"), ())
    return R(
        G("torch._utils", "_rebuild_tensor_v2"), (stor, offset, shape, stride, False, hooks, *extra)
    )


def utils(name: str, *args: Any) -> R:
    return R(G("torch._utils", name), args)


def zip_file(pkl: bytes, storages: dict[str, bytes]) -> bytes:
    """A torch zip: ``archive/data.pkl`` and one stored member per storage."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", pkl)
        zf.writestr("archive/byteorder", b"little")
        for key, data in storages.items():
            zf.writestr(f"archive/data/{key}", data)
        zf.writestr("archive/version", b"3\n")
    return out.getvalue()


LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
SYS_INFO = {
    "protocol_version": 1001,
    "little_endian": True,
    "type_sizes": {"short": 2, "int": 4, "long": 4},
}


def legacy_file(pkl: bytes, storages: dict[str, tuple[int, bytes]]) -> bytes:
    """torch's legacy layout: magic, protocol, system info, the object, the keys, then per key
    its element count and bytes (``storages``: key -> (element count, bytes), in key order)."""
    head = b"".join(pickle.dumps(v, protocol=2) for v in (LEGACY_MAGIC, 1001, SYS_INFO))
    body = b"".join(struct.pack("<q", n) + data for n, data in storages.values())
    return head + pkl + pickle.dumps(list(storages), protocol=2) + body
