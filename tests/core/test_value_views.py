"""The value grid's window and the heatmap, against numpy on the whole tensor."""

from __future__ import annotations

import json
import struct
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.heatmap import heatmap, matrix_shape
from inspector.core.opening import open_checkpoint
from inspector.core.progress import Progress, run_job
from inspector.core.quant.of_checkpoint import quant_layout
from inspector.core.quant.values import dequantized_f32
from inspector.core.save.writer import save_arrays
from inspector.core.value_views import value_slice
from tests.quant_folders import deepseek_folder

F32, BF16, F8, I64, F64 = (DTYPES[n] for n in ("F32", "BF16", "F8_E4M3", "I64", "F64"))


def _ckpt(tmp_path, *tensors):
    path = tmp_path / "m.safetensors"
    save_arrays(path, list(tensors))
    return open_checkpoint(path)


def test_a_window_of_a_matrix_is_its_values_exactly(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((100, 70)).astype(ml_dtypes.bfloat16)
    ckpt = _ckpt(tmp_path, ("w", BF16, a))
    s = value_slice(ckpt, ckpt["w"], (), 10, 20, rows=64, cols=64)
    assert s.values.dtype == np.float64 and s.values.shape == (64, 50)  # clamped to 70 columns
    np.testing.assert_array_equal(s.values, a[10:74, 20:70].astype(np.float64))
    assert (s.row0, s.col0, s.plane.rows, s.plane.cols) == (10, 20, 100, 70)


@pytest.mark.parametrize("dtype", ["F8_E4M3", "F8_E5M2", "F16", "F64"])
def test_every_float_dtype_widens_exactly(tmp_path, dtype):
    d = DTYPES[dtype]
    a = (np.linspace(-3, 3, 48).reshape(6, 8) * 1.37).astype(d.numpy)
    ckpt = _ckpt(tmp_path, ("w", d, a))
    got = value_slice(ckpt, ckpt["w"], (), 1, 2, rows=3, cols=4).values
    np.testing.assert_array_equal(got, a[1:4, 2:6].astype(np.float64))


def test_a_3d_tensor_shows_the_plane_its_leading_index_picks(tmp_path):
    a = np.arange(2 * 3 * 5 * 7, dtype=np.int64).reshape(2, 3, 5, 7)
    ckpt = _ckpt(tmp_path, ("w", I64, a))
    s = value_slice(ckpt, ckpt["w"], (1, 2), 1, 3, rows=2, cols=2)
    assert s.plane.lead == (2, 3) and s.values.dtype == np.int64
    np.testing.assert_array_equal(s.values, a[1, 2, 1:3, 3:5])
    with pytest.raises(IndexError):
        value_slice(ckpt, ckpt["w"], (2, 0))


def test_a_vector_is_one_column_and_a_scalar_one_cell(tmp_path):
    v = np.arange(10, dtype=np.float32)
    ckpt = _ckpt(tmp_path, ("v", F32, v), ("s", F64, np.array(2.5)))
    s = value_slice(ckpt, ckpt["v"], (), 4, 0, rows=3)
    assert s.values.tolist() == [[4.0], [5.0], [6.0]]
    assert value_slice(ckpt, ckpt["s"]).values.tolist() == [[2.5]]


def test_packed_f4_reads_only_the_window(tmp_path):
    codes = np.arange(6 * 10, dtype=np.uint8) % 16
    packed = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)
    header = json.dumps({"t": {"dtype": "F4", "shape": [6, 10], "data_offsets": [0, 30]}})
    header += " " * (-len(header) % 8)
    path = tmp_path / "f4.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + packed.tobytes())
    ckpt = open_checkpoint(path)
    want = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float64).reshape(6, 10)
    got = value_slice(ckpt, ckpt["t"], (), 1, 3, rows=4, cols=5).values
    np.testing.assert_array_equal(got, want[1:5, 3:8])


