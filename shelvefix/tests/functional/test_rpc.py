"""The in-process casts between services: a receive that times out.

The rest of :mod:`shelvefix.rpc` is in the unit tests.
"""

from shelvefix import rpc
from shelvefix.tests import base


class TransportTestCase(base.TestCase):

    def setUp(self):
        super(TransportTestCase, self).setUp()
        self.transport = rpc.Transport()

    def test_receive_waits_gives_up_or_times_out(self):
        self.assertRaises(rpc.NothingToReceive, self.transport.receive,
                          'compute', 'h', give_up=lambda: True)
        self.assertRaises(TimeoutError, self.transport.receive, 'compute',
                          'h', timeout=0.01)
