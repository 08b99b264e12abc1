"""Random compressed-tensors headers, written as real folders and cast: recognising one never
raises; a layout recognition refuses is refused by the cast with the same line; any other ends
in a written model or one line (only what ``weight_shape``'s or ``g_idx``'s values tell). A
fuzz of this shape found two defects: packed codes whose words the scales' columns do not fill
(said to dequantize until the cast refused) and packed zero points of too few words (an
IndexError out of the cast)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.of_checkpoint import quant_layout
from tests.quant_folders import ct_config, folder

_NUMPY = {"U8": np.uint8, "I8": np.int8, "I32": np.int32, "F32": np.float32,
          "BF16": ml_dtypes.bfloat16, "F8_E4M3": ml_dtypes.float8_e4m3fn}  # fmt: skip
_WEIGHTS = {
    "nvfp4-pack-quantized": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                             "group_size": 16},
    "mxfp4-pack-quantized": {"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32},
    "pack-quantized": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 8},
    "pack-quantized asymmetric": {"num_bits": 4, "type": "int", "strategy": "group",
                                  "group_size": 8, "symmetric": False},
    "float-quantized": {"num_bits": 8, "type": "float", "strategy": "channel"},
    "int-quantized": {"num_bits": 8, "type": "int", "strategy": "tensor", "symmetric": False},
}  # fmt: skip
_DATA_TELLS = ("weight_shape", "g_idx", "not a multiple of the group size")


def _array(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 7 + 1
    return values.astype(_NUMPY[dtype])


def _valid(fmt: str, rows: int, n: int) -> list[tuple]:
    """A header compressed-tensors writes for ``fmt``: (name, dtype, shape[, values])."""
    if fmt == "nvfp4-pack-quantized":  # n × 16 columns, a scale a group of 16
        return [("m.weight_packed", "U8", (rows, 8 * n)), ("m.weight_scale", "F8_E4M3", (rows, n)),
                ("m.weight_global_scale", "F32", (1,))]  # fmt: skip
    if fmt == "mxfp4-pack-quantized":  # n × 32 columns, an exponent a group of 32
        return [("m.weight_packed", "U8", (rows, 16 * n)), ("m.weight_scale", "U8", (rows, n))]
    if fmt.startswith("pack-quantized"):  # n groups of 8 int4: a word each
        packed = [("m.weight_packed", "I32", (rows, n)), ("m.weight_scale", "BF16", (rows, n)),
                  ("m.weight_shape", "I32", (2,), (rows, 8 * n))]  # fmt: skip
        if fmt.endswith("asymmetric"):  # zero points packed along the rows: 8 a word
            packed.append(("m.weight_zero_point", "I32", (-(-rows // 8), n)))
        return packed
    if fmt == "float-quantized":
        return [("m.weight", "F8_E4M3", (rows, 4 * n)), ("m.weight_scale", "BF16", (rows, 1))]
    return [("m.weight", "I8", (rows, 4 * n)), ("m.weight_scale", "F32", (1,)),
            ("m.weight_zero_point", "I8", (1,))]  # fmt: skip


@st.composite
def _headers(draw: st.DrawFn) -> tuple[dict, list]:
    """A valid header, or one with one tensor's dtype or shape changed, or one tensor left out."""
    fmt = draw(st.sampled_from(sorted(_WEIGHTS)))
    tensors = _valid(fmt, draw(st.integers(1, 20)), draw(st.integers(1, 3)))
    change = draw(st.sampled_from(["none", "dtype", "shape", "drop"]))
    if change != "none":
        i = draw(st.integers(0, len(tensors) - 1))
        name, dtype, shape, *values = tensors[i]
        if change == "drop":
            del tensors[i]
        elif change == "dtype":
            tensors[i] = (name, draw(st.sampled_from(sorted(set(_NUMPY) - {dtype}))), shape)
        else:  # one side changed, or a shape of its own
            sides = st.lists(st.integers(1, 9), min_size=0, max_size=3)
            if shape and draw(st.booleans()):
                axis = draw(st.integers(0, len(shape) - 1))
                shape = (*shape[:axis], draw(st.integers(1, 20)), *shape[axis + 1 :])
            else:
                shape = tuple(draw(sides))
            tensors[i] = (name, dtype, shape, *(values and [np.ones(shape)]))
    return ct_config(fmt.split()[0], _WEIGHTS[fmt]), tensors


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_headers())
def test_a_random_header_is_recognised_then_cast_or_refused_by_one_line(header):
    qc, specs = header
    tensors = []
    for name, dtype, shape, *values in specs:
        data = np.array(values[0], np.int32) if values else _array(dtype, shape)
        tensors.append((name, DTYPES[dtype], data.reshape(shape)))
    with tempfile.TemporaryDirectory() as tmp:
        path = folder(Path(tmp) / "q", tensors, qc)
        with open_checkpoint(str(path)) as ckpt:
            layout = quant_layout(ckpt)
            refusal = layout.cast_refusal() if layout is not None else None
            try:
                run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(Path(tmp) / "out")))
            except CheckpointError as e:
                event("refused by recognition" if refusal else "refused by the cast")
                line = str(e)
                assert "\n" not in line
                assert refusal in line if refusal else any(t in line for t in _DATA_TELLS), line
            else:
                event("cast")
                assert refusal is None
                assert (Path(tmp) / "out" / "model.safetensors").exists()
