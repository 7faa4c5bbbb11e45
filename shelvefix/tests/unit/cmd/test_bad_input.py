"""Bad input, command by command: one line on stderr, exit status 2.

Each case is a command line the user could type, and a piece of the one
line that must say what was wrong. Every case is refused before any work
starts (nothing here starts a placement), so a case that is not refused
shows up as a failure, or as a test that takes far too long.
"""

import io
import os

import fixtures
import testscenarios

from shelvefix.cmd import main
from shelvefix.tests import base
from shelvefix.tests.unit.novacheck import shapes

load_tests = testscenarios.load_tests_apply_scenarios

# Files the cases name, made in a temporary directory: {NAME} in an
# argument is replaced by the file's path.
FILES = {
    'binary': b'\x7fELF\x02\x01\x01\x00\x00\x00',
    'latin1': b'[placement]\n# caf\xe9\n',
    'bad_value': b'[placement]\nclaim_retry_attempts = many\n',
    'nan_delay': b'[placement]\nclaim_retry_max_delay = nan\n',
    'inf_delay': b'[placement]\nclaim_retry_max_delay = inf\n',
    'long_delay': b'[placement]\nclaim_retry_max_delay = 1e9\n',
    'no_endpoint': b'[placement]\n',
    'remote': (b'[placement]\nauth_type = admin_token\ntoken = admin\n'
               b'endpoint_override = http://127.0.0.1:9\n'),
    'nulsource': shapes.rocky_fixed().encode() + b'\0',
    'notutf8': b'# \xff\n',
    'tree/nova/compute/manager.py': b'class ComputeManager:\0\n',
    # A download cut short, and a file that only has the name of an sdist.
    'nova-1.0-py3-none-any.whl': b'PK\x03\x04\x14\x00\x08\x00truncated',
    'nova-1.0.tar.gz': bytes(range(256)) * 4,
}
#: A database password the cases give: no output may show it.
SECRET = 'S3cr3tPw'

