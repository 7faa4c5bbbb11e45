"""No database password is ever shown, and a database that refuses is
told at once.

``shelvefix stress --db-url`` with a distinctive password, through every
way it can fail: a PostgreSQL and a MySQL that refuse the connection
(nothing listens on port 1 of 127.0.0.1), a MariaDB that refuses the
password, a URL SQLAlchemy cannot read, a database placement does not run
on; plain, with ``--json`` and with ``--debug`` (every log line of the
library). Each runs in a new interpreter, so that everything it writes,
stdout and stderr, is read. Nothing here needs the network or port 5433.
"""

import os
import subprocess
import sys
import time

import testscenarios

from shelvefix.backends import mariadb
from shelvefix.backends import server
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_server

load_tests = testscenarios.load_tests_apply_scenarios

SECRET = 'Pw4Secrets9x'
#: What a refused connection may take. oslo.db's defaults (10 attempts,
#: 10 s apart) took MySQL 100 s; PostgreSQL was never retried.
REFUSED_WITHIN = 30

URLS = [
    ('postgresql', 'postgresql+psycopg2://placement:%s@127.0.0.1:1/'
                   'placement' % SECRET, 'Connection refused'),
    ('mysql', 'mysql+pymysql://placement:%s@127.0.0.1:1/placement' % SECRET,
     'Connection refused'),
]
FLAGS = [
    ('plain', []),
    ('json and debug', ['--json', '--debug']),
]


def run_stress(url, flags=()):
    """``shelvefix stress`` on ``url``: (status, output, seconds)."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, '-m', 'shelvefix', 'stress'] + list(flags) +
        ['--servers', '1', '--cycles', '1', '--db-url', url],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=300,
        env=dict(os.environ, PYTHONUNBUFFERED='1'))
    return proc.returncode, proc.stdout, time.monotonic() - started


class RefusedTestCase(base.TestCase):

    scenarios = testscenarios.multiply_scenarios(
        [(name, {'database': name, 'url': url, 'reason': reason})
         for name, url, reason in URLS],
        [(name, {'flags': flags}) for name, flags in FLAGS])

    def test_masked_and_quick(self):
        if server.missing_dependencies(server.DIALECTS[self.database]):
            self.skipTest('needs the placement extra')
        rc, output, took = run_stress(self.url, self.flags)
        self.assertEqual(2, rc, output)
        self.assertNotIn(SECRET, output)
        last = output.splitlines()[-1]
        self.assertIn('placement-manage db sync failed', last)
        self.assertIn('placement:***@127.0.0.1:1/placement', last)
        self.assertIn(self.reason, last)
        self.assertLess(took, REFUSED_WITHIN, output)


class RefusedBeforeAnyWorkTestCase(base.TestCase):

    def test_urls_that_cannot_be_used(self):
        for url, expected in (
                ('postgresql://placement:%s@host:port/x' % SECRET,
                 "'postgresql://placement:***@host:port/x' is not a "
                 'SQLAlchemy URL'),
                ('foo://placement:%s@h/x' % SECRET, 'not foo')):
            rc, output, _took = run_stress(url, ['--debug'])
            self.assertEqual(2, rc, output)
            self.assertNotIn(SECRET, output)
            self.assertIn(expected, output)


class WrongPasswordTestCase(base.TestCase):
    """A MariaDB that is there, and refuses the password."""

    def setUp(self):
        super().setUp()
        test_server._require(self, 'mariadb')
        self.mariadb = self.useFixture(mariadb.MariaDBServer())

    def test_masked(self):
        url = 'mysql+pymysql://placement:%s@127.0.0.1:%d/mysql' % (
            SECRET, self.mariadb.port)
        rc, output, took = run_stress(url, ['--debug', '--json'])
        self.assertEqual(2, rc, output)
        self.assertNotIn(SECRET, output)
        last = output.splitlines()[-1]
        self.assertIn('placement:***@127.0.0.1', last)
        self.assertIn('Access denied', last)
        self.assertLess(took, REFUSED_WITHIN, output)
