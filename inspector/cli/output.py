"""What the CLI writes to a terminal: names from a file can never forge a line or a colour.

Tensor names, metadata and paths come from files a person may not trust. In human-readable
output every control character (newline, ESC of an ANSI sequence, bidi overrides that reorder
what a terminal shows) is written as a visible escape; JSON output stays exact.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO

# C0/C1 controls, DEL, line/paragraph separators, and the bidi embedding/override/isolate marks
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c) or (
        f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
    )


def printable(text: object) -> str:
    """``text`` with every character that could alter the terminal shown as an escape."""
    s = str(text)
    return _UNSAFE.sub(_escape, s) if _UNSAFE.search(s) else s


def clip(text: str, limit: int = 80) -> str:
    """At most ``limit`` characters, middle elided: a 1 MB tensor name is not a 1 MB line."""
    if len(text) <= limit:
        return text
    keep = limit - 3
    return text[: keep - keep // 2] + "..." + text[len(text) - keep // 2 :]


def counted(n: int, noun: str) -> str:
    """``1 weight``, ``2 weights``, ``0 weights``: a count with its noun in the right number (the
    nouns the command line counts take an s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def symbol(fancy: str, plain: str) -> str:
    """``fancy`` where stdout's encoding can show it (``≠``), else ``plain`` (a latin-1 pipe)."""
    try:
        fancy.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return plain
    return fancy


def out(line: str) -> None:
    """One line of human-readable output (the caller passed file-supplied text through printable)."""
    sys.stdout.write(line + "\n")


def notices(ckpt, training: bool = True) -> None:
    """What an opened checkpoint asks a person to know (a save journal left in its folder):
    on stderr, so that stdout stays the listing, as JSON or text."""
    from ..core.unknown_objects import unknown_notices

    for text in [*ckpt.notices, *unknown_notices(ckpt)]:
        sys.stderr.write(f"checkpoint-inspector: note: {printable(ckpt.path)}: {printable(text)}\n")
    if training and ckpt.training is not None:
        line = ckpt.training.line(len(ckpt)) + "; --keep-all shows everything"
        sys.stderr.write(f"checkpoint-inspector: note: {printable(ckpt.path)}: {line}\n")


class StdoutError(OSError):
    """A write to standard output failed (a full disk, a closed descriptor): only this error
    is reported as stdout's, never another OSError that happens to carry no file name."""


class _TaggedStdout:
    """``sys.stdout`` whose failed writes raise :class:`StdoutError` (a closed pipe stays a
    ``BrokenPipeError``: the reader left, which is not an error)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise StdoutError(e.errno, e.strerror) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise StdoutError(e.errno, e.strerror) from None

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


@contextlib.contextmanager
def stdout_errors_tagged() -> Iterator[None]:
    """While the block runs, a failed write to stdout raises :class:`StdoutError`."""
    real = sys.stdout
    sys.stdout = _TaggedStdout(real)  # type: ignore[assignment]
    try:
        yield
    finally:
        if isinstance(sys.stdout, _TaggedStdout):  # not replaced meanwhile (silenced)
            sys.stdout = real


def make_streams_safe() -> None:
    """Never die of an encoding: a name a latin-1 terminal cannot show is written escaped."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def progress_printer(label: str):
    """A one-line progress meter on stderr when it is a terminal; silent otherwise."""
    if not sys.stderr.isatty():
        return None
    from ..core.wording import format_bytes

    def show(p) -> None:
        sys.stderr.write(
            f"\r{label} {p.fraction * 100:5.1f}%  {format_bytes(p.done)} / {format_bytes(p.total)}\033[K"
        )
        if p.done >= p.total:
            sys.stderr.write("\r\033[K")
        sys.stderr.flush()

    return show


def write_json_rows(rows: Iterable[dict[str, object]], extra: dict[str, object]) -> None:
    from ..core.json_output import rows_document

    sys.stdout.write(rows_document(rows, extra))
