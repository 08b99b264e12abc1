"""The table model, its sort and its filter, tested without any view."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.core.dtypes import DTYPES
from inspector.core.natural_order import natural_key
from inspector.core.opening import open_checkpoint
from inspector.gui.tensor_columns import Col, StatusRole
from inspector.gui.tensor_filter import TensorFilter
from inspector.gui.tensor_table import TensorTableModel

from .conftest import BF16_NAMES, F64_NAMES, INT_NAMES

DISPLAY = Qt.ItemDataRole.DisplayRole
BG = Qt.ItemDataRole.BackgroundRole


def _model(path, target="F32"):
    ckpt = open_checkpoint(path)
    m = TensorTableModel()
    m.set_rows(ckpt.tensors, DTYPES[target])
    return ckpt, m


def _row(m, name):
    r = m.row_of(name)
    assert r >= 0
    return r


def test_model_passes_qabstractitemmodeltester(qtmodeltester, model_file):
    m = TensorTableModel()
    qtmodeltester.check(m)
    ckpt = open_checkpoint(model_file)
    m.set_rows(ckpt.tensors, DTYPES["F32"])
    qtmodeltester.check(m)
    m.set_target(DTYPES["BF16"])
    m.sort(Col.NAME, Qt.SortOrder.DescendingOrder)
    qtmodeltester.check(m)


def test_filtered_model_passes_qabstractitemmodeltester(qtmodeltester, model_file):
    _, m = _model(model_file)
    m.set_filter(TensorFilter("layer.1"))
    qtmodeltester.check(m)
    m.sort(Col.SIZE, Qt.SortOrder.DescendingOrder)
    m.set_filter(TensorFilter("", only_differing=True))
    m.set_target(DTYPES["BF16"])  # "only differing" follows the target
    qtmodeltester.check(m)


def test_rows_columns_and_values(model_file):
    ckpt, m = _model(model_file)
    assert m.rowCount() == len(ckpt.tensors) == 21
    assert m.columnCount() == len(Col)
    r = _row(m, "embeddings.word_embeddings.weight")
    assert m.index(r, Col.DTYPE).data(DISPLAY) == "F32"
    assert m.index(r, Col.SHAPE).data(DISPLAY) == "[100, 16]"
    assert m.index(r, Col.PARAMS).data(DISPLAY) == "1,600"
    assert m.index(r, Col.SIZE).data(DISPLAY) == "6.2 KiB"
    assert m.index(r, Col.STATUS).data(DISPLAY) == ""  # icon only
    assert m.headerData(Col.STATUS, Qt.Orientation.Horizontal, DISPLAY) == "Status"


def test_status_text_icon_and_colour_for_differing_rows(qapp, model_file):
    _, m = _model(model_file)
    for name in F64_NAMES:
        r = _row(m, name)
        assert m.index(r, Col.STATUS).data(DISPLAY) == "F64 → F32"
        assert m.index(r, Col.STATUS).data(StatusRole) == "differs"
        # not colour alone: text plus an icon, and the colour on every cell of the row
        assert not m.index(r, Col.STATUS).data(Qt.ItemDataRole.DecorationRole).isNull()
        assert m.index(r, Col.NAME).data(BG) is not None
    r = _row(m, INT_NAMES[0])
    assert m.index(r, Col.STATUS).data(DISPLAY) == "not a float"
    assert m.index(r, Col.NAME).data(BG) is None
    r = _row(m, "embeddings.LayerNorm.bias")
    assert m.index(r, Col.NAME).data(BG) is None


def test_target_change_moves_the_highlight(qtbot, model_file):
    _, m = _model(model_file)
    differing = lambda: {  # noqa: E731
        m.tensor_at(r).name for r in range(m.rowCount()) if m.index(r, 0).data(BG) is not None
    }
    assert differing() == set(F64_NAMES + BF16_NAMES)
    with qtbot.waitSignal(m.dataChanged):
        m.set_target(DTYPES["F64"])
    assert m.index(_row(m, F64_NAMES[0]), Col.STATUS).data(DISPLAY) == ""
    assert len(differing()) == 21 - len(F64_NAMES) - len(INT_NAMES)
    assert m.index(_row(m, INT_NAMES[0]), Col.STATUS).data(DISPLAY) == "not a float"


def test_sort_every_column_both_ways(model_file):
    _, m = _model(model_file)
    for col in Col:
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            m.sort(col, order)
            assert sorted(m.tensor_at(r).name for r in range(m.rowCount())) == sorted(
                t.name for t in m.tensors
            )
    m.sort(Col.PARAMS, Qt.SortOrder.DescendingOrder)
    numels = [m.tensor_at(r).numel for r in range(m.rowCount())]
    assert numels == sorted(numels, reverse=True)
    m.sort(Col.STATUS, Qt.SortOrder.AscendingOrder)
    first = {m.tensor_at(r).name for r in range(5)}
    assert first == set(F64_NAMES + BF16_NAMES)
    m.sort(Col.NAME, Qt.SortOrder.AscendingOrder)
    names = [m.tensor_at(r).name for r in range(m.rowCount())]
    assert names == sorted(names, key=natural_key)
    m.sort(-1)
    assert [m.tensor_at(r).name for r in range(m.rowCount())] == [t.name for t in m.tensors]


def test_status_order_is_status_then_natural_name_both_ways_and_for_each_target(model_file):
    """The status column regroups the kept name order by status instead of sorting
    "rank + name" strings: the same order, ascending and descending, after target changes."""
    from inspector.core.natural_order import status_rank
    from inspector.core.summary import tensor_status

    ckpt, m = _model(model_file)
    for target in ("F32", "BF16", "F64", "I64", "F32"):
        m.set_target(DTYPES[target])
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            m.sort(Col.STATUS, order)
            shown = [m.tensor_at(r).name for r in range(m.rowCount())]
            expected = sorted(
                ckpt.tensors,
                key=lambda t: (status_rank(tensor_status(t, DTYPES[target])), natural_key(t.name)),
                reverse=order == Qt.SortOrder.DescendingOrder,
            )
            assert shown == [t.name for t in expected], (target, order)


def test_natural_name_order():
    names = ["layer.10.w", "layer.2.w", "layer.1.w"]
    assert sorted(names, key=natural_key) == ["layer.1.w", "layer.2.w", "layer.10.w"]


def _shown(m):
    return [m.index(r, 0).data(DISPLAY) for r in range(m.rowCount())]


def test_filter_names_and_only_differing(model_file):
    _, m = _model(model_file)
    assert m.rowCount() == 21
    # several words: any of them (a person typing "embed lm_head" wants both), case-insensitive
    m.set_filter(TensorFilter("CLASSIFIER rotary"))
    assert set(_shown(m)) == {"classifier.weight", "classifier.bias", "encoder.rotary.inv_freq"}
    m.set_filter(TensorFilter("nothing-like-this"))
    assert m.rowCount() == 0
    m.set_filter(TensorFilter("*.bias"))
    assert _shown(m) and all(n.endswith(".bias") for n in _shown(m))
    m.set_filter(TensorFilter("", only_differing=True))
    assert set(_shown(m)) == set(F64_NAMES + BF16_NAMES)
    m.set_target(DTYPES["BF16"])  # the rows follow the new target by themselves
    shown = _shown(m)
    assert len(shown) == 21 - len(INT_NAMES) - len(BF16_NAMES)
    assert set(F64_NAMES) <= set(shown) and not set(BF16_NAMES) & set(shown)
    # sorting keeps the filter
    m.sort(Col.NAME, Qt.SortOrder.DescendingOrder)
    assert _shown(m) == sorted(shown, key=natural_key, reverse=True)
    assert m.row_of(BF16_NAMES[0]) == -1 and m.has_tensor(BF16_NAMES[0])
    m.set_filter(TensorFilter())
    assert m.rowCount() == 21 and m.row_of(BF16_NAMES[0]) >= 0


def test_set_rows_resets_and_keeps_filter(model_file, f32_file):
    _, m = _model(model_file)
    m.set_filter(TensorFilter("", only_differing=True))
    assert m.rowCount() == 5
    ckpt = open_checkpoint(f32_file)
    m.set_rows(ckpt.tensors)
    assert m.rowCount() == 0
    assert len(m.tensors) == len(ckpt.tensors)


def test_the_current_row_follows_its_tensor_through_sort_and_filter(qapp, model_file):
    """The selection is kept by tensor, not by row number: a filter that hides it leaves no
    current row (the page then picks a shown one), a filter that keeps it moves it."""
    from PySide6.QtCore import QItemSelectionModel

    _, m = _model(model_file)
    sel = QItemSelectionModel(m)
    name = "classifier.weight"
    sel.setCurrentIndex(m.index(m.row_of(name), 0), QItemSelectionModel.SelectionFlag.Current)
    m.sort(Col.SIZE, Qt.SortOrder.DescendingOrder)
    assert sel.currentIndex().data(DISPLAY) == name
    m.set_filter(TensorFilter("classifier"))
    assert sel.currentIndex().data(DISPLAY) == name and m.rowCount() == 2
    m.set_filter(TensorFilter("embeddings"))
    assert not sel.currentIndex().isValid()


def test_marking_intended_rows_does_not_sort_again(model_file, monkeypatch):
    """The "F32 on purpose?" marks change the status text, never the order: a second sort of
    200k rows cost 0.4 s of the window's first paint when they did."""
    from inspector.core.model_folder.intended import FP32_NORMS, IntendedMatcher

    with open_checkpoint(model_file) as ckpt:
        model = TensorTableModel()
        model.set_rows(ckpt.tensors, DTYPES["BF16"])
        model.sort(Col.STATUS, Qt.SortOrder.AscendingOrder)
        order = [model.tensor_at(r).name for r in range(model.rowCount())]
        sorts = []
        monkeypatch.setattr(model, "_sorted_order", lambda *a: sorts.append(a) or [])
        model.set_intended(IntendedMatcher(FP32_NORMS))
        assert sorts == []
        assert [model.tensor_at(r).name for r in range(model.rowCount())] == order
        marked = [
            model.tensor_at(r).name
            for r in range(model.rowCount())
            if model.data(model.index(r, Col.STATUS)) == "on purpose?"
        ]
        assert marked and all("norm" in n.lower() for n in marked)