def test_a_quantized_weight_shows_its_dequantized_values(tmp_path):
    deepseek_folder(tmp_path / "fp8", 300, 260, seed=1)
    with open_checkpoint(tmp_path / "fp8") as ckpt:
        w = quant_layout(ckpt).weights["model.layers.0.mlp.up_proj.weight"]
        whole = np.concatenate(list(dequantized_f32(ckpt, w))).reshape(300, 260)
        s = value_slice(ckpt, w.codes, (), 120, 100, rows=64, cols=64, weight=w)
        assert s.dequantized and s.name == w.name
        np.testing.assert_array_equal(s.values, whole[120:184, 100:164].astype(np.float64))
        h = run_job(heatmap(ckpt, w.codes, max_side=10, mode="mean", weight=w))
        want = whole.astype(np.float64).reshape(10, 30, 10, 26).mean(axis=(1, 3))
        np.testing.assert_allclose(h.values, want, rtol=1e-12)


def test_heatmap_of_constant_blocks(tmp_path):
    a = np.zeros((64, 96), np.float32)
    for i in range(4):
        for j in range(4):
            a[i * 16 : (i + 1) * 16, j * 24 : (j + 1) * 24] = i * 4 + j - 7.5
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    for mode in ("peak", "mean"):
        h = run_job(heatmap(ckpt, ckpt["w"], max_side=4, mode=mode, chunk_values=100))
        assert h.values.tolist() == (np.arange(16).reshape(4, 4) - 7.5).tolist()
        assert h.row_edges.tolist() == [0, 16, 32, 48, 64] and h.col_edges[1] == 24
    assert h.cell_of(17, 95) == (1, 3)


@pytest.mark.parametrize("chunk_values", [7, 64, 1000, 1 << 18])
def test_heatmap_equals_numpy_whatever_the_chunks(tmp_path, chunk_values):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 37, 53)).astype(np.float32)
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    m = a.reshape(111, 53).astype(np.float64)
    h = run_job(heatmap(ckpt, ckpt["w"], max_side=10, mode="peak", chunk_values=chunk_values))
    re, ce = _edges(111, 10), _edges(53, 10)
    for i in range(10):
        for j in range(10):
            block = m[re[i] : re[i + 1], ce[j] : ce[j + 1]]
            assert h.values[i, j] == block.flat[np.argmax(np.abs(block))]
    hm = run_job(heatmap(ckpt, ckpt["w"], max_side=10, mode="mean", chunk_values=chunk_values))
    assert hm.values[3, 4] == pytest.approx(m[re[3] : re[4], ce[4] : ce[5]].mean(), rel=1e-12)


def _edges(n, cells):
    return [(j * n + cells - 1) // cells for j in range(cells + 1)]


def test_small_matrices_are_not_upsampled_and_vectors_are_one_row(tmp_path):
    ckpt = _ckpt(
        tmp_path, ("w", F32, np.eye(3, dtype=np.float32)), ("v", F32, np.ones(5, np.float32))
    )
    assert run_job(heatmap(ckpt, ckpt["w"])).values.tolist() == np.eye(3).tolist()
    assert run_job(heatmap(ckpt, ckpt["v"], max_side=2)).values.tolist() == [[1.0, 1.0]]
    assert matrix_shape((2, 3, 4)) == (6, 4) and matrix_shape(()) == (1, 1)


def test_nan_and_inf_are_counted_not_folded(tmp_path):
    a = np.ones((4, 4), np.float32)
    a[0, 0], a[0, 1] = np.nan, np.inf  # cell (0, 0) keeps its finite 1s
    a[2:, 2:] = np.nan  # cell (1, 1) has no finite value
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    h = run_job(heatmap(ckpt, ckpt["w"], max_side=2))
    assert h.values[0, 0] == 1.0 and np.isnan(h.values[1, 1])
    assert h.nonfinite.tolist() == [[2, 0], [0, 4]]


def test_a_big_matrix_is_folded_in_bounded_memory(tmp_path):
    """A 256 MiB F32 matrix (sparse on disk): the heatmap allocates its
    512×512 cells (4 grids of 2 MiB) and a chunk, not the matrix."""
    rows, cols = 8192, 8192
    path = tmp_path / "big.safetensors"
    header = json.dumps({"w": {"dtype": "F32", "shape": [rows, cols],
                               "data_offsets": [0, rows * cols * 4]}})  # fmt: skip
    header += " " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header.encode())
        f.truncate(8 + len(header) + rows * cols * 4)  # zeros, never written
        f.seek(8 + len(header) + (5000 * cols + 7000) * 4)
        f.write(np.float32(-9.0).tobytes())
    ckpt = open_checkpoint(path)
    tracemalloc.start()
    try:
        h = run_job(heatmap(ckpt, ckpt["w"], max_side=512))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20, peak
    assert h.values.shape == (512, 512) and h.values[h.cell_of(5000, 7000)] == -9.0
    assert np.count_nonzero(h.values) == 1
    s = value_slice(ckpt, ckpt["w"], (), 4990, 6990, rows=16, cols=16)
    assert s.values[10, 10] == -9.0 and np.count_nonzero(s.values) == 1


