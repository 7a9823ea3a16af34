"""`python -m bugbout_tui.tui`: the same as the `bugbout-tui` command."""

import sys

from bugbout_tui.tui.main import main

sys.exit(main())
