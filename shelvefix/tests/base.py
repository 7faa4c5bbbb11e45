"""Base test case: isolated configuration and captured logs."""

import logging

import fixtures
from oslo_config import fixture as config_fixture
import testtools

from shelvefix import conf
from shelvefix import context


class TestCase(testtools.TestCase):
    """A test with its own config overrides and a captured log.

    ``self.log`` holds everything logged at DEBUG and above, formatted as
    ``LEVEL name message`` so tests can assert what operators would see.
    """

    def setUp(self):
        super(TestCase, self).setUp()
        self.flags_fixture = self.useFixture(
            config_fixture.Config(conf.CONF))
        self.log = self.useFixture(fixtures.FakeLogger(
            level=logging.DEBUG,
            format='%(levelname)s %(name)s %(message)s'))
        self.context = context.RequestContext(
            user_id='fake-user', project_id='fake-project')

    def flags(self, group=None, **kw):
        """Override config options for this test only."""
        for name, value in kw.items():
            self.flags_fixture.config(**{name: value, 'group': group})

    def error_logs(self):
        """Lines logged at ERROR."""
        return [line for line in self.log.output.splitlines()
                if line.startswith('ERROR ')]
