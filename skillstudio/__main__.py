"""``python -m skillstudio``: the same as the ``skillstudio`` command."""

import sys

from skillstudio.entry import main

sys.exit(main())
