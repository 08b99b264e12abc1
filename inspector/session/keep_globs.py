"""The cast dialog's "keep dtype of" globs, remembered per checkpoint: globs chosen for one model
are never silently applied to another file (a pattern kept for A could keep the wrong tensors
of B in their old dtype)."""

from __future__ import annotations

import json

from .recent import SettingsStore

MAX_REMEMBERED = 50


class KeepGlobs:
    KEY = "keep_by_checkpoint"

    def __init__(self, settings: SettingsStore) -> None:
        self.settings = settings

    def _table(self) -> dict[str, str]:
        raw = self.settings.value(self.KEY, "")
        try:
            table = json.loads(raw) if isinstance(raw, str) and raw else {}
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in table.items()} if isinstance(table, dict) else {}

    def get(self, checkpoint_path: str) -> str:
        return self._table().get(checkpoint_path, "")

    def set(self, checkpoint_path: str, globs: str) -> None:
        table = self._table()
        table.pop(checkpoint_path, None)
        if globs.strip():
            table[checkpoint_path] = globs
        while len(table) > MAX_REMEMBERED:
            table.pop(next(iter(table)))
        self.settings.setValue(self.KEY, json.dumps(table))
