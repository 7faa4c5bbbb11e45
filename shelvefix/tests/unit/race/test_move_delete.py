"""``resize-delete``: a resized server deleted while its resize is confirmed.

The end state of a delete, judged (a deleted server holds nothing and is
counted nowhere), then what the lab found in the code before its fixes,
one test per finding, each run the way the explorer found it (and each
failing if its fix is undone): compute-1's confirm saving the server
``ACTIVE`` over compute-2's delete (fixed by destroying the record, as
nova does), two confirms dropping the source's claim twice (fixed by
dropping only a stashed old flavor, as nova's drop of
``instance.old_flavor``), and a delete whose confirm failed leaving the
server undeletable (fixed by going on to terminate it, unlike nova).
Last, the corrected cell explored on the placement double: nothing bad
(the ``confirm-fails`` cell, slower, in the functional tests; see the
scenario in doc/source/commands/race.rst).
"""

from unittest import mock

import testscenarios

from shelvefix.backends import fixture
from shelvefix.compute import collaborators
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix import exception
from shelvefix.explorer import model
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix import race
from shelvefix.race import move_cloud
from shelvefix.race import move_outcomes
from shelvefix.race import move_program
from shelvefix.race import outcomes
from shelvefix.race import scenario
from shelvefix.race import scenarios
from shelvefix.race import steps
from shelvefix.race import targets
from shelvefix.tests import base
from shelvefix.tests.unit.compute import test_delete
from shelvefix.tests.unit.race import test_move_outcomes
from shelvefix.tests.unit.race import test_move_program

load_tests = testscenarios.load_tests_apply_scenarios

SRC, DST = move_cloud.SOURCE, move_cloud.DESTINATION
RESOURCES = scenario.FLAVOR.resources


class DeletedServerOutcomeTestCase(test_delete.ResizedCloudTestBase):
    """A server deleted by the library's own operations, then spoilt."""

    def setUp(self):
        super(DeletedServerOutcomeTestCase, self).setUp()
        self.assertTrue(self.cloud.delete())
        self.cloud.serve(DST, timeout=5.0)

    def classify(self):
        return move_outcomes.classify_move(self.cloud,
                                           test_move_outcomes.ended())

    def claim(self, consumer, rp):
        self.assertTrue(self.cloud.client.claim_resources(
            context.get_admin_context(), consumer, scenario.alloc_request(rp),
            scenario.PROJECT, scenario.USER, scenario.CLAIM_VERSION))

    def test_deleted(self):
        self.assertEqual('deleted', self.cloud.saved()['vm_state'])
        self.assertTrue(self.cloud.store.is_deleted(self.uuid))
        self.assertEqual(('ok',), self.classify())

    def test_a_destroyed_record_is_a_deleted_server(self):
        # Whatever its last save says: a confirm's ACTIVE can land between
        # the host's DELETED and the destroy.
        row = dict(self.cloud.saved(), vm_state=vm_states.ACTIVE,
                   task_state=task_states.DELETING)
        self.assertEqual(dict(row, vm_state=vm_states.DELETED,
                              task_state=None),
                         move_outcomes.as_deleted(row))
        with mock.patch.object(self.cloud, 'saved', return_value=row):
            self.assertEqual(('ok',), self.classify())
            self.claim(self.cloud.instance.uuid, self.providers[1])
            self.assertEqual((outcomes.LEAKED,), self.classify())

    def test_the_server_gone_is_not_judged_once_destroyed(self):
        gone = exception.InstanceNotFound(instance_id=self.uuid)
        self.assertEqual(('ok',), move_outcomes.classify_move(
            self.cloud, test_move_outcomes.ended(**{'compute-1': gone})))
        # Any other error is.
        self.assertEqual(('compute-1 error: InstanceNotFound',),
                         outcomes.as_outcome(outcomes.actor_labels(
                             test_move_outcomes.ended(**{'compute-1': gone}),
                             deleted=False)))
        failed = exception.MigrationNotFound(migration_id='m')
        self.assertEqual(('compute-1 error: MigrationNotFound',),
                         move_outcomes.classify_move(
                             self.cloud, test_move_outcomes.ended(
                                 **{'compute-1': failed})))

    def test_a_deleted_server_holding_its_host(self):
        self.claim(self.cloud.instance.uuid, self.providers[1])
        self.assertEqual((outcomes.LEAKED,), self.classify())

    def test_a_deleted_servers_migration_holding_the_source(self):
        self.claim(self.cloud.migration_uuid, self.providers[0])
        self.assertEqual((move_outcomes.MIGRATION_LEAKED,), self.classify())

    def test_a_deleted_server_still_counted(self):
        inst = self.cloud.instance
        self.cloud.rts[DST].tracked_instances[inst.uuid] = (
            DST, dict(inst.flavor.resources))
        self.assertEqual((move_outcomes.DELETED_COUNTED,), self.classify())
        self.cloud.periodic(DST)
        self.assertEqual(('ok',), self.classify())

    def test_a_stopped_migration_still_counted_is_not_judged(self):
        # A failed confirm leaves the source counting the old flavor
        # until its next audit: more than it must, as for a live server.
        self.cloud.rts[SRC].tracked_migrations[self.cloud.instance.uuid] = (
            self.cloud.migration)
        self.assertEqual(('ok',), self.classify())

    def test_only_a_deleted_server(self):
        row = test_move_outcomes.row()
        rt = self.cloud.rts[DST]
        rt.tracked_instances[row['uuid']] = (DST, {})
        self.assertEqual([], move_outcomes.deleted_counted(row, [rt]))
        row['vm_state'] = 'deleted'
        self.assertEqual([move_outcomes.DELETED_COUNTED],
                         move_outcomes.deleted_counted(row, [rt]))


