"""Two members of an anti-affinity group live-migrated at once, on nova.

:mod:`shelvefix.nova.live_migration_group`: A on compute-1 and B on
compute-3, each with compute-2 as the scheduler's only pick. What nova
34.0.0 shows: never both on compute-2; but a member whose destination
refuses it in ``check_can_live_migrate_destination`` is set to ``ERROR``
(the check raises ``GroupAffinityViolation``, which the pre-check does not
turn into ``MigrationPreCheckError``): the conductor's ``MigrationError``.
"""

import logging
from unittest import mock

import fixtures

from shelvefix import explorer
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base

STALE = move_outcomes.SCHEDULER_INFO_STALE
VIOLATED = move_outcomes.GROUP_VIOLATED


class GroupTestCase(base.NovaTestCase):

    def setUp(self):
        super(GroupTestCase, self).setUp()
        # Runs of nova's code: see test_lifecycle.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.live_migration_group')
        self.scenario = scenarios.get_scenario(race.LIVE_MIGRATE_GROUP)
        self.cell = scenarios.Cell(race.CORRECTED, None)

    def first_run(self):
        """The search's first run: A's conductor all through, then B's."""
        prog = self.target.program('double', self.scenario, self.cell)
        self.addCleanup(prog.close)
        exploration = explorer.explore(prog, max_runs=1)
        self.assertExplored(exploration)
        self.assertEqual(1, len(exploration.runs))
        self.run_ = prog.inner.cloud.run
        return exploration.runs[0], prog.inner.ends[0]

    def test_the_scenario_on_nova(self):
        self.assertEqual((race.NOVA,), self.scenario.targets)
        prog = self.target.program('double', self.scenario, self.cell)
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner, self.module.GroupProgram)
        self.assertEqual(('conductor', 'conductor-b'), prog.actors)
        self.assertEqual(('compute-1', 'compute-2', 'compute-3'),
                         prog.inner.cloud.hosts)

    def test_without_is_refused(self):
        e = self.assertRaises(self.target.nova_target.NovaUnusable,
                              self.target.program, 'double', self.scenario,
                              self.cell, ('conductor-b',))
        self.assertIn('need both conductors', str(e))

    def test_the_second_member_is_refused_and_set_to_error(self):
        run, end = self.first_run()
        # A moved to compute-2; B's destination saw A's migration there and
        # refused B, which nova then set to ERROR on compute-3.
        self.assertEqual(('active', None, 'compute-2'), end['instance'])
        self.assertEqual('completed', end['migration'])
        self.assertEqual(('error', None, 'compute-3'), end['other'])
        self.assertEqual(('conductor-b error: MigrationError', STALE),
                         run.outcome)

    def test_without_the_destination_check_both_land_together(self):
        # nova's check off (as bug 1821755's re-introduction patch does):
        # the judge sees both members on compute-2.
        checked = []

        def no_check(manager, context, instance, scheduler_hints=None):
            checked.append(instance.uuid)
        with mock.patch('nova.compute.manager.ComputeManager.'
                        '_validate_instance_group_policy', no_check):
            run, end = self.first_run()
        # Both members' destinations were asked (and said nothing).
        self.assertEqual({self.run_.uuid, self.run_.other}, set(checked))
        self.assertEqual(('active', None, 'compute-2'), end['instance'])
        self.assertEqual(('active', None, 'compute-2'), end['other'])
        self.assertIn(VIOLATED, run.outcome)
