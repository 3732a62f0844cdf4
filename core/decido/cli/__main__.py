"""``python -m decido.cli``: the ``decido`` command without its console script."""

import sys

from decido.cli import main

sys.exit(main())
