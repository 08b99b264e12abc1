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
from inspector.core.progress import run_job
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
