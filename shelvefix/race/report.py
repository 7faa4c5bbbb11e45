"""Rendering explorations: the outcome table, timelines, Mermaid, JSON."""

import collections
import textwrap

from shelvefix import race
from shelvefix.race import outcomes

COLUMN = 52

CellResult = collections.namedtuple(
    'CellResult', ['cell', 'runs', 'counts', 'first', 'elapsed', 'pruned',
                   'complete'])


def free_text(cell):
    """The way a cell frees, with the fault placement makes, if any."""
    if cell.fault:
        return '%s (%s)' % (cell.free, cell.fault)
    return cell.free


def summarise(cell, exploration):
    """Condense a cell's exploration.

    :param cell: the :class:`~shelvefix.race.program.Cell`
    :param exploration: what the explorer returned for it
    :returns: a :class:`CellResult`: runs, per-label counts, the first run
        showing each bad label, time, pruned branches
    """
    counts = collections.Counter()
    first = {}
    for run in exploration.runs:
        for label in run.outcome:
            counts[label] += 1
            if outcomes.is_bad(label) and label not in first:
                first[label] = run
    return CellResult(cell, len(exploration.runs), dict(counts), first,
                      exploration.elapsed, exploration.pruned,
                      getattr(exploration, 'complete', True))


def labels_in(results):
    """Every outcome label seen, ok first, then the known bad ones."""
    seen = set()
    for result in results:
        seen.update(result.counts)
    return outcomes.ordered(seen)


def table(results, first_column='interleavings'):
    """The matrix as text: one row per cell, one column per outcome."""
    labels = labels_in(results)
    header = ['ordering', 'free with', first_column] + labels
    rows = [[r.cell.ordering, free_text(r.cell), str(r.runs)] +
            [str(r.counts.get(label, 0)) for label in labels]
            for r in results]
    widths = [max(len(row[i]) for row in [header] + rows)
              for i in range(len(header))]
    lines = ['  '.join(text.ljust(width) if i < 2 else text.rjust(width)
                       for i, (text, width) in enumerate(zip(row, widths)))
             for row in [header] + rows]
    lines.insert(1, '  '.join('-' * width for width in widths))
    return '\n'.join(lines)


def _entry_text(entry):
    text = entry.step.label
    if entry.result is not None:
        text += ' -> %s' % entry.result
    return text


def timeline(run):
    """Two columns, compute | scheduler, one numbered step per line."""
    lines = ['  #  %s | %s' % ('compute'.ljust(COLUMN), 'scheduler'),
             '  -  %s | %s' % ('-' * COLUMN, '-' * COLUMN)]
    for number, entry in enumerate(run.trace, 1):
        wrapped = textwrap.wrap(_entry_text(entry), COLUMN) or ['']
        for i, part in enumerate(wrapped):
            left, right = ((part, '') if entry.step.actor == 'compute'
                           else ('', part))
            lines.append('%3s  %s | %s' % (number if i == 0 else '',
                                           left.ljust(COLUMN), right))
    for actor, result in sorted(run.results.items()):
        if result.error is not None:
            lines.append('     %s raised %s: %s' % (
                actor, type(result.error).__name__, result.error))
        elif result.stuck:
            lines.append('     %s never got past its wait' % actor)
    lines.append('     outcome: %s' % ', '.join(run.outcome))
    return '\n'.join(lines)


def _mermaid_text(text):
    # Mermaid ends a message at ';' and chokes on '#'.
    return text.replace(';', ',').replace('#', 'no. ')


def mermaid(run, title):
    """A Mermaid sequence diagram of one run."""
    participants = {'placement': 'P', 'instance': 'I'}
    lines = ['sequenceDiagram',
             '    title %s' % _mermaid_text(title),
             '    participant C as compute',
             '    participant I as instance store',
             '    participant P as placement',
             '    participant S as API + scheduler']
    for entry in run.trace:
        actor = 'C' if entry.step.actor == 'compute' else 'S'
        target = participants.get(entry.step.kind, 'P')
        lines.append('    %s->>%s: %s' % (actor, target,
                                          _mermaid_text(entry.step.label)))
        if entry.result is not None:
            lines.append('    %s-->>%s: %s' % (
                target, actor, _mermaid_text(str(entry.result))))
    lines.append('    Note over C,S: outcome: %s' % ', '.join(run.outcome))
    return '\n'.join(lines)


def diagrams(results):
    """A Markdown document with one diagram per first counterexample."""
    parts = ['# shelvefix race: first counterexamples', '']
    for result in results:
        for labels, run in first_counterexamples(result):
            title = '%s order, free with %s: %s' % (
                result.cell.ordering, free_text(result.cell),
                ', '.join(labels))
            parts += ['## ' + title, '', '```mermaid', mermaid(run, title),
                      '```', '']
    if len(parts) == 2:
        parts.append('No bad outcome was found.')
    return '\n'.join(parts) + '\n'


def first_counterexamples(result):
    """The first run showing each bad outcome, each run once.

    A run that is the first to show two outcomes (compute's 409 and the
    allocations it leaves behind, say) is one counterexample of both.

    :returns: ``(labels, run)`` pairs in the order of the table's columns;
        ``labels`` are the bad outcomes ``run`` shows, in that order too
    """
    order = labels_in([result])
    pairs, shown = [], set()
    for label in sorted(result.first, key=order.index):
        run = result.first[label]
        if run.index in shown:
            continue
        shown.add(run.index)
        labels = sorted((bad for bad in run.outcome if outcomes.is_bad(bad)),
                        key=order.index)
        pairs.append((labels, run))
    return pairs


def _run_json(run):
    return {
        'schedule': list(run.schedule),
        'trace': [{'actor': e.step.actor, 'kind': e.step.kind,
                   'step': e.step.label,
                   'result': None if e.result is None else str(e.result)}
                  for e in run.trace],
        'errors': {actor: '%s: %s' % (type(r.error).__name__, r.error)
                   for actor, r in run.results.items()
                   if r.error is not None},
        'outcome': list(run.outcome),
    }


def to_json(results):
    """JSON-able data for every cell."""
    return [{
        'ordering': r.cell.ordering,
        'free': r.cell.free,
        'fault': r.cell.fault,
        'interleavings': r.runs,
        'complete': r.complete,
        'pruned': r.pruned,
        'elapsed_s': round(r.elapsed, 4),
        'outcomes': r.counts,
        'first_counterexamples': {label: _run_json(run)
                                  for label, run in sorted(r.first.items())},
    } for r in results]


def corrected_is_clean(results):
    """True if no corrected-order cell shows a bad outcome.

    Placement failing is reported, not judged (see
    :func:`~shelvefix.race.outcomes.is_ordering_failure`).
    """
    return not any(outcomes.is_ordering_failure(label)
                   for r in results if r.cell.ordering == race.CORRECTED
                   for label in r.counts)
