"""``python -m goboom_cli`` = ``goboom``."""

import sys

from goboom_cli import main

sys.exit(main())
