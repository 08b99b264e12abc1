"""A journal left in a folder is rolled forward only as far as it names our own temps: a planted
or damaged ``.txn`` can rename a ``.<name>.<hex>.partial`` to ``<name>`` under its folder, and
delete our own backups, and nothing else."""

from __future__ import annotations

import json
import os

import pytest

from inspector.core.save.journal import Transaction, recover_folder

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="journals need flock"),
    pytest.mark.needs("flock"),  # rolled forward only where a live save can be told apart
]

HEX = "0123456789ab"


def _partial(name: str) -> str:
    return f".{name}.{HEX}.partial"


def _plant(folder, doc, mode: int = 0o600) -> None:
    """A journal as our writer leaves it when killed mid-commit: private, naming its folder."""
    if isinstance(doc, dict) and "folder" not in doc:
        st = os.stat(folder)
        doc = {"folder": [st.st_dev, st.st_ino], **doc}
    text = doc if isinstance(doc, str) else json.dumps(doc)
    path = folder / f".{'f' * 12}.txn"
    path.write_text(text)
    path.chmod(mode)


def _files(folder) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_complete_journal_is_rolled_forward_and_its_backups_deleted(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / _partial("a.safetensors")).write_text("new a")
    (tmp_path / _partial("b.safetensors")).write_text("new b")  # temps sit beside the journal
    (tmp_path / "a.safetensors").write_text("old a")
    (tmp_path / _partial("old")).write_text("backup")
    _plant(
        tmp_path,
        {
            "renames": [
                [_partial("a.safetensors"), "a.safetensors"],
                [_partial("b.safetensors"), "sub/b.safetensors"],  # a nested shard
                [_partial("gone"), "gone"],  # renamed before the interruption: skipped
            ],
            "backups": [_partial("old")],
        },
    )
    recover_folder(str(tmp_path))
    assert _files(tmp_path) == {"a.safetensors": "new a", "sub/b.safetensors": "new b"}


@pytest.mark.parametrize(
    "tmp, final",
    [
        ("/etc/.passwd.0123456789ab.partial", "passwd"),  # absolute
        (_partial("victim"), "/tmp/victim"),
        (f"../{_partial('victim')}", "../victim"),  # outside the folder
        (f"sub//{_partial('victim')}", "sub//victim"),  # an empty part
        (_partial("victim"), "other"),  # a temp of another file
        ("notes.txt", "victim"),  # not one of our temps
        (f".victim.{HEX}.partialx", "victim"),
        (f"sub/{_partial('victim')}", "victim"),  # a temp from elsewhere
        (f"sub/{_partial('victim')}", "sub/victim"),
        (_partial("victim"), "../victim"),  # our temp, moved out of the folder
        (_partial("victim"), "sub//victim"),
        (_partial("victim"), "sub/../victim"),
        (_partial("victim"), "./victim"),  # our writer never names a "." part
        (_partial("victim"), "sub/./victim"),
    ],
)
def test_a_journal_cannot_move_anything_but_our_temps_in_place(tmp_path, tmp, final):
    (tmp_path / "sub").mkdir()
    (tmp_path / "notes.txt").write_text("notes")
    (tmp_path / "victim").write_text("keep me")
    (tmp_path / "sub" / _partial("victim")).write_text("planted")
    (tmp_path / _partial("victim")).write_text("planted")
    before = _files(tmp_path)
    _plant(tmp_path, {"renames": [[tmp, final]], "backups": []})
    recover_folder(str(tmp_path), remove_leftovers=False)
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    "backup",
    ["victim", f"sub/{_partial('x')}", "notes.txt", 5, f".victim.{HEX}.partialx"],
)
def test_a_journal_deletes_only_our_own_backups(tmp_path, backup):
    (tmp_path / "sub").mkdir()
    (tmp_path / "victim").write_text("keep me")
    (tmp_path / "notes.txt").write_text("notes")
    (tmp_path / "sub" / _partial("x")).write_text("theirs")
    (tmp_path / f".victim.{HEX}.partialx").write_text("not ours")
    before = _files(tmp_path)
    _plant(tmp_path, {"renames": [], "backups": [backup]})
    recover_folder(str(tmp_path), remove_leftovers=False)
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    "journal",
    [
        "",  # the save died before writing it
        '{"renames": [[',  # cut short
        json.dumps({"renames": [[_partial("a"), 5]]}),  # not names
        json.dumps({"renames": [[5, "a"]]}),
        json.dumps([[_partial("a"), "a"]]),  # not an object
        json.dumps({"backups": []}),  # no renames
        b"\xff\xfe".decode("latin-1"),  # not UTF-8 (written as latin-1 text)
    ],
)
def test_an_incomplete_journal_renames_nothing_and_its_temps_go(tmp_path, journal):
    (tmp_path / "a").write_text("old a")
    (tmp_path / _partial("a")).write_text("new a")
    _plant(tmp_path, journal)
    recover_folder(str(tmp_path))
    assert _files(tmp_path) == {"a": "old a"}


