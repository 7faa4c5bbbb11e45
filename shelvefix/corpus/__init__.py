"""The race corpus: nova's historical allocation races, as data.

Each :class:`Row` is one bug of nova's history and its fix: the operation
family, the scenario of the race lab (:mod:`shelvefix.race.scenarios`)
that exercises it and the fault, if any, that its failure path needs, the
symptoms (outcome labels, see :func:`shelvefix.race.scenarios.shows`) the
bug must show, and a *re-introduction patch*: a small unified diff that
puts the defect back into today's nova (``patches/``). The rows are in
``rows.yaml``; nothing in a scenario names a bug.

:mod:`shelvefix.corpus.trees` makes a patched copy of a nova tree,
:mod:`shelvefix.corpus.runs` explores the rows on it (``shelvefix
corpus``) and :mod:`shelvefix.corpus.report` renders what was found.
"""

import collections
import os

import yaml

from shelvefix import race

CONCURRENCY = 'concurrency'
FAILURE = 'failure-path'
KINDS = (CONCURRENCY, FAILURE)

#: The operation families, in the order the tables list them.
FAMILIES = ('shelve', 'resize', 'evacuate', 'placement', 'live-migration',
            'boot', 'delete', 'tracker')

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = os.path.join(HERE, 'rows.yaml')
PATCHES = os.path.join(HERE, 'patches')

_FIELDS = ('bug', 'fixes', 'family', 'operation', 'kind', 'mechanism',
           'scenario', 'fault', 'without', 'symptoms', 'patch', 'removed_by',
           'finding', 'needs')
_REQUIRED = ('bug', 'fixes', 'family', 'operation', 'kind', 'mechanism')


class CorpusError(Exception):
    """The corpus (or a row asked for) is not what it must be."""


class Row(collections.namedtuple('Row', _FIELDS)):
    """One bug of the corpus.

    ``bug`` is its Launchpad number (or a name where it had none),
    ``fixes`` the commits of the fix on nova master. A row the lab models
    has a ``scenario`` (and ``fault``: None or one of the faults of
    :mod:`shelvefix.race`; ``without``: actors of the scenario its
    exploration leaves out, where the window it needs does not involve
    them), the ``symptoms`` it must show and its
    ``patch`` (a file of :data:`PATCHES`). A row it cannot model has
    ``removed_by`` (the commit that removed the fixed code from nova) or
    ``needs`` (what the lab lacks, in words). ``finding`` says what nova
    as released still shows of the row's symptom, where it does.
    """

    __slots__ = ()

    @property
    def modelled(self):
        """Whether the lab explores this row."""
        return self.scenario is not None

    @property
    def patch_path(self):
        """The re-introduction patch's file."""
        return os.path.join(PATCHES, self.patch) if self.patch else None

    @property
    def group(self):
        """What rows sharing one exploration of a tree have in common."""
        return (self.scenario, self.fault, self.without)


def _row(entry, number):
    where = 'row %d of %s' % (number, ROWS)
    if not isinstance(entry, dict):
        raise CorpusError('%s is not a mapping' % where)
    unknown = set(entry) - set(_FIELDS)
    if unknown:
        raise CorpusError('%s has unknown field(s): %s'
                          % (where, ', '.join(sorted(unknown))))
    missing = [field for field in _REQUIRED if not entry.get(field)]
    if missing:
        raise CorpusError('%s lacks %s' % (where, ', '.join(missing)))
    values = dict.fromkeys(_FIELDS)
    values.update(entry)
    values['bug'] = str(values['bug'])
    values['fixes'] = tuple(str(sha) for sha in values['fixes'])
    values['symptoms'] = tuple(values['symptoms'] or ())
    values['without'] = tuple(values['without'] or ())
    row = Row(**values)
    where = 'bug %s (%s)' % (row.bug, ROWS)
    if not all(isinstance(symptom, str) for symptom in row.symptoms):
        raise CorpusError('%s: a symptom is not a string (quote one that '
                          'holds ": ")' % where)
    if row.kind not in KINDS:
        raise CorpusError('%s: kind %r is not one of %s'
                          % (where, row.kind, ', '.join(KINDS)))
    if row.family not in FAMILIES:
        raise CorpusError('%s: family %r is not one of %s'
                          % (where, row.family, ', '.join(FAMILIES)))
    if row.patch and not os.path.isfile(row.patch_path):
        raise CorpusError('%s: its patch %s is missing'
                          % (where, row.patch_path))
    if not row.modelled:
        if not (row.removed_by or row.needs):
            raise CorpusError('%s has no scenario, and says neither what '
                              'removed its code nor what it needs' % where)
        return row
    if row.scenario not in race.SCENARIOS:
        raise CorpusError('%s: no scenario %r' % (where, row.scenario))
    if row.fault is not None and row.fault not in race.FAULTS:
        raise CorpusError('%s: no fault %r' % (where, row.fault))
    # The registry imports the explorer: only once a row needs it (the
    # command's --help does not).
    from shelvefix.race import scenarios
    actors = scenarios.get_scenario(row.scenario).actor_names
    unknown = [name for name in row.without if name not in actors]
    if unknown:
        raise CorpusError('%s: %s has no actor %s (it has: %s)'
                          % (where, row.scenario, ', '.join(unknown),
                             ', '.join(actors)))
    if not row.symptoms:
        raise CorpusError('%s names no symptom' % where)
    if not row.patch:
        raise CorpusError('%s has no patch' % where)
    return row


def load(path=ROWS):
    """Every row of the corpus, in the file's order.

    :raises CorpusError: the file is unreadable or a row is malformed
    """
    try:
        with open(path) as f:
            entries = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise CorpusError('cannot read the corpus %s: %s' % (path, e))
    if not isinstance(entries, list):
        raise CorpusError('%s is not a list of rows' % path)
    rows = [_row(entry, number) for number, entry in enumerate(entries, 1)]
    bugs = collections.Counter(row.bug for row in rows)
    twice = sorted(bug for bug, count in bugs.items() if count > 1)
    if twice:
        raise CorpusError('%s lists bug(s) twice: %s'
                          % (path, ', '.join(twice)))
    return rows


def select(rows, bugs=(), families=(), kinds=(), scenarios=()):
    """The rows of ``bugs``, ``families``, ``kinds``, ``scenarios``.

    An empty selection of one of them is any; the rows of ``scenarios``
    are those the lab explores in one of them.

    :raises CorpusError: a bug asked for is not in the corpus
    """
    known = {row.bug for row in rows}
    unknown = [bug for bug in bugs if bug not in known]
    if unknown:
        raise CorpusError('no row for bug %s in the corpus (see shelvefix '
                          'corpus --list)' % ', '.join(unknown))
    return [row for row in rows
            if (not bugs or row.bug in bugs) and
            (not families or row.family in families) and
            (not kinds or row.kind in kinds) and
            (not scenarios or row.scenario in scenarios)]