def test_the_colour_limit_saturates_a_few_outliers_only(tmp_path):
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (100, 100)).astype(np.float32)
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    h = run_job(heatmap(ckpt, ckpt["w"]))
    assert h.colour_limit() == (float(np.abs(a).max()), False)
    a[5, 7] = -300.0  # one outlier of 10,000 would wash every other cell out
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    h = run_job(heatmap(ckpt, ckpt["w"]))
    limit, clipped = h.colour_limit()
    assert clipped and 0.95 < limit < 1.0
    z = _ckpt(tmp_path, ("z", F32, np.zeros((2, 2), np.float32)))
    assert run_job(heatmap(z, z["z"])).colour_limit() == (1.0, False)


def test_an_empty_tensor_with_a_huge_dimension_has_no_values(tmp_path):
    """[0, 2**64 - 1] is valid safetensors and holds nothing: no cells, no window, no error."""
    header = json.dumps({"a": {"dtype": "F32", "shape": [0, 2**64 - 1], "data_offsets": [0, 0]}})
    header += " " * (-len(header) % 8)
    path = tmp_path / "empty.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header.encode())
    ckpt = open_checkpoint(path)
    h = run_job(heatmap(ckpt, ckpt["a"]))
    assert h.values.size == 0 and (h.rows, h.cols) == (0, 2**64 - 1)
    assert value_slice(ckpt, ckpt["a"]).values.size == 0


def test_a_transposed_pickle_tensor_is_read_through_its_strides(tmp_path):
    torch = pytest.importorskip("torch")
    w = torch.arange(5 * 7, dtype=torch.float32).reshape(5, 7)
    torch.save({"w": w.t(), "v": w[:, 2]}, tmp_path / "m.pt")  # strided views of one storage
    ckpt = open_checkpoint(tmp_path / "m.pt")
    got = value_slice(ckpt, ckpt["w"], (), 2, 1, rows=3, cols=3).values
    np.testing.assert_array_equal(got, w.t().numpy()[2:5, 1:4])
    assert value_slice(ckpt, ckpt["v"], (), 1, 0, rows=2).values.tolist() == [[9.0], [16.0]]
    h = run_job(heatmap(ckpt, ckpt["w"], max_side=7, chunk_values=5))
    np.testing.assert_array_equal(h.values, w.t().numpy())


def test_a_burn_quantized_weight_shows_its_dequantized_values(tmp_path):
    """burn's QFloat stores its block scales after the values in the same tensor: a window reads
    each row's value bytes only (16 a row here), not the tensor's bytes divided by its rows."""
    from inspector.core.quant.recognise import recognise
    from tests.burnpack_files import BurnTensor, write_burnpack

    codes = np.arange(-64, 64, dtype=np.int8).reshape(8, 16)
    scales = np.array([0.5, 2.0], np.float32)  # blocks of 4 rows × 16: one row of the grid each
    block = {"size": {"storage": [4, 16, 1, 1, 1], "len": 2}, "dtype": "F32"}
    scheme = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
              "block": block}  # fmt: skip
    path = write_burnpack(
        tmp_path / "q.bpk",
        [BurnTensor("w", {"QFloat": scheme}, [8, 16], codes.tobytes() + scales.tobytes())],
    )
    want = codes.astype(np.float32) * np.repeat(scales, 4)[:, None]
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None
        w = layout.weights["w"]
        for row0, col0 in ((0, 0), (3, 5), (6, 12)):
            s = value_slice(ckpt, w.codes, (), row0, col0, rows=3, cols=4, weight=w)
            assert s.values.tolist() == want[row0 : row0 + 3, col0 : col0 + 4].tolist()