def test_a_journal_rewritten_shorter_keeps_no_tail_of_the_longer_one(tmp_path):
    txn = Transaction(str(tmp_path))
    try:
        txn.write_journal([(_partial("a" * 200), "a" * 200)], [_partial("b" * 100)])
        txn.write_journal([(_partial("c"), "c")])
        st = os.stat(tmp_path)
        with open(txn.path, encoding="utf-8") as f:
            assert json.load(f) == {
                "folder": [st.st_dev, st.st_ino],  # a journal copied or planted elsewhere is inert
                "renames": [[_partial("c"), "c"]],
                "backups": [],
            }
    finally:
        txn.close()
    assert not os.path.exists(txn.path)


def test_a_bad_entry_does_not_stop_the_good_ones_after_it(tmp_path):
    (tmp_path / "a").write_text("old a")
    (tmp_path / _partial("a")).write_text("new a")
    (tmp_path / _partial("b")).write_text("backup")
    _plant(
        tmp_path,
        {
            "renames": [
                ["/abs/.x.0123456789ab.partial", "x"],
                [_partial("a"), "../a"],
                ["notes.txt", "y"],
                [_partial("a"), "a"],
            ],
            "backups": ["sub/x", _partial("b")],
        },
    )
    recover_folder(str(tmp_path), remove_leftovers=False)
    assert _files(tmp_path) == {"a": "new a"}


def _hold(path) -> int:
    """Lock ``path`` as a running save holds its journal or temp (flock: a second open file
    conflicts even in this process)."""
    import fcntl

    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_live_save_keeps_its_journal_and_even_its_unlocked_temps(tmp_path):
    """While another save's journal is held, nothing in the folder is a leftover."""
    _plant(tmp_path, {"renames": [[_partial("a"), "a"]], "backups": []})
    (tmp_path / _partial("a")).write_text("new a")  # closed, not held
    fd = _hold(tmp_path / f".{'f' * 12}.txn")
    try:
        assert recover_folder(str(tmp_path)) == []
        assert set(_files(tmp_path)) == {_partial("a"), f".{'f' * 12}.txn"}
    finally:
        os.close(fd)
    assert recover_folder(str(tmp_path)) == [] and _files(tmp_path) == {"a": "new a"}


def test_an_open_transaction_is_not_settled_by_a_recovery(tmp_path):
    txn = Transaction(str(tmp_path))
    try:
        txn.write_journal([(_partial("a"), "a")])
        (tmp_path / _partial("a")).write_text("new a")
        assert recover_folder(str(tmp_path)) == []
        assert _partial("a") in _files(tmp_path)  # neither renamed nor removed
    finally:
        txn.close()


def test_a_journal_without_backups_or_with_backups_already_gone(tmp_path):
    (tmp_path / _partial("a")).write_text("new a")
    _plant(tmp_path, {"renames": [[_partial("a"), "a"]]})  # no "backups" key at all
    recover_folder(str(tmp_path))
    assert _files(tmp_path) == {"a": "new a"}
    (tmp_path / _partial("b")).write_text("new b")
    _plant(tmp_path, {"renames": [[_partial("b"), "b"]], "backups": [_partial("gone")]})
    recover_folder(str(tmp_path))
    assert _files(tmp_path) == {"a": "new a", "b": "new b"}


def test_a_link_named_like_a_temp_is_neither_followed_nor_reported(tmp_path):
    (tmp_path / "target").write_text("keep")
    os.symlink(tmp_path / "target", tmp_path / _partial("x"))
    assert recover_folder(str(tmp_path)) == []
    assert os.path.islink(tmp_path / _partial("x")) and _files(tmp_path)["target"] == "keep"


def test_a_folder_that_refuses_fsync_does_not_fail_the_commit(tmp_path, monkeypatch):
    """Some filesystems answer fsync on a directory with EINVAL; the data was already synced."""
    import errno

    from inspector.core.platform.file_io import sync_folder

    def refuse(fd):
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "fsync", refuse)
    sync_folder(str(tmp_path))  # no exception


def test_a_leftover_that_cannot_be_deleted_is_kept_quietly(tmp_path, monkeypatch):
    """A dead save's temp in a folder where deleting fails (a read-only share, an immutable
    file): the cleanup reports nothing removed instead of failing the save."""
    import errno

    (tmp_path / _partial("old")).write_text("leftover")
    real = os.unlink

    def refuse(path, *a, **kw):
        if str(path).endswith(".partial"):
            raise OSError(errno.EPERM, "Operation not permitted")
        return real(path, *a, **kw)

    monkeypatch.setattr(os, "unlink", refuse)
    assert recover_folder(str(tmp_path)) == []
    assert _files(tmp_path) == {_partial("old"): "leftover"}


