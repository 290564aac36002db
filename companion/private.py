"""Files that hold the link tokens and the secret key are this user's alone.

The database, its copies and the secret key are made 0600, and the folders that hold
them 0700: on a shared computer, another user could otherwise read every match's
player link. SQLite gives the side files it makes (WAL, SHM, journal) the database's
own mode. Files and the instance folder left looser by an older version are tightened
at start. The lock files beside them (``file_turn``) are made 0600 too.
"""

import contextlib
import errno
import logging
import os
import stat
from collections.abc import Iterator

from filelock import FileLock, Timeout

FILE_MODE = 0o600
FOLDER_MODE = 0o700
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's, beside the database

logger = logging.getLogger(__name__)


def tighten(path: str | os.PathLike, mode: int) -> None:
    """Take from an existing file or folder what ``mode`` does not grant; never add."""
    try:
        current = stat.S_IMODE(os.stat(path).st_mode)
        if current & ~mode:
            os.chmod(path, current & mode)
    except FileNotFoundError:
        pass
    except OSError as error:  # a read-only disk: the start says so if it matters
        if error.errno != errno.EROFS:  # another user's file: nothing else will say it
            logger.warning("cannot make %s private: %s", path, error.strerror)


def private_file(path: str | os.PathLike) -> None:
    """Create ``path`` empty and 0600 when missing (SQLite takes an empty file as a new
    database), else tighten it."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        tighten(path, FILE_MODE)
    except OSError:  # a folder that cannot be written: whoever opens it next says why
        pass


def private_database(path: str | os.PathLike) -> None:
    """The database file 0600 (created when missing) and any side files it has."""
    private_file(path)
    for suffix in SIDE_FILES:
        tighten(f"{os.fspath(path)}{suffix}", FILE_MODE)


def private_folder(folder: str | os.PathLike) -> None:
    """Create ``folder`` 0700 when missing, else tighten it."""
    os.makedirs(folder, FOLDER_MODE, exist_ok=True)
    tighten(folder, FOLDER_MODE)


@contextlib.contextmanager
def file_turn(path: str | os.PathLike, wait: bool) -> Iterator[bool]:
    """Hold the lock file ``path`` (0600) while the block runs, and say whether it is
    held: without ``wait``, False at once while another process has it.

    filelock's lock is the kernel's ``flock``, let go if the process dies; it is not
    thread-local, so the caller decides which of its threads take turns.
    """
    lock = FileLock(path, mode=FILE_MODE, thread_local=False)
    try:
        lock.acquire(blocking=wait)
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
