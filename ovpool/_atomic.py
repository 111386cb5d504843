"""Writing output files atomically.

``save_npz_atomically`` writes the arrays to a temporary file in the destination's directory,
flushes it to disk and renames it over the destination, so the destination is either the old
file (or absent) or the complete new one: never half-written, whatever happens meanwhile (an
exception, Ctrl-C, a full disk). It refuses to write over any of ``protected_paths`` (the
command's input files), however the path is spelled (relative, through symlinks or a hard
link).
"""

import os
import signal
import stat
import tempfile
import threading
from contextlib import contextmanager

import numpy as np

from .errors import BadArgumentError

__all__ = ["save_npz_atomically", "check_output_target", "sigterm_as_exit", "signals_held"]


def check_output_target(path):
    """Refuse an output path that is empty, or exists and is not a regular file (a device
    node, FIFO, socket or directory, or a symbolic link to one): replacing it would destroy
    something that is not an output file, and writing through it could block forever."""
    if not os.fspath(path):
        raise BadArgumentError("the output path is empty")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise BadArgumentError(f"cannot write {path}: {error.strerror or error}") from None
    if stat.S_ISDIR(mode):
        raise BadArgumentError(f"cannot write {path}: it is a directory")
    if not stat.S_ISREG(mode):
        raise BadArgumentError(f"--output {path} exists and is not a regular file; refusing "
                               "to replace it")


@contextmanager
def sigterm_as_exit():
    """SIGTERM unwinds like Ctrl-C does, so temporary files are removed on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def signals_held():
    """Hold SIGINT and SIGTERM back (they take effect when the block ends) while a temporary
    file is created and its name recorded, so an interruption never falls between the two and
    leaves the file behind.

    The holding is done by Python-level handlers that only record the signal, not by a thread
    signal mask: the kernel may deliver a process-directed signal to any thread that does not
    block it (an OpenMP worker, a progress bar's monitor), and Python then runs the handler in
    the main thread at once, whatever the main thread's mask says."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = (signal.SIGINT, signal.SIGTERM)
    pending = []
    previous = {}
    try:
        for signum in held:
            previous[signum] = signal.signal(signum, lambda number, frame: pending.append(number))
        yield
    finally:
        for signum, handler in previous.items():
            # (None: a handler not set from Python; the default is the nearest equivalent.)
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        if pending:
            # Delivered again, now to the handlers in force outside the block.
            signal.raise_signal(pending[0])


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
    check_output_target(path)
    directory = os.path.dirname(os.path.abspath(path))
    with sigterm_as_exit():
        _write_and_rename(path, directory, arrays)
    _fsync_directory(directory)
    return path


def _write_and_rename(path, directory, arrays):
    temporary = None
    try:
        with signals_held():
            fd, temporary = tempfile.mkstemp(dir=directory,
                                             prefix=f".{os.path.basename(path)}.", suffix=".tmp")
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
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        if isinstance(error, OSError):
            raise BadArgumentError(f"cannot write {path}: {error.strerror or error}") from None
        raise
