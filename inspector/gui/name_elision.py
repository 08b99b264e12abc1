"""Tensor names that fit a narrow column and stay tell-apart-able.

Eliding in the middle turned 16 rows into ``model.layers.1...atches_tracked``: the layer number is
what tells them apart, and it went. Here a name that does not fit is compacted step by step:

1. segments other than numbers and the last one are abbreviated to their first letter, from the
   left, the second-to-last one last (``model.layers.11.self_attn.q_proj.weight`` →
   ``m.l.11.s.q_proj.weight`` → ``m.l.11.s.q.weight``);
2. then abbreviated segments are dropped for ``…``, from the left (``…11.q.weight``);
3. then the last segment loses characters from its left, the numbers still shown
   (``…11.…_tracked``).
Numbers (layer indices) are what tell rows apart, so they go last.
"""

from __future__ import annotations

from collections.abc import Callable

ELLIPSIS = "…"


def compact_name(name: str, width: int, measure: Callable[[str], int]) -> str:
    """``name`` as it fits ``width`` pixels (``measure`` gives a string's width)."""
    if measure(name) <= width:
        return name
    parts = name.split(".")
    last = len(parts) - 1
    words = [i for i in range(last) if not parts[i].isdigit()]
    for i in [*words[:-1], *words[-1:]] if words and words[-1] == last - 1 else words:
        if len(parts[i]) > 1:
            parts[i] = parts[i][0]
            if measure(".".join(parts)) <= width:
                return ".".join(parts)
    shown = list(range(len(parts)))
    for i in words:
        shown.remove(i)
        text = ELLIPSIS + ".".join(parts[j] for j in shown)
        if measure(text) <= width:
            return text
    numbers = ".".join(parts[j] for j in shown[:-1])
    head = ELLIPSIS + (numbers + "." + ELLIPSIS if numbers else "")
    tail = parts[last]
    while len(tail) > 1 and measure(head + tail) > width:
        tail = tail[1:]
    return head + tail
