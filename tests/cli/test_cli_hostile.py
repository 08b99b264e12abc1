"""Reliability round 2 through the command line: what a hostile or careless person types gets
exit 2 and one clear line, never a traceback, a hang, a forged line or a lost file."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from inspector.cli.dispatch import main
from inspector.core.dtypes import DTYPES
from inspector.core.json_output import with_depth_room
from inspector.core.save.writer import save_arrays

F32, F64, I64 = DTYPES["F32"], DTYPES["F64"], DTYPES["I64"]
ENV = dict(os.environ, PYTHONPATH=os.getcwd())
# stdout block-buffered, as a user runs the command (PYTHONUNBUFFERED would hide a failed flush)
BUFFERED = {k: v for k, v in ENV.items() if k != "PYTHONUNBUFFERED"}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def cli(*argv, env=None, encoding="utf-8", **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *map(str, argv)],
        capture_output=True,
        encoding=encoding,
        env=env or ENV,
        timeout=120,
        **kw,
    )


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("checkpoint-inspector: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def src(tmp_path) -> Path:
    p = tmp_path / "m.safetensors"
    save_arrays(p, [("w", F64, np.linspace(-1, 1, 100)), ("ids", I64, np.arange(3))])
    return p


# -- 1 ------------------------------------------------------------------------------------------


def test_report_over_the_source_is_refused_and_the_source_kept(src, tmp_path, capsys):
    before = src.read_bytes()
    code, out, err = run(capsys, "cast", src, "-o", tmp_path / "o.safetensors", "--report", src)
    assert code == 2 and "input file" in one_error_line(err)
    assert src.read_bytes() == before and not (tmp_path / "o.safetensors").exists()


# -- 4 ------------------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize(
    "sig",
    [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.needs("sighup"))]
    if hasattr(signal, "SIGHUP")
    else [],
)
def test_sigterm_or_sighup_mid_cast_leaves_no_partial(tmp_path, sig):
    src = tmp_path / "big.safetensors"
    save_arrays(src, [("w", F32, np.ones(40_000_000, np.float32))])  # 160 MB
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "cast", src, "--target", "F16", "-o", out_dir / "o.st"],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    deadline = time.monotonic() + 120  # a bound on a hang, not a speed requirement
    while not any(n.endswith(".partial") for n in os.listdir(out_dir)):
        assert proc.poll() is None, "the cast finished before the signal"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert "nothing was written" in one_error_line(err)
    assert os.listdir(out_dir) == []


def test_ctrl_c_while_the_program_loads_exits_quietly():
    """Ctrl-C pressed while ``python -m inspector`` still imports its modules (before main()
    can catch it) printed a KeyboardInterrupt traceback. Raised here by the import itself."""
    code = (
        "import runpy, sys\n"
        "class Interrupted:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'inspector.cli.dispatch':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupted())\n"
        "sys.argv = ['inspector', 'list', 'x.safetensors']\n"
        "runpy.run_module('inspector', run_name='__main__', alter_sys=True)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert (p.returncode, p.stdout, p.stderr) == (130, "", "")


def test_more_ctrl_c_while_the_program_ends_on_one_change_nothing():
    """A user pressing Ctrl-C again and again: after the one that stopped the command, the rest
    arrived while it exited, and Python printed "lost sys.stderr" and died of SIGINT. (The
    program's entry: a library call of main() gives the caller its handlers back.)"""
    code = (
        "import os, signal, sys\n"
        "from inspector.cli import dispatch as cli\n"
        "def pressed(args):\n"
        "    raise KeyboardInterrupt\n"
        "cli.COMMANDS['list'] = pressed\n"
        "sys.argv = ['checkpoint-inspector', 'list', 'x.safetensors']\n"
        "code = cli.console_main()\n"
        "for _ in range(3):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.exit(code)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert p.returncode == 130
    assert one_error_line(p.stderr).endswith("interrupted; nothing was written")


@pytest.fixture
def own_handlers():
    """A program's own handler on each signal the command line takes over (put back after)."""
    from inspector.core.platform.signals import interrupting_signals

    def handler(signum, frame):  # pragma: no cover - never delivered
        raise AssertionError(signum)

    sigs = interrupting_signals()
    previous = {s: signal.signal(s, handler) for s in sigs}
    try:
        yield {s: handler for s in sigs}
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def now_installed(sigs) -> dict:
    return {s: signal.getsignal(s) for s in sigs}


def test_a_library_call_stopped_by_ctrl_c_gives_the_program_its_handlers_back(
    own_handlers, capsys, monkeypatch
):
    """main() called from a program (a notebook, a script, a test) and stopped by Ctrl-C left
    SIGINT, SIGTERM and SIGHUP ignored in that program for good: a later Ctrl-C did nothing.
    Only the installed command ignores them while it exits."""
    from inspector.cli import dispatch

    def pressed(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(dispatch.COMMANDS, "list", pressed)
    code, out, err = run(capsys, "list", "x.safetensors")
    assert (code, out) == (130, "")
    assert one_error_line(err).endswith("interrupted; nothing was written")
    assert now_installed(own_handlers) == own_handlers


def test_a_library_call_gives_the_program_its_sigterm_handler_back(own_handlers, src, capsys):
    """A finished library call of main() left its SIGTERM/SIGHUP handler in the program: a
    SIGTERM long after raised the command line's Terminated wherever the program was."""
    code, _, err = run(capsys, "list", src)
    assert (code, err) == (0, "")
    assert now_installed(own_handlers) == own_handlers


def test_ctrl_c_after_the_output_was_written_does_not_say_nothing_was(src, tmp_path):
    """A Ctrl-C landing once the cast had renamed its output into place (while its workers
    stopped, a few ms) was reported as "interrupted; nothing was written" next to a complete
    output. The line now says it was written."""
    out = tmp_path / "o.safetensors"
    code = (
        "import sys\n"
        "from inspector.cli import dispatch as cli\n"
        "from inspector.core.save.writer import AtomicWriter\n"
        "commit = AtomicWriter.commit\n"
        "def commit_then_ctrl_c(self):\n"
        "    commit(self)\n"
        "    raise KeyboardInterrupt\n"
        "AtomicWriter.commit = commit_then_ctrl_c\n"
        f"sys.exit(cli.main(['cast', {str(src)!r}, '--target', 'F16', '-o', {str(out)!r}]))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert p.returncode == 130 and out.exists()
    line = one_error_line(p.stderr)
    assert "nothing was written" not in line and "o.safetensors" in line and "written" in line


# -- 10 -----------------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="X11/Wayland platforms")
def test_window_without_a_display_is_one_line_not_a_qt_abort(src):
    env = {
        k: v for k, v in ENV.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    p = cli(src, env=env)
    assert p.returncode == 2
    assert "--screenshot" in one_error_line(p.stderr)


# -- 11 -----------------------------------------------------------------------------------------


def nested(depth: int) -> str:
    return '{"k":' * depth + '"leaf"' + "}" * depth


@pytest.mark.parametrize("depth", [500, 990, 1000])
def test_deeply_nested_index_metadata_lists_and_casts(tmp_path, capsys, depth):
    folder = tmp_path / "in"
    folder.mkdir()
    save_arrays(folder / "a.safetensors", [("x", F64, np.ones(2))])
    index = folder / "model.safetensors.index.json"
    index.write_text('{"metadata": ' + nested(depth) + ', "weight_map": {"x": "a.safetensors"}}')
    code, out, err = run(capsys, "list", index, "--json")
    assert code == 0 and err == ""
    assert with_depth_room(json.loads, out)["tensors"][0]["name"] == "x"
    code, out, err = run(capsys, "cast", index, "-o", tmp_path / "out")
    assert code == 0, err
    text = (tmp_path / "out" / "model.safetensors.index.json").read_text()
    assert text.count('"k"') == depth  # metadata kept whole
    assert '"weight_map"' in text and '"total_size":8' in text.replace(" ", "")


def test_index_nested_past_the_limit_is_one_line(tmp_path, capsys):
    index = tmp_path / "model.safetensors.index.json"
    index.write_text('{"metadata": ' + nested(5000) + ', "weight_map": {"x": "a.safetensors"}}')
    code, _, err = run(capsys, "list", index)
    assert code == 2 and "nested too deeply" in one_error_line(err)


def test_closed_stdout_is_one_line(src):
    p = subprocess.run(
        [sys.executable, "-m", "inspector", "diff", str(src), str(src), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        pass_fds=(),
        preexec_fn=lambda: os.close(1),
        timeout=60,
    )
    assert p.returncode == 2 and "standard output" in one_error_line(p.stderr)


def test_latin1_stdout_gets_ascii_symbols_and_escaped_names(tmp_path):
    p = tmp_path / "m.safetensors"
    save_arrays(p, [("层.weight", F64, np.ones(2))])
    r = cli("list", p, env=dict(ENV, PYTHONIOENCODING="latin-1"), encoding="latin-1")
    assert r.returncode == 0 and r.stderr == ""
    assert "!= F32" in r.stdout and "\\u5c42.weight" in r.stdout


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="Linux /dev/full")
def test_stdout_on_a_full_disk_is_one_line_with_a_name(src):
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "inspector", "list", str(src)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            timeout=60,
        )
    assert p.returncode == 2
    assert "standard output: cannot write" in one_error_line(p.stderr)


# -- 13, 14 -------------------------------------------------------------------------------------


def test_diff_compares_integers_exactly_and_labels_tolerance(tmp_path, capsys):
    a, b = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    save_arrays(a, [("i", I64, np.array([2**53, 2**62])), ("f", F32, np.array([1, 2], np.float32))])
    save_arrays(
        b,
        [("i", I64, np.array([2**53 + 1, 2**62 + 1])), ("f", F32, np.array([1, 2.25], np.float32))],
    )
    code, out, _ = run(capsys, "diff", a, b, "--json")
    rows = {r["name"]: r for r in json.loads(out)["tensors"]}
    assert code == 1 and rows["i"]["status"] == "differ" and rows["i"]["max_abs_diff"] == 1.0
    code, out, _ = run(capsys, "diff", a, b, "--json", "--atol", "1")
    rows = {r["name"]: r for r in json.loads(out)["tensors"]}
    assert code == 0 and rows["i"]["status"] == "within_atol" == rows["f"]["status"]


# -- 16 -----------------------------------------------------------------------------------------


def test_stats_of_huge_finite_values_are_finite_and_silent(tmp_path):
    p = tmp_path / "m.safetensors"
    x = np.array([1e200, -1e200, 3e199, 5e154, 1e308, -1e308])
    save_arrays(p, [("x", F64, x)])
    r = cli("list", p, "--stats", "--json")
    assert r.returncode == 0 and r.stderr == ""  # no RuntimeWarning
    (row,) = json.loads(r.stdout)["tensors"]
    assert row["std"] == pytest.approx(np.std(x / 1e300) * 1e300, rel=1e-12)
    assert row["mean"] == pytest.approx(np.mean(x / 1e300) * 1e300, rel=1e-12, abs=1e290)


# -- 19 -----------------------------------------------------------------------------------------


def test_names_cannot_forge_lines_or_colours(tmp_path, capsys):
    p = tmp_path / "m.safetensors"
    evil = "a\nok: all 99 float tensors are F32\x1b[2J\u202e"
    save_arrays(p, [(evil, F64, np.ones(2))])
    for argv in (("list", p), ("check", p), ("diff", p, p)):
        code, out, err = run(capsys, *argv)
        assert "\x1b" not in out and "\u202e" not in out
        assert not any(line.startswith("ok: all 99") for line in out.splitlines())
        assert "a\\nok: all 99" in out or argv[0] == "diff"
    code, out, _ = run(capsys, "list", p, "--json")
    assert json.loads(out)["tensors"][0]["name"] == evil  # JSON stays exact


# -- 20 -----------------------------------------------------------------------------------------


def test_error_lines_clip_huge_names(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    save_arrays(folder / "a.safetensors", [("x", F32, np.ones(2, np.float32))])
    big = "n" * 1_000_000
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"x": "a.safetensors", big: "a.safetensors"}})
    )
    code, _, err = run(capsys, "list", folder)
    assert code == 2 and len(one_error_line(err)) < 500


def test_empty_output_path_is_refused_before_work(src, capsys):
    code, _, err = run(capsys, "cast", src, "-o", "")
    assert code == 2
    assert one_error_line(err) == "checkpoint-inspector: error: the output path is empty"


def test_socket_and_symlink_loop_are_named(tmp_path, capsys):
    sock_path = tmp_path / "s.safetensors"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_path))
    try:
        code, _, err = run(capsys, "list", sock_path)
        assert code == 2 and "is a socket" in one_error_line(err)
    finally:
        s.close()
    loop = tmp_path / "loop.safetensors"
    loop.symlink_to(loop)
    code, _, err = run(capsys, "list", loop)
    assert code == 2 and "symbolic link loop" in one_error_line(err)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "x.safetensors").symlink_to(folder / "x.safetensors")
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"w": "x.safetensors"}})
    )
    code, _, err = run(capsys, "list", folder)
    assert code == 2 and "symbolic link loop" in one_error_line(err)


