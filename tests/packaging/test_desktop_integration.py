"""Desktop integration sources: .desktop entry, shared-mime-info XML, install/uninstall scripts,
the PyInstaller spec (macOS document types) and the entry points. Fast; tools are optional."""

from __future__ import annotations

import configparser
import os
import plistlib
import shutil
import struct
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file as np_save_file

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "packaging" / "linux"
APP_ID = "io.github.checkpoint_inspector"
DESKTOP = LINUX / f"{APP_ID}.desktop"
MIME_XML = LINUX / f"{APP_ID}.xml"
ICONS = ROOT / "resources" / "icons"
NS = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
MIME = "application/x-safetensors"


# --- icons ------------------------------------------------------------------------------------------


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


def test_window_icon_and_theme_sizes_exist():
    # inspector.assets.resource_path("icons", "checkpoint-inspector.png") is the window icon
    assert png_size(ICONS / "checkpoint-inspector.png") == (256, 256)
    assert (ICONS / "checkpoint-inspector.svg").read_text().lstrip().startswith("<?xml")
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        assert png_size(ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png") == (
            size,
            size,
        )


def test_assets_find_the_window_icon():
    from inspector.assets import resource_path

    assert resource_path("icons", "checkpoint-inspector.png").is_file()


def test_make_icons_writes_ico_and_icns(tmp_path):
    subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "make_icons.py"), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    ico = (tmp_path / "checkpoint-inspector.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind, count) == (0, 1, 7)
    icns = (tmp_path / "checkpoint-inspector.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)


# --- .desktop -----------------------------------------------------------------------------------------


def read_desktop(path: Path) -> configparser.SectionProxy:
    cp = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    cp.optionxform = str  # keys are case-sensitive
    cp.read(path, encoding="utf-8")
    return cp["Desktop Entry"]


def test_desktop_entry_fields():
    e = read_desktop(DESKTOP)
    assert e["Type"] == "Application"
    assert e["Icon"] == APP_ID
    assert e["Exec"].split()[-1] == "%f"
    assert e["Terminal"] == "false"
    assert MIME in e["MimeType"].split(";")
    assert "application/x-safetensors-index" in e["MimeType"].split(";")


@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-utils missing")
def test_desktop_file_validates():
    r = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr


# --- shared-mime-info ------------------------------------------------------------------------------


def _match(rule: ET.Element, data: bytes) -> bool:
    """Evaluate one <match> (and its children: any child must match too) as shared-mime-info does."""
    kind = rule.get("type")
    start, _, end = rule.get("offset").partition(":")
    offsets = range(int(start), int(end or start) + 1)
    value = rule.get("value")
    if kind == "string":
        pattern = value.encode().decode("unicode_escape").encode("latin-1")
    else:
        fmt, size = {
            "byte": ("B", 1),
            "big16": (">H", 2),
            "big32": (">I", 4),
            "little16": ("<H", 2),
            "little32": ("<I", 4),
        }[kind]
        pattern = struct.pack(fmt, int(value, 0))
    hit = any(data[o : o + len(pattern)] == pattern for o in offsets)
    children = rule.findall("m:match", NS)
    return hit and (not children or any(_match(c, data) for c in children))


def magic_matches(data: bytes) -> bool:
    root = ET.parse(MIME_XML).getroot()
    t = root.find(f"m:mime-type[@type='{MIME}']", NS)
    return any(_match(r, data) for m in t.findall("m:magic", NS) for r in m.findall("m:match", NS))


def test_mime_xml_declares_glob_and_magic():
    root = ET.parse(MIME_XML).getroot()
    assert root.tag == f"{{{NS['m']}}}mime-info"
    t = root.find(f"m:mime-type[@type='{MIME}']", NS)
    assert t is not None and t.find("m:comment", NS).text
    assert [g.get("pattern") for g in t.findall("m:glob", NS)] == ["*.safetensors"]
    idx = root.find("m:mime-type[@type='application/x-safetensors-index']", NS)
    assert [g.get("pattern") for g in idx.findall("m:glob", NS)] == ["*.safetensors.index.json"]


def _torch_file(path: Path, tensors: dict) -> bytes:
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    save_file({k: torch.as_tensor(v) for k, v in tensors.items()}, str(path))
    return path.read_bytes()


@pytest.mark.parametrize(
    "tensors",
    [
        {},
        {"w": np.zeros((2, 3), np.float32)},
        {f"layer.{i}.weight": np.ones((4, 4), np.float64) for i in range(300)},
    ],
    ids=["empty", "one", "many"],
)
def test_magic_matches_real_files(tmp_path, tensors):
    data = _torch_file(tmp_path / "a.safetensors", tensors)
    assert data[8:9] == b"{"
    assert magic_matches(data)
    np_save_file(tensors, str(tmp_path / "b.safetensors"), metadata={"format": "np"})
    assert magic_matches((tmp_path / "b.safetensors").read_bytes())


def test_magic_matches_the_sample():
    sample = ROOT / "resources" / "sample.safetensors"
    if not sample.exists():
        pytest.skip("resources/sample.safetensors not generated yet")
    assert magic_matches(sample.read_bytes()[:64])


@pytest.mark.parametrize(
    "data",
    [
        b"PK\x03\x04" + b"\0" * 60,  # PyTorch zip checkpoint (.pt / .bin)
        b"\x80\x02}q\x00" + b"\0" * 60,  # legacy torch pickle
        b"GGUF\x03\x00\x00\x00" + b"\0" * 60,  # GGUF
        b'{"weight_map": {}}',  # an index.json, not a tensor file
        b"\x89HDF\r\n\x1a\n" + b"\0" * 60,  # HDF5 (Keras .h5)
        struct.pack("<Q", 2**40) + b"{}",  # header length far beyond 100 MB
        b"",
    ],
    ids=["torch-zip", "pickle", "gguf", "json", "hdf5", "huge-length", "empty"],
)
def test_magic_rejects_other_formats(data):
    assert not magic_matches(data)


def _mime_db(tmp_path: Path) -> dict[str, str]:
    share = tmp_path / "share"
    (share / "mime" / "packages").mkdir(parents=True)
    shutil.copy(MIME_XML, share / "mime" / "packages")
    env = dict(os.environ, XDG_DATA_HOME=str(share), XDG_DATA_DIRS=f"{share}:/usr/share")
    return env


@pytest.mark.skipif(
    not (shutil.which("update-mime-database") and shutil.which("xdg-mime")),
    reason="shared-mime-info / xdg-utils missing",
)
def test_xdg_mime_recognises_files(tmp_path):
    env = _mime_db(tmp_path)
    subprocess.run(
        ["update-mime-database", str(tmp_path / "share" / "mime")],
        check=True,
        capture_output=True,
        env=env,
    )
    files = tmp_path / "files"
    files.mkdir()
    np_save_file({"w": np.zeros(3, np.float32)}, str(files / "model.safetensors"))
    shutil.copy(files / "model.safetensors", files / "no-extension")
    (files / "model.safetensors.index.json").write_text('{"weight_map": {}}')

    def query(name):
        r = subprocess.run(
            ["xdg-mime", "query", "filetype", str(files / name)],
            capture_output=True,
            text=True,
            env=env,
        )
        return r.stdout.strip()

    if query("model.safetensors") != MIME:
        pytest.skip("this xdg-mime backend does not read shared-mime-info (no mimetype/gio)")
    assert query("no-extension") == MIME  # by magic
    assert query("model.safetensors.index.json") == "application/x-safetensors-index"


def test_qt_mime_database_recognises_files(tmp_path):
    """KDE/Qt file dialogs use QMimeDatabase, which reads the same XML (no cache needed)."""
    pytest.importorskip("PySide6.QtCore")
    env = _mime_db(tmp_path)
    f = tmp_path / "weights"
    np_save_file({"w": np.zeros(3, np.float32)}, str(f))
    code = textwrap.dedent(
        f"""
        from PySide6.QtCore import QMimeDatabase
        db = QMimeDatabase()
        print(db.mimeTypeForFile({str(f)!r}).name())
        print(db.mimeTypeForFile("x.safetensors", QMimeDatabase.MatchMode.MatchExtension).name())
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert r.stdout.split() == [MIME, MIME]


# --- install.sh / uninstall.sh -------------------------------------------------------------------


def _run_script(name, home, *args):
    env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"))
    return subprocess.run(
        ["bash", str(LINUX / name), *args], capture_output=True, text=True, env=env
    )


def _fake_bundle(tmp_path: Path) -> Path:
    b = tmp_path / "bundle" / "checkpoint-inspector"
    (b / "_internal").mkdir(parents=True)
    for exe in ("checkpoint-inspector", "checkpoint-inspector-gui"):
        (b / exe).write_text("#!/bin/sh\necho fake\n")
        (b / exe).chmod(0o755)
    return b


def test_install_dry_run_changes_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    r = _run_script("install.sh", home, "--dry-run", "--bundle", str(_fake_bundle(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert "dry run" in r.stdout
    assert f"share/applications/{APP_ID}.desktop" in r.stdout
    assert f"share/mime/packages/{APP_ID}.xml" in r.stdout
    assert list(home.iterdir()) == []


def test_install_and_uninstall_bundle_into_temp_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    r = _run_script("install.sh", home, "--bundle", str(_fake_bundle(tmp_path)))
    assert r.returncode == 0, r.stdout + r.stderr
    local = home / ".local"
    exe = local / "lib" / "checkpoint-inspector" / "checkpoint-inspector"
    assert exe.is_file()
    assert (local / "bin" / "checkpoint-inspector").resolve() == exe.resolve()
    assert (local / "bin" / "checkpoint-inspector-gui").exists()
    desktop = local / "share" / "applications" / f"{APP_ID}.desktop"
    entry = read_desktop(desktop)
    assert entry["Exec"] == f'"{exe}" %f'
    assert entry["TryExec"] == str(exe)
    if shutil.which("desktop-file-validate"):
        v = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        assert v.returncode == 0, v.stdout
    assert (local / "share" / "mime" / "packages" / f"{APP_ID}.xml").is_file()
    if shutil.which("update-mime-database"):
        assert MIME in (local / "share" / "mime" / "types").read_text().split()
    for size in (16, 48, 256, 512):
        assert (local / f"share/icons/hicolor/{size}x{size}/apps/{APP_ID}.png").is_file()
    assert (local / f"share/icons/hicolor/scalable/apps/{APP_ID}.svg").is_file()

    r = _run_script("uninstall.sh", home)
    assert r.returncode == 0, r.stdout + r.stderr
    left = [p for p in local.rglob("*") if p.is_file() or p.is_symlink()]
    # the caches regenerated by update-*-database stay (without our entries); nothing of ours does
    ours = [p for p in left if APP_ID in p.name or "checkpoint-inspector" in str(p)]
    assert not ours, ours
    if shutil.which("update-mime-database"):
        assert MIME not in (local / "share" / "mime" / "types").read_text().split()


def test_install_exec_mode_for_pip_installs(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    prog = tmp_path / "venv bin" / "checkpoint-inspector-gui"  # a space: Exec must quote it
    prog.parent.mkdir()
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    r = _run_script("install.sh", home, "--exec", str(prog))
    assert r.returncode == 0, r.stdout + r.stderr
    entry = read_desktop(home / ".local/share/applications" / f"{APP_ID}.desktop")
    assert entry["Exec"] == f'"{prog}" %f'
    assert not (home / ".local" / "lib").exists()


def test_install_rejects_unknown_option(tmp_path):
    r = _run_script("install.sh", tmp_path, "--frobnicate")
    assert r.returncode == 2 and "unknown option" in r.stderr


# --- PyInstaller spec, run with stand-in build classes ------------------------------------------------


class _Recorder:
    """Stands in for PyInstaller's Analysis, PYZ, EXE, COLLECT and BUNDLE: records the call."""

    calls: list = []  # noqa: RUF012

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        # what the spec reads back from an Analysis
        self.scripts, self.pure, self.binaries = [], [], []
        self.datas = list(kwargs.get("datas", []))
        _Recorder.calls.append((type(self).__name__, self))


def _run_spec(platform: str, monkeypatch) -> dict[str, list]:
    names = ("Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE")
    kinds = {k: type(k, (_Recorder,), {}) for k in names}
    _Recorder.calls = []
    spec = ROOT / "packaging" / "checkpoint-inspector.spec"
    monkeypatch.setattr(sys, "platform", platform)
    exec(  # the spec is a Python file PyInstaller executes with these names defined
        compile(spec.read_text(), str(spec), "exec"),
        {**kinds, "SPECPATH": str(spec.parent), "__file__": str(spec)},
    )
    out: dict[str, list] = {}
    for kind, obj in _Recorder.calls:
        out.setdefault(kind, []).append(obj)
    return out


def test_spec_two_executables_one_folder(monkeypatch):
    b = _run_spec("linux", monkeypatch)
    exes = {e.kwargs["name"]: e.kwargs for e in b["EXE"]}
    assert exes["checkpoint-inspector"]["console"] is True
    assert exes["checkpoint-inspector-gui"]["console"] is False
    assert all(e["exclude_binaries"] for e in exes.values())  # one-folder: binaries in COLLECT
    assert len(b["COLLECT"]) == 1 and "BUNDLE" not in b
    a = b["Analysis"][0].kwargs
    assert {"torch", "tkinter", "pytest"} <= set(a["excludes"])
    dests = {(Path(d) / Path(s).name).as_posix() for s, d in a["datas"]}
    assert "resources/icons/checkpoint-inspector.png" in dests
    assert not [d for d in dests if d.endswith((".py", ".sh"))]


def test_spec_macos_bundle_registers_every_format_it_reads(monkeypatch):
    b = _run_spec("darwin", monkeypatch)
    (bundle,) = b["BUNDLE"]
    plist = bundle.kwargs["info_plist"]
    plistlib.dumps(plist)  # serialisable as an Info.plist
    docs = {d["LSItemContentTypes"][0]: d for d in plist["CFBundleDocumentTypes"]}
    exported = {e["UTTypeIdentifier"]: e for e in plist["UTExportedTypeDeclarations"]}
    assert set(docs) == set(exported)
    extensions = {
        ext
        for e in exported.values()
        for ext in e["UTTypeTagSpecification"]["public.filename-extension"]
    }
    assert extensions == {"safetensors", "pt", "pth", "bin", "ckpt", "bpk", "gguf"}
    uti = "io.github.checkpoint-inspector.safetensors"
    assert docs[uti]["CFBundleTypeRole"] == "Viewer" and docs[uti]["LSHandlerRank"] == "Owner"
    assert docs["io.github.checkpoint-inspector.pytorch"]["LSHandlerRank"] == "Alternate"
    assert plist["CFBundleExecutable"] == "checkpoint-inspector-gui"
    # the .app starts the first executable of the COLLECT: the windowed one
    first = b["COLLECT"][0].args[0]
    assert first.kwargs["name"] == "checkpoint-inspector-gui"


# --- entry points --------------------------------------------------------------------------------------


def test_console_and_gui_entry_points_resolve():
    import importlib

    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    scripts = project["scripts"]
    gui = project["gui-scripts"]
    assert scripts["checkpoint-inspector"] == "inspector.cli:console_main"
    assert gui["checkpoint-inspector-gui"] == "inspector.cli:gui_main"
    for target in (*scripts.values(), *gui.values()):
        module, _, attr = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attr))
