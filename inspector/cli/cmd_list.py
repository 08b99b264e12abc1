"""``list``: every tensor with dtype, shape, size and status (``--stats``, ``--json``)."""

from __future__ import annotations

import argparse
import sys

from ..core.quant.layout import QuantizedWeight
from .exit_codes import EXIT_OK
from .model import FolderConfig, intended_globs, on_purpose_labels, resolve_target
from .output import notices, printable, progress_printer, symbol


def cmd_list(args: argparse.Namespace) -> int:
    from ..core.listing import listing_document
    from ..core.natural_order import natural_order
    from ..core.opening import open_checkpoint
    from ..core.progress import run_job
    from ..core.quant.listing import logical_items
    from ..core.stats import compute_stats
    from ..core.summary import summarize, tensor_status
    from ..core.wording import format_bytes

    ckpt = open_checkpoint(args.path, keep_all=args.keep_all)
    notices(ckpt)
    folder = FolderConfig.of(args.path)  # config.json, read once
    target = resolve_target(args, folder)
    quant = folder.quant(ckpt.tensors)
    if quant is not None and quant.cast_refusal() is None:
        from ..core.quant.shapes import resolve_shapes

        resolve_shapes(ckpt, quant)  # a few bytes a weight: weight_shape, a bnb quant state
    tensors = natural_order(ckpt.tensors, target) if args.order == "natural" else ckpt.tensors
    items = logical_items(tensors, quant)
    stats = run_job(compute_stats(ckpt), progress_printer("stats")) if args.stats else {}
    storage: dict = {}
    if args.stats and quant is not None:  # a quantized weight's numbers: its dequantized values
        values, storage = _dequantized_stats(ckpt, quant)
        for w in quant.weights.values():  # never the stored codes' numbers under its name
            stats.pop(w.name, None)
        stats.update(values)
    # one status per dtype, not per tensor (200k tensors: ~0.4 s less)
    samples = {t.dtype_name: t for t in tensors}
    status_of = {name: tensor_status(t, target) for name, t in samples.items()}
    if args.json:
        sys.stdout.write(listing_document(ckpt, target, quant, items, stats, storage))
        return EXIT_OK

    status_text = _status_words(target, short=args.stats)
    on_purpose = on_purpose_labels(ckpt.tensors, target, intended_globs(folder))
    names = _printable_names(tensors)
    shape_text: dict[tuple[int, ...], str] = {}  # tensors share a few shapes and sizes
    size_text: dict[int, str] = {}
    lines = []
    if args.stats:  # 120 columns: a long name gets a line of its own above its numbers
        name_w = 28
        # as wide as the longest status shown ("F32 on purpose?"): every row's numbers line up
        labels = {*on_purpose.values(), *(status_text[s] for s in status_of.values())}
        status_w = max([11, *map(len, labels)])
        lines.append(
            f"{'name':<{name_w}}  {'dtype':<8} {'shape':<15} {'status':<{status_w}}"
            f" {'min':>9} {'max':>9} {'mean':>9} {'std':>9} {'nan':>5} {'inf':>5}"
        )
        for t in items:
            if isinstance(t, QuantizedWeight):  # values: the dequantized ones
                lines.extend(_quantized_stats_lines(t, name_w, status_w, stats, storage))
                continue
            name = names[t.name]
            if len(name) > name_w:
                lines.append(name)
                name = ""
            shape = shape_text.get(t.shape) or shape_text.setdefault(t.shape, _shape(t.shape))
            status = on_purpose.get(t.name) or status_text[status_of[t.dtype_name]]
            lines.append(
                f"{name:<{name_w}}  {t.dtype_name:<8} {shape:<15} {status:<{status_w}} "
                f"{_numbers(stats[t.name])}".rstrip()
            )
    else:
        name_w = min(max([4, *(len(n) for n in names.values()), *_stored_widths(items)]), 60)
        lines.append(f"{'name':<{name_w}}  {'dtype':<8} {'shape':<20} {'size':>10}  status")
        for t in items:
            if isinstance(t, QuantizedWeight):
                lines.extend(_quantized_lines(t, name_w))
                continue
            shape = shape_text.get(t.shape) or shape_text.setdefault(t.shape, _shape(t.shape))
            nbytes = t.nbytes
            size = size_text.get(nbytes) or size_text.setdefault(nbytes, format_bytes(nbytes))
            line = (
                f"{names[t.name]:<{name_w}}  {t.dtype_name:<8} {shape:<20} {size:>10}  "
                f"{on_purpose.get(t.name) or status_text[status_of[t.dtype_name]]}"
            )
            lines.append(line.rstrip())
    lines.append(summarize(ckpt.tensors, target, quant).line().rstrip())
    if quant is not None and not quant.confirmed:
        lines.append(quant.describe())
    if args.stats and quant is not None and (refusal := quant.cast_refusal()) is not None:
        lines.append(f"quantized values not shown: {refusal}")
    lines.extend(line.rstrip() for line in _value_lines(ckpt))
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _printable_names(tensors) -> dict[str, str]:
    """name -> its printable form; one check of all names together when none needs escaping
    (the common case: 200k per-name checks were a tenth of a big listing)."""
    if printable(all_names := "".join(t.name for t in tensors)) == all_names:
        return {t.name: t.name for t in tensors}
    return {t.name: printable(t.name) for t in tensors}


