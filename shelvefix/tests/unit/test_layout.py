"""The package's layout is its architecture: check that it stays so.

Read with :mod:`ast`, nothing imported: which shelvefix modules each
module imports, how long each is, and where placement's error text is
read.
"""

import ast
import configparser
import os

import testtools

import shelvefix

ROOT = os.path.dirname(shelvefix.__file__)
CONTRIBUTOR = os.path.join(os.path.dirname(ROOT), 'doc', 'source',
                           'contributor.rst')
MAX_LINES = 400
CONFLICT_TEXT = 'consumer generation conflict'


def _modules():
    """``{dotted name: path}`` of every module but the tests."""
    found = {}
    for directory, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in ('tests', '__pycache__')]
        for name in files:
            if not name.endswith('.py'):
                continue
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, os.path.dirname(ROOT))[:-3]
            dotted = parts.replace(os.sep, '.')
            if dotted.endswith('.__init__'):
                dotted = dotted[:-len('.__init__')]
            found[dotted] = path
    return found


def _imports(name, path, modules, deferred=False):
    """The shelvefix modules a module imports at its top level.

    Imports inside functions are left out: they run when the function
    does, never at import time, so they cannot make a cycle (unless
    ``deferred``: a circle that only deferring an import keeps from
    failing is still two modules that each need the other). Importing
    ``a.b.c`` imports the packages ``a`` and ``a.b`` too, except those the
    importer is in (they are being imported already).
    """
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in ast.walk(tree) if deferred else tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = '%s.%s' % (node.module, alias.name)
                names.add(full if full in modules else node.module)
    own = name.split('.')
    own_packages = {'.'.join(own[:end]) for end in range(1, len(own))}
    imported = set()
    for dotted in names:
        parts = dotted.split('.')
        for end in range(1, len(parts) + 1):
            candidate = '.'.join(parts[:end])
            if candidate in modules and candidate not in own_packages:
                imported.add(candidate)
    return imported


MATCHING_CALLS = ('startswith', 'endswith', 'find', 'index', 'count',
                  'search', 'match', 'fullmatch', 'compile', 'split')


def _matched_strings(tree):
    """String constants used to match text: compared, or searched for."""
    for node in ast.walk(tree):
        operands = []
        if isinstance(node, ast.Compare):
            operands = [node.left] + node.comparators
        elif (isinstance(node, ast.Call) and
              isinstance(node.func, ast.Attribute) and
              node.func.attr in MATCHING_CALLS):
            operands = node.args
        for operand in operands:
            if (isinstance(operand, ast.Constant) and
                    isinstance(operand.value, str)):
                yield operand


class LayoutTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.modules = _modules()
        self.graph = {name: _imports(name, path, self.modules) - {name}
                      for name, path in self.modules.items()}

    def closure(self, name):
        seen, todo = set(), [name]
        while todo:
            for dep in self.graph[todo.pop()]:
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen

    def test_no_module_over_the_limit(self):
        long_ones = {}
        for name, path in self.modules.items():
            with open(path) as f:
                count = len(f.readlines())
            if count > MAX_LINES:
                long_ones[name] = count
        self.assertEqual({}, long_ones)

    def test_cover_omits_exactly_what_imports_nova(self):
        # tox -e cover cannot import nova: the modules that import it,
        # directly or through another, are left out of its count (and
        # none besides), or each new one lowers the figure.
        setup_cfg = os.path.join(os.path.dirname(ROOT), 'setup.cfg')
        if not os.path.exists(setup_cfg):
            # Installed: the checkout's configuration is not shipped.
            self.skipTest('no setup.cfg beside the package (installed)')
        config = configparser.ConfigParser()
        config.read(setup_cfg)
        omitted = {line.strip() for line in
                   config['coverage:run']['omit'].split('\n')
                   if line.strip().startswith('shelvefix/nova/')}
        direct = set()
        for name, path in self.modules.items():
            with open(path) as f:
                tree = ast.parse(f.read())
            if any(isinstance(node, ast.ImportFrom) and node.level == 0 and
                   (node.module or '').split('.')[0] == 'nova' or
                   isinstance(node, ast.Import) and any(
                       alias.name.split('.')[0] == 'nova'
                       for alias in node.names)
                   for node in tree.body):
                direct.add(name)
        importing = {name for name in self.modules
                     if name.startswith('shelvefix.nova.') and
                     (name in direct or self.closure(name) & direct)}
        self.assertEqual(
            sorted(os.path.relpath(self.modules[name],
                                   os.path.dirname(ROOT))
                   for name in importing),
            sorted(omitted))

    def test_no_import_cycle(self):
        cycles = [name for name in self.graph
                  if name in self.closure(name) and name != 'shelvefix']
        self.assertEqual([], sorted(cycles))

    def test_the_race_lab_has_no_circle_even_deferred(self):
        # The lab's modules, with the imports inside functions too: the
        # scenarios' registry knows the programs, never the reverse.
        lab = {name: path for name, path in self.modules.items()
               if name.startswith('shelvefix.race.')}
        graph = {name: _imports(name, path, self.modules,
                                deferred=True) & set(lab) - {name}
                 for name, path in lab.items()}
        circled = []
        for name in graph:
            seen, todo = set(), [name]
            while todo:
                for dep in graph[todo.pop()]:
                    if dep not in seen:
                        seen.add(dep)
                        todo.append(dep)
            if name in seen:
                circled.append(name)
        self.assertEqual([], sorted(circled))

    def assertImportsNothingFrom(self, package, forbidden):
        for name in self.modules:
            if name != package and not name.startswith(package + '.'):
                continue
            bad = sorted(dep for dep in self.graph[name]
                         if any(dep == f or dep.startswith(f + '.')
                                for f in forbidden))
            self.assertEqual([], bad, '%s imports %s' % (name, bad))

    def test_the_explorer_is_generic(self):
        self.assertImportsNothingFrom('shelvefix.explorer', [
            'shelvefix.compute', 'shelvefix.scheduler', 'shelvefix.placement',
            'shelvefix.backends', 'shelvefix.race', 'shelvefix.objects',
            'shelvefix.conf'])

    def test_the_double_is_placement_only(self):
        self.assertImportsNothingFrom('shelvefix.placement', [
            'shelvefix.backends', 'shelvefix.race', 'shelvefix.compute',
            'shelvefix.scheduler', 'shelvefix.cmd', 'shelvefix.conf',
            'shelvefix.explorer'])

    def test_the_library_does_not_import_the_tools(self):
        for package in ('shelvefix.compute', 'shelvefix.scheduler',
                        'shelvefix.objects', 'shelvefix.conf'):
            self.assertImportsNothingFrom(package, [
                'shelvefix.backends', 'shelvefix.race', 'shelvefix.cmd',
                'shelvefix.explorer', 'shelvefix.placement',
                'shelvefix.novacheck', 'shelvefix.contract'])

    def test_the_nova_checker_never_loads_configuration(self):
        # It reads nova as text, and the tests on nova's code use it in
        # the same process as nova.
        for name in ('shelvefix.novacheck', 'shelvefix.race.client',
                     'shelvefix.race.timeline'):
            self.assertNotIn('shelvefix.conf', self.closure(name))

    def test_placement_error_text_is_read_in_one_place(self):
        # The double writes placement's text; the client side reads it
        # only in scheduler/client/errors.py.
        readers = []
        for name, path in self.modules.items():
            if (name.startswith('shelvefix.placement') or
                    name == 'shelvefix.scheduler.client.errors'):
                continue
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            readers.extend('%s:%d' % (name, node.lineno)
                           for node in _matched_strings(tree)
                           if CONFLICT_TEXT in node.value.lower())
        self.assertEqual([], readers)

    def test_the_text_check_can_fail(self):
        tree = ast.parse("if 'consumer generation conflict' in str(e): "
                         "pass\nre.search('Consumer generation conflict', t)")
        self.assertEqual(2, len([n for n in _matched_strings(tree)
                                 if CONFLICT_TEXT in n.value.lower()]))


class GuideLayoutTestCase(testtools.TestCase):
    """The guide's Layout table names every package and top-level module."""

    def setUp(self):
        super().setUp()
        if not os.path.exists(CONTRIBUTOR):
            self.skipTest('no doc/source beside the package (installed)')

    def listed(self):
        with open(CONTRIBUTOR) as f:
            text = f.read()
        section = text.split('\nLayout\n======\n', 1)[1].splitlines()
        # A simple table: a border, the rows, a border.
        borders = [i for i, line in enumerate(section)
                   if line.startswith('=====')]
        rows = section[borders[0] + 1:borders[1]]
        return {line.split('``')[1] for line in rows
                if line.startswith('``shelvefix/')}

    def expected(self):
        names = set()
        for name in os.listdir(ROOT):
            if name.endswith('.py') and name != '__init__.py':
                names.add('shelvefix/%s' % name)
        for directory, dirs, files in os.walk(ROOT):
            dirs[:] = sorted(d for d in dirs if d != '__pycache__')
            relative = os.path.relpath(directory, os.path.dirname(ROOT))
            parts = relative.split(os.sep)
            # Of the tests, the tree and its first level only.
            if ('__init__.py' not in files or len(parts) == 1 or
                    ('tests' in parts and len(parts) > 3)):
                continue
            names.add('/'.join(parts) + '/')
        return names

    def test_every_package_is_listed(self):
        self.assertEqual(sorted(self.expected()), sorted(self.listed()))
