"""Base test case for tests that import nova.

nova is imported in ``setUp``, through :func:`load`, for two reasons:

* without nova (``tox -e py3``) the tests must skip, not break discovery;
* ``nova.conf`` and ``shelvefix.conf`` both register a ``[placement]``
  group on oslo.config's global ``CONF`` with different definitions of
  keystoneauth1's options, so nova cannot be imported into a process that
  has loaded ``shelvefix.conf`` (the default stestr run does, through
  ``shelvefix.tests.base``). There the tests skip with that reason;
  ``tox -e nova`` runs this tree on its own. Nothing under
  ``shelvefix/tests/nova`` may import ``shelvefix.conf``.
"""

import importlib
import logging

import fixtures
from oslo_config import cfg
import testtools

RUN_HINT = 'run them with "tox -e nova"'


def load(name):
    """Import a module that needs nova, or skip the running test.

    :param name: a module that imports nova (under :mod:`shelvefix.nova`,
        or nova's own)
    :raises testtools.TestCase.skipException: nova is not installed, or
        cannot be imported next to ``shelvefix.conf``
    """
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise testtools.TestCase.skipException(
            'nova is not installed (%s); %s' % (e, RUN_HINT))
    except cfg.Error as e:
        raise testtools.TestCase.skipException(
            'nova cannot share a process with shelvefix.conf, already '
            'imported here (%s: %s); %s' % (type(e).__name__, e, RUN_HINT))


def unexplored(exploration):
    """Why an exploration shows nothing a test may judge, or None.

    The one place ``tox -e nova`` decides that an exploration ran: it made
    at least one run, and every run ended with an outcome. Without it an
    assertion such as "every run ended so" holds for no run at all.

    :param exploration: what :func:`shelvefix.explorer.explore` returned
    """
    if not exploration.runs:
        return 'the exploration made no run'
    for run in exploration.runs:
        if not run.outcome:
            return 'run %d of the exploration has no outcome' % run.index
    return None


class NovaTestCase(testtools.TestCase):
    """A test that runs nova's code.

    :ivar harness: :mod:`shelvefix.nova.harness`
    :ivar log: everything logged, as ``LEVEL name message`` lines
    """

    def setUp(self):
        super(NovaTestCase, self).setUp()
        self.harness = load('shelvefix.nova.harness')
        self.log = self.useFixture(fixtures.FakeLogger(
            level=logging.DEBUG,
            format='%(levelname)s %(name)s %(message)s'))
        self.useFixture(self.harness.NovaConfig())

    def assertExplored(self, exploration):
        """Fail, saying why, unless the exploration ran (see unexplored)."""
        why = unexplored(exploration)
        if why:
            self.fail(why)
