"""Opening files, indexes and folders; mmap views of every dtype compared with torch."""

from __future__ import annotations

import json
import os
import struct

import ml_dtypes
import numpy as np
import pytest
import torch
from safetensors.numpy import save_file as save_numpy
from safetensors.torch import save_file

from inspector.core.checkpoint import unpack
from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.formats.safetensors import read_header
from inspector.core.opening import open_checkpoint

from .. import torch_dtypes

TORCH_DTYPES = torch_dtypes.ALL


@pytest.mark.parametrize("name", sorted(TORCH_DTYPES))
def test_view_matches_torch_for_every_torch_dtype(tmp_path, name):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(5, 7, generator=g) * 10
    t = base.to(TORCH_DTYPES[name]) if name != "BOOL" else base > 0
    path = tmp_path / "m.safetensors"
    save_file({"t": t, "pad": torch.zeros(3)}, path)
    ckpt = open_checkpoint(path)
    view = ckpt.view("t")
    assert view.shape == (5, 7)
    assert ckpt["t"].dtype.name == name
    assert not view.flags.writeable
    ref = t.view(torch.uint8) if t.dtype.itemsize == 1 and name != "BOOL" else t
    if name in ("F8_E4M3", "F8_E5M2"):
        np.testing.assert_array_equal(view.view(np.uint8), ref.numpy())
        np.testing.assert_array_equal(view.astype(np.float32), t.float().numpy())
    elif name == "BF16":
        np.testing.assert_array_equal(view.astype(np.float32), t.float().numpy())
    else:
        np.testing.assert_array_equal(view, t.numpy())


@pytest.mark.parametrize(
    "name", ["F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "C64", "U16", "U32", "U64"]
)
def test_view_of_dtypes_torch_lacks(tmp_path, name):
    np_dtype = DTYPES[name].numpy
    values = np.arange(1, 13, dtype=np.float64).reshape(3, 4)
    arr = values.astype(np_dtype)
    save_numpy({"t": arr}, str(tmp_path / "m.safetensors"))
    view = open_checkpoint(tmp_path / "m.safetensors").view("t")
    assert view.dtype == np_dtype
    np.testing.assert_array_equal(view, arr)


def _raw_file(path, name, dtype, shape, payload: bytes):
    header = json.dumps({name: {"dtype": dtype, "shape": shape, "data_offsets": [0, len(payload)]}})
    header += " " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + payload)


def test_f4_is_unpacked_low_nibble_first(tmp_path):
    # codes 0..15 of float4_e2m1fn, two per byte, first element in the low nibble
    codes = np.arange(16, dtype=np.uint8)
    packed = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)
    _raw_file(tmp_path / "f4.safetensors", "t", "F4", [4, 4], packed.tobytes())
    view = open_checkpoint(tmp_path / "f4.safetensors").view("t")
    expected = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32).reshape(4, 4)
    np.testing.assert_array_equal(view.astype(np.float32), expected)
    assert view.astype(np.float32)[0, :4].tolist() == [0.0, 0.5, 1.0, 1.5]


def test_f6_unpacks_four_values_from_three_bytes(tmp_path):
    codes = np.array([1, 2, 3, 63, 0, 5, 10, 20], dtype=np.uint32)
    words = codes.reshape(-1, 4)
    word = words[:, 0] | words[:, 1] << 6 | words[:, 2] << 12 | words[:, 3] << 18
    raw = np.stack([word & 0xFF, (word >> 8) & 0xFF, word >> 16], axis=1).astype(np.uint8)
    out = unpack(raw.ravel(), DTYPES["F6_E2M3"])
    np.testing.assert_array_equal(out.view(np.uint8), codes.astype(np.uint8))


def test_iter_chunks_covers_the_tensor_in_bounded_pieces(tmp_path):
    t = torch.arange(10_001, dtype=torch.float64)
    save_file({"t": t}, tmp_path / "m.safetensors")
    ckpt = open_checkpoint(tmp_path / "m.safetensors")
    sizes, parts = [], []
    for chunk in ckpt.iter_chunks(ckpt["t"], chunk_bytes=4096):
        sizes.append(chunk.nbytes)
        parts.append(chunk.copy())
    assert max(sizes) == 4096
    np.testing.assert_array_equal(np.concatenate(parts), t.numpy())


def test_header_keeps_json_order_and_metadata(tmp_path):
    save_file(
        {"z": torch.zeros(2), "a": torch.ones(3, dtype=torch.float64)},
        tmp_path / "m.safetensors",
        metadata={"format": "pt"},
    )
    h = read_header(tmp_path / "m.safetensors")
    raw = (tmp_path / "m.safetensors").read_bytes()
    text = raw[8 : 8 + struct.unpack("<Q", raw[:8])[0]]
    text_order = [k for k in json.loads(text) if k != "__metadata__"]
    assert [t.name for t in h.tensors] == text_order
    assert h.metadata == {"format": "pt"}
    ckpt = open_checkpoint(tmp_path / "m.safetensors")
    assert ckpt.metadata == {"format": "pt"}
    assert ckpt.total_nbytes == 2 * 4 + 3 * 8


