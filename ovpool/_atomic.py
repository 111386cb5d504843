"""Writing output files atomically.

``save_npz_atomically`` writes the arrays to a temporary file in the destination's directory,
flushes it to disk and renames it over the destination, so the destination is either the old
file (or absent) or the complete new one: never half-written, whatever happens meanwhile (an
exception, Ctrl-C, a full disk). It refuses to write over any of ``protected_paths`` (the
command's input files), however the path is spelled (relative, through symlinks or a hard
link).
"""

import os
import tempfile

import numpy as np

from .errors import BadArgumentError

__all__ = ["save_npz_atomically"]


def _same_file(a, b):
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _fsync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save_npz_atomically(path, arrays, protected_paths=()):
    """Write ``arrays`` (a mapping name -> array) to ``path`` as an uncompressed ``.npz``.

    The path is used exactly as given (no ``.npz`` suffix is added). The file appears
    atomically: a temporary file beside it is written, synced and renamed over ``path``; on
    any error or interruption the temporary file is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : str or os.PathLike
    arrays : mapping of str to array_like
    protected_paths : iterable of str or os.PathLike
        Files that must not be overwritten (e.g. the model and the inputs).

    Returns
    -------
    str
        The path written.

    Raises
    ------
    ovpool.errors.BadArgumentError
        ``path`` is a protected file or a directory, or cannot be written (the message names
        the path and the reason).
    """
    path = os.fspath(path)
    for protected in protected_paths:
        if protected is not None and _same_file(path, os.fspath(protected)):
            raise BadArgumentError(f"refusing to write the outputs to {path}: it is the input "
                                   f"file {os.fspath(protected)}")
    if os.path.isdir(path):
        raise BadArgumentError(f"cannot write {path}: it is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                                         suffix=".tmp")
    except OSError as error:
        raise BadArgumentError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **{str(name): array for name, array in arrays.items()})
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates the file private (0600); give it a new file's usual mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise BadArgumentError(f"cannot write {path}: {error.strerror or error}") from None
        raise
    _fsync_directory(directory)
    return path
