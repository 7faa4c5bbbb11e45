"""Rendering the corpus's results: tables, timelines, JSON."""

from shelvefix import corpus
from shelvefix.corpus import runs
from shelvefix.race import report as race_report
from shelvefix.race import scenarios


def _where(row):
    if not row.modelled:
        return '-'
    text = row.scenario + (' (%s)' % row.fault if row.fault else '')
    if row.without:
        text += ' without %s' % ','.join(row.without)
    return text


def _table(header, rows):
    widths = [max(len(str(line[i])) for line in [header] + rows)
              for i in range(len(header))]
    lines = ['  '.join(str(cell).ljust(width)
                       for cell, width in zip(line, widths)).rstrip()
             for line in [header] + rows]
    lines.insert(1, '  '.join('-' * width for width in widths))
    return '\n'.join(lines)


def self_test_table(results):
    """One line per row: with its patch, without it, and the verdict."""
    lines = []
    for r in results:
        row = r.row
        patched = explored = seconds = '-'
        if r.patched is not None:
            first = r.first()
            patched = ('%d' % (first.index + 1) if first
                       else 'none in %d' % r.patched.runs)
            seconds = '%.1f' % r.patched_elapsed
        if r.explored is not None:
            explored = '%d%s' % (r.explored.runs,
                                 ' (shows)' if r.status == runs.FINDING
                                 else '')
        lines.append((row.bug, row.family, row.kind, _where(row),
                      ', '.join(row.symptoms) or '-', patched, seconds,
                      explored, r.status))
    return _table(('bug', 'family', 'kind', 'scenario (fault)', 'symptom',
                   'runs to 1st', 's', 'runs without', 'result'), lines)


def family_table(results):
    """Totals by operation family."""
    lines = [(family, rows, done, patched_runs, '%.1f' % seconds)
             for family, (rows, done, patched_runs, seconds)
             in runs.by_family(results).items()]
    return _table(('family', 'rows', 'reproduced', 'runs with patches',
                   's with patches'), lines)


def explored_text(results):
    """The whole explorations of the tree as it is: runs and seconds."""
    seen = {}
    for r in results:
        if r.explored is not None:
            seen.setdefault(r.row.group, r.explored)
    if not seen:
        return ''
    parts = ['%s %d runs %.1f s' % (runs.group_text(group), result.runs,
                                    result.elapsed)
             for group, result in seen.items()]
    return ('The tree as it is, explored whole: %s.\n'
            % '; '.join(parts))


def tally(results):
    """How many rows of each kind reproduce, of how many explored."""
    parts = []
    for kind in corpus.KINDS:
        of_kind = [r for r in results if r.row.kind == kind]
        explored = [r for r in of_kind if r.status not in runs.APART]
        proven = [r for r in explored if r.status in runs.PROVEN]
        parts.append('%s: %d of %d explored rows reproduce (%d of the '
                     'kind listed, %d counted apart)'
                     % (kind, len(proven), len(explored), len(of_kind),
                        len(of_kind) - len(explored)))
    return '\n'.join(parts)


def tree_table(results):
    """One line per row of a tree check: its symptom shown or not."""
    lines = []
    for r in results:
        applies = '-'
        if r.applies is not None:
            applies = 'yes' if r.applies else 'no'
        shown = '-'
        if r.explored is not None:
            labels = runs.shown(r.explored, r.row.symptoms)
            shown = ('%d of %d' % (sum(r.explored.counts[label]
                                       for label in labels),
                                   r.explored.runs))
        lines.append((r.row.bug, r.row.family, _where(r.row),
                      ', '.join(r.row.symptoms) or '-', shown, applies,
                      r.status))
    return _table(('bug', 'family', 'scenario (fault)', 'symptom',
                   'runs showing', 'fix in place', 'result'), lines)


