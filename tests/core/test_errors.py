"""The one line a person reads for a refused pickle: every refused import named (five at most),
joined as a sentence, the verb agreeing."""

from __future__ import annotations

import errno

import pytest

from inspector.core.errors import RefusedPickleError

TAIL = "not part of a tensor checkpoint; nothing was executed (see: checkpoint-inspector scan)"


@pytest.mark.parametrize(
    "imports, names, verb",
    [
        ([], "a global outside the allowlist", "is"),
        (["os.system"], "os.system", "is"),
        (["os.system", "posix.system"], "os.system and posix.system", "are"),
        (["a.b", "c.d", "e.f", "g.h", "i.j"], "a.b, c.d, e.f, g.h and i.j", "are"),
        (
            ["a.b", "c.d", "e.f", "g.h", "i.j", "k.l"],
            "a.b, c.d, e.f, g.h, i.j and 1 more",
            "are",
        ),
        ([f"m{i}.f" for i in range(9)], "m0.f, m1.f, m2.f, m3.f, m4.f and 4 more", "are"),
    ],
)
def test_the_refusal_names_what_the_pickle_imports(imports, names, verb):
    e = RefusedPickleError("x.pt", imports)
    assert e.reason == f"pickle imports {names}, which {verb} {TAIL}"
    assert e.imports == (imports or ["a global outside the allowlist"])
    assert str(e) == f"x.pt: {e.reason}"


def test_an_error_reads_path_colon_reason_or_the_reason_alone(tmp_path):
    from inspector.core.errors import AmbiguousCheckpointError, CheckpointError

    e = CheckpointError(tmp_path / "m.safetensors", "file is empty")
    assert (e.path, str(e), e.args) == (
        str(tmp_path / "m.safetensors"),
        f"{tmp_path / 'm.safetensors'}: file is empty",
        (f"{tmp_path / 'm.safetensors'}: file is empty",),
    )
    bare = CheckpointError(None, "the path is empty")
    assert (bare.path, str(bare)) == (None, "the path is empty")
    amb = AmbiguousCheckpointError("d", "holds 2 index files", ["d/a.json", "d/b.json"])
    assert (amb.path, amb.reason, amb.choices) == (
        "d",
        "holds 2 index files",
        ["d/a.json", "d/b.json"],
    )
    assert str(amb) == "d: holds 2 index files"


def test_a_checkpoint_error_survives_pickling():
    """A cast worker process raises it; the caller must get the same path and reason back."""
    import pickle

    from inspector.core.errors import CheckpointError

    for err in (
        CheckpointError("/x/m.safetensors", "cannot read: EIO"),
        CheckpointError(None, "r"),
    ):
        back = pickle.loads(pickle.dumps(err))
        assert (type(back), back.path, back.reason, str(back)) == (
            CheckpointError,
            err.path,
            err.reason,
            str(err),
        )


def test_a_symlink_loop_and_a_socket_are_named_in_exactly_these_words(tmp_path):
    """The CLI test only looks for a part of each line; these are the whole reasons a person
    reads for the two paths that are not files (the C library says "Too many levels of
    symbolic links" and "No such device or address")."""
    import socket

    from inspector.core.errors import path_problem

    loop = tmp_path / "loop.safetensors"
    loop.symlink_to(loop)
    with pytest.raises(OSError) as e:
        open(loop, "rb")  # noqa: SIM115 - it never opens
    assert path_problem(str(loop), e.value) == "is a symbolic link loop"
    sock_path = tmp_path / "s.safetensors"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        with pytest.raises(OSError) as e:
            open(sock_path, "rb")  # noqa: SIM115 - it never opens
        assert path_problem(str(sock_path), e.value) == "is a socket, not a file"


def test_an_os_error_without_a_system_message_reads_as_its_own_text():
    """An OSError raised by Python code (no errno, no strerror) is worded by its message."""
    from inspector.core.errors import os_error_reason

    assert os_error_reason(OSError("the network share went away")) == (
        "the network share went away"
    )
    assert os_error_reason(OSError(errno.EIO, "Input/output error")) == "Input/output error"
