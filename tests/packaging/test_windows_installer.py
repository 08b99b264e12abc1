"""The Windows per-user installer and its uninstaller (they cannot run here: no Windows, no
PowerShell): every format the bundle declares is offered, the uninstaller takes back every key
and file the installer writes, and the build puts both beside the .exe."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WIN = ROOT / "packaging" / "windows"


def _list(script: str, name: str) -> list[str]:
    m = re.search(rf"^\${name} = @\(([^)]*)\)", script, re.M)
    assert m, name
    return re.findall(r'"(\.[a-z]+)"', m.group(1))


def _document_types() -> list[tuple]:
    tree = ast.parse((ROOT / "packaging" / "checkpoint-inspector.spec").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "DOCUMENT_TYPES":
            return ast.literal_eval(node.value)
    raise AssertionError("no DOCUMENT_TYPES in the spec")


def test_both_scripts_offer_every_format_the_bundle_declares() -> None:
    install, uninstall = (WIN / "install.ps1").read_text(), (WIN / "uninstall.ps1").read_text()
    types = _document_types()
    owner = {f".{e}" for _uti, _n, exts, _m, rank in types if rank == "Owner" for e in exts}
    every = {f".{e}" for _uti, _n, exts, _m, _rank in types for e in exts}
    for script in (install, uninstall):
        assert set(_list(script, "Owned")) == owner  # only these may become the default
        assert set(_list(script, "Owned")) | set(_list(script, "OpenWithOnly")) == every
    assert {".safetensors", ".bpk", ".gguf", ".pt", ".pth", ".bin", ".ckpt"} == every


def test_the_uninstaller_takes_back_what_the_installer_writes() -> None:
    install, uninstall = (WIN / "install.ps1").read_text(), (WIN / "uninstall.ps1").read_text()
    for name in ("ProgId", "UninstallKey", "AppName"):
        value = re.search(rf'^\${name} = "([^"]+)"', install, re.M)
        assert value and f'${name} = "{value.group(1)}"' in uninstall, name
    assert "HKCU:" in install and "HKLM" not in install  # per user: no administrator rights
    writes = {  # what install.ps1 creates → how uninstall.ps1 removes it
        r"Classes\$ProgId": r'Remove-Item -Recurse -Force "HKCU:\Software\Classes\$ProgId"',
        r"OpenWithProgids": r'Remove-ItemProperty "HKCU:\Software\Classes\$ext\OpenWithProgids" -Name $ProgId',
        "$UninstallKey": "Remove-Item -Recurse -Force $UninstallKey",
        '"$AppName.lnk"': '"$AppName.lnk"',
    }
    for made, removed in writes.items():
        assert made in install and removed in uninstall, made
    # a default the installer set is put back; one another program owns is never touched
    assert "if (-not $current)" in install and "if ($current -eq $ProgId)" in uninstall
    assert '"UninstallString"' in install and "uninstall.ps1" in install


def test_the_windows_build_ships_both_scripts_beside_the_exe() -> None:
    build = (ROOT / "packaging" / "build.sh").read_text()
    assert re.search(
        r"MINGW\*.*cp packaging/windows/install.ps1 packaging/windows/uninstall.ps1", build
    )
    spec = (ROOT / "packaging" / "checkpoint-inspector.spec").read_text()
    assert re.search(r'name=f"\{NAME\}-gui",\s*console=False', spec)  # no console window
