"""Tests for ``shelvefix faults``: no clean verdict for cases not run.

The matrix itself, on every backend, is in the functional tests
(``shelvefix/tests/functional/race/test_fault_matrix.py``).
"""

import io
import json
from unittest import mock

from shelvefix.cmd import faults
from shelvefix.cmd import main
from shelvefix.race import fault_matrix
from shelvefix.tests import base


class EvidenceTestCase(base.TestCase):
    """Exit 0 needs every case of the matrix run, or named excluded."""

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch('sys.stderr', err):
            rc = main.main(['faults', '--backend', 'double', '--free',
                            'delete'] + list(argv), out=out)
        return rc, out.getvalue(), err.getvalue()

    def test_no_case_run_is_no_verdict(self):
        with mock.patch.object(fault_matrix, 'run_matrix', return_value=[]):
            rc, out, _err = self.run_main()
        self.assertEqual(1, rc)
        self.assertIn('\nLost: 0 (must be 0)\nNo verdict, the cases did not '
                      'run: double: 0 of the 28 cases have a result\n', out)

    def test_cases_skipped_are_no_verdict(self):
        def skipped(placement, frees, progress=None):
            return [fault_matrix.Case(free, point, kind, False, None, [],
                                      'the injector was not installed')
                    for free, point, kind in fault_matrix.matrix(frees)]
        with mock.patch.object(fault_matrix, 'run_matrix', skipped):
            rc, out, err = self.run_main('--json')
        self.assertEqual(1, rc)
        self.assertEqual('shelvefix faults: no verdict: double: 28 cases not '
                         'run (409, 500, 500 after commit, 503 non-JSON, '
                         'DELETE partly committed, connection refused, non-'
                         'JSON body, timeout, timeout after commit, '
                         'truncated body): the injector was not installed\n',
                         err)
        self.assertIn('28 cases not run',
                      json.loads(out)['double']['unearned'])

    def test_the_in_process_fault_is_a_named_exclusion(self):
        # A placement in another process: the fault inside its database
        # does not apply, is said so, and the verdict stands on the rest.
        with mock.patch.object(fault_matrix, 'injects_inside',
                               return_value=False):
            rc, out, _err = self.run_main()
        self.assertEqual(0, rc, out)
        self.assertIn('double: 1 case not applicable, excluded (DELETE '
                      "partly committed): placement's database is another "
                      "process's", out)
        self.assertIn('double             27', out)


class BackendNamesTestCase(base.TestCase):
    """Galera is chosen as stress chooses it: --database galera."""

    def names(self, *argv):
        args = main.build_parser().parse_args(['faults'] + list(argv))
        err = io.StringIO()
        return faults.backend_names(args, err), err.getvalue()

    def test_default_is_real(self):
        self.assertEqual((['real'], ''), self.names())

    def test_database_galera_adds_the_cluster(self):
        self.assertEqual((['galera'], ''), self.names('--database',
                                                      'galera'))
        self.assertEqual((['double', 'galera'], ''),
                         self.names('--backend', 'double', '--database',
                                    'galera'))

    def test_the_old_spelling_still_works_and_says_so(self):
        names, err = self.names('--backend', 'galera', '--database',
                                'galera')
        self.assertEqual(['galera'], names)
        self.assertIn('--backend galera is deprecated: use --database '
                      'galera', err)

    def test_galera_with_a_config_file_is_refused_in_one_line(self):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch('sys.stderr', err):
            rc = main.main(['faults', '--database', 'galera',
                            '--config-file', '/dev/null'], out=out)
        self.assertEqual(2, rc)
        self.assertIn('--config-file cannot be given with --database '
                      'galera', err.getvalue())
        self.assertEqual(1, len(err.getvalue().strip().splitlines()))
