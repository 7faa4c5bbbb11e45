"""The examples of README.rst and the guide: marked, and the Python ones run.

``.ci/readme.py`` runs every example of README.rst and of the guide's
pages (``doc/source``) in CI (commands take
minutes and a virtualenv); here, the fast part: every literal block says
what it is, the quick start has its two commands, each Python example runs
in this process's interpreter, and each configuration example loads.
"""

import importlib.util
import io
import os
import subprocess
import sys

import fixtures
import testtools

import shelvefix
from shelvefix import conf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(shelvefix.__file__)))
RUNNER = os.path.join(ROOT, '.ci', 'readme.py')


def _runner():
    spec = importlib.util.spec_from_file_location('ci_readme', RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ReadmeTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not os.path.exists(RUNNER):
            self.skipTest('not a checkout: no .ci/readme.py')
        self.readme = _runner()
        self.blocks = self.readme.read_blocks()

    def test_quick_start_has_two_commands(self):
        commands = self.readme.quickstart(self.blocks)
        self.assertEqual(2, len(commands))
        self.assertTrue(commands[0].endswith('shelvefix race'))
        self.assertTrue(commands[1].endswith('tox -e py3,functional'))
        for command in commands:
            # A distribution's python3 refuses pip outside a virtualenv.
            self.assertTrue(command.startswith('python3 -m venv .venv && '))

    def test_every_block_is_marked(self):
        kinds = {block.kind for block in self.blocks}
        self.assertEqual(set(), {'quickstart', 'run', 'output', 'python',
                                 'config'} - kinds)
        e = self.assertRaises(self.readme.ReadmeError, self.readme.blocks,
                              'Text::\n\n    shelvefix race\n')
        self.assertIn('without a ".. ci:" comment', str(e))

    def test_python_examples_run(self):
        examples = [b for b in self.blocks if b.kind == 'python']
        self.assertGreaterEqual(len(examples), 2)
        directory = self.useFixture(fixtures.TempDir()).path
        for number, block in enumerate(examples):
            path = os.path.join(directory, 'example%d.py' % number)
            with open(path, 'w') as f:
                f.write(block.text + '\n')
            proc = subprocess.run([sys.executable, path],
                                  capture_output=True, text=True)
            self.assertEqual(0, proc.returncode,
                             'README line %d:\n%s%s' % (
                                 block.line, proc.stdout, proc.stderr))

    def test_config_examples_load(self):
        directory = self.useFixture(fixtures.TempDir()).path
        for number, block in enumerate(b for b in self.blocks
                                       if b.kind == 'config'):
            path = os.path.join(directory, 'example%d.conf' % number)
            with open(path, 'w') as f:
                f.write(block.text + '\n')
            conf.load_config_files([path])

    def test_readme_is_short(self):
        # The guide holds the rest (doc/source).
        with open(os.path.join(ROOT, 'README.rst')) as f:
            self.assertLess(len(f.read().splitlines()), 200)

    def test_the_guide_is_read_too(self):
        pages = {block.page for block in self.blocks}
        self.assertIn('README.rst', pages)
        self.assertIn(os.path.join('doc', 'source', 'commands', 'check.rst'),
                      pages)
        e = self.assertRaises(self.readme.ReadmeError, self.readme.blocks,
                              '.. code-block:: python\n\n    x = 1\n')
        self.assertIn('without a ".. ci:" comment', str(e))
        e = self.assertRaises(self.readme.ReadmeError, self.readme.blocks,
                              '.. ci: run\n\n.. code-block:: bash\n\n'
                              '    true\n\nText::\n\n    false\n')
        self.assertIn('is never run', str(e))
        moved = [b._replace(page='doc/source/x.rst') if b.kind ==
                 'quickstart' else b for b in self.blocks]
        self.assertRaises(self.readme.ReadmeError, self.readme.quickstart,
                          moved)

    def test_output_matching(self):
        match = self.readme.output_matches
        self.assertIsNone(match('a  b\n...d', 'x a b y\nc\nd e'))
        # In order: after 'd', no 'a' follows.
        self.assertEqual('a', match('d\na', 'a\nd'))

    def test_figures_matching(self):
        match = self.readme.figures_match
        # Numbers are fields: the text around them must match, in order.
        pairs, missing = match(
            'total 4.9x (12,137 lines)\nruns in 7.9 s. ...',
            'x\ntotal   11.5x (12,140 lines)\n800 runs in 8.0 s. The seed')
        self.assertIsNone(missing)
        self.assertEqual(
            [('total 4.9x (12,137 lines)', 'total 11.5x (12,140 lines)',
              False),
             ('runs in 7.9 s. ...', 'runs in 8.0 s. The seed', False)],
            pairs)
        self.assertEqual([('a 1 b', 'a 1 b', True)],
                         match('a 1 b', 'a 1 b')[0])
        # A number never matches missing text, nor text a number.
        self.assertEqual('a 1 b', match('a 1 b', 'a b')[1])
        self.assertEqual('a b', match('a b', 'a 1 b')[1])

    def test_figures_are_printed_never_judged(self):
        readme = self.readme.blocks(
            '.. ci: run\n\n::\n\n    echo "ratio 11.5x"\n\n'
            '.. ci: figures measured on 2 cores\n\n::\n\n    ratio 4.9x\n')
        out = io.StringIO()
        self.assertEqual((2, 0, 0), self.readme.run(readme, out=out))
        self.assertIn('README.rst says: ratio 4.9x\n', out.getvalue())
        self.assertIn('measured: ratio 11.5x\n', out.getvalue())
        self.assertTrue(any(b.kind == 'figures' for b in self.blocks))

    def test_failures_are_named_again_at_the_end(self):
        # A CI log cut to its last lines still says what failed, and where.
        readme = self.readme.blocks(
            '.. ci: run\n\n::\n\n    echo one\n    false\n\n'
            '.. ci: output\n\n::\n\n    two\n\n'
            '.. ci: run\n\n::\n\n    true\n')
        out = io.StringIO()
        self.assertEqual((2, 2, 0), self.readme.run(readme, out=out))
        tail = out.getvalue().splitlines()[-3:]
        self.assertEqual(['failed: $ false -> 1, at README.rst:1',
                          'failed: output as README.rst:8 shows',
                          'examples: 2 passed, 2 failed, 0 skipped'], tail)

    def test_the_output_of_a_skipped_command_is_not_judged(self):
        # Not against the command run before the skipped one either.
        readme = self.readme.blocks(
            '.. ci: run\n\n::\n\n    echo one\n\n'
            '.. ci: skip too long\n\n::\n\n    echo two\n\n'
            '.. ci: output\n\n::\n\n    two\n')
        out = io.StringIO()
        self.assertEqual((1, 0, 1), self.readme.run(readme, out=out))

    def test_a_folded_command_runs_as_one(self):
        # The guide folds a long command with backslashes to fit the page.
        self.assertEqual(['echo a b c', 'echo d'],
                         self.readme.commands('echo a \\\n   b \\\n  c\n\n'
                                              'echo d\n'))
        readme = self.readme.blocks(
            '.. ci: run\n\n::\n\n    echo one \\\n      two\n\n'
            '.. ci: output\n\n::\n\n    one two\n')
        out = io.StringIO()
        self.assertEqual((2, 0, 0), self.readme.run(readme, out=out))