def _sharded(tmp_path):
    from huggingface_hub import save_torch_state_dict

    g = torch.Generator().manual_seed(1)
    sd = {f"layer.{i}.weight": torch.randn(64, 64, generator=g) for i in range(6)}
    sd["layer.0.weight"] = sd["layer.0.weight"].double()
    sd["buf"] = torch.arange(4)
    save_torch_state_dict(sd, tmp_path, max_shard_size="40KB")
    return sd


def test_sharded_index_and_folder_merge_all_shards(tmp_path):
    sd = _sharded(tmp_path)
    index = tmp_path / "model.safetensors.index.json"
    assert index.exists()
    for path in (index, tmp_path):
        ckpt = open_checkpoint(path)
        assert ckpt.is_sharded
        assert len(ckpt.files) > 1
        assert sorted(t.name for t in ckpt.tensors) == sorted(sd)
        for name, value in sd.items():
            got = ckpt.view(name)
            np.testing.assert_array_equal(got, value.numpy())
            assert json.loads(index.read_text())["weight_map"][name] in ckpt[name].file


def test_folder_with_one_file_opens_it(tmp_path):
    save_file({"a": torch.zeros(1)}, tmp_path / "only.safetensors")
    assert open_checkpoint(tmp_path).path.endswith("only.safetensors")


def test_folder_with_several_files_and_no_index_is_an_error(tmp_path):
    save_file({"a": torch.zeros(1)}, tmp_path / "a.safetensors")
    save_file({"a": torch.zeros(1)}, tmp_path / "b.safetensors")
    with pytest.raises(CheckpointError, match=r"2 \.safetensors files but no index"):
        open_checkpoint(tmp_path)


def test_empty_folder_says_what_is_missing(tmp_path):
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(tmp_path)
    assert (e.value.path, e.value.reason) == (
        str(tmp_path),
        "folder holds no .safetensors file and no *.safetensors.index.json (nor a PyTorch pickle"
        ", a Burnpack .bpk or a .gguf)",
    )


def test_pytorch_pickle_named_safetensors_is_named_not_read(tmp_path):
    """A .pt renamed .safetensors: safe_open refuses it, and so do we, saying what it is."""
    torch.save({"w": torch.zeros(2)}, tmp_path / "model.safetensors")
    with pytest.raises(CheckpointError, match="PyTorch pickle"):
        open_checkpoint(tmp_path / "model.safetensors")


