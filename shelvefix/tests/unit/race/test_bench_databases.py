"""benchmarks/bench_databases.py: every set-up, and it stops when told.

The benchmark lives beside the package, not in it: from a checkout, or
where the wheel installs it (:mod:`shelvefix.tests.shipped`).
"""

from unittest import mock

from shelvefix.cmd import main as shelvefix_main
from shelvefix.tests import base
from shelvefix.tests import shipped


class BenchDatabasesTestCase(base.TestCase):

    def setUp(self):
        super(BenchDatabasesTestCase, self).setUp()
        self.bench = shipped.use_script(self, 'benchmarks',
                                        'bench_databases.py')

    def test_every_setup_is_a_stress_database(self):
        parser = shelvefix_main.build_parser()
        for name, options in self.bench.SETUPS.items():
            args = parser.parse_args(['stress'] + options)
            self.assertEqual(options[1], args.database, name)

    def test_an_interrupted_run_ends_the_benchmark(self):
        # SIGTERM made the command clean up and return 143: the next
        # set-up must not start.
        with mock.patch.object(self.bench.shelvefix_main, 'main',
                               return_value=143) as main:
            e = self.assertRaises(SystemExit, self.bench.main,
                                  ['--database', 'sqlite', '--database',
                                   'mariadb'])
        self.assertEqual(143, e.code)
        self.assertEqual(1, main.call_count)

    def test_one_ordering(self):
        report = {'database': 'sqlite', 'results': []}
        with mock.patch.object(self.bench, 'run',
                               return_value=report) as run:
            self.assertEqual(0, self.bench.main(
                ['--database', 'sqlite', '--ordering', 'corrected']))
        run.assert_called_once_with('sqlite', 8, 20, 'corrected')
        parser = shelvefix_main.build_parser()
        with mock.patch.object(self.bench.shelvefix_main, 'main',
                               return_value=2) as main:
            self.bench.run('sqlite', 1, 1, 'legacy')
        argv = main.call_args[0][0]
        self.assertEqual(['legacy'], parser.parse_args(argv).ordering)
