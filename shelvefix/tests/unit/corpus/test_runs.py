"""The self-test's and the tree check's verdicts, on a fake nova lab."""

import collections
from unittest import mock

import testtools

from shelvefix import corpus
from shelvefix.corpus import report
from shelvefix.corpus import runs
from shelvefix.corpus import trees
from shelvefix.race import report as race_report

Run = collections.namedtuple('Run', ['index', 'outcome', 'schedule',
                                     'trace', 'results'])


def row(bug, scenario='resize-confirm', fault=None, symptoms=('usage '
                                                              'untracked',),
        kind=corpus.CONCURRENCY, finding=None, needs=None, without=()):
    return corpus.Row(bug=bug, fixes=('abc',), family='resize',
                      operation='resize', kind=kind, mechanism='m',
                      scenario=scenario, fault=fault, without=without,
                      symptoms=tuple(symptoms) if scenario else (),
                      patch='%s.patch' % bug if scenario else None,
                      removed_by=None, finding=finding, needs=needs)


def result(cell, labels, complete=True):
    """A CellResult of one run per label set in ``labels``."""
    counts, first = collections.Counter(), {}
    for index, outcome in enumerate(labels):
        run = Run(index, outcome, (), [], {})
        for label in outcome:
            counts[label] += 1
            if label != 'ok':
                first.setdefault(label, run)
    return race_report.CellResult(cell, len(labels), dict(counts), first,
                                  0.5, 0, complete)


class FakeLab(object):
    """Runs are looked up by the tree's path and the cell's fault."""

    explored = []
    without = []

    def __init__(self, path, backend):
        self.path = path
        self.description = 'nova at %s' % path

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass

    def explore(self, scenario, cell, progress=None, workers=1,
                stop_at=(), without=()):
        tree = 'as is' if self.path is None else self.path.split('-')[-1]
        self.explored.append((tree, scenario.name, cell.fault, stop_at))
        self.without.append(without)
        return result(cell, OUTCOMES[tree, cell.fault])


OUTCOMES = {
    ('as is', None): [('ok',), ('ok',), ('ok',)],
    ('as is', 'confirm-fails'): [('ok',), ('usage untracked',)],
    ('1', None): [('ok',), ('usage untracked',)],
    ('2', None): [('ok',), ('ok',)],
    ('3', 'confirm-fails'): [('usage untracked',)],
    ('4', 'confirm-fails'): [('usage untracked',)],
}


class RunsTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        FakeLab.explored = []
        FakeLab.without = []
        self.patch(runs.nova_lab, 'NovaLab', FakeLab)
        self.patch(trees, 'source', lambda path, scratch: ('/nova', '34'))
        self.patch(trees, 'patched', mock.Mock())
        self.rows = [row('1'), row('2'),
                     row('3', fault='confirm-fails', finding='known'),
                     row('4', fault='confirm-fails'),
                     row('5', scenario=None, needs='an actor')]

    def test_self_test(self):
        description, results = runs.self_test(self.rows)
        self.assertEqual('nova at None', description)
        statuses = [r.status for r in results]
        self.assertEqual([runs.REPRODUCED, runs.NOT_REPRODUCED,
                          runs.FINDING, runs.FINDING, runs.NOT_MODELLED],
                         statuses)
        # Each patched tree stops at the row's symptom; the tree as it is
        # is explored once per scenario and fault, whole.
        self.assertEqual(
            [('1', 'resize-confirm', None, ('usage untracked',)),
             ('2', 'resize-confirm', None, ('usage untracked',)),
             ('3', 'resize-confirm', 'confirm-fails', ('usage untracked',)),
             ('4', 'resize-confirm', 'confirm-fails', ('usage untracked',)),
             ('as is', 'resize-confirm', None, ()),
             ('as is', 'resize-confirm', 'confirm-fails', ())],
            FakeLab.explored)
        self.assertEqual(1, results[0].first().index)
        self.assertFalse(runs.proven(results))
        # Without the row that does not reproduce, the undocumented
        # finding still fails the proof.
        self.assertFalse(runs.proven([results[0], results[2], results[3]]))
        self.assertTrue(runs.proven([results[0], results[2], results[4]]))
        self.assertFalse(runs.proven([results[4]]))
        text = report.self_test_text(results, description, True)
        self.assertIn('Self-test FAILED', text)
        self.assertIn('finding, bug 4: nova as it is shows usage untracked '
                      'too: UNDOCUMENTED', text)
        self.assertIn('bug 1, resize-confirm: the first run showing usage '
                      'untracked (run 2)', text)
        families = runs.by_family(results)
        self.assertEqual((5, 3, 6, 0.0), families['resize'][:3] + (0.0,))

    def test_actors_left_out_make_a_group_of_their_own(self):
        rows = [row('1'), row('2', without=('periodic-1',))]
        _description, results = runs.self_test(rows)
        # Each patched tree, then the tree as it is once per group.
        self.assertEqual([(), ('periodic-1',), (), ('periodic-1',)],
                         FakeLab.without)
        self.assertIn('resize-confirm without periodic-1 3 runs',
                      report.explored_text(results))
        self.assertIn('resize-confirm without periodic-1',
                      report.self_test_table(results))

    def test_a_patch_that_does_not_apply(self):
        self.patch(trees, 'patched',
                   mock.Mock(side_effect=trees.PatchError('stale')))
        _description, results = runs.self_test(self.rows[:1])
        self.assertEqual(runs.PATCH_FAILS, results[0].status)
        self.assertEqual('stale', results[0].detail)
        self.assertFalse(runs.proven(results))
        self.assertEqual([], FakeLab.explored)

    def test_check_tree(self):
        self.patch(trees, 'applies',
                   lambda root, patch, scratch: patch.endswith('1.patch'))
        _description, results = runs.check_tree(self.rows)
        self.assertEqual([runs.NOT_SHOWN, runs.NOT_SHOWN, runs.SHOWS,
                          runs.SHOWS, runs.NOT_MODELLED],
                         [r.status for r in results])
        self.assertEqual([True, False, False, False, None],
                         [r.applies for r in results])
        self.assertIsNone(runs.unearned(results))
        text = report.tree_text(results, 'nova', None)
        self.assertIn('2 row(s) show their symptom', text)
        self.assertIn('bug 3, resize-confirm (confirm-fails): the first run '
                      'showing usage untracked (run 2)', text)
        data = report.to_json(results)
        self.assertEqual('shows', data[2]['status'])
        self.assertEqual(['usage untracked'],
                         data[2]['explored']['counterexample']['outcome'])

    def test_unearned(self):
        self.assertEqual('no row of the corpus was explored',
                         runs.unearned([runs.RowResult(self.rows[4],
                                                       runs.NOT_MODELLED)]))
        partial = runs.RowResult(self.rows[0], runs.NOT_SHOWN,
                                 explored=result(None, [('ok',)], False))
        self.assertIn('made no complete search', runs.unearned([partial]))


class ClusterProgressTestCase(testtools.TestCase):
    """On a cluster, progress counts tasks done out of all, and in flight."""

    def test_tasks_done_and_in_flight(self):
        import io
        from shelvefix.cmd import common
        stream = io.StringIO()
        meters = []

        def progress(label):
            meters.append(common.Progress(stream, label, force=True))
            return meters[-1]

        class Lab(object):
            def explore_many(self, requests, progress=None):
                progress(1, 3, 2)
                progress(3, 3, 0)
                return ['a', 'b', 'c']
        with mock.patch('time.monotonic', side_effect=[0.0] + [10.0] * 5):
            self.assertEqual(['a', 'b', 'c'],
                             runs.cluster_on(Lab(), [1, 2, 3], progress))
        lines = stream.getvalue().strip('\n').split('\r')[1:]
        self.assertEqual(
            ['3 explorations on the cluster, 2 in flight: '
             '[##########....................] 1/3 (0.1/s, 10 s)',
             '3 explorations on the cluster, 0 in flight: '
             '[##############################] 3/3 (0.3/s, 10 s)'], lines)
