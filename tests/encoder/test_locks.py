"""``locks``: one writer per folder, and a refused writer leaves neither its lock file nor a folder it made."""

from __future__ import annotations

import pytest

from encoder import locks
from encoder.files import made_folder


class Refused(Exception):
    pass


def test_a_refused_block_removes_the_lock_file_and_folders_it_made(tmp_path):
    out = tmp_path / "new" / "out"
    with pytest.raises(Refused), made_folder(out), locks.locked(out / locks.LOCK, OSError("busy")):
        assert (out / locks.LOCK).is_file()
        raise Refused
    assert list(tmp_path.iterdir()) == []


def test_a_lock_file_or_folder_that_was_there_stays(tmp_path):
    (tmp_path / locks.LOCK).write_bytes(b"")
    (tmp_path / "mine.txt").write_text("mine")
    with pytest.raises(Refused), made_folder(tmp_path), locks.locked(tmp_path / locks.LOCK, OSError("busy")):
        raise Refused
    assert sorted(p.name for p in tmp_path.iterdir()) == [locks.LOCK, "mine.txt"]


def test_a_finished_block_keeps_its_lock_file_and_a_second_writer_is_busy(tmp_path):
    with locks.locked(tmp_path / locks.LOCK, OSError("busy")):
        with pytest.raises(OSError, match="busy"), locks.locked(tmp_path / locks.LOCK, OSError("busy")):
            pass
        assert (tmp_path / locks.LOCK).is_file()  # the second writer's refusal did not remove the first's lock
    assert (tmp_path / locks.LOCK).is_file()


def test_a_folder_is_a_commands_own_by_its_record_and_these_are_the_writers_names(tmp_path):
    """``owning_folder`` knows the records of the commands that write a folder whole by name and by a key they
    always hold: those are the names the commands use; a file of such a name that is not such a record (a web app's
    manifest.json), or a lock alone (pytest keeps one in its temporary folders), claims nothing."""
    import json

    from encoder.corpus import MANIFEST_FILE
    from encoder.ownership import OWNER_RECORDS, owning_folder
    from encoder.run_folder import RUN_RECORD
    from indexer import layout

    assert set(OWNER_RECORDS) == {layout.MANIFEST, layout.STATE, RUN_RECORD, MANIFEST_FILE}
    target = tmp_path / "shards" / "00000" / "mine.hdf5"
    (tmp_path / locks.LOCK).write_bytes(b"")
    assert owning_folder(target) is None
    for name, key in OWNER_RECORDS.items():
        (tmp_path / name).write_text(json.dumps({"name": "my web app"}))
        assert owning_folder(target) is None
        (tmp_path / name).write_text(json.dumps({key: 1}))
        assert owning_folder(target) == tmp_path and owning_folder(tmp_path / "x" / "y" / "z" / "mine.hdf5") is None
        assert owning_folder(tmp_path / "shards" / ".." / ".." / "beside.hdf5") is None  # .. resolved: not inside
        (tmp_path / name).unlink()
