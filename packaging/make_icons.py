"""Pack the committed PNG icons into a Windows .ico and a macOS .icns (both hold PNG data as is).

    python packaging/make_icons.py OUT_DIR

Needs nothing beyond the standard library (PyInstaller would need Pillow to convert a PNG itself).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HICOLOR = ROOT / "resources" / "icons" / "hicolor"
APP_ID = "io.github.checkpoint_inspector"
NAME = "checkpoint-inspector"

ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types that may hold PNG data, by pixel size.
ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09"}


def png(size: int) -> bytes:
    data = (HICOLOR / f"{size}x{size}" / "apps" / f"{APP_ID}.png").read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"make_icons.py: not a PNG: {size}x{size}")
    width, height = struct.unpack(">II", data[16:24])
    if (width, height) != (size, size):
        raise SystemExit(f"make_icons.py: {size}x{size} icon is {width}x{height}")
    return data


def ico() -> bytes:
    images = [png(s) for s in ICO_SIZES]
    offset = 6 + 16 * len(images)
    head = struct.pack("<HHH", 0, 1, len(images))
    entries = b""
    for size, data in zip(ICO_SIZES, images, strict=True):
        side = 0 if size >= 256 else size  # 0 means 256 in an ICONDIRENTRY
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    return head + entries + b"".join(images)


def icns() -> bytes:
    body = b""
    for size, kind in ICNS_TYPES.items():
        data = png(size)
        body += kind + struct.pack(">I", 8 + len(data)) + data
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{NAME}.ico").write_bytes(ico())
    (out / f"{NAME}.icns").write_bytes(icns())
    print(f"wrote {out / NAME}.ico and .icns")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
