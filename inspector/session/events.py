"""Plain-Python change events: the session announces, views subscribe (napari's EventedModel idea,
without Qt, so the session and its tests run where Qt cannot even be imported)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Event:
    """A list of callbacks called in order with the emitted arguments."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._callbacks: list[Callable[..., Any]] = []

    def connect(self, callback: Callable[..., Any]) -> Callable[..., Any]:
        self._callbacks.append(callback)
        return callback

    def disconnect(self, callback: Callable[..., Any]) -> None:
        self._callbacks.remove(callback)

    def emit(self, *args: Any) -> None:
        for cb in list(self._callbacks):
            cb(*args)

    def __repr__(self) -> str:
        return f"Event({self.name!r}, {len(self._callbacks)} callbacks)"


class SessionEvents:
    """Every change a view may need to redraw for. Payloads are the new values."""

    def __init__(self) -> None:
        self.checkpoint_changed = Event("checkpoint_changed")  # (Checkpoint | None, path)
        self.target_changed = Event("target_changed")  # (DType)
        self.reference_changed = Event("reference_changed")  # (Checkpoint | None)
        self.diffs_changed = Event("diffs_changed")  # (list[TensorDiff] | None)
        self.cast_changed = Event("cast_changed")  # (CastResult | None)
        self.preview_changed = Event("preview_changed")  # (QuantizePreview | None)
        self.selection_changed = Event("selection_changed")  # (TensorInfo | None)
