"""Files written whole or not at all: `atomic_write`, and the `temporaries` a killed write leaves.

Kept apart from serialization.py (zipfile, pickle and the checkpoint reader) so that a program that
only writes logs, plots or prepared data, or cleans up after a killed run, does not import those."""
import os
import re
import secrets

_TMP_SUFFIX = ".tmp"


def atomic_write(path, write):
    """Create or replace the file `path` so that a reader (or a crash) sees the old file or the new
    one, never a part: `write(tmp)` fills a temporary file in the same folder, which is flushed to
    disk (fsync) and renamed over `path`; on any error the temporary file is removed."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(4)}{_TMP_SUFFIX}")
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_folder(folder)


def temporaries(path):
    """The temporary files `atomic_write(path, ...)` creates for `path` (sorted paths): any found
    while no write is running were left by a process killed mid-write, and may be removed."""
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    pattern = re.compile(re.escape(f".{os.path.basename(os.fspath(path))}.") + r"[0-9a-f]{8}" + re.escape(_TMP_SUFFIX))
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if pattern.fullmatch(n))


def _fsync_folder(folder):
    """Make the rename itself durable (best effort: not every OS lets a folder be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