def _packed_file(tmp_path, dtype: str, shape: tuple[int, ...], codes: np.ndarray):
    """A safetensors file of one packed F4 (two codes a byte, low nibble first) or F6 (four
    codes in 3 bytes, least significant bits first) tensor ``t``, written byte by byte."""
    if dtype == "F4":
        packed = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)
    else:
        c = codes.reshape(-1, 4).astype(np.uint32)
        word = c[:, 0] | (c[:, 1] << 6) | (c[:, 2] << 12) | (c[:, 3] << 18)
        packed = np.stack([word & 0xFF, (word >> 8) & 0xFF, word >> 16], axis=1).astype(np.uint8)
    n = packed.size
    header = json.dumps({"t": {"dtype": dtype, "shape": list(shape), "data_offsets": [0, n]}})
    header += " " * (-len(header) % 8)
    path = tmp_path / f"{dtype}.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + packed.tobytes())
    return open_checkpoint(path)


def test_the_default_window_is_the_top_left_64_by_64(tmp_path):
    a = np.arange(100 * 100, dtype=np.float32).reshape(100, 100)
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    s = value_slice(ckpt, ckpt["w"])
    assert (s.name, s.index, s.row0, s.col0, s.values.shape) == ("w", (), 0, 0, (64, 64))
    np.testing.assert_array_equal(s.values, a[:64, :64])


def test_a_window_is_clamped_to_the_plane_and_may_hold_no_row_or_column(tmp_path):
    """A start past the end shows the last row and column (the window scrolled to the end);
    a window of no rows (or columns) is empty, not one row."""
    a = np.arange(100 * 100, dtype=np.float32).reshape(100, 100)
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    s = value_slice(ckpt, ckpt["w"], (), 1000, 1000, rows=2, cols=2)
    assert (s.row0, s.col0, s.values.tolist()) == (99, 99, [[9999.0]])
    s = value_slice(ckpt, ckpt["w"], (), 1, 2, rows=0, cols=3)
    assert (s.row0, s.col0, s.values.shape) == (1, 2, (0, 3))
    assert value_slice(ckpt, ckpt["w"], (), 1, 2, rows=3, cols=0).values.shape == (3, 0)


def test_an_empty_tensor_gives_an_empty_window_of_its_plane(tmp_path):
    from inspector.core.value_views import Plane

    ckpt = _ckpt(tmp_path, ("e", F32, np.zeros((2, 0, 3), np.float32)))
    s = value_slice(ckpt, ckpt["e"], (1,), 5, 5)
    assert (s.name, s.index, s.row0, s.col0, s.values.shape) == ("e", (1,), 0, 0, (0, 0))
    assert s.plane == Plane((2, 0, 3)) and s.dequantized is False


def test_an_empty_quantized_weight_is_still_shown_as_dequantized(tmp_path):
    """An fp8 weight of no rows is recognised: its empty window and heatmap say they are the
    dequantized values (the view labels them so), as a weight with values would."""
    from tests.quant_folders import folder

    qc = {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}
    codes = np.zeros((0, 256), ml_dtypes.float8_e4m3fn)
    tensors = [("m.weight", F8, codes), ("m.weight_scale_inv", F32, np.zeros((0, 2), np.float32))]
    with open_checkpoint(folder(tmp_path / "e", tensors, qc)) as ckpt:
        w = quant_layout(ckpt).weights["m.weight"]
        s = value_slice(ckpt, w.codes, weight=w)
        h = run_job(heatmap(ckpt, w.codes, weight=w))
    assert (s.values.shape, s.plane.shape, s.dequantized) == ((0, 0), (0, 256), True)
    assert (h.values.shape, h.rows, h.cols, h.dequantized) == ((0, 0), 0, 256, True)


