"""The pickle opcodes that push one value decoded from their own argument: integers, floats,
Python 2 and 3 strings, bytes. Each only reads bytes through the machine (whose reads are bounded
by the buffer and its FRAME) and pushes what it decoded; see :mod:`.opcodes` for the table."""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

from .text_numbers import read_float, read_int, read_long
from .values import PickleError

if TYPE_CHECKING:
    from .machine_state import PickleState


def _int(m: PickleState) -> None:
    m._push(read_int(m._line()))


def _binint(m: PickleState) -> None:
    m._push(m._u("<i", 4))


def _binint1(m: PickleState) -> None:
    m._push(m._take(1)[0])


def _binint2(m: PickleState) -> None:
    m._push(m._u("<H", 2))


def _long(m: PickleState) -> None:
    m._push(read_long(m._line()))


def _long1(m: PickleState) -> None:
    m._push(int.from_bytes(m._take(m._take(1)[0]), "little", signed=True))


def _long4(m: PickleState) -> None:
    n = m._u("<i", 4)
    if n > 1 << 16:
        raise PickleError("holds an integer of more than 500,000 bits")
    m._push(int.from_bytes(m._take(n), "little", signed=True))


def _float(m: PickleState) -> None:
    m._push(read_float(m._line()))


def _binfloat(m: PickleState) -> None:
    m._push(m._u(">d", 8))


def _py2_text(raw: bytes) -> str:
    """A Python 2 string as torch.load reads it: ``encoding="utf-8"``, strict (its default in
    both weights_only modes); bytes that are not UTF-8 make torch.load fail."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PickleError(
            "holds a Python 2 string that is not UTF-8, which torch.load cannot decode"
        ) from None


def _string(m: PickleState) -> None:
    line = m._line()
    if len(line) < 2 or line[0] != line[-1] or line[:1] not in (b"'", b'"'):
        raise PickleError("STRING argument is not quoted (corrupt)")
    m._push(_py2_text(codecs.escape_decode(line[1:-1])[0]))


def _binstring(m: PickleState) -> None:
    m._push(_py2_text(m._take(m._u("<i", 4))))


def _short_binstring(m: PickleState) -> None:
    m._push(_py2_text(m._take(m._take(1)[0])))


def _unicode(m: PickleState) -> None:
    m._push(m._line().decode("raw-unicode-escape"))


def _binunicode(m: PickleState) -> None:
    m._push(m._take(m._u("<I", 4)).decode("utf-8", "surrogatepass"))


def _short_binunicode(m: PickleState) -> None:
    m._push(m._take(m._take(1)[0]).decode("utf-8", "surrogatepass"))


def _binunicode8(m: PickleState) -> None:
    m._push(m._take(m._u("<Q", 8)).decode("utf-8", "surrogatepass"))


def _binbytes(m: PickleState) -> None:
    m._push(bytes(m._take(m._u("<I", 4))))


def _short_binbytes(m: PickleState) -> None:
    m._push(bytes(m._take(m._take(1)[0])))


def _binbytes8(m: PickleState) -> None:
    m._push(bytes(m._take(m._u("<Q", 8))))


def _bytearray8(m: PickleState) -> None:
    m._push(bytearray(m._take(m._u("<Q", 8))))


def _out_of_band(m: PickleState) -> None:
    raise PickleError("uses out-of-band buffers, which a file cannot carry")