def test_a_fifo_named_like_a_temp_does_not_block_the_cleanup(tmp_path):
    """Opening a FIFO for reading waits for a writer: the cleanup opens without blocking, so it
    returns, and leaves the FIFO alone: it is named like our temp but no save of ours made it."""
    import threading

    fifo = tmp_path / _partial("pipe")
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(recover_folder(str(tmp_path))), daemon=True)
    t.start()
    t.join(10)
    blocked = t.is_alive()
    if blocked:  # release the blocked open before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        t.join(5)
    assert not blocked, "recover_folder blocked on a FIFO"
    assert done == [[]] and fifo.exists()


def test_a_final_name_with_a_backslash_is_not_renamed_to(tmp_path):
    """A backslash is a separator on Windows: ``sub\\victim`` would leave the name's folder
    there, so a journal naming one is refused everywhere, even where it is a plain character."""
    tmp = f".sub\\victim.{HEX}.partial"
    (tmp_path / tmp).write_text("planted")
    _plant(tmp_path, {"renames": [[tmp, "sub\\victim"]], "backups": []})
    recover_folder(str(tmp_path), remove_leftovers=False)
    assert _files(tmp_path) == {tmp: "planted"}


def test_a_temp_that_is_a_symlink_is_never_moved_into_place(tmp_path):
    """A symlink named like our temp (to a file of ours, private) is no temp of ours: renamed
    to ``a`` it would make the saved name point wherever the link points."""
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "elsewhere" / "secret"
    target.write_text("secret")
    target.chmod(0o600)
    os.symlink(target, tmp_path / _partial("a"))
    _plant(tmp_path, {"renames": [[_partial("a"), "a"]], "backups": []})
    recover_folder(str(tmp_path), remove_leftovers=False)
    assert os.path.islink(tmp_path / _partial("a")) and not os.path.lexists(tmp_path / "a")


def test_a_backup_that_is_a_symlink_or_a_fifo_is_not_deleted(tmp_path):
    """Only a regular file of ours is a backup we made: a link named like one (to a file of
    ours) or a FIFO stays."""
    target = tmp_path / "secret"
    target.write_text("secret")
    target.chmod(0o600)
    os.symlink(target, tmp_path / _partial("link"))
    os.mkfifo(tmp_path / _partial("fifo"))
    _plant(tmp_path, {"renames": [], "backups": [_partial("link"), _partial("fifo")]})
    recover_folder(str(tmp_path), remove_leftovers=False)
    assert os.path.islink(tmp_path / _partial("link")) and target.read_text() == "secret"
    assert os.path.exists(tmp_path / _partial("fifo"))


def test_a_temp_a_live_save_holds_is_neither_removed_nor_reported(tmp_path):
    """A temp whose lock is held belongs to a running save: kept, and not in the list of what
    the cleanup removed."""
    (tmp_path / _partial("a")).write_text("being written")
    (tmp_path / _partial("a")).chmod(0o600)
    fd = _hold(tmp_path / _partial("a"))
    try:
        assert recover_folder(str(tmp_path)) == []
        assert _files(tmp_path) == {_partial("a"): "being written"}
    finally:
        os.close(fd)
    assert recover_folder(str(tmp_path)) == [str(tmp_path / _partial("a"))]
    assert _files(tmp_path) == {}


def test_a_journal_not_ours_leaves_our_dead_temps_to_the_cleanup(tmp_path):
    """A journal this user's writer did not make (readable by others: downloaded, copied) is
    left alone, but it is no live save either: our own dead temps beside it still go."""
    _plant(tmp_path, {"renames": [[_partial("a"), "a"]], "backups": []}, mode=0o644)
    (tmp_path / _partial("a")).write_text("dead")
    (tmp_path / _partial("a")).chmod(0o600)
    assert recover_folder(str(tmp_path)) == [str(tmp_path / _partial("a"))]
    assert set(_files(tmp_path)) == {f".{'f' * 12}.txn"}


def test_a_link_named_like_a_journal_is_no_live_save(tmp_path):
    """A symlink named like a journal is not opened through: even pointing at a file some save
    holds locked, it does not make the folder look busy and keep dead temps forever."""
    (tmp_path / "elsewhere").mkdir()
    held = tmp_path / "elsewhere" / "held"
    held.write_text("")
    os.symlink(held, tmp_path / f".{'f' * 12}.txn")
    (tmp_path / _partial("a")).write_text("dead")
    (tmp_path / _partial("a")).chmod(0o600)
    fd = _hold(held)
    try:
        assert recover_folder(str(tmp_path)) == [str(tmp_path / _partial("a"))]
    finally:
        os.close(fd)
    assert os.path.islink(tmp_path / f".{'f' * 12}.txn")