def ended(**errors):
    """Every actor of the scenario done, or the error given for it."""
    return {name: model.ActorResult(None if name in errors else True,
                                    errors.get(name), False)
            for name, _host in scenarios.get_scenario(
                race.RESIZE_DELETE).actors}


class ConfirmRacingTheDeleteTestCase(test_delete.ResizedCloudTestBase):
    """Finding 1: the confirm's last save after compute-2's delete.

    The user's confirm has saved the migration ``confirmed`` (its drop at
    the source) but not the server yet; the delete then finds no
    unconfirmed migration, saves ``DELETING`` and casts
    ``terminate_instance``, and compute-2 deletes the server. The
    confirm's save (``expected_task_state`` None, ``DELETING`` or
    ``SOFT_DELETING``) used to bring it back ``ACTIVE``, holding nothing
    and counted nowhere (``claim wiped``, ``usage untracked``). compute-2
    now destroys the record, as nova does, and the save finds nothing.
    """

    def delete_after_the_drop(self):
        """Run the delete and compute-2's terminate right after the drop."""
        rt = self.cloud.rts[SRC]
        real_drop = rt.drop_move_claim_at_source
        casts = []

        def drop(*args, **kwargs):
            real_drop(*args, **kwargs)
            casts.append(self.cloud.delete())
            self.cloud.serve(DST, timeout=5.0)
        self.useFixture(test_delete.mock_patch(
            rt, 'drop_move_claim_at_source', drop))
        return casts

    def test_the_confirm_finds_the_server_gone(self):
        casts = self.delete_after_the_drop()
        error = self.assertRaises(exception.InstanceNotFound,
                                  self.cloud.api_confirm)
        self.assertEqual([True], casts)
        # The record stays destroyed, DELETED (the confirm's save and its
        # ERROR both found nothing).
        self.assertTrue(self.cloud.store.is_deleted(self.uuid))
        self.assertEqual(vm_states.DELETED, self.cloud.saved()['vm_state'])
        self.assertRaises(exception.InstanceNotFound,
                          instance_obj.Instance.get_by_uuid,
                          self.cloud.store, self.uuid)
        # The finally freed the migration's allocations, the delete the
        # server's; no node counts it.
        self.assertEqual({}, self.cloud.held())
        self.assertEqual({}, self.cloud.held(self.cloud.migration_uuid))
        self.assertEqual({SRC: {}, DST: {}}, self.cloud.usage())
        # Judged as nova ends such a confirm: not bad.
        self.assertEqual(('ok',), move_outcomes.classify_move(
            self.cloud, ended(**{'compute-1': error})))

    def test_a_live_server_not_found_is_judged(self):
        gone = exception.InstanceNotFound(instance_id=self.uuid)
        self.assertFalse(self.cloud.store.is_deleted(self.uuid))
        self.assertIn('compute-1 error: InstanceNotFound',
                      move_outcomes.classify_move(
                          self.cloud, ended(**{'compute-1': gone})))


class TwoConfirmsTestCase(test_delete.ResizedCloudTestBase):
    """Finding 2: the user's confirm and the delete's, one migration.

    Both hold the migration as they read it, ``confirming``, and pass the
    status check; the second used to subtract the old flavor from
    compute-1 again (a negative usage, ``usage untracked``). As nova's,
    it now finds the old flavor no longer stashed and drops nothing.
    """

    def test_the_second_confirm_drops_nothing(self):
        # The migration as the delete read it, once the user's confirm
        # saved it confirming.
        migration = migration_obj.Migration.get_by_uuid(
            self.cloud.migrations, self.cloud.migration_uuid)
        migration.status = migration_obj.CONFIRMING
        self.assertEqual(RESOURCES, self.cloud.usage()[SRC])
        self.assertTrue(self.cloud.api_confirm())
        self.assertEqual({}, self.cloud.usage()[SRC])
        # The delete's confirm, with the copy it read before.
        instance = instance_obj.Instance.get_by_uuid(self.cloud.store,
                                                     self.uuid)
        self.cloud.computes[SRC].confirm_resize(self.cloud.ctx, instance,
                                                migration)
        self.assertEqual({}, self.cloud.usage()[SRC])
        self.assertIn('its old flavor is dropped already', self.log.output)
        self.assertEqual(('ok',), move_outcomes.classify_move(
            self.cloud, ended()))


