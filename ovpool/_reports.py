"""Writing the reports of ``explain``, ``run --profile`` and ``check --layers`` (JSON, CSV)."""

import csv
import json

from .errors import BadArgumentError

__all__ = ["write_json", "write_csv"]


def _open(path):
    try:
        return open(path, "w", newline="", encoding="utf-8")
    except OSError as error:
        raise BadArgumentError(f"cannot write {path}: {error.strerror or error}") from None


def write_json(path, data):
    """Write ``data`` as indented JSON (NaN and infinities as JSON null)."""
    with _open(path) as handle:
        json.dump(_finite(data), handle, indent=1)
        handle.write("\n")
    return path


def write_csv(path, headers, rows):
    with _open(path) as handle:
        writer = csv.writer(handle)
        writer.writerow(headers)
        writer.writerows(rows)
    return path


def _finite(value):
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
