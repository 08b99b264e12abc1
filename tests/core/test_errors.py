"""The one line a person reads for a refused pickle: every refused import named (five at most),
joined as a sentence, the verb agreeing."""

from __future__ import annotations

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