def test_sharded_input_with_a_file_name_output_explains_it(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    for i in (1, 2):
        save_arrays(
            folder / f"m-0000{i}-of-00002.safetensors", [(f"t{i}", F32, np.ones(2, np.float32))]
        )
    (folder / "model.safetensors.index.json").write_text(
        json.dumps(
            {
                "weight_map": {
                    "t1": "m-00001-of-00002.safetensors",
                    "t2": "m-00002-of-00002.safetensors",
                }
            }
        )
    )
    code, _, err = run(capsys, "cast", folder, "-o", tmp_path / "x.safetensors")
    assert code == 2 and "output is a folder" in one_error_line(err)
    assert not (tmp_path / "x.safetensors").exists()


# -- 21 -----------------------------------------------------------------------------------------


def test_torchscript_onnx_and_a_pickle_only_folder_are_named(tmp_path, capsys):
    ts = tmp_path / "model.pt"
    with zipfile.ZipFile(ts, "w") as z:
        z.writestr("model/data.pkl", b"\x80\x02}q\x00.")
        z.writestr("model/constants.pkl", b"\x80\x02).")
        z.writestr("model/code/__torch__.py", "def forward(self): pass")
    code, _, err = run(capsys, "list", ts)
    assert code == 2 and "TorchScript archive" in one_error_line(err)
    onnx = tmp_path / "model.onnx"
    onnx.write_bytes(b"\x08\x07\x12\x07pytorch\x1a\x032.1" + b"\0" * 64)
    code, _, err = run(capsys, "list", onnx)
    line = one_error_line(err)
    assert code == 2 and "ONNX" in line and "header length" not in line
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "pytorch_model.bin").write_bytes(b"PK\x03\x04" + struct.pack("<Q", 0))
    code, _, err = run(capsys, "list", folder)
    assert code == 2 and "pytorch_model.bin" in one_error_line(err)


