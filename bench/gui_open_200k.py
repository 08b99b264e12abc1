"""How long until a 200k-tensor checkpoint shows in the window's table (target: < 1 s).

Writes a header-heavy file (200,000 tiny tensors, every 50th F64) to a temp folder, then times:
  open   open_checkpoint + grouping by dtype (the window runs both on a worker thread)
  table  set_checkpoint: model rows + summary + first selection, up to the first paint
  sort   clicking the Name / Size / Status headers (natural name order, numeric size)
  filter typing a name filter, and the "only differing" toggle

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/gui_open_200k.py [N]
"""

from __future__ import annotations

import json
import os
import struct
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def write_header_only(path: str, n: int) -> None:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    off = 0
    for i in range(n):
        dt, size = ("F64", 8) if i % 50 == 0 else ("F32", 4)
        name = f"model.encoder.layer.{i // 10}.block.{['q', 'k', 'v', 'o', 'w1', 'w2', 'w3', 'n1', 'n2', 'b'][i % 10]}.weight"
        header[name] = {"dtype": dt, "shape": [1], "data_offsets": [off, off + size]}
        off += size
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        f.write(b"\0" * off)


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    from PySide6.QtCore import QCoreApplication, QSettings, Qt

    from inspector.gui.app import ensure_app
    from inspector.gui.controller import open_and_index
    from inspector.gui.main_window import MainWindow
    from inspector.gui.tensor_columns import Col

    app = ensure_app()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big-header.safetensors")
        write_header_only(path, n)
        settings = QSettings(os.path.join(tmp, "s.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, target="F32")
        win.resize(1280, 800)
        win.show()
        QCoreApplication.processEvents()

        t0 = time.perf_counter()
        # what the window runs on its worker thread
        ckpt, groups, _identities, _config = open_and_index(path)
        t_open = time.perf_counter() - t0

        t0 = time.perf_counter()
        win.set_checkpoint(ckpt, path, groups)  # config: None for this file
        win.table.viewport().repaint()  # the first paint of the visible rows
        QCoreApplication.processEvents()
        t_table = time.perf_counter() - t0
        assert win.model.rowCount() == n, win.model.rowCount()

        timings: list[tuple[str, float]] = []

        def timed(label: str, fn) -> None:
            t = time.perf_counter()
            fn()
            win.table.viewport().repaint()
            QCoreApplication.processEvents()
            timings.append((label, time.perf_counter() - t))

        hh = win.table.horizontalHeader()
        timed("sort by name", lambda: hh.setSortIndicator(Col.NAME, Qt.SortOrder.AscendingOrder))
        timed("sort by size ↓", lambda: hh.setSortIndicator(Col.SIZE, Qt.SortOrder.DescendingOrder))
        timed(
            "sort by status", lambda: hh.setSortIndicator(Col.STATUS, Qt.SortOrder.AscendingOrder)
        )
        timed(
            "filter 'layer.1'",
            lambda: (win.filter_edit.setText("layer.1"), win.tensor_page.apply_filter()),
        )
        timed("clear filter", lambda: (win.filter_edit.clear(), win.tensor_page.apply_filter()))
        timed("only differing on", lambda: win.only_differing.setChecked(True))
        timed("target → F64", lambda: win.target_box.setCurrentText("F64"))
        timed("only differing off", lambda: win.only_differing.setChecked(False))
        timed("scroll to end", lambda: win.table.scrollToBottom())
        timed("module tree shown", lambda: win.tree_action.setChecked(True))
        timed(
            "expand model.encoder.layer",
            lambda: win.module_tree.find_prefix("model.encoder.layer."),
        )
        timed("click layer.7", lambda: win.tensor_page.filter_prefix("model.encoder.layer.7."))

        print(f"{n:,} tensors ({os.path.getsize(path) / 2**20:.1f} MiB header file)")
        print(f"  open + index (worker thread)            {t_open * 1000:8.0f} ms")
        print(f"  table shown (model+summary+paint)       {t_table * 1000:8.0f} ms")
        print(f"  total until the table is on screen      {(t_open + t_table) * 1000:8.0f} ms")
        for label, t in timings:
            print(f"  {label:<39} {t * 1000:8.0f} ms")
        win.close()
    app.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
