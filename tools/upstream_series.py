"""The findings' patch series, as ``upstream/`` holds them.

Each finding is a directory ``upstream/PROJECT/SLUG/`` (PROJECT is
``nova`` or ``placement``) of sources, from which the two patches a
reviewer reads are generated (:func:`generate`):

``series.ini``
    ``[series]``: ``title`` (the table's name of the finding), ``page``
    (its page under ``doc/source``), ``reproducer`` (the path of the
    regression test that patch 0001 adds), ``existing`` (the project's own
    tests of the changed code, stestr regular expressions of the form
    ``^PACKAGE\\.tests\\.SUITE\\....``, one a line) and ``introduced``
    (where the window came from);
``reproducer.py``
    the regression test as 0001 adds it, asserting the bug;
``fix.diff``
    0002's change on top of 0001: the fix, the test asserting the correct
    state and the unit tests the fix changes;
``commit-0001.txt``, ``commit-0002.txt``
    the commit messages.

The sources carry placeholders a contributor fills in once, for every
series, in ``upstream/contributor.ini`` (:data:`PLACEHOLDERS`): the bug
number of each finding, and the author's name, e-mail and IRC nick, which
also give the DCO ``Signed-off-by`` line. Regenerating writes them into
the patches; each commit gets a ``Change-Id`` derived from the series and
the commit's place in it, so regenerating is reproducible.

Only the standard library is imported.
"""

import configparser
import hashlib
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM = os.path.join(os.path.dirname(HERE), 'upstream')
CONTRIBUTOR = os.path.join(UPSTREAM, 'contributor.ini')
PROJECTS = ('nova', 'placement')
#: placeholder: (section of contributor.ini, key); ``bugs`` is keyed by
#: the finding's slug.
PLACEHOLDERS = {
    '@AUTHOR@': ('contributor', 'name'),
    '@EMAIL@': ('contributor', 'email'),
    '@NICK@': ('contributor', 'nick'),
    '@BUG@': ('bugs', None),
}
SOURCES = ('series.ini', 'reproducer.py', 'fix.diff', 'commit-0001.txt',
           'commit-0002.txt')
#: What an ``existing`` line must start with: its package and suite.
EXISTING = re.compile(r'^\^(\w+)\\\.tests\\\.(\w+)\\\.')
#: The dotted names an expression starts with, literally.
LITERAL = re.compile(r'^\^((?:\w+\\\.)*\w+)')
DATE = '2026-12-01T00:00:00+00:00'


class SeriesError(Exception):
    """A series or the contributor's file is not as it must be."""


def _ini(path):
    parser = configparser.ConfigParser(interpolation=None)
    try:
        with open(path) as f:
            parser.read_file(f)
    except (OSError, configparser.Error) as e:
        raise SeriesError('%s: %s' % (path, e))
    return parser


def contributor(path=CONTRIBUTOR):
    """The values of the placeholders, ``{section: {key: value}}``."""
    parser = _ini(path)
    values = {}
    for section, key in PLACEHOLDERS.values():
        if not parser.has_section(section):
            raise SeriesError('%s has no [%s] section' % (path, section))
        if key is not None and not parser.get(section, key, fallback=''):
            raise SeriesError('%s: [%s] %s is empty' % (path, section, key))
        values[section] = dict(parser.items(section))
    return values


def unfilled(values):
    """What ``contributor.ini`` still leaves as the template has it.

    :returns: a phrase, e.g. ``name, email and 2 bug numbers``, or ''
    """
    left = [key for key, value in sorted(values['contributor'].items())
            if value.lower().startswith(('your', 'you@'))]
    bugs = [slug for slug, bug in values['bugs'].items()
            if not bug.isdigit()]
    if bugs:
        left.append('%d bug number%s' % (len(bugs), 's'[:len(bugs) > 1]))
    return ', '.join(left[:-2] + [' and '.join(left[-2:])])