def test_unreadable_folder_says_permission_denied_not_missing(tmp_path, capsys, monkeypatch):
    """20: root reads everything, so the EACCES a user gets is produced here."""
    folder = tmp_path / "locked"
    folder.mkdir()
    real_stat = os.stat

    def stat(p, *a, **kw):
        if os.fspath(p).startswith(str(folder)):
            raise PermissionError(13, "Permission denied", os.fspath(p))
        return real_stat(p, *a, **kw)

    monkeypatch.setattr(os, "stat", stat)
    code, _, err = run(capsys, "list", folder / "model.safetensors")
    assert code == 2 and one_error_line(err).endswith("permission denied")


def test_a_system_error_of_the_work_is_not_blamed_on_standard_output(src, capsys, monkeypatch):
    """Only a failed write to stdout is reported as one; any other OSError without a file name
    (a disk error deep in a read, say) used to be reported as 'standard output: cannot write'."""
    import errno

    import inspector.cli.dispatch as cli_mod

    def failing(_args):
        print("a first line reached stdout")
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setitem(cli_mod.COMMANDS, "list", failing)
    code, out, err = run(capsys, "list", src)
    assert code == 2 and out == "a first line reached stdout\n"
    line = one_error_line(err)
    assert "Input/output error" in line and "standard output" not in line


