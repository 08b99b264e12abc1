"""What a burn user pastes to load a checkpoint as the model's dtype: burn-store's adapters.

burn-store keeps a file's dtypes (the first matmul against the model's dtype panics);
``FloatCastAdapter::to`` casts floats on load and leaves integers alone. PyTorch's names and
layouts (``Linear`` weights as ``[out, in]``, norms' ``weight``/``bias``) need
``PyTorchToBurnAdapter``; a Burnpack file burn wrote has burn's own and needs none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .formats.burnpack import FORMAT_NAME as BURNPACK

# what this tool records in a file it converts between burn's and PyTorch's formats
PYTORCH_LAYOUT = {"layout": "pytorch"}
BURN_LAYOUT = {"layout": "burn"}


def has_pytorch_layout(fmt: str, metadata: Mapping[str, str] | None) -> bool:
    """Whether a file's names and layouts are PyTorch's: as this tool recorded when it
    converted the file, else every safetensors or pickle not saved by burn (Burnpack: never)."""
    metadata = metadata or {}
    if "layout" in metadata:
        return metadata["layout"] == PYTORCH_LAYOUT["layout"]
    return fmt != BURNPACK and metadata.get("producer") != "burn"


def burn_load_line(path: str, fmt: str, metadata: Mapping[str, str] | None, target: str) -> str:
    """The adapter chain (and for Burnpack the store) that loads ``path`` as ``target``."""
    cast = f"FloatCastAdapter::to(DType::{target})"
    adapter = f"PyTorchToBurnAdapter.chain({cast})" if has_pytorch_layout(fmt, metadata) else cast
    if fmt != BURNPACK:
        return adapter
    name = os.path.basename(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'BurnpackStore::from_file("{name}").with_from_adapter({adapter})'


def written_burnpack_line(
    out: str, fmt: str, metadata: Mapping[str, str] | None, target: str
) -> str:
    """What to tell a person who converted a checkpoint (of ``fmt`` and ``metadata``) to the
    Burnpack file ``out``: how burn loads it, and why the PyTorch adapter is in the line."""
    pytorch = has_pytorch_layout(fmt, metadata)
    line = burn_load_line(out, BURNPACK, PYTORCH_LAYOUT if pytorch else None, target)
    why = "its names and layouts are still PyTorch's; " if pytorch else ""
    return f"{why}load it in burn with: {line}"
