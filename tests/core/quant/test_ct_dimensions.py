"""compressed-tensors weights of other than two dimensions, against its own decompressors:
stacked experts ([experts, rows, columns]) dequantize as compressed-tensors 0.19 does, bit for
bit; a packed weight of one dimension and FP4 codes of three, which its decompressors raise on,
are refused with a line rather than dequantized by rules of our own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.quant import rows
from inspector.core.quant.of_checkpoint import quant_layout

from .conftest import ct_decompressed, ct_folder

torch = pytest.importorskip("torch")
pytest.importorskip("compressed_tensors")


def _ours(path: Path) -> tuple[tuple[int, ...], np.ndarray]:
    with open_checkpoint(str(path)) as ckpt:
        layout = quant_layout(ckpt)
        assert layout is not None
        (w,) = layout.weights.values()
        plan = rows.prepare(ckpt, w)
        return w.shape, np.concatenate([c.reshape(-1) for c in rows.chunks(ckpt, plan, 256)])


def _stacked(kind: str) -> tuple[str, dict, dict]:
    g = torch.Generator().manual_seed(0)
    experts, out, cols = 3, 6, 128  # 6 rows: not the 4 groups of 32 columns
    if kind in ("pack-channel", "pack-group"):
        group = kind == "pack-group"
        weights = {"num_bits": 4, "type": "int", "strategy": "group" if group else "channel"}
        weights |= {"group_size": 32} if group else {}
        scales = (experts, out, cols // 32 if group else 1)
        return "pack-quantized", weights, {
            "weight_packed": torch.randint(-(2**31), 2**31 - 1, (experts, out, cols // 8),
                                           generator=g, dtype=torch.int32),
            "weight_scale": (torch.rand(scales, generator=g) + 0.5).to(torch.bfloat16),
            "weight_shape": torch.tensor([experts, out, cols]),
        }  # fmt: skip
    if kind == "float":
        codes = torch.randn(experts, out, cols, generator=g).to(torch.float8_e4m3fn)
        fmt, weights = "float-quantized", {"num_bits": 8, "type": "float", "strategy": "channel"}
    else:
        codes = torch.randint(-128, 127, (experts, out, cols), generator=g, dtype=torch.int8)
        fmt, weights = "int-quantized", {"num_bits": 8, "type": "int", "strategy": "channel"}
    scale = (torch.rand((experts, out, 1), generator=g) + 0.5).to(torch.bfloat16)
    return fmt, weights, {"weight": codes, "weight_scale": scale}


@pytest.mark.parametrize("kind", ["pack-channel", "pack-group", "float", "int"])
def test_stacked_experts_dequantize_as_compressed_tensors_does(tmp_path, kind):
    path = ct_folder(tmp_path / kind, *_stacked(kind))
    ref = ct_decompressed(path, "m")
    shape, got = _ours(path)
    assert shape == tuple(ref.shape) == (3, 6, 128) and all(type(n) is int for n in shape)
    assert np.array_equal(got.view(np.int16), ref.contiguous().view(torch.int16).numpy().ravel())


def test_a_packed_group_weight_whose_last_word_is_padded_has_its_true_columns(tmp_path):
    """100 columns of 4 bits fill 13 words (104 codes): the scales' groups (2 of 50) say 100,
    as weight_shape does; the words alone would say 104 and the cast would refuse."""
    g = torch.Generator().manual_seed(2)
    weights = {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 50}
    path = ct_folder(tmp_path / "q", "pack-quantized", weights, {
        "weight_packed": torch.randint(-(2**31), 2**31 - 1, (5, 13), generator=g, dtype=torch.int32),
        "weight_scale": (torch.rand((5, 2), generator=g) + 0.5).to(torch.bfloat16),
        "weight_shape": torch.tensor([5, 100]),
    })  # fmt: skip
    ref = ct_decompressed(path, "m")
    shape, got = _ours(path)
    assert shape == tuple(ref.shape) == (5, 100)
    assert np.array_equal(got.view(np.int16), ref.contiguous().view(torch.int16).numpy().ravel())


def _fp4(fmt: str) -> tuple[str, dict, dict]:
    g = torch.Generator().manual_seed(1)
    codes = torch.randint(0, 256, (2, 8, 32), generator=g, dtype=torch.uint8)  # 64 columns
    if fmt.startswith("nvfp4"):
        weights = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
        scale = (torch.rand((2, 8, 4), generator=g) + 0.5).to(torch.float8_e4m3fn)
        return fmt, weights, {"weight_packed": codes, "weight_scale": scale,
                              "weight_global_scale": torch.tensor([3.0])}  # fmt: skip
    weights = {"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32}
    scale = torch.randint(120, 130, (2, 8, 2), generator=g, dtype=torch.uint8)
    return fmt, weights, {"weight_packed": codes, "weight_scale": scale}


REFUSED = {
    "packed-1-dimension": (
        ("pack-quantized", {"num_bits": 4, "type": "int", "strategy": "channel"},
         {"weight_packed": torch.tensor([7, -9], dtype=torch.int32),
          "weight_scale": torch.ones(1, dtype=torch.bfloat16), "weight_shape": torch.tensor([16])}),
        "packed codes of one dimension (compressed-tensors unpacks rows)",
    ),
    "nvfp4-3-dimensions": (_fp4("nvfp4-pack-quantized"),
                           "FP4 codes of 3 dimensions (compressed-tensors unpacks FP4 matrices only)"),
    "mxfp4-3-dimensions": (_fp4("mxfp4-pack-quantized"),
                           "FP4 codes of 3 dimensions (compressed-tensors unpacks FP4 matrices only)"),
}  # fmt: skip


@pytest.mark.parametrize(("made", "why"), REFUSED.values(), ids=REFUSED.keys())
def test_weights_its_decompressors_raise_on_are_refused(tmp_path, made, why):
    """Before: dequantized by our own extension of the rules, with nothing to be exact to."""
    path = ct_folder(tmp_path / "q", *made)
    with pytest.raises(ValueError):
        ct_decompressed(path, "m")
    with pytest.raises(CheckpointError) as e:
        _ours(path)
    assert why in str(e.value)
