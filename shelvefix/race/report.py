"""Rendering explorations: the outcome table, timelines, Mermaid, JSON."""

import collections
import textwrap

from shelvefix.explorer import count
from shelvefix import race
from shelvefix.race import digest as digest_mod
from shelvefix.race import outcomes

COLUMN = 52

#: One cell's exploration, condensed; ``digest``:
#: :func:`shelvefix.race.digest.digest`; ``work``
#: and ``critical``: the runs' total time and critical path, in seconds;
#: ``ahead``, ``tasks``, ``discarded``: as the Exploration's.
CellResult = collections.namedtuple(
    'CellResult', ['cell', 'runs', 'counts', 'first', 'elapsed', 'pruned',
                   'complete', 'repeated', 'digest', 'work', 'critical',
                   'ahead', 'tasks', 'discarded'],
    defaults=(0, None, 0.0, 0.0, 0, 0, 0))


def free_text(cell):
    """The way a cell frees, with the fault placement makes, if any."""
    if cell.free is None:
        return cell.fault or '-'
    if cell.fault:
        return '%s (%s)' % (cell.free, cell.fault)
    return cell.free


def cell_text(cell):
    """A cell in words, e.g. ``pre-1862633, fault port-binding``."""
    if cell.free is not None:
        return '%s order, free with %s' % (cell.variant, free_text(cell))
    if cell.fault:
        return '%s, fault %s' % (cell.variant, cell.fault)
    return '%s, no fault' % cell.variant


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
    critical, _chain = count.critical_path(exploration)
    return CellResult(cell, len(exploration.runs), dict(counts), first,
                      exploration.elapsed, exploration.pruned,
                      getattr(exploration, 'complete', True),
                      getattr(exploration, 'repeated', 0),
                      digest_mod.digest(exploration),
                      sum(exploration.costs), critical, exploration.ahead,
                      exploration.tasks, exploration.discarded)


def reduction_text(results):
    """One line: how many runs the reduced search made, and how long."""
    runs = sum(r.runs for r in results)
    repeated = sum(r.repeated for r in results)
    text = ('%d runs in %.2f s, one per class of equivalent interleavings'
            % (runs, sum(r.elapsed for r in results)))
    if repeated:
        text += (' (%d of them repeated a class: a guard guessed enabled '
                 'was not)' % repeated)
    return text + '\n(--no-reduce explores every interleaving).'


def labels_in(results, always=()):
    """Every outcome label seen, ok first, then the known bad ones.

    :param always: labels to include, seen or not
    """
    seen = set(always)
    for result in results:
        seen.update(result.counts)
    return outcomes.ordered(seen)


