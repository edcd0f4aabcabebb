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
