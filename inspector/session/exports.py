"""What the window's Export commands write: the table as ``list --json`` writes it (or CSV), and
the last cast's report or comparison as ``cast --report`` / ``diff --json`` write them. Each file
is written atomically and durably, like every output."""

from __future__ import annotations

import os
from enum import Enum

from inspector.core.diff import diff_document
from inspector.core.errors import CheckpointError
from inspector.core.listing import listing_csv, listing_document
from inspector.core.natural_order import natural_order
from inspector.core.quant.listing import logical_items
from inspector.core.save.writer import write_text_atomic

from .session import Session


class ReportKind(str, Enum):
    CAST = "cast"
    COMPARISON = "comparison"


def export_table(session: Session, path: str) -> None:
    """``.csv``: one row per tensor (or quantized weight) for a spreadsheet; anything else:
    the ``list --json`` document."""
    ckpt = session.checkpoint
    if ckpt is None:
        raise CheckpointError(None, "no checkpoint is open")
    quant = session.groups.quant
    # list's default order: differing first, then natural name order
    items = logical_items(natural_order(ckpt.tensors, session.target), quant)
    if os.fspath(path).lower().endswith(".csv"):
        text = listing_csv(items, session.target)
    else:
        text = listing_document(ckpt, session.target, quant, items)
    write_text_atomic(path, text)


def report_kind(session: Session) -> ReportKind | None:
    """Which report there is to export: the comparison when one is shown, else the last cast."""
    if session.diffs is not None:
        return ReportKind.COMPARISON
    if session.cast is not None:
        return ReportKind.CAST
    return None


def export_report(session: Session, path: str) -> ReportKind:
    kind = report_kind(session)
    if kind is ReportKind.COMPARISON and session.diffs is not None:
        write_text_atomic(path, diff_document(session.diffs))
    elif kind is ReportKind.CAST and session.cast is not None:
        write_text_atomic(path, session.cast.report.to_json_text())
    else:
        raise CheckpointError(None, "there is no cast or comparison to export")
    return kind
