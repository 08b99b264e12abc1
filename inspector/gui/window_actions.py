"""The window's actions, menus and toolbar, gathered in one class (spyder's action-ID habit).

Actions only describe themselves here; the window connects them to what they do.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QLabel, QMainWindow, QMenu, QToolBar

from inspector.core.dtypes import CAST_TARGETS, DType
from inspector.core.target_rule import TargetSource
from inspector.gui.i18n import translate


class WindowActions:
    def __init__(self, win: QMainWindow) -> None:
        style = win.style()
        sp = style.StandardPixmap
        self.open = QAction(
            style.standardIcon(sp.SP_DialogOpenButton), translate("Actions", "&Open…"), win
        )
        self.open.setShortcut(QKeySequence.StandardKey.Open)
        self.open.setToolTip(
            translate("Actions", "Open a .safetensors file, index.json or model folder (Ctrl+O)")
        )
        self.open_folder = QAction(translate("Actions", "Open &Folder…"), win)
        self.cast = QAction(
            style.standardIcon(sp.SP_DialogSaveButton), translate("Actions", "&Cast && Save…"), win
        )
        self.cast.setShortcut(QKeySequence.StandardKey.Save)
        self.cast.setToolTip(
            translate("Actions", "Cast float tensors to the target dtype and save (Ctrl+S)")
        )
        self.quantize = QAction(translate("Actions", "&Quantize…"), win)
        self.quantize.setShortcut(QKeySequence("Ctrl+Shift+Q"))
        self.quantize.setToolTip(
            translate(
                "Actions",
                "Measure what FP8, INT8, INT4, NVFP4 and MXFP4 would cost, then save one "
                "(Ctrl+Shift+Q)",
            )
        )
        self.compare = QAction(
            style.standardIcon(sp.SP_FileDialogContentsView),
            translate("Actions", "Compare with &Reference…"),
            win,
        )
        self.compare.setShortcut(QKeySequence("Ctrl+Shift+O"))
        self.compare.setToolTip(
            translate(
                "Actions",
                "Open a second checkpoint as reference and show per-tensor max |Δ| "
                "(or Shift+drop it onto the window)",
            )
        )
        self.clear_reference = QAction(translate("Actions", "Clear Reference"), win)
        self.export_table = QAction(translate("Actions", "&Export Table…"), win)
        self.export_table.setShortcut(QKeySequence("Ctrl+E"))
        self.export_table.setToolTip(
            translate("Actions", "Save the table as CSV, or as the JSON list --json writes")
        )
        self.export_report = QAction(translate("Actions", "Export &Report…"), win)
        self.export_report.setToolTip(
            translate("Actions", "Save the comparison or the last cast's report as JSON")
        )
        self.find = QAction(translate("Actions", "&Filter Tensors"), win)
        self.find.setShortcut(QKeySequence.StandardKey.Find)
        self.only_differing = QAction(
            translate("Actions", "Only &Differing Tensors"), win, checkable=True
        )
        self.only_differing.setShortcut(QKeySequence("Ctrl+D"))
        self.tree = QAction(
            style.standardIcon(sp.SP_FileDialogListView),
            translate("Actions", "&Modules"),
            win,
            checkable=True,
        )
        self.tree.setShortcut(QKeySequence("Ctrl+T"))
        self.tree.setToolTip(translate("Actions", "Group tensors by module prefix (Ctrl+T)"))
        self.quit = QAction(translate("Actions", "&Quit"), win)
        self.quit.setShortcut(QKeySequence.StandardKey.Quit)
        self.shortcuts = QAction(translate("Actions", "&Keyboard Shortcuts"), win)
        self.shortcuts.setShortcut(QKeySequence("F1"))
        self.about = QAction(translate("Actions", "&About Checkpoint Inspector"), win)
        # macOS moves these into the application menu, where its users look for them
        self.quit.setMenuRole(QAction.MenuRole.QuitRole)
        self.about.setMenuRole(QAction.MenuRole.AboutRole)
        win.addAction(self.find)
        self.recent_menu = QMenu(translate("Actions", "Open &Recent"), win)

    def build_menus(self, win: QMainWindow) -> None:
        mb = win.menuBar()
        file_menu = mb.addMenu(translate("Actions", "&File"))
        file_menu.addAction(self.open)
        file_menu.addAction(self.open_folder)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.cast)
        file_menu.addAction(self.quantize)
        file_menu.addAction(self.compare)
        file_menu.addAction(self.clear_reference)
        file_menu.addSeparator()
        file_menu.addAction(self.export_table)
        file_menu.addAction(self.export_report)
        file_menu.addSeparator()
        file_menu.addAction(self.quit)
        view_menu = mb.addMenu(translate("Actions", "&View"))
        view_menu.addAction(self.find)
        view_menu.addAction(self.only_differing)
        view_menu.addAction(self.tree)
        help_menu = mb.addMenu(translate("Actions", "&Help"))
        help_menu.addAction(self.shortcuts)
        help_menu.addAction(self.about)

    def set_config_dtype(self, box: QComboBox, name: str | None) -> None:
        """Offer the config's dtype first ("BF16 — from config.json"), or remove that entry."""
        if box.count() and box.itemData(0) == "config":
            was = box.currentIndex() == 0
            dtype = box.itemText(0).split()[0]
            box.blockSignals(True)
            box.removeItem(0)
            if was:  # the same dtype stays chosen, as a plain entry
                box.setCurrentText(dtype)
            box.blockSignals(False)
        if name is not None:
            box.blockSignals(True)
            box.insertItem(0, translate("Actions", "{dtype} — from config.json").format(dtype=name))
            box.setItemData(0, "config")
            box.blockSignals(False)

    def show_target(self, box: QComboBox, target: DType, source: TargetSource) -> None:
        """Select the entry of the session's target, and say in the tooltip where it came from."""
        box.blockSignals(True)
        if source is TargetSource.CONFIG and box.count() and box.itemData(0) == "config":
            box.setCurrentIndex(0)
        else:
            box.setCurrentIndex(box.findText(target.name))
        box.blockSignals(False)
        why = {
            TargetSource.CHOSEN: translate("Actions", "your choice"),
            TargetSource.CONFIG: translate("Actions", "from this checkpoint's config.json"),
            TargetSource.DEFAULT: translate("Actions", "the default (no config.json names one)"),
        }[source]
        box.setToolTip(
            translate(
                "Actions",
                "The dtype the model uses ({why}); tensors in another float dtype are flagged",
            ).format(why=why)
        )

    def build_toolbar(self, win: QMainWindow, target_name: str) -> QComboBox:
        """The main toolbar; returns its model-dtype chooser."""
        tb = QToolBar(translate("Actions", "Main toolbar"), win)
        tb.setObjectName("MainToolBar")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        win.addToolBar(tb)
        tb.addAction(self.open)
        tb.addSeparator()
        tb.addWidget(QLabel(translate("Actions", " Model dtype: ")))
        box = QComboBox()
        box.setAccessibleName("Target dtype")
        box.setToolTip(
            translate(
                "Actions", "The dtype the model uses; tensors in another float dtype are flagged"
            )
        )
        box.addItems(list(CAST_TARGETS))
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        box.setCurrentText(target_name)
        tb.addWidget(box)
        tb.addSeparator()
        tb.addAction(self.cast)
        tb.addAction(self.quantize)
        tb.addAction(self.compare)
        tb.addSeparator()
        tb.addAction(self.tree)
        return box

    def with_shortcuts(self) -> list[QAction]:
        return [
            a
            for a in (
                self.open, self.cast, self.quantize, self.compare, self.find, self.only_differing, self.tree,
                self.shortcuts, self.quit,
            )
            if not a.shortcut().isEmpty()
        ]  # fmt: skip

    def fill_recent(self, paths: list[str], open_path: object, clear: object) -> None:
        """Rebuild Open Recent (called just before it shows)."""
        menu = self.recent_menu
        menu.clear()
        if not paths:
            a = menu.addAction(translate("Actions", "(none)"))
            a.setEnabled(False)
            return
        for p in paths:
            a = menu.addAction(p)
            a.triggered.connect(lambda _=False, p=p: open_path(p))
        menu.addSeparator()
        menu.addAction(translate("Actions", "Clear List")).triggered.connect(clear)

    def set_state(
        self, has_checkpoint: bool, busy: bool, has_reference: bool, has_report: bool = False
    ) -> None:
        self.cast.setEnabled(has_checkpoint and not busy)
        self.quantize.setEnabled(has_checkpoint and not busy)
        self.compare.setEnabled(has_checkpoint)
        self.clear_reference.setEnabled(has_reference)
        self.export_table.setEnabled(has_checkpoint)
        self.export_report.setEnabled(has_report)
