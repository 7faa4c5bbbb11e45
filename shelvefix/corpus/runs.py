"""Exploring the corpus's rows on nova's code.

Two uses, both through :class:`~shelvefix.nova.lab.NovaLab` (nova runs in
a process of its own, on the placement double or the embedded real one):

:func:`self_test`
    the lab's own proof: for each row, the nova named (nova 34.0.0, the
    release the patches are written against) with the row's
    re-introduction patch must show the row's symptom (the search stops at
    its first counterexample), and the nova as it is must not (one whole
    exploration per scenario and fault, shared by the rows that use it);
:func:`check_tree`
    a maintainer's tree: which rows' symptoms does it show? One whole
    exploration per scenario and fault; and whether each row's patch
    applies to it, a static hint that the fixed code is there.

This module does not import nova.
"""

import collections
import os
import tempfile
import time

from shelvefix import corpus
from shelvefix.corpus import trees
from shelvefix.nova import lab as nova_lab
from shelvefix import race
from shelvefix.race import scenarios

# What became of a row.
REPRODUCED = 'reproduced'
FINDING = 'finding'
NOT_REPRODUCED = 'not reproduced'
PATCH_FAILS = 'patch does not apply'
NOT_MODELLED = 'not modelled'
REMOVED = 'code removed'
SHOWS = 'shows'
NOT_SHOWN = 'not shown'

#: The statuses of a self-test that prove the row.
PROVEN = (REPRODUCED, FINDING)
#: Rows counted apart: the lab does not explore them.
APART = (NOT_MODELLED, REMOVED)


class RowResult(collections.namedtuple(
        'RowResult', ['row', 'status', 'patched', 'patched_elapsed',
                      'explored', 'applies', 'detail'],
        defaults=(None, 0.0, None, None, None))):
    """What one row came to.

    ``patched`` is the :class:`~shelvefix.race.report.CellResult` of the
    row's scenario on the patched tree (stopped at the first run showing
    the symptom), ``patched_elapsed`` its wall time with the runner's
    start; ``explored`` the whole exploration of the unpatched tree
    (shared with the rows of the same scenario and fault); ``applies``
    whether the row's patch applies to the tree (``check_tree`` only);
    ``detail`` a line saying why a row did not run.
    """

    __slots__ = ()

    def first(self, result=None):
        """The first run of ``result`` showing the row's symptom, or None."""
        result = result or self.patched
        if result is None:
            return None
        runs = [run for label, run in result.first.items()
                if scenarios.shows((label,), self.row.symptoms)]
        return min(runs, key=lambda run: run.index) if runs else None


def group_text(group):
    """A scenario, fault and actors left out, in words."""
    scenario, fault, without = group
    text = '/'.join(part for part in (scenario, fault) if part)
    if without:
        text += ' without %s' % ', '.join(without)
    return text


def shown(result, symptoms):
    """The labels of ``result`` (a ``CellResult``) showing ``symptoms``."""
    return sorted(label for label in result.counts
                  if scenarios.shows((label,), symptoms))


def cell(row):
    """The cell a row runs: the tree's own code, with the row's fault."""
    return scenarios.Cell(race.CORRECTED, None, row.fault)


def groups_of(rows):
    """The scenario, fault and actors left out of each row, once each."""
    groups = []
    for row in rows:
        if row.modelled and row.group not in groups:
            groups.append(row.group)
    return groups


def group_request(group):
    """A group's whole exploration, as a cluster's ``Request``."""
    from shelvefix.cluster import lab as cluster_lab
    scenario, fault, without = group
    return cluster_lab.Request(scenarios.get_scenario(scenario),
                               scenarios.Cell(race.CORRECTED, None, fault),
                               without=without)


