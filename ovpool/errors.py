"""Exceptions raised by ovpool for user mistakes (bad attributes, shapes, dtypes, arguments).

Every error subclasses :class:`OvpoolError`, and also the builtin exception a caller would
naturally catch (``ValueError`` for bad values, ``TypeError`` for bad dtypes), so code written
against numpy-style libraries keeps working.
"""

__all__ = [
    "OvpoolError",
    "BadAttributeError",
    "BadShapeError",
    "BadDtypeError",
    "BadArgumentError",
    "MemoryLimitError",
    "ModelError",
    "UnsupportedError",
]


class OvpoolError(Exception):
    """Base class of every error ovpool raises on purpose.

    ``context`` is an optional prefix naming where the error comes from (for the IR path: the
    file, line, layer id, name, type and version). ``with_context`` returns a copy of the error
    with that prefix added, so lower layers can raise plain errors and upper layers add context.
    """

    def __init__(self, message, context=None):
        self.message = message
        self.context = context
        super().__init__(f"{context}: {message}" if context else message)

    def with_context(self, context):
        combined = f"{context}: {self.context}" if self.context else context
        return type(self)(self.message, combined)


class BadAttributeError(OvpoolError, ValueError):
    """An operation attribute (kernel, strides, pads, auto_pad, ...) has an invalid value."""


class BadShapeError(OvpoolError, ValueError):
    """An input shape cannot be used by the operation."""


class BadDtypeError(OvpoolError, TypeError):
    """An array's element type is not supported by the operation."""


class BadArgumentError(OvpoolError, ValueError):
    """A call argument other than an attribute is invalid (e.g. an ``out=`` array)."""


class MemoryLimitError(OvpoolError, MemoryError):
    """An output would exceed the configured memory limit or overflow its size."""


class ModelError(OvpoolError, ValueError):
    """An IR model (.xml / .bin) is malformed, inconsistent or unsafe to load."""


class UnsupportedError(OvpoolError, NotImplementedError):
    """A valid model or input uses something ovpool does not implement."""
