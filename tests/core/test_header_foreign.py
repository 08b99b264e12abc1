"""Files that are something else are named for what they are (mutation testing: most of these
words and magic numbers were unchecked)."""

from __future__ import annotations

import pytest

from inspector.core.formats.safetensors import sniff_foreign_format
from inspector.core.formats.safetensors.foreign import _foreign_reason, _looks_like_onnx


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


@pytest.mark.parametrize(
    "head, said",
    [
        (b"abcdefgh", "a text file (it starts with 'abcdefgh'), not safetensors"),  # 8: enough
        (b"\tab\r\ncd~", "a text file (it starts with '\\tab\\r\\ncd~'), not safetensors"),
        (b"\x7fabcdefg", None),  # DEL is not text
        (b"abcdefg\x0b", None),  # nor a vertical tab
        (b"abcdefg\x0e", None),
        (b"abcdefg\x80rest", None),
        (b"abcdefgh\x80\xff", "a text file (it starts with 'abcdefgh'), not safetensors"),
    ],
)
def test_text_is_the_first_eight_bytes_printable(head, said):
    assert sniff_foreign_format(head) == said


@pytest.mark.parametrize(
    "head",
    [bytes([0x08, 0x07, field, 0x07]) for field in (0x12, 0x1A, 0x22, 0x2A, 0x32, 0x3A, 0x42)]
    + [b"\x08\x7f\x12\x00"],
)
def test_onnx_starts_with_ir_version_then_a_string_field(head):
    assert _looks_like_onnx(head)
    assert not _looks_like_onnx(head[:3])  # four bytes at least
    assert not _looks_like_onnx(bytes([head[0], 0x80]) + head[2:])


def test_the_reason_for_each_kind_of_torch_file(tmp_path):
    import zipfile

    z = tmp_path / "z.safetensors"
    for member, said in (
        ("m/code/x.py", "this is a TorchScript archive (torch.jit.save: code plus weights), "),
        ("m/data.pkl", "this is a PyTorch pickle checkpoint (torch.save zip with data.pkl), not "),
    ):
        with zipfile.ZipFile(z, "w") as zf:
            zf.writestr(member, "x")
        assert _foreign_reason(str(z), z.read_bytes()[:16]).startswith(said)
    assert _foreign_reason("old.pt", b"\x80\x02\x8a\x0a" + b"\0" * 12) == (
        "this is a PyTorch pickle checkpoint (legacy torch.save format), not safetensors; "
        "convert it first (torch.load, then safetensors.torch.save_file)"
    )
    assert (
        _foreign_reason("x.bin", b"GGUF\x03\0\0\0")
        == "this is a GGUF file (llama.cpp), not safetensors"
    )
    assert _foreign_reason("x.bin", b"\0" * 8) is None


def test_a_zip_is_sniffed_by_its_first_100_000_member_names(tmp_path):
    """The names read to tell a torch zip are capped (a crafted archive may list millions):
    the 100,000th name counts, the 100,001st does not. (Mutation testing: a cap one higher
    passed.)"""
    import zipfile

    z = tmp_path / "z.safetensors"
    with zipfile.ZipFile(z, "w") as zf:
        for i in range(99_999):
            zf.writestr(f"m/{i}", b"")
        zf.writestr("m/data.pkl", b"")  # the 100,000th: seen
        zf.writestr("m/constants.pkl", b"")  # the 100,001st: not seen (it would say TorchScript)
    assert _foreign_reason(str(z), z.read_bytes()[:16]).startswith(
        "this is a PyTorch pickle checkpoint (torch.save zip with data.pkl), not safetensors"
    )