def test_name_keys_are_built_once_for_every_sort(model_file, monkeypatch):
    """The natural keys of 200k names take 0.2 s: the status sort, the name sort and each change
    of target share one list instead of building it again."""
    import inspector.gui.row_sorter as row_sorter
    from inspector.core import natural_order

    built = []

    def counting(names):
        built.append(1)
        return natural_order.natural_keys(names)

    monkeypatch.setattr(row_sorter, "natural_keys", counting)
    ckpt, m = _model(model_file)
    m.sort(Col.STATUS, Qt.SortOrder.AscendingOrder)
    m.set_target(DTYPES["BF16"])
    m.sort(Col.NAME, Qt.SortOrder.AscendingOrder)
    names = [m.tensor_at(r).name for r in range(m.rowCount())]
    assert names == sorted((t.name for t in ckpt.tensors), key=natural_key)
    m.sort(Col.STATUS, Qt.SortOrder.DescendingOrder)
    assert len(built) == 1
    m.set_rows(ckpt.tensors, DTYPES["F32"])  # new rows: new keys
    m.sort(Col.NAME, Qt.SortOrder.AscendingOrder)
    assert len(built) == 2


def test_the_name_column_fit_is_announced_so_the_rows_repaint(qtbot, loaded):
    """fit_name_column set the width with the header's signals blocked: the view never heard
    of it, and after a window resize the rows kept the old column layout until a click."""
    from inspector.gui.tensor_columns import Col

    hh = loaded.table.horizontalHeader()
    seen = []
    hh.sectionResized.connect(lambda i, _old, new: seen.append((i, new)))
    loaded.resize(900, 700)
    qtbot.waitUntil(lambda: any(i == Col.NAME for i, _ in seen), timeout=5_000)
    assert seen[-1] == (Col.NAME, hh.sectionSize(Col.NAME))
