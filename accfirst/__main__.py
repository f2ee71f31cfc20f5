"""``python -m accfirst``: the command line of ``accfirst.cli``."""

import sys

from accfirst.cli import main

# The guard matters: sweep workers are spawned and import this module as __mp_main__.
if __name__ == "__main__":
    sys.exit(main())
