"""``.. command-help:: race``: a command's ``--help``, as it prints it.

The options of each command are documented where they are defined, in
its argparse parser; the guide shows what ``shelvefix COMMAND --help``
prints at build time, so the page cannot drift from the code.
"""

import os
import subprocess
import sys

from docutils import nodes
from sphinx.util.docutils import SphinxDirective
from sphinx.util import logging

LOG = logging.getLogger(__name__)
TIMEOUT = 60


class CommandHelp(SphinxDirective):
    """The ``--help`` of ``shelvefix ARG...`` as a literal block."""

    required_arguments = 1
    optional_arguments = 4

    def run(self):
        argv = [sys.executable, '-m', 'shelvefix'] + list(self.arguments)
        env = dict(os.environ, COLUMNS='79')
        try:
            proc = subprocess.run(argv + ['--help'], capture_output=True,
                                  text=True, timeout=TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            LOG.warning('%s --help took over %d s', ' '.join(argv[2:]),
                        TIMEOUT, location=self.get_location())
            return []
        if proc.returncode != 0:
            LOG.warning('%s --help exited %d: %s', ' '.join(argv[2:]),
                        proc.returncode, proc.stderr.strip(),
                        location=self.get_location())
            return []
        text = proc.stdout.rstrip('\n')
        return [nodes.literal_block(text, text)]


def setup(app):
    app.add_directive('command-help', CommandHelp)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
