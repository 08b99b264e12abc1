"""Refusals a quantize run makes before it reads a byte of data: one line each."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..checkpoint import Checkpoint
from ..errors import CheckpointError
from ..formats.burnpack import FORMAT_NAME as BURNPACK
from ..formats.gguf import FORMAT_NAME as GGUF
from ..model_folder.config import read_model_config
from ..quant.of_checkpoint import quant_layout
from .schemes import Scheme
from .targets import QuantizePlan, plan_quantize


def plans_for(
    ckpt: Checkpoint, schemes: Sequence[Scheme], ignore: Sequence[str]
) -> list[QuantizePlan]:
    """The plan of ``ckpt`` for each scheme, config.json read once (its ``model_type`` tells
    GPT-2's Conv1D layers from Linear ones); a bad ``re:`` pattern is one line."""
    try:
        config = read_model_config(ckpt.path)
    except CheckpointError:  # a broken config.json: refuse_unquantizable names it
        config = None
    model_type = config.model_type if config else None
    try:
        return [plan_quantize(ckpt.tensors, s, ignore, model_type) for s in schemes]
    except ValueError as e:
        raise CheckpointError(None, str(e)) from None


def refuse_unquantizable(ckpt: Checkpoint, plan: QuantizePlan) -> None:
    """An already quantized source (quantizing its codes again would compound two losses:
    quantize the model it came from), or one where no weight can take the scheme."""
    fmt = ckpt.files[0].format
    if fmt == GGUF:
        raise CheckpointError(
            ckpt.path,
            "is a GGUF file (llama.cpp's names and row order); quantize the safetensors model "
            "it came from, or convert it first: cast --target F16 -o FOLDER",
        )
    if fmt == BURNPACK:
        raise CheckpointError(
            ckpt.path,
            "is a Burnpack file: burn's Linear weights are stored [in, out] and burn loads no "
            "compressed-tensors model; quantize the PyTorch/safetensors model",
        )
    layout = quant_layout(ckpt)
    if layout is not None and layout.weights:
        raise CheckpointError(
            ckpt.path,
            f"is already quantized ({layout.describe()}); quantize the model it came from",
        )
    if not plan.targets:
        if not plan.skipped:
            why = "it has no Linear weight (a 2-D float tensor named *.weight)"
        else:
            counts = Counter(s.reason.text(s.tensor, plan.scheme) for s in plan.skipped)
            why = "; ".join(
                f"{n} weight{'s' if n > 1 else ''}: {r}" for r, n in counts.most_common(2)
            )
        raise CheckpointError(ckpt.path, f"nothing to quantize with {plan.scheme.name}: {why}")
