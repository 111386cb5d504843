"""``python -m ovpool``: the same as the ``ovpool`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