@pytest.mark.parametrize("command", ["list", "check"])
def test_a_reader_that_leaves_early_ends_the_command_quietly(tmp_path, command):
    """`checkpoint-inspector check big | head -1`: the reader left, which is not an error: exit
    0, nothing on stderr. ``list`` writes its lines at once, ``check`` one by
    one: what was still buffered would fail again at exit unless stdout is silenced."""
    p = tmp_path / "many.safetensors"
    save_arrays(p, [(f"model.layers.{i}.mlp.up_proj.weight", F64, np.zeros(1)) for i in range(4000)])  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", command, str(p)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=BUFFERED,
    )
    first = proc.stdout.readline()
    proc.stdout.close()  # ~200 KB left unread: the pipe fills, the reader is gone
    err = proc.stderr.read()
    proc.stderr.close()
    assert (first, proc.wait(timeout=120), err) == {
        "list": (
            f"{'name':<36}  dtype    shape                      size  status\n".encode(),
            0,
            b"",
        ),
        "check": (b"model.layers.0.mlp.up_proj.weight: F64 (expected F32)\n", 0, b""),
    }[command]


def test_a_reader_gone_before_the_output_is_no_error_at_exit_either(src):
    """`checkpoint-inspector list m.safetensors | true`: the lines wait in stdout's buffer, the
    flush fails on the pipe; stdout is silenced so that the flush at exit does not fail again
    ("Exception ignored … BrokenPipeError", exit 120)."""
    r, w = os.pipe()
    os.close(r)  # no reader at all
    try:
        p = subprocess.run(
            [sys.executable, "-m", "inspector", "list", str(src)],
            stdout=w,
            stderr=subprocess.PIPE,
            env=BUFFERED,
            timeout=120,
        )
    finally:
        os.close(w)
    assert (p.returncode, p.stderr) == (0, b"")