CASES = [
    # -- the top level ---------------------------------------------------
    ('no command', [], 'the following arguments are required: COMMAND'),
    ('unknown command', ['bogus'], "invalid choice: 'bogus'"),
    ('debug alone', ['--debug'], 'required: COMMAND'),
    # -- race -------------------------------------------------------------
    ('race unknown flag', ['race', '--bogus'],
     'shelvefix race: error: unrecognized arguments: --bogus'),
    ('race unknown scenario', ['race', '--scenario', 'nope'],
     "argument --scenario: invalid choice: 'nope'"),
    ('race remote without config', ['race', '--backend', 'remote'],
     '--backend remote needs --config-file'),
    ('race random zero', ['race', '--random', '0'],
     '--random needs a positive number'),
    ('race random negative', ['race', '--random', '-3'],
     '--random needs a positive number'),
    ('race random not a number', ['race', '--random', 'abc'],
     "argument --random: invalid int value: 'abc'"),
    ('race random nan', ['race', '--random', 'nan'],
     "argument --random: invalid int value: 'nan'"),
    ('race random inf', ['race', '--random', 'inf'],
     "argument --random: invalid int value: 'inf'"),
    ('race random overflows', ['race', '--random', '1e999'],
     "argument --random: invalid int value: '1e999'"),
    ('race workers inf', ['race', '--backend', 'double', '--workers', 'inf'],
     "argument --workers: invalid int value: 'inf'"),
    ('race seed nan', ['race', '--random', '2', '--seed', 'nan'],
     "argument --seed: invalid int value: 'nan'"),
    ('race workers zero', ['race', '--backend', 'double', '--workers', '0'],
     '--workers needs a positive number'),
    ('race workers off the double', ['race', '--workers', '2'],
     '--workers 2 needs --backend double'),
    ('race workers above the CPUs',
     ['race', '--backend', 'double', '--workers', '500'],
     '--workers 500: this machine lets the search use'),
    ('race seed without random', ['race', '--seed', '3'],
     '--seed applies to --random runs only'),
    ('race no-reduce with random', ['race', '--random', '2', '--no-reduce'],
     '--no-reduce applies to an exploration, not to --random'),
    ('race diagram with random',
     ['race', '--random', '2', '--diagram', '{tmp}/d.md'],
     '--diagram applies to an exploration'),
    ('race workers with random',
     ['race', '--backend', 'double', '--random', '2', '--workers', '1'],
     '--workers applies to an exploration'),
    ('race variant the scenario lacks',
     ['race', '--ordering', 'legacy', '--variant', 'pre-2025480'],
     '--variant pre-2025480 is not a variant of --scenario '
     'offload-unshelve'),
    ('race ghost in lifecycle', ['race', '--scenario', 'lifecycle',
                                 '--ghost'],
     '--ghost applies to the offload-unshelve scenario only'),
    ('race free in lifecycle', ['race', '--scenario', 'lifecycle', '--free',
                                'delete'],
     '--free applies to the offload-unshelve scenario only'),
    ('race ghost on remote', ['race', '--backend', 'remote', '--ghost',
                              '--config-file', '{remote}'],
     '--ghost needs a placement this process can fail inside'),
    ('race diagram in no directory',
     ['race', '--diagram', '{tmp}/nowhere/d.md'], 'no directory'),
    ('race diagram is a directory', ['race', '--diagram', '{tmp}'],
     'it is a directory'),
    ('race diagram under /proc', ['race', '--diagram', '/proc/x.md'],
     'cannot write /proc/x.md: '),
    ('race config missing', ['race', '--config-file', '{tmp}/missing.conf'],
     'missing.conf: no such file'),
    ('race config directory', ['race', '--config-file', '{tmp}'],
     'is a directory, not a file'),
    ('race config binary', ['race', '--config-file', '{binary}'],
     'not a text file (it holds a NUL byte'),
    ('race config latin-1', ['race', '--config-file', '{latin1}'],
     'not UTF-8 text (byte 0xe9'),
    ('race config bad value', ['race', '--backend', 'remote',
                               '--config-file', '{bad_value}'],
     'bad configuration'),
    ('race config nan retry delay', ['race', '--backend', 'double',
                                     '--config-file', '{nan_delay}'],
     'claim_retry_max_delay in '),
    ('race config inf retry delay', ['race', '--backend', 'double',
                                     '--config-file', '{inf_delay}'],
     'Should be less than or equal to 60'),
    ('race config retry delay too long', ['race', '--backend', 'double',
                                          '--config-file', '{long_delay}'],
     'Should be less than or equal to 60'),
    ('race config without endpoint', ['race', '--backend', 'remote',
                                      '--config-file', '{no_endpoint}'],
     'no placement endpoint'),
    ('race nova-only scenario on the library',
     ['race', '--scenario', 'resize', '--backend', 'double'],
     '--scenario resize runs on the nova target only'),
    # -- corpus -----------------------------------------------------------
    ('corpus unknown bug', ['corpus', '--bug', '42'],
     'no row for bug 42 in the corpus'),
    ('corpus unknown family', ['corpus', '--family', 'cooking'],
     "argument --family: invalid choice: 'cooking'"),
    ('corpus nothing chosen', ['corpus', '--family', 'boot',
                               '--scenario', 'evacuate'],
     'no row of the corpus matches the --bug, --family, --kind and '
     '--scenario given'),
    ('corpus no workers', ['corpus', '--bug', '1798688', '--workers', '0'],
     '--workers needs a positive number'),
    ('corpus workers on real', ['corpus', '--bug', '1798688', '--workers',
                                '2', '--backend', 'real'],
     '--workers 2 needs --backend double'),
    ('corpus timelines of a tree', ['corpus', '--bug', '1798688',
                                    '--timelines'],
     '--timelines applies to --self-test'),
    ('corpus no such tree', ['corpus', '--bug', '1798688', '--nova',
                             '/no/such/nova'],
     '--nova /no/such/nova: no such file or directory'),
    ('corpus not a tree', ['corpus', '--bug', '1798688', '--self-test',
                           '--nova', '{notutf8}'],
     'not a nova source tree, unpacked sdist or wheel'),
    # -- stress -----------------------------------------------------------
    ('stress no servers', ['stress', '--servers', '0'],
     '--servers must be at least 1'),
    ('stress too many servers', ['stress', '--servers', '100000'],
     '--servers 100000: at most 1000'),
    ('stress no cycles', ['stress', '--cycles', '0'],
     '--cycles must be at least 1'),
    ('stress no server workers', ['stress', '--server-workers', '0'],
     '--server-workers must be at least 1'),
    ('stress server workers in-process',
     ['stress', '--server-workers', '2', '--backend', 'double'],
     '--server-workers applies to --backend server only'),
    ('stress db url in-process',
     ['stress', '--db-url', 'sqlite:////tmp/x.db', '--backend', 'double'],
     '--db-url applies to --backend server only'),
    ('stress database in-process',
     ['stress', '--database', 'sqlite', '--backend', 'real'],
     '--database applies to --backend server only'),
    ('stress db url and database',
     ['stress', '--db-url', 'sqlite:////tmp/x.db', '--database', 'sqlite'],
     '--db-url and --database exclude each other'),
    ('stress db url not a url', ['stress', '--db-url', '::nope::'],
     'is not a SQLAlchemy URL'),
    ('stress db url unknown database', ['stress', '--db-url', 'oracle://x'],
     'placement runs on postgresql, mysql or sqlite, not oracle'),
    ('stress db url bad port, password masked',
     ['stress', '--db-url', 'postgresql://u:%s@h:abc/x' % SECRET],
     "--db-url 'postgresql://u:***@h:abc/x' is not a SQLAlchemy URL"),
    ('stress db url bad scheme, password masked',
     ['stress', '--db-url', 'oracle://u:%s@h/x' % SECRET],
     'not oracle'),
    ('stress db url in-process, password masked',
     ['stress', '--backend', 'double', '--db-url',
      'mysql+pymysql://u:%s@h/x' % SECRET],
     '--db-url applies to --backend server only'),
    ('stress poll interval zero', ['stress', '--poll-interval', '0'],
     '--poll-interval must be positive'),
    ('stress negative latency', ['stress', '--compute-latency', '-1'],
     '--compute-latency cannot be negative'),
    ('stress config for the server', ['stress', '--config-file',
                                      '{remote}'],
     '--config-file applies to --backend remote, real or double'),
    ('stress config binary', ['stress', '--backend', 'double',
                              '--config-file', '{binary}'],
     'not a text file'),
    ('stress old workers flag', ['stress', '--workers', '2'],
     'unrecognized arguments: --workers 2'),
    ('stress poll interval nan',
     ['stress', '--backend', 'double', '--poll-interval', 'nan'],
     "argument --poll-interval: 'nan' is not a finite number"),
    ('stress poll interval inf',
     ['stress', '--backend', 'double', '--poll-interval', 'inf'],
     "argument --poll-interval: 'inf' is not a finite number"),
    ('stress poll interval overflows',
     ['stress', '--backend', 'double', '--poll-interval', '1e999'],
     "argument --poll-interval: '1e999' is not a finite number"),
    ('stress poll interval not a number',
     ['stress', '--poll-interval', 'soon'],
     "argument --poll-interval: 'soon' is not a number"),
    ('stress poll interval too long',
     ['stress', '--backend', 'double', '--poll-interval', '60'],
     '--poll-interval 60: at most 10 s'),
    ('stress latency nan',
     ['stress', '--backend', 'double', '--compute-latency', 'nan'],
     "argument --compute-latency: 'nan' is not a finite number"),
    ('stress latency inf',
     ['stress', '--backend', 'double', '--compute-latency=-inf'],
     "argument --compute-latency: '-inf' is not a finite number"),
    ('stress latency too long',
     ['stress', '--backend', 'double', '--compute-latency', '1e9'],
     '--compute-latency 1e+09: at most 5000 ms'),
    ('stress server workers above the CPUs',
     ['stress', '--server-workers', '100000'],
     '--server-workers 100000: at most'),
    ('stress too many cycles',
     ['stress', '--backend', 'double', '--servers', '4', '--cycles',
      '1000000'],
     '--servers 4 x --cycles 1000000: 4000000 cycles per ordering, at most '
     '100000'),
    # -- faults -----------------------------------------------------------
    ('faults remote without config', ['faults', '--backend', 'remote'],
     '--backend remote needs --config-file'),
    ('faults config directory', ['faults', '--config-file', '{tmp}'],
     'is a directory, not a file'),
    ('faults config latin-1', ['faults', '--config-file', '{latin1}'],
     'not UTF-8 text'),
    ('faults galera with a config', ['faults', '--database', 'galera',
                                     '--config-file', '{remote}'],
     '--config-file cannot be given with --database galera'),
    ('stress keep a private database', ['stress', '--database', 'mariadb',
                                        '--keep-database'],
     '--keep-database applies to --database postgresql only'),
    ('stress keep on the double', ['stress', '--backend', 'double',
                                   '--keep-database'],
     '--keep-database applies to --database postgresql only'),
    ('stress pause without galera', ['stress', '--galera-fault', 'pause'],
     '--galera-fault applies to --database galera only'),
    ('stress unknown galera fault', ['stress', '--database', 'galera',
                                     '--galera-fault', 'partition'],
     "invalid choice: 'partition'"),
    ('faults unknown flag', ['faults', '--bogus'],
     'shelvefix faults: error: unrecognized arguments: --bogus'),
    # -- check ------------------------------------------------------------
    ('check nothing to check', ['check'], 'give either PATH or --installed'),
    ('check both', ['check', '{tmp}', '--installed'],
     'give either PATH or --installed'),
    ('check missing path', ['check', '{tmp}/missing'], 'does not exist'),
    ('check device', ['check', os.devnull],
     'not a regular file or a directory'),
    ('check symlink loop', ['check', '{loop}'],
     'Too many levels of symbolic links'),
    ('check nul byte', ['check', '{nulsource}'],
     'not Python source (a NUL byte'),
    ('check nul byte in a tree', ['check', '{tmp}/tree'],
     'not Python source (a NUL byte'),
    ('check not utf-8', ['check', '{notutf8}'], 'not UTF-8'),
    ('check json and missing', ['check', '--json', '{tmp}/missing'],
     'does not exist'),
    ('check truncated wheel', ['check', '{tmp}/nova-1.0-py3-none-any.whl'],
     'nova-1.0-py3-none-any.whl: not a wheel, sdist or nova tree'),
    ('check random tar.gz', ['check', '{tmp}/nova-1.0.tar.gz'],
     'nova-1.0.tar.gz: not a wheel, sdist or nova tree'),
    ('check unknown bug', ['check', '{tmp}', '--bug', '999'],
     "argument --bug: invalid choice: '999'"),
    # -- contract and timeline --------------------------------------------
    ('contract unknown scenario', ['contract', '--scenario', 'nope'],
     'nope'),
    ('contract unknown flag', ['contract', '--bogus'],
     'shelvefix contract: error: unrecognized arguments'),
    ('timeline remote', ['timeline', '--backend', 'remote'],
     "argument --backend: invalid choice: 'remote'"),
]