class DeleteAfterAFailedConfirmTestCase(base.TestCase):
    """Finding 3: the delete's confirm fails (``confirm-fails``).

    nova's API lets the error out: no terminate is cast, the server stays
    ``ERROR`` and ``DELETING``, and every later delete is ignored (one is
    in progress). The library's delete goes on and terminates it.
    """

    def setUp(self):
        super(DeleteAfterAFailedConfirmTestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture())
        self.cloud = move_cloud.MoveCloud(
            self.placement, move_cloud.create_providers(self.placement),
            failing=move_program.FAILING[race.CONFIRM_FAILS])
        self.addCleanup(self.cloud.remove_from_placement)
        self.uuid = self.cloud.instance.uuid

    def test_the_server_is_deleted_anyway(self):
        self.assertTrue(self.cloud.delete())
        self.assertIn('deleting it anyway', self.log.output)
        saved = self.cloud.saved()
        self.assertEqual((vm_states.ERROR, task_states.DELETING),
                         (saved['vm_state'], saved['task_state']))
        # The failed confirm freed the source's allocations (its finally).
        self.assertEqual({}, self.cloud.held(self.cloud.migration_uuid))
        self.assertEqual(migration_obj.ERROR,
                         self.cloud.saved_migration()['status'])
        self.cloud.serve(DST, timeout=5.0)
        self.assertTrue(self.cloud.store.is_deleted(self.uuid))
        self.assertEqual(vm_states.DELETED, self.cloud.saved()['vm_state'])
        self.assertEqual({}, self.cloud.held())
        self.assertEqual(('ok',), move_outcomes.classify_move(
            self.cloud, ended(), (collaborators.DriverFailed,)))

    def test_a_second_delete_is_still_ignored(self):
        self.assertTrue(self.cloud.delete())
        self.assertFalse(self.cloud.delete())


class ResizeDeleteCellsTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = test_move_program.cells(names=(race.RESIZE_DELETE,))

    def setUp(self):
        super(ResizeDeleteCellsTestCase, self).setUp()
        test_move_program.quiet(self)
        self.placement = self.useFixture(fixture.PlacementFixture())

    def test_nothing_bad(self):
        check_clean(self, test_move_program.check_cell(
            self, self.placement, race.RESIZE_DELETE, self.cell))


def check_clean(test, exploration):
    """Every run of a resize-delete cell ok, and the findings' races run.

    The cell with ``confirm-fails`` takes most of a minute: it is explored
    in :mod:`shelvefix.tests.functional.race.test_move_scenarios`.
    """
    test.assertEqual({(outcomes.OK,)}, set(exploration.outcome_counts()))
    results = [run.results for run in exploration.runs]
    # The races of the findings were run: the user's confirm finding the
    # server destroyed, and (the user's confirm refused or done) the
    # delete confirming the resize itself.
    test.assertTrue(any(
        isinstance(r['compute-1'].error, exception.InstanceNotFound)
        for r in results))
    test.assertTrue(any(r['compute-1'].value is False for r in results))
    # Every delete cast terminate: none left the server undeletable.
    test.assertTrue(all(r['delete'].value is True for r in results))


class ResizeDeleteProgramTestCase(base.TestCase):

    def test_actors(self):
        prog = targets.program(None,
                               scenarios.get_scenario(race.RESIZE_DELETE),
                               scenarios.Cell(race.CORRECTED, None))
        self.assertEqual(('compute-1', 'delete', 'compute-2', 'periodic-1'),
                         prog.actors)
        self.assertEqual(
            ((race.CORRECTED, None), (race.CORRECTED, race.CONFIRM_FAILS)),
            scenarios.get_scenario(race.RESIZE_DELETE).variant_faults)


class InstrumentTestCase(base.TestCase):
    """One method mounts the steppers on a cloud; its undo removes them."""

    def test_mounted_and_undone(self):
        placement = self.useFixture(fixture.PlacementFixture())
        cloud = move_cloud.MoveCloud(placement,
                                     move_cloud.create_providers(placement))
        self.addCleanup(cloud.remove_from_placement)
        session = placement.session.session
        before = session.get_adapter(placement.endpoint)
        undo = cloud.instrument(
            mock.Mock(), steps.Names([]), {}, 'wait',
            [host for _actor, host in scenarios.get_scenario(
                race.RESIZE_DELETE).actors])
        self.assertIsInstance(session.get_adapter(placement.endpoint),
                              steps.StepTransport)
        self.assertIsInstance(cloud.store.interceptor, steps.StoreStepper)
        self.assertIsInstance(cloud.migrations.interceptor,
                              steps.StoreStepper)
        self.assertIsInstance(cloud.transport.interceptor, steps.RpcStepper)
        # Three actors on compute-1, one on compute-2.
        self.assertIsInstance(cloud.locks[SRC].interceptor,
                              steps.LockStepper)
        self.assertIsNone(cloud.locks[DST].interceptor)
        undo()
        self.assertIs(before, session.get_adapter(placement.endpoint))
        for target in (cloud.store, cloud.migrations, cloud.transport,
                       cloud.locks[SRC], cloud.locks[DST]):
            self.assertIsNone(target.interceptor)