def explore_groups(path, backend, rows, progress=None, workers=1):
    """Explore each scenario and fault the rows use, once, on one nova.

    :param progress: None or ``progress(label)`` returning a progress
        callable with a ``finish()``
    :returns: ``(description, {group: CellResult})``
    :raises shelvefix.nova.NovaUnusable: that nova cannot be driven
    """
    groups = groups_of(rows)
    results = {}
    if not groups:
        return None, results
    with nova_lab.NovaLab(path, backend) as lab:
        for group in groups:
            scenario = scenarios.get_scenario(group[0])
            meter = progress(group_text(group)) if progress else None
            results[group] = lab.explore(
                scenario, scenarios.Cell(race.CORRECTED, None, group[1]),
                progress=meter, workers=workers, without=group[2])
            if meter:
                meter.finish()
        return lab.description, results


def _apart(row):
    if row.removed_by:
        return RowResult(row, REMOVED,
                         detail='removed from nova by %s' % row.removed_by)
    return RowResult(row, NOT_MODELLED, detail='needs %s' % row.needs)


def run_patched(row, root, version, backend, scratch, progress=None,
                workers=1):
    """Explore ``row``'s scenario on the tree with its patch, to a symptom.

    :returns: a :class:`RowResult` with ``patched`` set, or the status
        :data:`PATCH_FAILS`
    """
    dest = os.path.join(scratch, 'nova-%s' % row.bug)
    try:
        trees.patched(root, version, row.patch_path, dest)
    except trees.PatchError as e:
        return RowResult(row, PATCH_FAILS, detail=str(e))
    started = time.monotonic()
    with nova_lab.NovaLab(dest, backend) as lab:
        result = lab.explore(scenarios.get_scenario(row.scenario), cell(row),
                             progress=progress, workers=workers,
                             stop_at=row.symptoms, without=row.without)
    status = REPRODUCED if shown(result, row.symptoms) else NOT_REPRODUCED
    return RowResult(row, status, result, time.monotonic() - started)


def self_test(rows, path=None, backend='double', progress=None, workers=1,
              lab=None):
    """The corpus's proof on the nova named (see the module's text).

    :param lab: None, or a :class:`~shelvefix.cluster.lab.ClusterLab` to
        explore on: every patched row and every whole exploration a task,
        all at once
    :returns: ``(description, [RowResult])`` in the rows' order
    :raises shelvefix.nova.NovaUnusable: that nova cannot be driven
    """
    with tempfile.TemporaryDirectory(prefix='shelvefix-corpus-') as scratch:
        root, version = trees.source(path, scratch)
        if lab is not None:
            description, done, explored = _on_cluster(
                lab, rows, root, version, scratch, progress)
            return description, _judged(done, explored)
        done = []
        for row in rows:
            if not row.modelled:
                done.append(_apart(row))
                continue
            meter = progress('%s with its patch' % row.bug) \
                if progress else None
            done.append(run_patched(row, root, version, backend, scratch,
                                    meter, workers))
            if meter:
                meter.finish()
        description, explored = explore_groups(
            path, backend, [r.row for r in done if r.patched is not None],
            progress, workers)
    return description, _judged(done, explored)


def _on_cluster(lab, rows, root, version, scratch, progress):
    """The self-test's explorations as tasks of a Dask cluster at once.

    A row's patch is tried here first: a worker makes its own patched
    copy of the tree only for a patch that applies.
    """
    from shelvefix.cluster import lab as cluster_lab
    done, requests = [], []
    for row in rows:
        if not row.modelled:
            done.append(_apart(row))
            continue
        try:
            trees.patched(root, version, row.patch_path,
                          os.path.join(scratch, 'nova-%s' % row.bug))
        except trees.PatchError as e:
            done.append(RowResult(row, PATCH_FAILS, detail=str(e)))
            continue
        done.append(RowResult(row, None))
        requests.append(cluster_lab.Request(
            scenarios.get_scenario(row.scenario), cell(row), row.bug,
            row.symptoms, row.without))
    groups = groups_of([r.row for r in done if r.status is None])
    results = cluster_on(lab, requests + [group_request(group)
                                          for group in groups], progress)
    # A patched row's time is its task's: the runner's start with it.
    patched = iter(zip(results, lab.engine.durations))
    for position, result in enumerate(done):
        if result.status is None:
            found, seconds = next(patched)
            done[position] = result._replace(
                status=REPRODUCED if shown(found, result.row.symptoms)
                else NOT_REPRODUCED, patched=found,
                patched_elapsed=seconds)
    return (lab.description, done,
            dict(zip(groups, results[len(requests):])))