def test_the_plane_index_is_checked_against_the_leading_dimensions(tmp_path):
    """Index 0 is a plane; the size of a dimension is not, nor an index of the wrong length:
    IndexError naming both, before anything is read."""
    a = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    s = value_slice(ckpt, ckpt["w"], (0, 0), 0, 0, rows=2, cols=2)
    assert (s.index, s.values.tolist()) == ((0, 0), [[0.0, 1.0], [5.0, 6.0]])
    with pytest.raises(IndexError, match=r"^plane \[2, 0\] outside \[2, 3\]$"):
        value_slice(ckpt, ckpt["w"], (2, 0))
    with pytest.raises(IndexError, match=r"^plane \[0, 3\] outside \[2, 3\]$"):
        value_slice(ckpt, ckpt["w"], (0, 3))
    with pytest.raises(IndexError, match=r"^plane \[1\] outside \[2, 3\]$"):
        value_slice(ckpt, ckpt["w"], (1,))


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype", ["F4", "F6_E2M3"])
def test_packed_planes_and_windows_off_unit_boundaries(tmp_path, dtype):
    """A packed tensor's window from any plane and column: F6 packs 4 values in 3 bytes, F4
    2 in a byte, and a window may start and end inside a unit or start below its own height
    (row 3 of a one-row window); read without a warning. Mutation testing: F6 read as F4, a
    plane index ignored, a window end one value off, all went unnoticed (the F4 test had one
    2-D plane, even ends)."""
    d = DTYPES[dtype]
    shape = (2, 3, 4, 5)
    codes = (np.arange(2 * 3 * 4 * 5) % (16 if d.bits == 4 else 64)).astype(np.uint8)
    ckpt = _packed_file(tmp_path, dtype, shape, codes)
    want = codes.view(d.numpy).astype(np.float64).reshape(shape)
    got = value_slice(ckpt, ckpt["t"], (1, 2), 1, 1, rows=3, cols=3).values
    np.testing.assert_array_equal(got, want[1, 2, 1:4, 1:4])
    got = value_slice(ckpt, ckpt["t"], (0, 1), 3, 0, rows=1, cols=5).values
    np.testing.assert_array_equal(got, want[0, 1, 3:4, :])
    with pytest.raises(IndexError, match=r"^plane \[2, 0\] outside \[2, 3\]$"):
        value_slice(ckpt, ckpt["t"], (2, 0))


def test_bool_unsigned_and_complex_values_keep_their_kind(tmp_path):
    """bool stays bool, uint64 stays uint64 (2**64 - 1 exact), complex becomes complex128 (its
    imaginary part kept)."""
    ckpt = _ckpt(
        tmp_path,
        ("b", DTYPES["BOOL"], np.array([True, False])),
        ("u", DTYPES["U64"], np.array([2**64 - 1, 1], np.uint64)),
        ("c", DTYPES["C64"], np.array([1 + 2j, -3j], np.complex64)),
    )
    b, u, c = (value_slice(ckpt, ckpt[n]).values for n in "buc")
    assert (b.dtype, b.tolist()) == (np.dtype(bool), [[True], [False]])
    assert (u.dtype, u.tolist()) == (np.dtype(np.uint64), [[2**64 - 1], [1]])
    assert (c.dtype, c.tolist()) == (np.dtype(np.complex128), [[1 + 2j], [-3j]])


def _fp8(tmp_path, rows: int, cols: int):
    deepseek_folder(tmp_path / f"fp8_{rows}", rows, cols, seed=2)
    ckpt = open_checkpoint(tmp_path / f"fp8_{rows}")
    w = quant_layout(ckpt).weights["model.layers.0.mlp.up_proj.weight"]
    whole = np.concatenate(list(dequantized_f32(ckpt, w))).reshape(rows, cols)
    return ckpt, w, whole.astype(np.float64)


@pytest.mark.filterwarnings("error")
def test_a_quantized_window_of_one_column_or_one_row_is_dequantized_exactly(tmp_path):
    """The rows dequantized are those the window's first and last values lie in: a window one
    column wide still has its last row (the last value is not the row before's end), and a
    weight of one row reads that row's bytes, all of them, without a warning."""
    ckpt, w, whole = _fp8(tmp_path, 300, 260)
    with ckpt:
        s = value_slice(ckpt, w.codes, (), 126, 0, rows=4, cols=1, weight=w)
        np.testing.assert_array_equal(s.values, whole[126:130, :1])
    ckpt, w, whole = _fp8(tmp_path, 1, 260)
    with ckpt:
        s = value_slice(ckpt, w.codes, (), 0, 250, rows=5, cols=64, weight=w)
        np.testing.assert_array_equal(s.values, whole[:, 250:])


