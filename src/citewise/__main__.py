"""``python -m citewise``: the command line."""

import sys

from citewise.cli import main

sys.exit(main())
