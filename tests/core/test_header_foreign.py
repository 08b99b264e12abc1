"""Files that are something else are named for what they are (mutation testing: most of these
words and magic numbers were unchecked)."""

from __future__ import annotations

import pytest

from inspector.core.header import sniff_foreign_format
from inspector.core.header.foreign import _foreign_reason, _looks_like_onnx


@pytest.mark.parametrize(
    "head, said",
    [
        (b"GGUF\x03\0\0\0" + b"\0" * 8, "a GGUF file (llama.cpp), not safetensors"),
        (b"\x89HDF\r\n\x1a\n" + b"\0" * 8, "an HDF5 file (Keras .h5?), not safetensors"),
        (b"\x93NUMPY\x01\0" + b"\0" * 8, "a NumPy .npy file, not safetensors"),
        (b'  {"weight_map": {}}', "a JSON text file (an index.json or config?), not safetensors"),
        (b"[1, 2, 3, 4, 5]", "a JSON text file (an index.json or config?), not safetensors"),
        (b"hello world, a text", "a text file (it starts with 'hello wo'), not safetensors"),
        (
            b"PK\x03\x04" + b"\0" * 12,
            "a zip archive (a PyTorch .pt/.bin pickle checkpoint saved by torch.save?), not safetensors",
        ),
    ]
    + [
        (
            b"\x80" + bytes([p]) + b"\0" * 14,
            "a Python pickle (a legacy PyTorch .pt/.bin checkpoint?), not safetensors",
        )
        for p in (2, 3, 4, 5)
    ],
)
def test_sniffed_formats(head, said):
    assert sniff_foreign_format(head) == said


def test_not_sniffed():
    assert sniff_foreign_format(b"\x80\x06" + b"\0" * 14) is None  # no pickle protocol 6
    assert sniff_foreign_format(b"\x80\x01" + b"\0" * 14) is None
    assert sniff_foreign_format(b"\x10\x00\x00\x00\x00\x00\x00\x00{") is None  # a real length
    assert sniff_foreign_format(b"abcdefg") is None  # under 8 bytes: no text verdict


def test_onnx_and_plain_zip(tmp_path):
    assert _looks_like_onnx(b"\x08\x07\x12\x07pytorch")
    assert not _looks_like_onnx(b"\x08\x87\x12\x07")  # a varint that continues
    assert not _looks_like_onnx(b"\x08\x07\x13\x07")
    assert (
        _foreign_reason("m.onnx", b"\x00\x01\x02\x03")
        == "this is an ONNX model (protobuf), not safetensors"
    )
    import zipfile

    z = tmp_path / "z.safetensors"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("readme.txt", "hi")
    assert _foreign_reason(str(z), z.read_bytes()[:16]) == "this is a zip archive, not safetensors"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("m/constants.pkl", "x")
    assert "TorchScript archive" in _foreign_reason(str(z), z.read_bytes()[:16])
