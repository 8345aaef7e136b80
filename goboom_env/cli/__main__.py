"""``python -m goboom_env.cli`` = ``goboom``."""

import sys

from goboom_env.cli import main

sys.exit(main())