def _dequantized_stats(ckpt, quant) -> tuple[dict, dict]:
    """Each quantized weight's dequantized statistics and its storage figures."""
    from ..core.quant.storage_figures import storage_figures
    from ..core.quant.values import dequantized_f32
    from ..core.stats import values_stats

    values, storage = {}, {}
    for w in quant.weights.values():
        if w.scheme.dequantizable and quant.cast_refusal() is None:
            values[w.name] = values_stats(w, dequantized_f32(ckpt, w))
            storage[w.name] = storage_figures(ckpt, w)
    return values, storage


def _stored_widths(items) -> list[int]:
    """The first column of each quantized weight's rows: its name, its stored tensors indented."""
    return [
        n
        for w in items
        if isinstance(w, QuantizedWeight)
        for n in (len(printable(w.name)), *(len(_stored_label(t)) for t in w.stored))
    ]


def _stored_label(t) -> str:
    return "  └ " + printable(t.name)


def _quantized_lines(w: QuantizedWeight, name_w: int) -> list[str]:
    """A quantized weight: its logical row, then each stored tensor indented under it."""
    from ..core.wording import format_bytes

    size = format_bytes(sum(t.nbytes for t in w.stored))
    lines = [
        f"{printable(w.name):<{name_w}}  {w.stored_dtype:<8} {_shape(w.shape):<20} "
        f"{size:>10}  quantized: {w.storage()}"
    ]
    for t in w.stored:
        lines.append(
            f"{_stored_label(t):<{name_w}}  {t.dtype_name:<8} {_shape(t.shape):<20} "
            f"{format_bytes(t.nbytes):>10}".rstrip()
        )
    return lines


def _quantized_stats_lines(
    w: QuantizedWeight, name_w: int, status_w: int, stats: dict, storage: dict
) -> list[str]:
    """``list --stats`` of a quantized weight: its logical row in the columns of every row, with
    its dequantized values' numbers (none where it cannot be dequantized); then how it is
    stored, and each stored tensor indented under it (no numbers: those are codes)."""
    lines: list[str] = []

    def named(label: str) -> str:  # a long name gets a line of its own, as every row's
        if len(label) <= name_w:
            return label
        lines.append(label)
        return ""

    s = stats.get(w.name)
    numbers = _numbers(s) if s is not None else ""
    lines.append(
        f"{named(printable(w.name)):<{name_w}}  {w.stored_dtype:<8} {_shape(w.shape):<15} "
        f"{'quantized':<{status_w}} {numbers}".rstrip()
    )
    lines.append(f"{'  quantized:':<{name_w}}  {w.storage()}")
    figures = storage.get(w.name)
    if figures is not None:
        lines.append(f"{'  storage:':<{name_w}}  {figures.line()}")
    for t in w.stored:
        lines.append(f"{named(_stored_label(t)):<{name_w}}  {t.dtype_name:<8} {_shape(t.shape)}")
    return lines


def _numbers(s) -> str:
    """min, max, mean, std, nan and inf of one row of ``list --stats``."""
    return (
        " ".join(f"{_num(v):>9}" for v in (s.min, s.max, s.mean, s.std)) + f" {s.nan:>5} {s.inf:>5}"
    )


def _pickle_values(ckpt) -> list:
    """A pickle's non-tensor leaves (epoch, hyper-parameters): listed, never written by cast."""
    from ..core.formats.torch_pickle import pickle_facts

    return [v for h in ckpt.files if (facts := pickle_facts(h)) for v in facts.values]


def _value_lines(ckpt) -> list[str]:
    values = _pickle_values(ckpt)
    if not values:
        return []
    what = "value that is not a tensor" if len(values) == 1 else "values that are not tensors"
    lines = [f"{len(values)} {what} (listed, not written by cast):"]
    lines += [f"  {printable(v.name) or '(top level)'} = {printable(v.text)}" for v in values]
    return lines


def _status_words(target, short: bool) -> dict:
    from ..core.status import TensorStatus

    ne = symbol("≠", "!=")
    return {
        TensorStatus.MATCH: "",
        TensorStatus.DIFFERS: f"{ne} {target.name}",
        TensorStatus.KEPT: "not a float" if short else "kept (not a float)",  # as the window
    }


def _shape(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"
