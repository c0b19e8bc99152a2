"""``python -m skillstudio``: the same as the ``skillstudio`` command."""

import multiprocessing
import sys

from skillstudio.entry import main

if __name__ == "__main__":
    # In the frozen app (packaging/skillstudio.spec) a verification worker process starts this
    # executable again; freeze_support runs the worker there instead of a second app. A no-op
    # otherwise.
    multiprocessing.freeze_support()
    sys.exit(main())
