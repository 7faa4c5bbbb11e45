"""A toy project and series for the tests of ``tools/upstream*.py``.

The toy is a git tree of a package named ``nova`` with one defect
(``nova/thing.py``: :data:`BUGGY`), a unit test of the changed code and a
``.stestr.conf``; the series adds a regression test showing the defect
and a fix flipping it, in the layout of ``upstream/`` (contributor.ini,
``nova/toy/`` with series.ini and its sources).
"""

import importlib
import os
import subprocess

import shelvefix
from shelvefix.tests import shipped

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(shelvefix.__file__)))
#: tools/, from the checkout or where the wheel installs it.
TOOLS = shipped.folder('tools', 'upstream.py') or os.path.join(ROOT, 'tools')
#: upstream/, the committed series, likewise.
UPSTREAM = (shipped.folder('upstream', 'contributor.ini') or
            os.path.join(ROOT, 'upstream'))
#: The guide's pages: a checkout only.
DOC = os.path.join(ROOT, 'doc', 'source')

BUGGY = 'def double(x):\n    return x + x + 1\n'
FIXED = 'def double(x):\n    return x + x\n'
UNIT = '''import unittest

from nova import thing


class TestThing(unittest.TestCase):
    def test_zero_is_odd_or_even(self):
        self.assertIn(thing.double(0), (0, 1))
'''
REPRODUCER = '''import unittest

from nova import thing


class RegressionTest(unittest.TestCase):
    """Regression test for bug @BUG@"""

    def test_double(self):
        # NOTE(@NICK@): the defect: one too many
        self.assertEqual(%d, thing.double(2))
'''
COMMIT = '''%s

The toy's double() adds one too many.

%s-Bug: #@BUG@
Signed-off-by: @AUTHOR@ <@EMAIL@>
'''
CONTRIBUTOR = '''[contributor]
name = Ada Lovelace
email = ada@example.net
nick = ada

[bugs]
toy = 1234567
'''
SERIES = r'''[series]
title = toy defect
page = findings/toy.rst
reproducer = nova/tests/functional/regressions/test_bug_@BUG@.py
existing =
    ^nova\.tests\.unit\.test_thing\.
'''


def load_tool(name):
    """``tools/NAME.py`` as a module.

    The tools import each other by name: one module object each, as when
    the tool runs.
    """
    import sys
    if TOOLS not in sys.path:
        sys.path.insert(0, TOOLS)
    return importlib.import_module(name)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


def git(tree, *args):
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull,
               GIT_CONFIG_NOSYSTEM='1', GIT_AUTHOR_NAME='t',
               GIT_AUTHOR_EMAIL='t@example.net', GIT_COMMITTER_NAME='t',
               GIT_COMMITTER_EMAIL='t@example.net')
    return subprocess.run(('git', '-C', tree) + args, env=env, check=True,
                          text=True, stdout=subprocess.PIPE).stdout


def make_tree(path):
    """The toy project, one commit."""
    for name, text in (
            ('nova/__init__.py', ''), ('nova/thing.py', BUGGY),
            ('nova/tests/__init__.py', ''),
            ('nova/tests/unit/__init__.py', ''),
            ('nova/tests/unit/test_thing.py', UNIT),
            ('nova/tests/functional/__init__.py', ''),
            ('nova/tests/functional/regressions/__init__.py', ''),
            ('.stestr.conf', '[DEFAULT]\ntest_path=./nova/tests/unit\n'
             'top_dir=./\n')):
        write(os.path.join(path, name), text)
    git(path, 'init', '--quiet', '--initial-branch', 'master')
    git(path, 'add', '--all')
    git(path, 'commit', '--quiet', '-m', 'Import the toy')
    return path


def make_series(root, fix=FIXED, flipped=4):
    """The toy's series under ``root`` (an ``upstream/`` directory).

    :param fix: what 0002 makes ``nova/thing.py``
    :param flipped: what 0002's test expects of ``double(2)``
    """
    write(os.path.join(root, 'contributor.ini'), CONTRIBUTOR)
    folder = os.path.join(root, 'nova', 'toy')
    write(os.path.join(folder, 'series.ini'), SERIES)
    write(os.path.join(folder, 'reproducer.py'), REPRODUCER % 5)
    write(os.path.join(folder, 'commit-0001.txt'),
          COMMIT % ('Add a reproducer for the toy', 'Related'))
    write(os.path.join(folder, 'commit-0002.txt'),
          COMMIT % ('Fix the toy', 'Closes'))
    # fix.diff: made on a scratch copy of the tree with the reproducer.
    scratch = make_tree(os.path.join(root, '.scratch'))
    test = 'nova/tests/functional/regressions/test_bug_@BUG@.py'
    write(os.path.join(scratch, test), REPRODUCER % 5)
    git(scratch, 'add', '--all')
    git(scratch, 'commit', '--quiet', '-m', 'reproducer')
    write(os.path.join(scratch, 'nova/thing.py'), fix)
    write(os.path.join(scratch, test), REPRODUCER % flipped)
    write(os.path.join(folder, 'fix.diff'), git(scratch, 'diff'))
    return folder
