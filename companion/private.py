"""Files that hold the link tokens and the secret key are this user's alone.

The database, its copies and the secret key are made 0600, and the folders that hold
them 0700: on a shared computer, another user could otherwise read every match's
player link. SQLite gives the side files it makes (WAL, SHM, journal) the database's
own mode. Files and the instance folder left looser by an older version are tightened
at start.
"""

import errno
import logging
import os
import stat

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