def table(results, first_column='interleavings', variant_column='ordering',
          always=(outcomes.OK,)):
    """The matrix as text: one row per cell, one column per outcome.

    The cells' columns are the variant, then ``free with`` (with the fault
    in brackets) if any cell varies the way of freeing, else ``fault``.
    The outcomes' columns are those seen and those in ``always`` (a
    scenario's symptoms: random runs that happen to miss one still show
    it, with 0).
    """
    labels = labels_in(results, always)
    frees = any(r.cell.free is not None for r in results)
    header = [variant_column, 'free with' if frees else 'fault',
              first_column] + labels
    rows = [[r.cell.variant, free_text(r.cell), str(r.runs)] +
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
        text += ' -> %s' % (entry.result,)
    return text


def timeline(run, actors=('compute', 'scheduler')):
    """One numbered step per line.

    Two actors get a column each (``compute | scheduler``); more get one
    column of steps headed by the actor's name.
    """
    if len(actors) == 2:
        lines = _two_columns(run, actors)
    else:
        width = max(len(actor) for actor in actors)
        lines = ['  #  %s  step' % 'actor'.ljust(width),
                 '  -  %s  %s' % ('-' * width, '-' * (2 * COLUMN - width))]
        for number, entry in enumerate(run.trace, 1):
            wrapped = textwrap.wrap(_entry_text(entry),
                                    2 * COLUMN - width) or ['']
            for i, part in enumerate(wrapped):
                lines.append('%3s  %s  %s' % (
                    number if i == 0 else '',
                    (entry.step.actor if i == 0 else '').ljust(width),
                    part))
    for actor, result in sorted(run.results.items()):
        if result.error is not None:
            lines.append('     %s raised %s: %s' % (
                actor, type(result.error).__name__, result.error))
        elif result.stuck:
            lines.append('     %s never got past its wait' % actor)
    lines.append('     outcome: %s' % ', '.join(run.outcome))
    return '\n'.join(lines)


def _two_columns(run, actors):
    lines = ['  #  %s | %s' % (actors[0].ljust(COLUMN), actors[1]),
             '  -  %s | %s' % ('-' * COLUMN, '-' * COLUMN)]
    for number, entry in enumerate(run.trace, 1):
        wrapped = textwrap.wrap(_entry_text(entry), COLUMN) or ['']
        for i, part in enumerate(wrapped):
            left, right = ((part, '') if entry.step.actor == actors[0]
                           else ('', part))
            lines.append('%3s  %s | %s' % (number if i == 0 else '',
                                           left.ljust(COLUMN), right))
    return lines


def _mermaid_text(text):
    # Mermaid ends a message at ';' and chokes on '#'.
    return text.replace(';', ',').replace('#', 'no. ')


_TARGETS = (('instance', 'I', 'instance store'),
            ('migration', 'M', 'migration records'),
            ('placement', 'P', 'placement'),
            ('lock', 'L', 'locks'),
            ('rpc', 'R', 'message bus'))
_ACTOR_NAMES = {'compute': 'compute', 'scheduler': 'API + scheduler',
                'conductor': 'API + conductor + scheduler'}


def _participant_ids(actors):
    """Short ids: ``C`` for compute, ``P1`` for periodic-1..."""
    ids = {actor: actor[0].upper() + ''.join(c for c in actor if c.isdigit())
           for actor in actors}
    taken = [key for _kind, key, _name in _TARGETS] + list(ids.values())
    if len(set(taken)) < len(taken):
        ids = {actor: 'A%d' % index for index, actor in enumerate(actors)}
    return ids


def mermaid(run, title, actors=('compute', 'scheduler')):
    """A Mermaid sequence diagram of one run."""
    kinds = {entry.step.kind for entry in run.trace}
    ids = _participant_ids(actors)
    lines = ['sequenceDiagram', '    title %s' % _mermaid_text(title)]
    lines += ['    participant %s as %s' % (ids[actor],
                                            _ACTOR_NAMES.get(actor, actor))
              for actor in actors[:1]]
    lines += ['    participant %s as %s' % (key, name)
              for kind, key, name in _TARGETS if kind in kinds]
    lines += ['    participant %s as %s' % (ids[actor],
                                            _ACTOR_NAMES.get(actor, actor))
              for actor in actors[1:]]
    targets = {kind: key for kind, key, _name in _TARGETS}
    for entry in run.trace:
        actor = ids[entry.step.actor]
        target = targets.get(entry.step.kind, 'P')
        lines.append('    %s->>%s: %s' % (actor, target,
                                          _mermaid_text(entry.step.label)))
        if entry.result is not None:
            lines.append('    %s-->>%s: %s' % (
                target, actor, _mermaid_text(str(entry.result))))
    lines.append('    Note over %s,%s: outcome: %s' % (
        ids[actors[0]], ids[actors[-1]], ', '.join(run.outcome)))
    return '\n'.join(lines)


def diagrams(results, actors=('compute', 'scheduler'),
             heading='# shelvefix race: first counterexamples'):
    """A Markdown document with one diagram per first counterexample."""
    parts = [heading, '']
    for result in results:
        for labels, run in first_counterexamples(result):
            title = '%s: %s' % (cell_text(result.cell), ', '.join(labels))
            parts += ['## ' + title, '', '```mermaid',
                      mermaid(run, title, actors), '```', '']
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


def run_json(run):
    """JSON-able data of one run: schedule, steps, errors, outcome."""
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
        'variant': r.cell.variant,
        'ordering': r.cell.variant,
        'free': r.cell.free,
        'fault': r.cell.fault,
        'interleavings': r.runs,
        'complete': r.complete,
        'pruned': r.pruned,
        'repeated': r.repeated,
        'elapsed_s': round(r.elapsed, 4),
        'outcomes': r.counts,
        'first_counterexamples': {label: run_json(run)
                                  for label, run in sorted(r.first.items())},
    } for r in results]


