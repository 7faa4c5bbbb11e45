"""A cold resize from compute-1 to compute-2, explored on nova's own code.

The race lab's ``resize`` (``shelvefix race --target nova --scenario
resize``; see :mod:`shelvefix.nova.resize` for what runs and what is
stubbed): the API's resize and nova's conductor and scheduler, compute-2's
``prep_resize`` and ``finish_resize``, compute-1's ``resize_instance``,
and each host's periodic audit. What nova's latest release shows:

* against compute-1's audit: no bad outcome, the server ``RESIZED`` on
  compute-2 holding it, the migration compute-1;
* against compute-2's audit: ``usage untracked on compute-2`` (a finding
  of nova's code). ``resize_instance`` saves the server on compute-2
  before ``finish_resize`` gives it the new flavor; an audit of compute-2
  that lists the node's instances in between counts the server with the
  old flavor, and no longer the incoming migration (the server is one of
  its instances now): the node counts the smaller flavor until its next
  audit;
* with a step failing (the cells' faults): the server in ``ERROR``,
  placement consistent with it: back on compute-1 when compute-2's claim
  or compute-1's ``resize_instance`` fails, on compute-2 alone when
  ``finish_resize`` fails.

Every actor at once is 2844 runs, minutes of nova's code
(:class:`FullResizeTestCase`, not run by default); the tests explore the
resize against one audit at a time.
"""

import os

import testtools

from shelvefix import explorer
from shelvefix import nova as nova_target
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import test_moves

DEST_UNTRACKED = 'usage untracked on compute-2'
RESIZED = {'instance': ('resized', None, 'compute-2'), 'flavor': 'm1.medium',
           'migration': 'finished', 'held': ['compute-2'],
           'migration_held': ['compute-1']}


class ResizeTestBase(test_moves.MoveTestCase):

    def setUp(self):
        super(ResizeTestBase, self).setUp()
        self.resize = test_moves.base.load('shelvefix.nova.resize')

    def explore_resize(self, fault=None, without=('periodic-2',)):
        """Explore the cell ``(corrected, fault)`` completely."""
        cloud = self.useFixture(self.resize.ResizeCloud(
            backend=self.backend, **self.resize.cloud_kwargs(fault)))
        program = self.resize.ResizeProgram(cloud, without=without)
        exploration = explorer.explore(program)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        self.assertEqual(len(exploration.runs), len(program.ends))
        self.ends = program.ends
        return exploration


class ResizeTestCase(ResizeTestBase):

    def test_the_scenario_is_nova_s_only(self):
        scenario = scenarios.get_scenario(race.RESIZE)
        self.assertEqual((race.NOVA,), scenario.targets)
        self.assertEqual(
            [scenarios.Cell(race.CORRECTED, None, fault)
             for fault in (None, race.PREP_FAILS, race.RESIZE_FAILS,
                           race.FINISH_FAILS)],
            nova_target.cells(scenario))

    def test_source_audit_has_no_bad_outcome(self):
        exploration = self.explore_resize()
        self.assertOnly([outcomes.OK], exploration)
        self.assertEqual(34, len(exploration.runs))
        self.assertEnds(RESIZED)
        # The audit ran in every place of the resize: before the
        # conductor's migration and after the server left compute-1.
        first = [test_moves.position(run, 'periodic-1',
                                     'list instances on the node')
                 for run in exploration.runs]
        created = [test_moves.position(run, 'conductor', 'create migration')
                   for run in exploration.runs]
        self.assertTrue(any(a < c for a, c in zip(first, created)))
        self.assertTrue(any(a > c for a, c in zip(first, created)))

    def test_destination_audit_counts_the_old_flavor(self):
        exploration = self.explore_resize(without=('periodic-1',))
        self.assertOnly([outcomes.OK, DEST_UNTRACKED], exploration)
        self.assertEqual(84, len(exploration.runs))
        self.assertEnds(RESIZED)
        shown = 0
        for run in exploration.runs:
            moved = test_moves.position(
                run, 'compute-1', 'save instance',
                'vm_state=active task_state=resize_migrated host=compute-2')
            listed = test_moves.position(run, 'periodic-2',
                                         'list instances on the node')
            resized = test_moves.position(
                run, 'compute-2', 'save instance',
                'vm_state=active task_state=resize_finish host=compute-2')
            between = test_moves.between(moved, listed, resized)
            self.assertEqual(between, DEST_UNTRACKED in run.outcome,
                             run.format_trace())
            shown += between
        self.assertEqual(2, shown)

    def test_claim_refused_puts_the_server_back(self):
        exploration = self.explore_resize(race.PREP_FAILS)
        self.assertOnly([outcomes.OK], exploration)
        self.assertEqual(22, len(exploration.runs))
        for run in exploration.runs:
            self.assertIsInstance(
                run.results['compute-2'].error,
                self.nova_exception.ComputeResourcesUnavailable)
            # resize_instance is never cast.
            self.assertTrue(run.results['compute-1'].stuck)
        self.assertEnds({'instance': ('error', None, 'compute-1'),
                         'flavor': 'm1.small', 'migration': 'error',
                         'held': ['compute-1'], 'migration_held': []})

    def test_failed_resize_instance_puts_the_server_back(self):
        exploration = self.explore_resize(race.RESIZE_FAILS)
        self.assertOnly([outcomes.OK], exploration)
        self.assertEqual(40, len(exploration.runs))
        for run in exploration.runs:
            self.assertIsInstance(run.results['compute-1'].error,
                                  self.moves.DriverFailed)
        self.assertEnds({'instance': ('error', None, 'compute-1'),
                         'flavor': 'm1.small', 'migration': 'error',
                         'held': ['compute-1'], 'migration_held': []})

    def test_failed_finish_frees_the_source(self):
        exploration = self.explore_resize(race.FINISH_FAILS)
        self.assertOnly([outcomes.OK], exploration)
        self.assertEqual(62, len(exploration.runs))
        for run in exploration.runs:
            self.assertIsInstance(run.results['compute-2'].error,
                                  self.moves.DriverFailed)
        # In ERROR on compute-2 for an operator to hard-reboot there.
        self.assertEnds({'instance': ('error', None, 'compute-2'),
                         'flavor': 'm1.small', 'migration': 'error',
                         'held': ['compute-2'], 'migration_held': []})


@testtools.skipUnless(os.environ.get(test_moves.FULL),
                      'minutes of nova code: set %s=1' % test_moves.FULL)
class FullResizeTestCase(ResizeTestBase):
    """The corrected cell with every actor (2844 runs, about 3 minutes).

    ``SHELVEFIX_NOVA_FULL=1 tox -e nova -- test_resize``.
    """

    def test_both_audits_show_the_destination_s_gap_only(self):
        exploration = self.explore_resize(without=())
        self.assertOnly([outcomes.OK, DEST_UNTRACKED], exploration)
        self.assertEqual(2844, len(exploration.runs))
        self.assertEnds(RESIZED)
