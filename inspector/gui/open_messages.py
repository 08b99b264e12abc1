"""What a person should know about a checkpoint just opened, in the message bar: a training
checkpoint shown as its model (the rest one click away), unknown objects a pickle names (kept
inert), notices the read left alone (an interrupted save's journal)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .i18n import translate
from .pickle_panel import unknown_objects_text

if TYPE_CHECKING:
    from inspector.core.checkpoint import Checkpoint

    from .message_bar import MessageBar


def say_what_opened(bar: MessageBar, ckpt: Checkpoint, show_everything: Callable[[], None]) -> None:
    unknown = unknown_objects_text(ckpt)  # said with the training layout, or alone
    if ckpt.training is not None:  # the rest is one click away
        layout = ckpt.training
        bar.show_message(
            translate(
                "Controller",
                "{kind} checkpoint: showing the model's {n} tensors (prefix {prefix} taken "
                "off); {left} optimizer and other tensors are left out, and a cast leaves "
                "them out too.",
            ).format(
                kind=layout.kind.value,
                n=f"{len(ckpt):,}",
                prefix=layout.prefix,
                left=f"{layout.left_tensors:,}",
            )
            + unknown,
            "warning" if unknown else "info",
            translate("Controller", "Show everything"),
            show_everything,
        )
    elif unknown:
        bar.show_message(unknown.lstrip(), "warning")
    if ckpt.notices:  # left alone by the read: only a save into that folder settles it
        bar.show_message(
            translate("Controller", "Note: {text}.").format(text="; ".join(ckpt.notices)),
            "warning",
        )
