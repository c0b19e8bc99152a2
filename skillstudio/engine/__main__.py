"""``python -m skillstudio.engine``: the reference engine speaking the process protocol."""

import os

# One core per engine process: the few small matrix products gain nothing from BLAS threads and
# lose a lot to their start-up. Set before numpy is imported.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from skillstudio.engine.server import main  # noqa: E402

raise SystemExit(main())
