"""Tests for shelvefix.backends.ports."""

import socket
from unittest import mock

import testtools

from shelvefix.backends import ports


class FreePortTestCase(testtools.TestCase):

    def test_below_the_ephemeral_range_and_never_twice(self):
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            low = int(f.read().split()[0])
        handed = [ports.free_port() for _i in range(20)]
        self.assertEqual(20, len(set(handed)))
        if low > 11000:
            self.assertTrue(all(10000 <= p < low for p in handed), handed)

    def test_a_port_in_use_is_passed_over(self):
        with socket.socket() as sock:
            sock.bind(('127.0.0.1', 0))
            taken = sock.getsockname()[1]
            with mock.patch.object(ports.random.SystemRandom, 'randint',
                                   side_effect=[taken, taken + 1]), \
                    mock.patch.object(ports, '_ephemeral_low',
                                      return_value=65000):
                port = ports.free_port()
        self.assertNotEqual(taken, port)