def corrected_is_clean(results):
    """True if no corrected-order cell shows a bad outcome.

    Placement failing is reported, not judged (see
    :func:`~shelvefix.race.outcomes.is_ordering_failure`).
    """
    return not any(outcomes.is_ordering_failure(label)
                   for r in results if r.cell.variant == race.CORRECTED
                   for label in r.counts)


def unearned(results):
    """Why these cells cannot back a clean verdict, or None if they can.

    The one place ``shelvefix race`` decides that it ran enough to say
    clean: every cell made at least one run and, explored, went to the end
    of its search; no run of any cell ended in an actor's error that no
    outcome names (:func:`~shelvefix.race.outcomes.is_unclassified`); and
    each corrected cell has a run that placement did not fail (placement
    failing is reported, not judged, so a cell where it failed every time
    has shown nothing about the order).

    :param results: :class:`CellResult` of every cell that was asked for
    :returns: one line naming the first cell that falls short, and how
    """
    if not results:
        return 'no cell was run'
    for r in results:
        where = cell_text(r.cell)
        if r.runs < 1:
            return '%s: no run was made' % where
        if not r.counts:
            return '%s: no run ended with an outcome' % where
        if not r.complete:
            return ('%s: the search stopped after %d runs, before the end'
                    % (where, r.runs))
        stray = sorted(label for label in r.counts
                       if outcomes.is_unclassified(label))
        if stray:
            return ('%s: runs ended in an error no outcome classifies (%s)'
                    % (where, ', '.join(stray)))
        if (r.cell.variant == race.CORRECTED and
                not set(r.counts) - {outcomes.PLACEMENT_FAILED}):
            return ('%s: placement failed in all %d runs, so none was '
                    'judged' % (where, r.runs))
    return None


def unearned_scenarios(done):
    """:func:`unearned` for ``(scenario, results)`` pairs: the first why.

    :returns: ``scenario-name: why``, or None when every scenario earned
        its verdict
    """
    if not done:
        return 'no scenario was run'
    for scenario, results in done:
        why = unearned(results)
        if why:
            return '%s: %s' % (scenario.name, why)
    return None


def exploration_text(scenario, results, every=False, corrected=None):
    """A scenario's explored cells as the race command prints them.

    The table, how many runs, the first counterexample of each bad
    outcome as a timeline, and the verdict line on the corrected code.

    :param every: the search was not reduced (``--no-reduce``)
    :param corrected: what the corrected code is called in the verdict
        (default: the corrected order, or code, of the library)
    """
    parts = [table(results, variant_column=scenario.first_column,
                   always=scenario.symptoms) + '\n\n']
    if every:
        parts.append('Every interleaving explored: %d runs in %.2f s.\n\n'
                     % (sum(r.runs for r in results),
                        sum(r.elapsed for r in results)))
    else:
        parts.append(reduction_text(results) + '\n\n')
    for result in results:
        for labels, run in first_counterexamples(result):
            parts.append('First counterexample: %s: %s\n%s\n\n'
                         % (cell_text(result.cell), ', '.join(labels),
                            timeline(run, scenario.actor_names)))
    parts.append(verdict_line(scenario, results, corrected))
    return ''.join(parts)


def verdict_line(scenario, results, corrected=None):
    """What the corrected code showed in any interleaving, or why not."""
    what = corrected or ('Corrected order'
                         if scenario.name == race.OFFLOAD_UNSHELVE
                         else 'Corrected code')
    what = what[0].upper() + what[1:]
    ran = any(r.cell.variant == race.CORRECTED for r in results)
    why = unearned(results)
    if ran and not corrected_is_clean(results):
        return '%s: BAD OUTCOMES FOUND\n' % what
    if why:
        return '%s: no verdict, the runs do not show it: %s\n' % (what, why)
    if not ran:
        return ('%s: not run (only --variant %s chosen), so no verdict on '
                'it\n' % (what, ', '.join(sorted(
                    set(r.cell.variant for r in results)))))
    return '%s: no bad outcome in any interleaving\n' % what
