"""What a dequantization reads from a weight's companions, where the window and ``diff`` read
the values (``dequantized_f32``: no ``weight_shape`` read beforehand, as a cast does), against
compressed-tensors 0.19's decompressors where it has one: int-quantized zero points, packed zero
points of fewer groups than a word holds, a weight of one row, a global scale of no dimension,
and a ``weight_shape`` that disagrees with the codes or is stored as a matrix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.quant.of_checkpoint import quant_layout
from inspector.core.quant.values import dequantized_f32

from .conftest import ct_decompressed, ct_folder

torch = pytest.importorskip("torch")
pytest.importorskip("compressed_tensors")


def _values(path: Path) -> np.ndarray:
    with open_checkpoint(str(path)) as ckpt:
        layout = quant_layout(ckpt)
        assert layout is not None and layout.cast_refusal() is None, layout
        (w,) = layout.weights.values()
        return np.concatenate(list(dequantized_f32(ckpt, w, 64)))


def _as_reference(path: Path) -> None:
    ref = ct_decompressed(path, "m").to(torch.float32).numpy().ravel()
    assert np.array_equal(_values(path), ref)


def test_int_quantized_zero_points_are_subtracted_as_stored(tmp_path):
    """I8 zero points of an int-quantized weight are not packed (only pack-quantized packs)."""
    g = torch.Generator().manual_seed(0)
    weights = {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": False}
    path = ct_folder(tmp_path / "q", "int-quantized", weights, {
        "weight": torch.randint(-128, 127, (6, 32), generator=g, dtype=torch.int8),
        "weight_scale": (torch.rand((6, 1), generator=g) + 0.5).to(torch.bfloat16),
        "weight_zero_point": torch.randint(-20, 20, (6, 1), generator=g, dtype=torch.int8),
    })  # fmt: skip
    _as_reference(path)


@pytest.mark.parametrize("groups", [1, 2])
def test_int_quantized_zero_points_stored_flat_take_their_scales_shape(tmp_path, groups):
    codes = np.arange(-48, 48, dtype=np.int8).reshape(6, 16)
    weights = {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": False}
    if groups > 1:
        weights |= {"strategy": "group", "group_size": 16 // groups}
    scale = torch.tensor([0.5, 1.0, 2.0, 0.25, 4.0, 1.5] * groups, dtype=torch.bfloat16)
    zp = torch.tensor([1, -2, 3, 0, 5, -7] * groups, dtype=torch.int8)
    path = ct_folder(tmp_path / "q", "int-quantized", weights, {
        "weight": torch.from_numpy(codes), "weight_scale": scale.reshape(6, groups),
        "weight_zero_point": zp,
    })  # fmt: skip
    per_column = lambda t: np.repeat(t.float().numpy().reshape(6, groups), 16 // groups, 1)  # noqa: E731
    want = (codes.astype(np.float32) - per_column(zp)) * per_column(scale)
    assert np.array_equal(_values(path), want.ravel())


def _packed_asymmetric(rows: int, cols: int, groups: int) -> tuple[dict, dict]:
    from compressed_tensors.compressors.pack_quantized.helpers import pack_to_int32

    g = torch.Generator().manual_seed(1)
    weights = {"num_bits": 4, "type": "int", "strategy": "group", "group_size": cols // groups,
               "symmetric": False}  # fmt: skip
    codes = torch.randint(-8, 7, (rows, cols), generator=g, dtype=torch.int8)
    zp = torch.randint(-8, 7, (rows, groups), generator=g, dtype=torch.int8)
    return weights, {
        "weight_packed": pack_to_int32(codes, 4),
        "weight_scale": (torch.rand((rows, groups), generator=g) + 0.5).to(torch.bfloat16),
        "weight_zero_point": pack_to_int32(zp, 4, packed_dim=0).contiguous(),
        "weight_shape": torch.tensor([rows, cols]),
    }


def test_packed_zero_points_of_fewer_groups_than_a_word_holds(tmp_path):
    """16 rows, 2 groups: the unpacked zero points are cut to the 2 groups, not to the rows."""
    weights, tensors = _packed_asymmetric(16, 64, 2)
    _as_reference(ct_folder(tmp_path / "q", "pack-quantized", weights, tensors))


@pytest.mark.parametrize("groups", [1, 3])
def test_packed_zero_points_of_other_groups_than_the_scales_are_one_line(tmp_path, groups):
    """Before: 3 columns of zero points for 2 groups were cut to 2 and the weight dequantized,
    where compressed-tensors raises (a size mismatch). One column it broadcasts over the groups;
    it writes a zero point a group, so that is refused too, as it was."""
    from compressed_tensors.compressors.pack_quantized.helpers import pack_to_int32

    weights, tensors = _packed_asymmetric(16, 64, 2)
    zp = torch.zeros((16, groups), dtype=torch.int8)
    tensors["weight_zero_point"] = pack_to_int32(zp, 4, packed_dim=0).contiguous()
    path = ct_folder(tmp_path / "q", "pack-quantized", weights, tensors)
    if groups == 3:
        with pytest.raises(RuntimeError):
            ct_decompressed(path, "m")
    line = (
        "'m.weight' (compressed-tensors pack-quantized): zero point 'm.weight_zero_point' does "
        "not match its scale's shape"
    )
    with open_checkpoint(str(path)) as ckpt:
        layout = quant_layout(ckpt)
        assert layout is not None and layout.cast_refusal() == line
        with pytest.raises(CheckpointError) as e:
            next(dequantized_f32(ckpt, layout.weights["m.weight"]))
    assert str(e.value).endswith(line)


def test_a_weight_of_one_row_has_its_groups_scales(tmp_path):
    g = torch.Generator().manual_seed(2)
    weights = {"num_bits": 8, "type": "float", "strategy": "group", "group_size": 16}
    path = ct_folder(tmp_path / "q", "float-quantized", weights, {
        "weight": torch.randn(1, 64, generator=g).to(torch.float8_e4m3fn),
        "weight_scale": (torch.rand((1, 4), generator=g) + 0.5).to(torch.bfloat16),
    })  # fmt: skip
    _as_reference(path)


def test_an_nvfp4_global_scale_of_no_dimension_is_the_one_scale(tmp_path):
    g = torch.Generator().manual_seed(3)
    weights = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
    tensors = {
        "weight_packed": torch.randint(0, 256, (4, 16), generator=g, dtype=torch.uint8),
        "weight_scale": (torch.rand((4, 2), generator=g) + 0.5).to(torch.float8_e4m3fn),
        "weight_global_scale": torch.tensor([3.0]),
    }
    one = _values(ct_folder(tmp_path / "one", "nvfp4-pack-quantized", weights, tensors))
    tensors["weight_global_scale"] = torch.tensor(3.0)
    scalar = _values(ct_folder(tmp_path / "scalar", "nvfp4-pack-quantized", weights, tensors))
    assert np.array_equal(one, scalar) and np.isfinite(one).all() and one.any()


def _packed_channel(path: Path, weight_shape: torch.Tensor) -> Path:
    g = torch.Generator().manual_seed(4)
    weights = {"num_bits": 4, "type": "int", "strategy": "channel"}
    return ct_folder(path, "pack-quantized", weights, {
        "weight_packed": torch.randint(-(2**31), 2**31 - 1, (8, 2), generator=g, dtype=torch.int32),
        "weight_scale": (torch.rand((8, 1), generator=g) + 0.5).to(torch.bfloat16),
        "weight_shape": weight_shape,
    })  # fmt: skip


def test_a_weight_shape_stored_as_a_matrix_is_read_by_its_values(tmp_path):
    flat = _values(_packed_channel(tmp_path / "flat", torch.tensor([8, 16])))
    matrix = _values(_packed_channel(tmp_path / "matrix", torch.tensor([[8, 16]])))
    assert np.array_equal(flat, matrix) and flat.size == 128


def test_a_weight_shape_that_disagrees_is_refused_where_values_are_read(tmp_path):
    """The header's shape is [8, 16] (two words of int4 a row); weight_shape says 12 columns."""
    with pytest.raises(CheckpointError) as e:
        _values(_packed_channel(tmp_path / "q", torch.tensor([8, 12])))
    assert "weight_shape [8, 12] disagrees with the packed codes [8, 2] (logical [8, 16])" in str(
        e.value
    )