class Series(object):
    """One finding's series: its sources and what its patches hold.

    :ivar project: ``nova`` or ``placement``
    :ivar slug: the directory's name, and the key of its bug number
    :ivar path: the directory
    """

    def __init__(self, project, slug, path, values):
        self.project = project
        self.slug = slug
        self.path = path
        self.values = values
        missing = [name for name in SOURCES
                   if not os.path.isfile(os.path.join(path, name))]
        if missing:
            raise SeriesError('%s lacks %s' % (path, ', '.join(missing)))
        if slug not in values['bugs']:
            raise SeriesError('%s has no bug number for %s in [bugs]'
                              % (CONTRIBUTOR, slug))
        section = _ini(os.path.join(path, 'series.ini'))
        if not section.has_section('series'):
            raise SeriesError('%s/series.ini has no [series]' % path)
        config = section['series']
        for key in ('title', 'page', 'reproducer', 'existing'):
            if not config.get(key, '').strip():
                raise SeriesError('%s/series.ini: %s is missing'
                                  % (path, key))
        self.title = config['title'].strip()
        self.page = config['page'].strip()
        self.introduced = config.get('introduced', '').strip()
        self.reproducer = self.render(config['reproducer'].strip())
        if not self.reproducer.endswith('.py'):
            raise SeriesError('%s: the reproducer %s is not a .py file'
                              % (path, self.reproducer))
        self.test_id = self.reproducer[:-3].replace('/', '.')
        self.exploration = None
        if section.has_section('exploration'):
            explored = section['exploration']
            if not (explored.get('command') and explored.get('symptom')):
                raise SeriesError('%s/series.ini: [exploration] needs a '
                                  'command and a symptom' % path)
            self.exploration = (explored['command'].strip(),
                                explored['symptom'].strip())
        self.existing = [line.strip() for line in
                         config['existing'].splitlines() if line.strip()]
        for line in self.existing:
            match = EXISTING.match(line)
            if not match or match.group(1) != project:
                raise SeriesError(
                    '%s/series.ini: existing test %r does not start with '
                    '^%s\\.tests\\.SUITE\\.' % (path, line, project))

    def __repr__(self):
        return '<Series %s/%s>' % (self.project, self.slug)

    def render(self, text):
        """``text`` with every placeholder filled in."""
        for token, (section, key) in PLACEHOLDERS.items():
            value = self.values[section][self.slug if key is None else key]
            text = text.replace(token, value)
        return text

    def source(self, name):
        with open(os.path.join(self.path, name)) as f:
            return self.render(f.read())

    def message(self, number):
        """Commit ``number``'s message, filled in, with its Change-Id."""
        text = self.source('commit-000%d.txt' % number).rstrip('\n')
        digest = hashlib.sha1(('%s/%s/%d' % (
            self.project, self.slug, number)).encode()).hexdigest()
        return '%s\nChange-Id: I%s\n' % (text, digest)

    def suites(self, tree=None):
        """The existing tests by test path: ``{path: [regex, ...]}``.

        :param tree: given, each path is the deepest package of ``tree``
            that the expression's literal start names, so that discovery
            imports only what can match (nova's whole unit tests take
            minutes to list)
        """
        by_path = {}
        for line in self.existing:
            package, suite = EXISTING.match(line).groups()
            path = './%s/tests/%s' % (package, suite)
            literal = LITERAL.match(line).group(1).split('\\.')
            for depth in range(4, len(literal) + 1):
                deeper = '/'.join(['.'] + literal[:depth])
                if tree is None or not os.path.isfile(os.path.join(
                        tree, deeper, '__init__.py')):
                    break
                path = deeper
            by_path.setdefault(path, []).append(line)
        return by_path

    def patches(self):
        """The generated 0001 and 0002 patch files, in order."""
        found = sorted(name for name in os.listdir(self.path)
                       if name.endswith('.patch'))
        if [name[:5] for name in found] != ['0001-', '0002-']:
            raise SeriesError('%s must hold one 0001-*.patch and one '
                              '0002-*.patch (run --regenerate), not %s'
                              % (self.path, found))
        return [os.path.join(self.path, name) for name in found]


def load(projects=PROJECTS, slugs=None, root=UPSTREAM, values=None):
    """Every series under ``root``, nova's first, each project's by slug.

    :param slugs: only these (every one, if None); an unknown one is an
        error
    """
    values = contributor(os.path.join(root, 'contributor.ini')) \
        if values is None else values
    found = []
    for project in projects:
        folder = os.path.join(root, project)
        if not os.path.isdir(folder):
            continue
        for slug in sorted(os.listdir(folder)):
            if os.path.isdir(os.path.join(folder, slug)) and (
                    slugs is None or slug in slugs):
                found.append(Series(project, slug,
                                    os.path.join(folder, slug), values))
    unknown = set(slugs or ()) - {s.slug for s in found}
    if unknown:
        raise SeriesError('no series %s under %s' % (
            ', '.join(sorted(unknown)), root))
    return found


def git_env(values=None):
    """Git's environment for reproducible commits.

    A fixed identity (the contributor's, given ``values``) and date, and
    neither the user's nor the system's configuration.
    """
    name, email = 'shelvefix', 'shelvefix@example.org'
    if values is not None:
        name = values['contributor']['name']
        email = values['contributor']['email']
    env = {'GIT_CONFIG_NOSYSTEM': '1', 'GIT_CONFIG_GLOBAL': os.devnull}
    for who in ('AUTHOR', 'COMMITTER'):
        env.update({'GIT_%s_NAME' % who: name,
                    'GIT_%s_EMAIL' % who: email,
                    'GIT_%s_DATE' % who: DATE})
    return env


def git(tree, *args, env=None, check=True):
    """Run git in ``tree``; its CompletedProcess (text)."""
    proc = subprocess.run(
        ('git', '-c', 'safe.directory=*', '-C', tree) + args,
        env=dict(os.environ, **(env or git_env())), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if check and proc.returncode:
        raise SeriesError('git %s in %s: %s' % (
            ' '.join(args), tree, (proc.stderr or proc.stdout).strip()))
    return proc


def generate(series, tree):
    """Write ``series``'s two patches, made on ``tree`` at its HEAD.

    The tree is left with the two commits; the old patch files of the
    series are replaced.

    :returns: the paths written
    """
    env = git_env(series.values)
    path = os.path.join(tree, series.reproducer)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(series.source('reproducer.py'))
    git(tree, 'add', '--force', series.reproducer, env=env)
    for number, change in ((1, None), (2, series.source('fix.diff'))):
        if change is not None:
            proc = subprocess.run(
                ('git', '-c', 'safe.directory=*', '-C', tree, 'apply',
                 '--index', '-'), input=change, text=True,
                stderr=subprocess.PIPE, env=dict(os.environ, **env))
            if proc.returncode:
                raise SeriesError('%s/fix.diff does not apply on %s: %s'
                                  % (series.path, tree, proc.stderr.strip()))
        git(tree, 'commit', '--quiet', '--no-verify', '--cleanup=verbatim',
            '-m', series.message(number), env=env)
    for name in os.listdir(series.path):
        if name.endswith('.patch'):
            os.remove(os.path.join(series.path, name))
    return git(tree, 'format-patch', '--no-signature', '-o', series.path,
               'HEAD~2', env=env).stdout.split()