def test_a_quantized_window_is_refused_past_the_dequantized_values_limit(tmp_path, monkeypatch):
    """Rows 10 and 11 of 260 values dequantize 520 values: shown under a limit of 520,
    refused (with the count) under 519."""
    from inspector.core import value_views
    from inspector.core.errors import CheckpointError

    ckpt, w, whole = _fp8(tmp_path, 300, 260)
    with ckpt:
        monkeypatch.setattr(value_views, "MAX_DEQUANT_VALUES", 520)
        s = value_slice(ckpt, w.codes, (), 10, 0, rows=2, cols=300, weight=w)
        np.testing.assert_array_equal(s.values, whole[10:12])
        monkeypatch.setattr(value_views, "MAX_DEQUANT_VALUES", 519)
        with pytest.raises(CheckpointError, match="dequantizes 520 values at a time: too many"):
            value_slice(ckpt, w.codes, (), 10, 0, rows=2, cols=300, weight=w)


def test_a_packed_quantized_weight_is_seen_in_its_logical_shape_and_name(tmp_path):
    """GPTQ's codes (``qweight``, [16, 64]) are not the weight ([64, 128]): the window, the
    heatmap and its progress are the logical weight's."""
    from tests.quant_folders import folder, gptq_tensors

    qc = {"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": False, "sym": True}
    folder(tmp_path / "g", gptq_tensors(), qc)
    with open_checkpoint(tmp_path / "g") as ckpt:
        w = quant_layout(ckpt).weights["model.layers.0.mlp.up_proj.weight"]
        whole = np.concatenate(list(dequantized_f32(ckpt, w))).reshape(64, 128)
        s = value_slice(ckpt, w.codes, (), 60, 100, weight=w)
        assert (s.name, s.plane.shape, s.values.shape) == (w.name, (64, 128), (4, 28))
        np.testing.assert_array_equal(s.values, whole[60:, 100:].astype(np.float64))
        job, steps = heatmap(ckpt, w.codes, max_side=8, weight=w), []
        while True:
            try:
                steps.append(next(job))
            except StopIteration as stop:
                h = stop.value
                break
    assert (h.name, h.rows, h.cols, h.mode, h.dequantized) == (w.name, 64, 128, "peak", True)
    assert steps[0] == Progress(0, 5248, w.name) and steps[-1] == Progress(5248, 5248, w.name)


def _steps(job):
    steps = []
    while True:
        try:
            p = next(job)
        except StopIteration as stop:
            return stop.value, [(p.done, p.total, p.name) for p in steps]
        steps.append(p)


def test_a_heatmap_is_512_cells_wide_by_default_and_reports_bytes_read(tmp_path):
    """600 values in chunks of 256: progress in bytes (integers, 4 per F32 value) after each
    chunk, and a result that names the tensor, its mode and that it is not dequantized."""
    v = np.arange(600, dtype=np.float32)
    ckpt = _ckpt(tmp_path, ("v", F32, v))
    h, steps = _steps(heatmap(ckpt, ckpt["v"], chunk_values=256))
    assert steps == [(0, 2400, "v"), (1024, 2400, "v"), (2048, 2400, "v"), (2400, 2400, "v")]
    assert all(type(done) is int for done, _, _ in steps)
    assert (h.name, h.rows, h.cols, h.values.shape, h.mode) == ("v", 1, 600, (1, 512), "peak")
    assert h.dequantized is False
    hm = run_job(heatmap(ckpt, ckpt["v"], max_side=3, mode="mean"))
    assert (hm.mode, hm.values.tolist()) == ("mean", [[99.5, 299.5, 499.5]])


