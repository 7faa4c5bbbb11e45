"""The nova runner's own parts that need no nova."""

import sys
import types
from unittest import mock

from shelvefix.nova import runner
from shelvefix.tests import base


class ResetExecutorsTestCase(base.TestCase):
    """nova's thread pools are shut down before a fork, release by release."""

    def test_every_reset_the_release_has_is_called(self):
        calls = []
        factory = types.ModuleType('nova.thread_pool_factory')
        factory.reset_all_executors = lambda: calls.append('factory')
        utils = types.ModuleType('nova.utils')
        utils.destroy_scatter_gather_executor = (
            lambda: calls.append('scatter-gather'))
        # A release without the others: nothing to call for them.
        with mock.patch.dict(sys.modules, {
                'nova.thread_pool_factory': factory, 'nova.utils': utils}):
            runner.reset_executors()
        self.assertEqual(['factory', 'scatter-gather'], calls)

    def test_no_nova_loaded_is_nothing_to_reset(self):
        with mock.patch.dict(sys.modules):
            for name in ('nova.thread_pool_factory', 'nova.utils'):
                sys.modules.pop(name, None)
            runner.reset_executors()
