"""A bad setting in the environment: one line naming it, exit status 2.

The bad-input table's rule (:mod:`.test_bad_input`), for what a command
line alone cannot say: the variables that place the PostgreSQL cluster
of ``stress``. Each is refused before the cluster is started (nothing
here needs port 5433, or starts a placement).
"""

import fixtures
import testscenarios

from shelvefix.backends import server
from shelvefix.tests import base
from shelvefix.tests.unit.cmd import test_bad_input

load_tests = testscenarios.load_tests_apply_scenarios

STRESS = ['stress', '--servers', '1', '--cycles', '1']

CASES = [
    # A data directory where none can be: the path and the reason.
    ('pg data under /proc', {'SHELVEFIX_PG_DATA': '/proc/pg'},
     '/proc/pg.leases: No such file or directory'),
    # initdb is not there: said before "initdb failed" could be.
    ('pg bindir missing', {'SHELVEFIX_PG_BINDIR': '/nonexistent',
                           'SHELVEFIX_PG_DATA': '{tmp}/pg'},
     'SHELVEFIX_PG_BINDIR=/nonexistent: no such directory'),
    ('pg bindir without initdb', {'SHELVEFIX_PG_BINDIR': '{tmp}',
                                  'SHELVEFIX_PG_DATA': '{tmp}/pg'},
     'SHELVEFIX_PG_BINDIR={tmp}: no initdb there'),
    ('postgresql script missing',
     {'SHELVEFIX_POSTGRESQL_SCRIPT': '/nonexistent'},
     'SHELVEFIX_POSTGRESQL_SCRIPT=/nonexistent: no such file'),
]


class EnvironmentTestCase(base.TestCase):

    scenarios = [(name, {'env': env, 'expected': expected})
                 for name, env, expected in CASES]

    run_main = test_bad_input.BadInputTestCase.run_main

    def setUp(self):
        super().setUp()
        if server.missing_dependencies('postgresql'):
            self.skipTest('needs the placement extra')
        self.tmp = self.useFixture(fixtures.TempDir()).path
        for name, value in self.env.items():
            self.useFixture(fixtures.EnvironmentVariable(
                name, value.format(tmp=self.tmp)))

    def test_refused_in_one_line(self):
        rc, out, err = self.run_main(STRESS)
        self.assertEqual(2, rc, err)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn(self.expected.format(tmp=self.tmp), err)
        self.assertTrue(err.startswith('shelvefix stress: '), err)
        self.assertNotIn('a bug in shelvefix', err)
        self.assertEqual('', out)