class BadInputTestCase(base.TestCase):

    scenarios = [(name, {'argv': argv, 'expected': expected})
                 for name, argv, expected in CASES]

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        paths = {'tmp': self.tmp}
        for name, data in FILES.items():
            path = os.path.join(self.tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'wb') as f:
                f.write(data)
            paths[name] = path
        paths['loop'] = os.path.join(self.tmp, 'loop')
        os.symlink(paths['loop'] + '2', paths['loop'])
        os.symlink(paths['loop'], paths['loop'] + '2')
        self.paths = paths

    def run_main(self, argv):
        out, err = io.StringIO(), io.StringIO()
        # argparse writes its own errors to sys.stderr.
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
        try:
            rc = main.main(argv, out=out, err=err)
        except SystemExit as e:
            rc = e.code
        return rc, out.getvalue(), err.getvalue()

    def test_refused_in_one_line(self):
        argv = [arg.format(**self.paths) for arg in self.argv]
        rc, out, err = self.run_main(argv)
        self.assertEqual(2, rc, err)
        self.assertNotIn('Traceback', err)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn(self.expected, err)
        self.assertTrue(err.startswith('shelvefix'), err)
        self.assertNotIn(SECRET, out + err)
        if '--json' not in argv:
            self.assertEqual('', out)


class CaseCountTestCase(base.TestCase):

    def test_at_least_forty_cases(self):
        self.assertGreaterEqual(len(CASES), 40)
        self.assertEqual(len(CASES), len(set(n for n, _a, _e in CASES)))
