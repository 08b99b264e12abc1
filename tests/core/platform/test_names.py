"""Names Windows refuses, judged the same on every system; on Windows a save refuses them
before it reads a byte (here Windows' rules are switched on by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.cli.dispatch import main
from inspector.core.dtypes import DTYPES
from inspector.core.platform import names
from inspector.core.save.writer import save_arrays


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (r"C:\models\CON.safetensors", "is the device CON"),
        (r"C:\models\nul", "is the device NUL"),
        ("out/com1.report.json", "is the device COM1"),
        ("out/LPT9 .safetensors", "is the device LPT9"),
        ("out/COM¹.json", "is the device COM¹"),
        (r"\\server\share\models\aux.json", "is the device AUX"),
        (r"\\?\C:\long\model.", "ends in a dot"),
        (r"\\?\UNC\server\share\model.safetensors ", "ends in a space"),
        ("out/a:b.safetensors", "holds ':'"),
        ("out/what?.json", "holds '?'"),
        ("out/tab\there", r"holds \x09"),
        ("folder./model.safetensors", "'folder.' ends in a dot"),
    ],
)
def test_names_windows_refuses(path, why):
    assert why in names.windows_problem(path)


@pytest.mark.parametrize(
    "path",
    [
        r"C:\models\model.safetensors",
        "C:relative.safetensors",
        r"\\server\share\model.safetensors",
        r"\\?\C:\very\long\model.safetensors",
        r"\\?\UNC\server\share\model.safetensors",
        r"..\up\.hidden.json",
        "out/console.safetensors",
        "out/COM10.json",
        "out/CONX",
        "/home/u/models/model-00001-of-00002.safetensors",
    ],
)
def test_names_windows_accepts(path):
    assert names.windows_problem(path) is None


def test_long_paths_get_the_prefix_windows_needs():
    deep = "\\".join(["folder"] * 40)
    assert names.long_path(f"C:\\{deep}") == f"\\\\?\\C:\\{deep}"
    assert names.long_path(f"C:/{deep}") == f"\\\\?\\C:\\{deep}"
    assert names.long_path(f"\\\\srv\\share\\{deep}") == f"\\\\?\\UNC\\srv\\share\\{deep}"
    assert names.long_path(f"\\\\?\\C:\\{deep}") == f"\\\\?\\C:\\{deep}"
    assert names.long_path("C:\\short") == "C:\\short"
    assert names.long_path(deep) == deep  # relative: left to the current folder


def test_on_windows_a_cast_to_a_device_name_is_refused_before_any_work(
    tmp_path, capsys, monkeypatch
):
    src = tmp_path / "m.safetensors"
    save_arrays(src, [("w", DTYPES["F32"], np.arange(6, dtype=np.float32))])
    monkeypatch.setattr(names, "windows_rules", lambda: True)
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main(["cast", str(src), "--target", "F16", "-o", str(tmp_path / "CON.safetensors")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == (
        f"checkpoint-inspector: error: {tmp_path / 'CON.safetensors'}: the name "
        "'CON.safetensors' is the device CON on Windows; choose another name\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # not even a temp
    monkeypatch.setattr(names, "windows_rules", lambda: False)
    assert main(["cast", str(src), "--target", "F16", "-o", str(tmp_path / "CON.safetensors")]) == 0


def test_the_refusal_lists_every_bad_character_and_skips_dot_folders():
    """The whole sentence: the characters sorted and space-separated; ``.`` is the folder
    itself, not a name ending in a dot."""
    assert names.windows_problem("out/a<b>.json") == (
        "the name 'a<b>.json' holds '<' '>', which Windows does not allow in a name"
    )
    assert names.windows_problem("./model.safetensors") is None
    assert names.windows_problem("out/./model.safetensors") is None
    assert names.split_root("out/model.safetensors") == ("", "out/model.safetensors")
    assert names.split_root("C:\\model.safetensors") == ("C:", "\\model.safetensors")


def test_only_spaces_before_the_extension_make_a_device_name():
    """Windows drops trailing spaces, so ``LPT9 .x`` is LPT9; another white space (a no-break
    space) is a character of the name, and ``CON\\u00a0`` is no device."""
    assert names.windows_problem("out/CON\u00a0.json") is None
    assert names.windows_problem("out/CON .json") == (
        "the name 'CON .json' is the device CON on Windows; choose another name"
    )


def test_a_path_of_exactly_max_path_characters_is_long_and_lower_case_drives_count():
    """MAX_PATH (260) counts the terminating NUL: a 260-character path needs the prefix
    already. A drive letter is a drive in either case."""
    exact = "C:\\" + "a" * (names.MAX_PATH - 3)
    assert len(exact) == names.MAX_PATH
    assert names.long_path(exact) == "\\\\?\\" + exact
    assert names.long_path(exact[:-1]) == exact[:-1]
    deep = "\\".join(["folder"] * 40)
    assert names.long_path(f"c:/{deep}") == f"\\\\?\\c:\\{deep}"
