"""A read never writes: every read command over a downloaded folder seeded with save journals,
temps named like ours, a symlink and a hard link to files outside leaves every byte, inode and
timestamp in and outside the folder as it was, and runs nothing. A leftover journal is reported;
only a save into that folder settles it, and only a journal of its own, never through a symlink.
"""

from __future__ import annotations

import os

import pytest

from inspector.cli.dispatch import main
from tests.hostile_folders import build, snapshot

pytestmark = pytest.mark.skipif(os.name != "posix", reason="journals need flock")

READS = [
    ["list", "{f}"],
    ["list", "{f}", "--json"],
    ["list", "{f}", "--stats"],
    ["list", "{f}/model.safetensors.index.json"],
    ["check", "{f}"],
    ["check", "{f}", "--target", "config"],
    ["diff", "{f}", "{f}"],
    ["scan", "{f}"],
    ["scan", "{f}/model.safetensors.index.json"],
    ["lint", "{f}"],
    ["lint", "{f}", "--stats", "--json"],
]


@pytest.mark.parametrize("forged", [False, True], ids=["downloaded", "forged-as-ours"])
@pytest.mark.parametrize("argv", READS, ids=[" ".join(a[:3:2]) for a in READS])
def test_no_read_command_changes_anything(tmp_path, capsys, argv, forged):
    canary = tmp_path / "canary"
    folder, outside = build(tmp_path, canary, forged=forged)
    before = snapshot(folder, outside)
    code = main([a.format(f=folder) for a in argv])
    err = capsys.readouterr().err
    assert snapshot(folder, outside) == before
    assert not canary.exists()
    assert (outside / ".bashrc").read_text() == "echo the user's own shell setup\n"
    assert "Traceback" not in err
    if argv[0] in ("list", "check", "diff"):
        assert code in (0, 1)
        assert "an interrupted save left" in err and "next cast into this folder" in err


def test_scan_of_the_folder_names_the_hidden_pickle_temp(tmp_path, capsys):
    """The temp a planted journal would rename over pytorch_model.bin is scanned, not skipped."""
    folder, _ = build(tmp_path, tmp_path / "canary", forged=False)
    code = main(["scan", str(folder)])
    out = capsys.readouterr().out
    assert code == 1
    assert ".pytorch_model.bin.0123456789ab.partial" in out and "os.system" in out


def test_lint_reports_the_leftover_journal(tmp_path, capsys):
    """The notice the read left alone is a finding of its own code, worded as the notice.
    (Mutation testing: a finding with no message, or another code, passed.)"""
    import json

    folder, _ = build(tmp_path, tmp_path / "canary", forged=False)
    assert main(["lint", str(folder), "--json"]) == 1
    found = [f for f in json.loads(capsys.readouterr().out)["findings"] if "save" in f["code"]]
    assert found == [
        {
            "severity": "warning",
            "code": "interrupted_save",
            "message": "an interrupted save left .aaaaaaaaaaaa.txn and 2 more in this folder; the "
            "next cast into this folder finishes it",
            "tensors": [],
            "files": [],
        }
    ]


@pytest.mark.parametrize("forged", [False, True], ids=["downloaded", "forged-as-ours"])
def test_a_save_into_the_folder_never_renames_through_a_symlink(tmp_path, capsys, forged):
    """Only a save settles journals, and then never outside the folder: a forged journal's
    rename through ``cfg -> outside`` is refused; a downloaded one is not ours and is left."""
    canary = tmp_path / "canary"
    folder, outside = build(tmp_path, canary, forged=forged)
    outside_before = snapshot(outside)
    src = tmp_path / "src.safetensors"
    os.link(folder / "model-00002-of-00002.safetensors", src)
    code = main(["cast", str(src), "--target", "F16", "-o", str(folder / "out.safetensors")])
    assert code == 0, capsys.readouterr().err
    assert snapshot(outside) == outside_before
    assert not canary.exists()
    if not forged:  # not ours (mode 0644, no folder identity): left exactly as they were
        assert len([n for n in os.listdir(folder) if n.endswith(".txn")]) == 3
        assert not (folder / "pytorch_model.bin").exists()
