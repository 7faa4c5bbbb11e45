"""A private MariaDB server: what it starts, it stops and removes.

Real ``mariadbd`` processes on 127.0.0.1 (Debian's ``mariadb-server``,
installed by the fixture when run as root). The tests skip, saying why,
when MariaDB or PyMySQL cannot be had; ``SHELVEFIX_REQUIRE_PLACEMENT_
SERVER=1`` turns the skips into failures.
"""

import os
import socket

from shelvefix.backends import mariadb
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_server


def listening(port):
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex(('127.0.0.1', port)) == 0


class MariaDBServerTestCase(base.TestCase):

    def setUp(self):
        super(MariaDBServerTestCase, self).setUp()
        test_server._require(self, 'mariadb')

    def test_started_on_loopback_then_stopped_and_removed(self):
        server = mariadb.MariaDBServer()
        server.setUp()
        try:
            pid, port, directory = server.pid, server.port, server.directory
            self.assertTrue(listening(port))
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                cmdline = f.read().split(b'\0')
            self.assertIn(
                ('--defaults-file=%s' % server.defaults_file).encode(),
                cmdline)
            with open(server.defaults_file) as f:
                self.assertIn('bind-address = 127.0.0.1\n', f.read())
            self.assertRegex(
                server.admin_url, r'^mysql\+pymysql://placement:placement@'
                r'127\.0\.0\.1:%d/mysql$' % port)
        finally:
            server.cleanUp()
        self.assertRaises(ProcessLookupError, os.kill, pid, 0)
        self.assertFalse(listening(port))
        self.assertFalse(os.path.exists(directory))

    def test_databases_are_isolated_and_dropped(self):
        server = self.useFixture(mariadb.MariaDBServer())

        def databases():
            return {row[0] for row in server._execute('SHOW DATABASES')}

        first = mariadb.MariaDBDatabase(server.admin_url)
        second = mariadb.MariaDBDatabase(server.admin_url)
        with first, second:
            self.assertNotEqual(first.name, second.name)
            self.assertLessEqual({first.name, second.name}, databases())
            self.assertTrue(first.url.endswith(
                '/%s?charset=utf8mb4' % first.name))
        self.assertEqual(set(), {first.name, second.name} & databases())

    def test_counters(self):
        server = self.useFixture(mariadb.MariaDBServer())
        status = server.status(['Innodb_deadlocks', 'Uptime', 'nonesuch'])
        self.assertEqual({'Innodb_deadlocks', 'Uptime'}, set(status))
        self.assertEqual(0, status['Innodb_deadlocks'])
