"""``resize-migrate``: a second move right after a resize is confirmed.

First the second move on its own, run by the library's operations in one
order (the confirm, the client's migration, compute-1's ``prep_resize``,
then :meth:`~shelvefix.race.move_cloud.MoveCloud.finish_moves`): where
everything ends, and what the end state's judge says of two migrations
when one of them is spoilt. Then the corrected cell explored: every run
ends with the server moved back, and the audit is run both before and
after the second migration appears on compute-1 (the other cells are in
:mod:`~shelvefix.tests.unit.race.test_move_program`).
"""

import collections
from unittest import mock

from shelvefix.backends import fixture
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix.objects import migration as migration_obj
from shelvefix import race
from shelvefix.race import client
from shelvefix.race import move_cloud
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenario
from shelvefix.race import scenarios
from shelvefix.tests import base
from shelvefix.tests.unit.race import test_move_outcomes
from shelvefix.tests.unit.race import test_move_program

SRC, DST = move_cloud.SOURCE, move_cloud.DESTINATION
RESOURCES = scenario.FLAVOR.resources


class SecondMoveTestBase(base.TestCase):

    def setUp(self):
        super(SecondMoveTestBase, self).setUp()
        test_move_program.quiet(self)
        self.placement = self.useFixture(fixture.PlacementFixture())
        self.providers = move_cloud.create_providers(self.placement,
                                                     enabled=True)
        self.cloud = move_cloud.MoveCloud(self.placement, self.providers)
        self.addCleanup(self.cloud.remove_from_placement)
        self.first, self.second = self.cloud.migration_uuids

    def classify(self):
        return move_outcomes.classify_move(self.cloud,
                                           test_move_outcomes.ended())


class SecondMoveTestCase(SecondMoveTestBase):

    def move_back(self):
        self.assertTrue(self.cloud.api_confirm())
        self.assertTrue(self.cloud.migrate_again(timeout=0))
        self.cloud.serve(SRC, timeout=0)  # prep_resize
        self.assertEqual({}, self.cloud.finish_moves())

    def test_the_first_move_went_to_compute_2(self):
        # compute-1 is enabled: the API's ignore_hosts kept it off.
        self.assertEqual(DST, self.cloud.saved()['host'])
        self.assertEqual(DST, self.cloud.saved_migration()['dest_compute'])
        self.assertEqual([self.first], [m['uuid'] for m in
                                        self.cloud.saved_migrations()])

    def test_moved_back_to_compute_1(self):
        self.move_back()
        row = self.cloud.saved()
        self.assertEqual((vm_states.RESIZED, None, SRC),
                         (row['vm_state'], row['task_state'], row['host']))
        first, second = self.cloud.saved_migrations()
        self.assertEqual(migration_obj.CONFIRMED, first['status'])
        self.assertEqual((migration_obj.FINISHED, DST, SRC),
                         (second['status'], second['source_compute'],
                          second['dest_compute']))
        src, dst = self.providers
        self.assertEqual({src: RESOURCES}, self.cloud.held())
        self.assertEqual({}, self.cloud.held(self.first))
        self.assertEqual({dst: RESOURCES}, self.cloud.held(self.second))
        self.assertEqual({SRC: RESOURCES, DST: RESOURCES},
                         self.cloud.usage())
        self.assertEqual(('ok',), self.classify())

    def test_not_movable_until_confirmed(self):
        e = self.assertRaises(client.GaveUp, self.cloud.migrate_again,
                              timeout=30, give_up=lambda: True)
        self.assertIn('resized', str(e))
        self.assertEqual([self.first], [m['uuid'] for m in
                                        self.cloud.saved_migrations()])

    def test_each_migration_judged(self):
        self.move_back()
        src, _dst = self.providers
        # The confirmed one holding anything is a leak, whatever the
        # second holds.
        self.assertTrue(self.cloud.client.claim_resources(
            context.get_admin_context(), self.first,
            scenario.alloc_request(src), scenario.PROJECT, scenario.USER,
            scenario.CLAIM_VERSION))
        self.assertEqual((move_outcomes.MIGRATION_LEAKED,), self.classify())

    def test_the_second_migration_counts_at_its_source(self):
        self.move_back()
        # compute-2 must count the old flavor the second migration holds
        # there; an audit that lost it is caught.
        self.cloud.rts[DST].tracked_migrations.clear()
        self.cloud.rts[DST]._update_usage(RESOURCES, DST, sign=-1)
        self.assertEqual((outcomes.USAGE_UNTRACKED,), self.classify())

    def test_finish_moves_reports_a_failed_cast(self):
        self.assertTrue(self.cloud.api_confirm())
        self.assertTrue(self.cloud.migrate_again(timeout=0))
        with mock.patch.object(self.cloud.computes[SRC], 'prep_resize',
                               side_effect=RuntimeError('boom')):
            errors = self.cloud.finish_moves()
        self.assertEqual(['%s later' % SRC], list(errors))
        self.assertIsInstance(errors['%s later' % SRC], RuntimeError)
        self.assertEqual(0, self.cloud.transport.waiting('compute', SRC))

    def test_implied_usage_of_several_migrations(self):
        self.move_back()
        row = self.cloud.saved()
        first, second = self.cloud.saved_migrations()
        # Only the one in progress implies anything beyond the server.
        self.assertEqual(RESOURCES, move_outcomes.implied_usage(
            row, [first, second], DST))
        self.assertEqual({}, move_outcomes.implied_usage(row, [first], DST))
        self.assertEqual(move_outcomes.implied_usage(row, second, DST),
                         move_outcomes.implied_usage(row, [second], DST))


class ExploredTestCase(base.TestCase):
    """The corrected cell: the server always moves back, nothing bad."""

    def setUp(self):
        super(ExploredTestCase, self).setUp()
        test_move_program.quiet(self)
        self.placement = self.useFixture(fixture.PlacementFixture())

    def test_every_run_moves_it_back(self):
        ends = collections.Counter()
        classify = move_outcomes.classify_move

        def judged(cloud, results, injected=()):
            row = cloud.saved()
            ends[(row['vm_state'], row['host'], tuple(
                m['status'] for m in cloud.saved_migrations()))] += 1
            return classify(cloud, results, injected)

        with mock.patch.object(move_outcomes, 'classify_move', judged):
            exploration = test_move_program.check_cell(
                self, self.placement, race.RESIZE_MIGRATE,
                scenarios.Cell(race.CORRECTED, None))
        self.assertEqual(
            {(vm_states.RESIZED, SRC, (migration_obj.CONFIRMED,
                                       migration_obj.FINISHED)):
             len(exploration.runs)}, ends)
        # The audit listed compute-1's migrations before the second was
        # claimed there, and after.
        seen = set()
        for run in exploration.runs:
            for entry in run.trace:
                step = entry.step
                if (step.actor == 'periodic-1' and
                        step.label == 'list migrations on the node'):
                    seen.add(entry.result)
        self.assertEqual({'0 row(s)', '1 row(s)'}, seen)