def cluster_on(lab, requests, progress):
    """Explore ``requests`` on ``lab`` at once, with one progress line."""
    meter = progress('%d explorations on the cluster' % len(requests)) \
        if progress else None
    if meter:
        # Tasks done out of all, not interleavings.
        meter.total, meter.unit = len(requests), 'tasks'

    def tasks_done(done, total, in_flight):
        if meter:
            meter.label = ('%d explorations on the cluster, %d in flight'
                           % (total, in_flight))
            meter(done)
    try:
        return lab.explore_many(requests, progress=tasks_done)
    finally:
        if meter:
            meter.finish()


def _judged(done, explored):
    """Each patched row against the whole exploration of its group."""
    results = []
    for result in done:
        if result.patched is None:
            results.append(result)
            continue
        whole = explored[result.row.group]
        status = result.status
        if status == REPRODUCED and shown(whole, result.row.symptoms):
            status = FINDING
        results.append(result._replace(status=status, explored=whole))
    return results


def check_tree(rows, path=None, backend='double', progress=None, workers=1,
               lab=None):
    """Which rows' symptoms the nova named shows (see the module's text).

    :param lab: as for :func:`self_test`
    :returns: ``(description, [RowResult])`` in the rows' order
    :raises shelvefix.nova.NovaUnusable: that nova cannot be driven
    """
    if lab is not None:
        groups = groups_of(rows)
        explored = dict(zip(groups, cluster_on(
            lab, [group_request(group) for group in groups], progress)))
        description = lab.description
    else:
        description, explored = explore_groups(path, backend, rows,
                                               progress, workers)
    results = []
    with tempfile.TemporaryDirectory(prefix='shelvefix-corpus-') as scratch:
        root, _version = trees.source(path, scratch)
        for row in rows:
            if not row.modelled:
                results.append(_apart(row))
                continue
            whole = explored[row.group]
            status = SHOWS if shown(whole, row.symptoms) else NOT_SHOWN
            results.append(RowResult(
                row, status, explored=whole,
                applies=trees.applies(root, row.patch_path, scratch)))
    return description, results


def proven(results):
    """Whether a self-test proves every row it explored.

    A row is proven if it reproduces, or if nova as it is shows its symptom
    too and the row says so (its ``finding``); every whole exploration must
    have made runs and ended.
    """
    for result in results:
        if result.status in APART:
            continue
        if result.status not in PROVEN:
            return False
        if result.status == FINDING and not result.row.finding:
            return False
        if not result.explored.runs or not result.explored.complete:
            return False
    return any(result.status not in APART for result in results)


def unearned(results):
    """Why a tree check's clean verdict would be unearned, or None."""
    explored = [r for r in results if r.status not in APART]
    if not explored:
        return 'no row of the corpus was explored'
    for result in explored:
        if not result.explored.runs or not result.explored.complete:
            return ('the exploration of %s made no complete search'
                    % group_text(result.row.group))
    return None


def by_family(results):
    """Per family: ``(rows, proven, runs with the patch, seconds)``."""
    totals = collections.OrderedDict(
        (family, [0, 0, 0, 0.0]) for family in corpus.FAMILIES)
    for result in results:
        entry = totals[result.row.family]
        entry[0] += 1
        if result.status in PROVEN:
            entry[1] += 1
        if result.patched is not None:
            entry[2] += result.patched.runs
            entry[3] += result.patched_elapsed
    return collections.OrderedDict(
        (family, tuple(entry)) for family, entry in totals.items()
        if entry[0])