def timelines(results, patched):
    """The first counterexample of each row that shows its symptom."""
    parts = []
    for r in results:
        result = r.patched if patched else r.explored
        first = r.first(result) if result is not None else None
        if first is None or (not patched and r.status != runs.SHOWS):
            continue
        scenario = scenarios.get_scenario(r.row.scenario)
        parts.append('bug %s, %s: the first run showing %s (run %d)\n%s\n'
                     % (r.row.bug, _where(r.row), ', '.join(r.row.symptoms),
                        first.index + 1,
                        race_report.timeline(first, scenario.actor_names)))
    return '\n'.join(parts)


def to_json(results):
    """JSON-able data, one entry per row."""
    data = []
    for r in results:
        row = r.row
        entry = dict(bug=row.bug, fixes=list(row.fixes), family=row.family,
                     operation=row.operation, kind=row.kind,
                     scenario=row.scenario, fault=row.fault,
                     without=list(row.without),
                     symptoms=list(row.symptoms), status=r.status,
                     detail=r.detail, finding=row.finding,
                     fix_in_place=r.applies)
        if r.patched is not None:
            first = r.first()
            entry['patched'] = dict(
                runs=r.patched.runs, elapsed_s=round(r.patched_elapsed, 3),
                first=first.index + 1 if first else None,
                counts=r.patched.counts,
                counterexample=(race_report.run_json(first)
                                if first else None))
        if r.explored is not None:
            first = r.first(r.explored)
            entry['explored'] = dict(
                runs=r.explored.runs, elapsed_s=round(r.explored.elapsed, 3),
                complete=r.explored.complete, counts=r.explored.counts,
                counterexample=(race_report.run_json(first)
                                if first else None))
        data.append(entry)
    return data


def _short(text, width=60):
    text = ' '.join(text.split())
    return text if len(text) <= width else text[:width - 3] + '...'


def list_table(rows):
    """The rows, as ``--list`` prints them."""
    lines = [(row.bug, ' '.join(row.fixes), row.family, row.kind,
              _where(row),
              ', '.join(row.symptoms) if row.modelled else
              ('removed by %s' % row.removed_by if row.removed_by
               else _short('needs %s' % row.needs)))
             for row in rows]
    return _table(('bug', 'fix', 'family', 'kind', 'scenario (fault)',
                   'symptom'), lines)


def self_test_text(results, description, with_timelines=False):
    """What ``shelvefix corpus --self-test`` prints."""
    parts = ['shelvefix corpus --self-test: each row\'s re-introduction '
             'patch on %s,\nand that nova as it is (one whole exploration '
             'per scenario and fault)\n' % description,
             self_test_table(results), '', family_table(results), '',
             explored_text(results), tally(results)]
    findings = [r for r in results if r.status == runs.FINDING]
    for r in findings:
        parts.append('finding, bug %s: nova as it is shows %s too: %s'
                     % (r.row.bug, ', '.join(r.row.symptoms),
                        r.row.finding or 'UNDOCUMENTED'))
    for r in results:
        if r.status in (runs.NOT_REPRODUCED, runs.PATCH_FAILS):
            parts.append('bug %s: %s%s' % (
                r.row.bug, r.status,
                ': %s' % r.detail if r.detail else ''))
    if with_timelines:
        parts += ['', timelines(results, patched=True)]
    parts.append('')
    parts.append('Self-test %s.' % ('passed: every row explored reproduces'
                                    if runs.proven(results) else
                                    'FAILED: see the rows above'))
    return '\n'.join(parts) + '\n'


def tree_text(results, description, why):
    """What ``shelvefix corpus`` prints for a tree."""
    showing = [r for r in results if r.status == runs.SHOWS]
    parts = ['shelvefix corpus: nova\'s historical allocation races on %s '
             '(one whole exploration per scenario and fault)\n'
             % description, '', tree_table(results), '']
    if showing:
        parts += [timelines(results, patched=False)]
        parts.append('%d row(s) show their symptom: this nova has those '
                     'races, or others with the same symptom in the same '
                     'scenario.' % len(showing))
    elif why:
        parts.append('No verdict: %s.' % why)
    else:
        parts.append('No row shows its symptom.')
    return '\n'.join(parts) + '\n'