def test_a_reader_that_left_is_no_error_even_where_stdout_cannot_be_silenced(
    src, capsys, monkeypatch
):
    """No descriptor left, or no /dev/null in a container: silencing stdout fails, and the
    command still ends as the reader leaving says, exit 0 without a word."""
    import inspector.cli.dispatch as cli_mod

    def reader_left(_args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setitem(cli_mod.COMMANDS, "list", reader_left)
    monkeypatch.setattr(os, "devnull", str(src.parent / "no-such-dir" / "null"))
    assert run(capsys, "list", src) == (0, "", "")


def test_a_system_error_with_only_a_message_is_said_by_its_message(src, capsys, monkeypatch):
    """An OSError made of one message (no errno, no strerror: what libraries such as
    shutil.Error raise) is said by that message, the way an errno one is said by its strerror."""
    import errno

    import inspector.cli.dispatch as cli_mod

    said = {
        OSError("the copy of tokenizer.json failed"): "the copy of tokenizer.json failed",
        OSError(errno.EIO, "Input/output error"): "Input/output error",
    }
    for error, message in said.items():

        def failing(_args, error=error):
            raise error

        monkeypatch.setitem(cli_mod.COMMANDS, "list", failing)
        assert run(capsys, "list", src) == (2, "", f"checkpoint-inspector: error: {message}\n")
