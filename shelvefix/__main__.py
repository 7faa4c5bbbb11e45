"""``python -m shelvefix`` runs the command line."""

import sys

from shelvefix.cmd import main

sys.exit(main.main())