def test_header_only_open_does_not_read_data(tmp_path):
    """A header pointing at 1 GiB of (sparse) data opens instantly and reads nothing else."""
    path = tmp_path / "big.safetensors"
    n = 1 << 30
    header = json.dumps({"t": {"dtype": "F32", "shape": [n // 4], "data_offsets": [0, n]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.truncate(8 + len(header) + n)
    ckpt = open_checkpoint(path)
    assert ckpt["t"].numel == n // 4
    assert ckpt.byte_range(ckpt["t"]) == (8 + len(header), 8 + len(header) + n)


def test_packed_tensors_come_in_whole_elements_whatever_the_chunk(tmp_path):
    """F6 packs four values in three bytes, F4 two in one: a chunk must end on those bounds, and
    each is unpacked to one code per element."""
    import json as _json
    import struct as _struct

    f6 = bytes(range(30))  # 40 six-bit values
    f4 = bytes([0x21, 0x43, 0x65])  # codes 1..6, low nibble first
    header = {
        "a": {"dtype": "F6_E2M3", "shape": [40], "data_offsets": [0, 30]},
        "b": {"dtype": "F4", "shape": [6], "data_offsets": [30, 33]},
    }
    raw = _json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path = tmp_path / "packed.safetensors"
    path.write_bytes(_struct.pack("<Q", len(raw)) + raw + f6 + f4)

    from inspector.core.checkpoint import unpack

    with open_checkpoint(path) as ckpt:
        a, b = ckpt.tensors
        want_a = unpack(np.frombuffer(f6, np.uint8), a.dtype)  # the whole tensor at once
        want_b = unpack(np.frombuffer(f4, np.uint8), b.dtype)
        assert want_a.size == 40
        assert want_b.astype(np.float32).tolist() == [0.5, 1, 1.5, 2, 3, 4]  # E2M1 codes 1..6
        for chunk_bytes in (1, 4, 7, 9, 1 << 20):
            got = np.concatenate([c.copy() for c in ckpt.iter_chunks(a, chunk_bytes)])
            np.testing.assert_array_equal(got, want_a)
            got = np.concatenate([c.copy() for c in ckpt.iter_chunks(b, chunk_bytes)])
            np.testing.assert_array_equal(got, want_b)


def test_views_of_one_byte_and_empty_tensors_keep_value_and_dtype(tmp_path):
    save_file(
        {"one": torch.tensor([7], dtype=torch.uint8), "none": torch.zeros(0, 3, dtype=torch.int64)},
        tmp_path / "m.safetensors",
    )
    with open_checkpoint(tmp_path / "m.safetensors") as ckpt:
        assert ckpt.view("one").tolist() == [7]
        empty = ckpt.view("none")
        assert (empty.dtype, empty.shape) == (np.dtype(np.int64), (0, 3))


def test_a_packed_tensor_followed_by_others_is_viewed_alone(tmp_path):
    header = {
        "f4": {"dtype": "F4", "shape": [4], "data_offsets": [0, 2]},
        "after": {"dtype": "U8", "shape": [6], "data_offsets": [2, 8]},
    }
    text = json.dumps(header)
    text += " " * (-len(text) % 8)
    payload = bytes([0x21, 0x43]) + bytes(range(6))
    (tmp_path / "p.safetensors").write_bytes(struct.pack("<Q", len(text)) + text.encode() + payload)
    with open_checkpoint(tmp_path / "p.safetensors") as ckpt:
        assert ckpt.view("f4").astype(np.float32).tolist() == [0.5, 1.0, 1.5, 2.0]


def test_a_shape_numpy_cannot_hold_is_named_in_one_line(tmp_path):
    path = tmp_path / "deep.safetensors"
    _raw_file(path, "x", "F32", [1] * 65, b"\0\0\0\0")
    with open_checkpoint(path) as ckpt, pytest.raises(CheckpointError) as e:
        ckpt.view("x")
    assert e.value.path == str(path)
    assert e.value.reason.startswith("tensor 'x': shape [1, 1, 1, 1, ")  # clipped
    assert e.value.reason.endswith(
        " cannot be shown as an array (numpy allows at most 64 dimensions and 2**63 bytes)"
    )


def test_a_file_truncated_while_reading_is_named(tmp_path):
    save_file({"t": torch.arange(4096, dtype=torch.float32)}, tmp_path / "m.safetensors")
    with open_checkpoint(tmp_path / "m.safetensors") as ckpt:
        chunks = ckpt.iter_chunks(ckpt["t"], chunk_bytes=4096)
        next(chunks)
        os.truncate(tmp_path / "m.safetensors", 9000)
        with pytest.raises(CheckpointError) as e:
            list(chunks)
    assert e.value.path == str(tmp_path / "m.safetensors")
    assert e.value.reason == "file is shorter than its header says (truncated while reading)"


def test_a_read_error_names_the_file_it_came_from():
    """EIO from a failing disk is the checkpoint's problem; left as a bare OSError, the CLI
    took it for a failed write to standard output."""
    import errno

    from inspector.core.checkpoint import read_byte_chunks

    class FailingDisk:
        def seek(self, pos):
            return pos

        def readinto(self, view):
            raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(CheckpointError) as e:
        list(read_byte_chunks(FailingDisk(), "m.safetensors", 0, 16, 8))
    assert (e.value.path, e.value.reason) == ("m.safetensors", "cannot read: Input/output error")


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (OSError(5, "Input/output error"), "Input/output error"),
        (OSError("the network share went away."), "the network share went away"),
        (OSError("lost the mount at /mnt/X"), "lost the mount at /mnt/X"),
        (OSError(), "OSError"),
    ],
    ids=["strerror", "message-with-full-stop", "message-ending-in-x", "no-words-at-all"],
)
def test_a_read_error_is_worded_by_its_system_message_or_its_text(error, reason):
    """The reason is the system's message, else the error's own text, else its class: one
    sentence without the final full stop, so the line reads "path: cannot read: ..."."""
    from inspector.core.checkpoint import read_byte_chunks

    class FailingDisk:
        def seek(self, pos):
            return pos

        def readinto(self, view):
            raise error

    with pytest.raises(CheckpointError) as e:
        list(read_byte_chunks(FailingDisk(), "m.safetensors", 0, 16, 8))
    assert (e.value.path, e.value.reason) == ("m.safetensors", f"cannot read: {reason}")


def test_a_map_refused_with_a_value_error_names_the_file_and_the_reason(tmp_path, monkeypatch):
    """mmap raises ValueError, not OSError, for a file that shrank between the size check and
    the map ("mmap length is greater than file size"): worded the same, without the class."""
    import mmap

    save_file({"t": torch.ones(4)}, tmp_path / "m.safetensors")
    with open_checkpoint(tmp_path / "m.safetensors") as ckpt:

        def shrunk(*args, **kwargs):
            raise ValueError("mmap length is greater than file size")

        monkeypatch.setattr(mmap, "mmap", shrunk)
        with pytest.raises(CheckpointError) as e:
            ckpt.view("t")
    assert (e.value.path, e.value.reason) == (
        str(tmp_path / "m.safetensors"),
        "cannot map the file: mmap length is greater than file size",
    )
