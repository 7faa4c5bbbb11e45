"""The ``shelvefix`` command line: one module per command."""

import warnings

# eventlet, which nova's dependencies install, warns at its import that it
# is deprecated (oslo.utils imports it where it is installed; seen on
# Python 3.10): nothing a user of the command can act on, and it would
# break the rule of one line per error.
warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
