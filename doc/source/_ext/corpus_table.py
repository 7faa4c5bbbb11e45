"""``.. corpus-table::``: the race corpus's rows, read from ``rows.yaml``.

The page lists what ``shelvefix corpus --list`` lists, as a table made at
build time from the package's own data, so that it cannot drift from the
rows the command explores. ``:family:`` limits it to one family.
"""

from docutils import nodes
from docutils.parsers.rst import directives
from docutils import statemachine
from sphinx.util.docutils import SphinxDirective

LAUNCHPAD = 'https://bugs.launchpad.net/nova/+bug/%s'
COMMIT = 'https://opendev.org/openstack/nova/commit/%s'


def _cell(text):
    return ' '.join(str(text).split()).replace('|', '\\|')


def _bug(row):
    if row.bug.isdigit():
        return '`%s <%s>`__' % (row.bug, LAUNCHPAD % row.bug)
    return _cell(row.bug)


def _what(row):
    if row.modelled:
        where = '``%s``' % row.scenario
        if row.fault:
            where += ' (``%s``)' % row.fault
        if row.without:
            where += ' without %s' % ', '.join(row.without)
        return '%s: %s' % (where, ', '.join(row.symptoms))
    if row.removed_by:
        return 'code removed from nova by `%s <%s>`__' % (
            row.removed_by, COMMIT % row.removed_by)
    return 'needs %s' % _cell(row.needs)


class CorpusTable(SphinxDirective):
    """A list-table of the corpus's rows."""

    option_spec = {'family': directives.unchanged}

    def run(self):
        from shelvefix import corpus
        rows = corpus.load()
        family = self.options.get('family')
        if family:
            rows = [row for row in rows if row.family == family]
        lines = ['.. list-table::', '   :header-rows: 1',
                 '   :widths: 10 12 9 10 59', '',
                 '   * - bug', '     - fix', '     - family', '     - kind',
                 '     - scenario (fault): symptom, or why not explored']
        for row in rows:
            lines += ['   * - %s' % _bug(row),
                      '     - %s' % ', '.join(
                          '`%s <%s>`__' % (sha, COMMIT % sha)
                          for sha in row.fixes),
                      '     - %s' % row.family,
                      '     - %s' % row.kind,
                      '     - %s' % _what(row)]
        content = statemachine.StringList(lines, source='rows.yaml')
        holder = nodes.section()
        self.state.nested_parse(content, self.content_offset, holder)
        return list(holder.children)


def setup(app):
    app.add_directive('corpus-table', CorpusTable)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