def test_an_empty_matrix_and_a_single_column_have_the_cells_they_hold(tmp_path):
    """[3, 0] has no cell (and no division by its 0 columns); [5, 1] is 5 cells of 1 column,
    its non-finite counts integers."""
    ckpt = _ckpt(
        tmp_path,
        ("e", F32, np.zeros((3, 0), np.float32)),
        ("c", F32, np.array([[1.0], [np.nan], [3.0], [4.0], [5.0]], np.float32)),
    )
    e = run_job(heatmap(ckpt, ckpt["e"], mode="mean"))
    assert (e.name, e.rows, e.cols, e.mode, e.dequantized) == ("e", 3, 0, "mean", False)
    assert (e.values.shape, e.nonfinite.shape, e.nonfinite.dtype) == ((0, 0), (0, 0), np.int64)
    c = run_job(heatmap(ckpt, ckpt["c"]))
    assert c.values.shape == (5, 1) and np.isnan(c.values[1, 0])
    assert c.values[[0, 2, 3, 4], 0].tolist() == [1.0, 3.0, 4.0, 5.0]
    assert (c.nonfinite.dtype, c.nonfinite.tolist()) == (np.int64, [[0], [1], [0], [0], [0]])


@pytest.mark.filterwarnings("error")
def test_mean_cells_leave_out_non_finite_values_silently(tmp_path):
    """A cell's mean is over its finite values (NaN and inf neither summed nor counted); a cell
    with none is NaN, without numpy's 0/0 warning."""
    a = np.ones((4, 4), np.float32)
    a[0, 0], a[0, 1] = np.nan, np.inf
    a[2:, 2:] = np.nan
    ckpt = _ckpt(tmp_path, ("w", F32, a))
    h = run_job(heatmap(ckpt, ckpt["w"], max_side=2, mode="mean"))
    assert h.values[0, 0] == 1.0 and h.values[0, 1] == 1.0 and np.isnan(h.values[1, 1])


def test_peak_keeps_the_positive_value_of_a_tie_and_the_modulus_of_a_complex(tmp_path):
    """-2 and 2 in one cell: 2 (one rule for every cell); 3+4j: 5, its magnitude."""
    ckpt = _ckpt(
        tmp_path,
        ("t", F32, np.array([[-2.0, 2.0], [2.0, -2.0]], np.float32)),
        ("c", DTYPES["C64"], np.array([3 + 4j, -1j], np.complex64)),
    )
    assert run_job(heatmap(ckpt, ckpt["t"], max_side=1)).values.tolist() == [[2.0]]
    assert run_job(heatmap(ckpt, ckpt["c"])).values.tolist() == [[5.0, 1.0]]


def test_the_cell_of_an_element_in_a_grid_taller_than_wide(tmp_path):
    ckpt = _ckpt(tmp_path, ("w", F32, np.zeros((8, 4), np.float32)))
    h = run_job(heatmap(ckpt, ckpt["w"], max_side=8))
    assert h.values.shape == (8, 4) and h.cell_of(7, 3) == (7, 3) and h.cell_of(5, 1) == (5, 1)


@pytest.mark.parametrize(
    ("cells", "quantile", "limit"),
    [
        ([5.0], 0.995, (5.0, False)),  # one cell: its own magnitude
        ([2.0, 2.0, 8.0], 0.5, (8.0, False)),  # exactly 4× the quantile: not an outlier
        ([2.0, 2.0, 9.0], 0.5, (2.0, True)),  # past 4×: the quantile, clipping
        ([0.0] * 200 + [3.0], 0.995, (3.0, False)),  # quantile 0: nothing to clip to
    ],
)
def test_the_colour_limit_at_its_boundaries(tmp_path, cells, quantile, limit):
    ckpt = _ckpt(tmp_path, ("v", F32, np.array(cells, np.float32)))
    assert run_job(heatmap(ckpt, ckpt["v"])).colour_limit(quantile) == limit


def test_a_packed_window_of_a_file_cut_short_after_opening_names_the_file(tmp_path):
    """The window's bytes are read when asked for: a file truncated since it was opened is a
    CheckpointError naming it, not a short row."""
    from inspector.core.errors import CheckpointError

    codes = (np.arange(6 * 10) % 16).astype(np.uint8)
    ckpt = _packed_file(tmp_path, "F4", (6, 10), codes)
    path = tmp_path / "F4.safetensors"
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 10)  # the last 20 values (rows 4 and 5)
    with pytest.raises(CheckpointError, match="truncated while reading") as e:
        value_slice(ckpt, ckpt["t"], (), 3, 0, rows=3)
    assert str(path) in str(e.value)
