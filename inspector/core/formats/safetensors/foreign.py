"""Name a file that is not safetensors from its first bytes (pickle, zip, TorchScript, ONNX…)."""

from __future__ import annotations


def sniff_foreign_format(head: bytes) -> str | None:
    """Name a well-known non-safetensors format from its first bytes, so the error says what it is.

    Only meaningful for a file already found not to be safetensors: a valid header length can
    begin with these bytes too (640 is ``80 02 00 ..``, the start of a pickle).
    """
    if head.startswith(b"PK\x03\x04"):
        return "a zip archive (a PyTorch .pt/.bin pickle checkpoint saved by torch.save?), not safetensors"
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "a Python pickle (a legacy PyTorch .pt/.bin checkpoint?), not safetensors"
    if head.startswith(b"NRUB"):
        return "a Burnpack file (burn's .bpk), not safetensors"
    if head.startswith(b"GGUF"):
        return "a GGUF file (llama.cpp), not safetensors"
    if head.startswith(b"\x89HDF"):
        return "an HDF5 file (Keras .h5?), not safetensors"
    if head.startswith(b"\x93NUMPY"):
        return "a NumPy .npy file, not safetensors"
    if len(head) >= 8 and all(32 <= b < 127 or b in (9, 10, 13) for b in head[:8]):
        # a real header length is < 2**27, so its bytes 4..7 are zero, never printable
        start = head.decode("ascii", "replace").lstrip()
        if start.startswith(("{", "[")):
            return "a JSON text file (an index.json or config?), not safetensors"
        return f"a text file (it starts with {head[:8].decode('ascii')!r}), not safetensors"
    return None


def _zip_members(path: str) -> list[str]:
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return zf.namelist()[:100_000]
    except Exception:  # zipfile raises assorted errors on crafted archives; sniffing must not
        return []


def _foreign_reason(path: str, head: bytes) -> str | None:
    what = sniff_foreign_format(head)
    if what and head.startswith(b"PK\x03\x04"):
        members = _zip_members(path)
        if any(m.endswith("constants.pkl") or "/code/" in m for m in members):
            return (
                "this is a TorchScript archive (torch.jit.save: code plus weights), not a checkpoint "
                "of tensors; load it with torch.jit.load and save its state_dict() with safetensors"
            )
        if any(m.endswith("data.pkl") for m in members):
            return "this is a PyTorch pickle checkpoint (torch.save zip with data.pkl), not safetensors; convert it first (torch.load, then safetensors.torch.save_file)"
        return "this is a zip archive, not safetensors"
    if what and "pickle" in what:
        return "this is a PyTorch pickle checkpoint (legacy torch.save format), not safetensors; convert it first (torch.load, then safetensors.torch.save_file)"
    if what is None and (path.lower().endswith(".onnx") or _looks_like_onnx(head)):
        return "this is an ONNX model (protobuf), not safetensors"
    return f"this is {what}" if what else None


def _looks_like_onnx(head: bytes) -> bool:
    """ONNX ModelProto starts with ir_version (field 1, varint), then a string field 2..8."""
    return (
        len(head) >= 4
        and head[0] == 0x08
        and head[1] < 0x80
        and head[2] in (0x12, 0x1A, 0x22, 0x2A, 0x32, 0x3A, 0x42)
    )
