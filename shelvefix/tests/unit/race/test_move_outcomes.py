"""Tests for shelvefix.race.move_outcomes: a move's end state, judged.

The functions are tried first on hand-made rows (the server's and its
migration's, as the stores hold them), then :func:`classify_move` on a
:class:`~shelvefix.race.move_cloud.MoveCloud` brought to its end state by
the library's own operations, and with a defect made by hand.
"""

from oslo_utils import uuidutils

from shelvefix.backends import fixture
from shelvefix.compute import collaborators
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix.explorer import model
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import move_cloud
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenario
from shelvefix.tests import base

SRC, DST = move_cloud.SOURCE, move_cloud.DESTINATION
OLD = instance_obj.Flavor(name='old', vcpus=1, memory_mb=512, root_gb=1)
NEW = instance_obj.Flavor(name='new', vcpus=2, memory_mb=1024, root_gb=1)
PROVIDERS = {SRC: 'rp-src', DST: 'rp-dst'}
IN_PROGRESS = [status for status in migration_obj.ALL_STATUSES
               if status not in migration_obj.NOT_IN_PROGRESS]


def row(vm_state=vm_states.RESIZED, task_state=None, host=DST,
        flavor=NEW):
    """A saved instance row."""
    return {'uuid': uuidutils.generate_uuid(), 'vm_state': vm_state,
            'task_state': task_state, 'power_state': 1, 'host': host,
            'node': host, 'project_id': 'p', 'user_id': 'u',
            'flavor': flavor}


def migration(status=migration_obj.FINISHED,
              migration_type=migration_obj.RESIZE, dest=DST, old=OLD,
              new=NEW):
    """A saved migration row from compute-1 to ``dest``."""
    return {'uuid': uuidutils.generate_uuid(), 'instance_uuid': None,
            'source_compute': SRC, 'source_node': SRC, 'dest_compute': dest,
            'dest_node': dest, 'migration_type': migration_type,
            'status': status, 'old_flavor': old, 'new_flavor': new}


class ImpliedUsageTestCase(base.TestCase):

    def usage(self, server, mig):
        return {host: move_outcomes.implied_usage(server, mig, host)
                for host in (SRC, DST)}

    def test_a_resize_in_progress_holds_both_nodes(self):
        # Resized and not yet confirmed or reverted: the destination
        # counts the server, the source the old flavor for the migration.
        for status in IN_PROGRESS:
            self.assertEqual({SRC: OLD.resources, DST: NEW.resources},
                             self.usage(row(), migration(status)), status)

    def test_an_ended_migration_holds_nothing(self):
        for status in migration_obj.NOT_IN_PROGRESS:
            for state in (vm_states.RESIZED, vm_states.ACTIVE):
                self.assertEqual({SRC: {}, DST: NEW.resources},
                                 self.usage(row(vm_state=state),
                                            migration(status)),
                                 (status, state))

    def test_reverted_back_to_the_source(self):
        server = row(vm_state=vm_states.ACTIVE, host=SRC, flavor=OLD)
        self.assertEqual({SRC: OLD.resources, DST: {}}, self.usage(
            server, migration(migration_obj.REVERTED)))
        # Still reverting: the destination's claim is counted too.
        server.update(vm_state=vm_states.RESIZED,
                      task_state=task_states.RESIZE_REVERTING)
        self.assertEqual({SRC: OLD.resources, DST: NEW.resources},
                         self.usage(server,
                                    migration(migration_obj.REVERTING)))

    def test_while_the_source_moves_the_disk(self):
        # Saved on the source still: the new flavor is the migration's on
        # the destination.
        server = row(vm_state=vm_states.ACTIVE,
                     task_state=task_states.RESIZE_MIGRATING, host=SRC,
                     flavor=OLD)
        self.assertEqual({SRC: OLD.resources, DST: NEW.resources},
                         self.usage(server,
                                    migration(migration_obj.MIGRATING)))

    def test_a_server_not_moving_holds_nothing_for_its_migration(self):
        for state, task in ((vm_states.ACTIVE, None),
                            (vm_states.ERROR, None),
                            (vm_states.STOPPED, task_states.DELETING)):
            self.assertEqual(
                {SRC: {}, DST: NEW.resources},
                self.usage(row(vm_state=state, task_state=task),
                           migration(migration_obj.FINISHED)), state)

    def test_states_that_allow_removal(self):
        for state in (vm_states.DELETED, vm_states.SHELVED_OFFLOADED):
            self.assertEqual({SRC: {}, DST: {}}, self.usage(
                row(vm_state=state), migration(migration_obj.FINISHED)))
        # An unshelve spawning it: counted.
        self.assertEqual({SRC: {}, DST: NEW.resources}, self.usage(
            row(vm_state=vm_states.SHELVED_OFFLOADED,
                task_state=task_states.SPAWNING),
            migration(migration_obj.FINISHED)))

    def test_an_evacuation(self):
        rebuilding = row(vm_state=vm_states.ACTIVE,
                         task_state=task_states.REBUILDING, host=SRC,
                         flavor=OLD)
        evacuation = migration(migration_obj.ACCEPTED,
                               migration_obj.EVACUATION, dest=None,
                               new=OLD)
        # Accepted: no destination yet; the source's row is its own.
        self.assertEqual({SRC: OLD.resources, DST: {}},
                         self.usage(rebuilding, evacuation))
        evacuation.update(status=migration_obj.PRE_MIGRATING,
                          dest_compute=DST, dest_node=DST)
        self.assertEqual({SRC: OLD.resources, DST: OLD.resources},
                         self.usage(rebuilding, evacuation))
        done = row(vm_state=vm_states.ACTIVE, host=DST, flavor=OLD)
        for status in (migration_obj.DONE, migration_obj.COMPLETED,
                       migration_obj.FAILED):
            evacuation['status'] = status
            self.assertEqual({SRC: {}, DST: OLD.resources},
                             self.usage(done, evacuation), status)

    def test_another_host(self):
        self.assertEqual({}, move_outcomes.implied_usage(
            row(), migration(), 'compute-3'))


class UnderCountedTestCase(base.TestCase):

    def test_less_is_flagged(self):
        under = move_outcomes.under_counted
        implied = {'VCPU': 2, 'MEMORY_MB': 1024}
        self.assertFalse(under(implied, dict(implied)))
        self.assertFalse(under({}, {}))
        self.assertTrue(under(implied, {'VCPU': 1, 'MEMORY_MB': 1024}))
        # A resource missing altogether.
        self.assertTrue(under(implied, {'VCPU': 2}))
        self.assertTrue(under(implied, {}))
        # A flavor subtracted twice: negative, less than nothing.
        self.assertTrue(under({}, {'VCPU': -1}))
        self.assertTrue(under(implied, {'VCPU': 2, 'MEMORY_MB': 1024,
                                        'DISK_GB': -1}))

    def test_more_is_not(self):
        # Healed by the next audit: not judged.
        under = move_outcomes.under_counted
        self.assertFalse(under({'VCPU': 1}, {'VCPU': 3}))
        self.assertFalse(under({}, {'VCPU': 1, 'MEMORY_MB': 512}))
        self.assertFalse(under({'VCPU': 1}, {'VCPU': 1, 'DISK_GB': 1}))


class MigrationLabelsTestCase(base.TestCase):

    def labels(self, mig, held, server=None):
        return move_outcomes.migration_labels(server or row(), mig, held,
                                              PROVIDERS)

    def test_holding_the_source_while_the_resize_is_in_progress(self):
        for status in IN_PROGRESS:
            self.assertEqual([], self.labels(
                migration(status), {'rp-src': OLD.resources}), status)
        reverting = row(task_state=task_states.RESIZE_REVERTING)
        self.assertEqual([], self.labels(
            migration(migration_obj.REVERTING), {'rp-src': {}}, reverting))

    def test_holding_nothing_is_always_fine(self):
        for status in migration_obj.ALL_STATUSES:
            for kind in migration_obj.MIGRATION_TYPES:
                self.assertEqual([], self.labels(migration(status, kind),
                                                 {}))

    def test_holding_anything_after_it_ended(self):
        for status in (migration_obj.CONFIRMED, migration_obj.REVERTED,
                       migration_obj.ERROR):
            for state in (vm_states.RESIZED, vm_states.ACTIVE):
                self.assertEqual(
                    [move_outcomes.MIGRATION_LEAKED],
                    self.labels(migration(status), {'rp-src': {}},
                                row(vm_state=state)), (status, state))

    def test_holding_the_destination_or_for_a_server_not_moving(self):
        self.assertEqual([move_outcomes.MIGRATION_LEAKED], self.labels(
            migration(), {'rp-dst': {}}))
        self.assertEqual([move_outcomes.MIGRATION_LEAKED], self.labels(
            migration(), {'rp-src': {}, 'rp-dst': {}}))
        # A confirm that failed: in ERROR, the migration still confirming.
        self.assertEqual([move_outcomes.MIGRATION_LEAKED], self.labels(
            migration(migration_obj.CONFIRMING), {'rp-src': {}},
            row(vm_state=vm_states.ERROR)))

    def test_an_evacuation_never_holds_anything(self):
        rebuilding = row(vm_state=vm_states.ACTIVE,
                         task_state=task_states.REBUILDING, host=SRC)
        for status in migration_obj.ALL_STATUSES:
            self.assertEqual(
                [move_outcomes.MIGRATION_LEAKED],
                self.labels(migration(status, migration_obj.EVACUATION),
                            {'rp-src': {}}, rebuilding), status)


class AwaitsSourceCleanupTestCase(base.TestCase):

    def test_only_a_done_evacuation_on_its_destination(self):
        awaits = move_outcomes.awaits_source_cleanup
        on_dst = row(vm_state=vm_states.ACTIVE, host=DST)
        evacuation = migration(migration_obj.DONE, migration_obj.EVACUATION)
        self.assertTrue(awaits(on_dst, evacuation, PROVIDERS))
        self.assertFalse(awaits(row(vm_state=vm_states.ACTIVE, host=SRC),
                                evacuation, PROVIDERS))
        for status in migration_obj.ALL_STATUSES:
            if status != migration_obj.DONE:
                self.assertFalse(awaits(
                    on_dst, migration(status, migration_obj.EVACUATION),
                    PROVIDERS), status)
        for kind in (migration_obj.RESIZE, migration_obj.MIGRATION):
            self.assertFalse(awaits(on_dst, migration(migration_obj.DONE,
                                                      kind), PROVIDERS))


class StaleHostsTestCase(base.TestCase):
    """Where the scheduler's instance info may place a server."""

    def test_on_its_host_and_both_ends_of_a_move_in_progress(self):
        stale = move_outcomes.stale_hosts
        resized = row()
        both = {SRC: {resized['uuid']}, DST: {resized['uuid']}}
        self.assertEqual([], stale(resized, [migration()], both))
        # Confirmed: the server is on compute-2 only.
        confirmed = dict(resized, vm_state=vm_states.ACTIVE)
        self.assertEqual([SRC], stale(
            confirmed, [migration(migration_obj.CONFIRMED)], both))
        self.assertEqual([], stale(
            confirmed, [migration(migration_obj.CONFIRMED)],
            {SRC: set(), DST: {resized['uuid']}}))
        # Reverted: on compute-1 only.
        reverted = dict(confirmed, host=SRC, node=SRC, flavor=OLD)
        self.assertEqual([DST], stale(
            reverted, [migration(migration_obj.REVERTED)], both))
        # A move in progress of a server no longer moving proves nothing.
        self.assertEqual([SRC], stale(confirmed, [migration()], both))

    def test_a_deleted_server_is_nowhere(self):
        stale = move_outcomes.stale_hosts
        gone = row(vm_state=vm_states.DELETED)
        info = {DST: {gone['uuid']}, SRC: {'another'}}
        self.assertEqual([DST], stale(gone, [], info))
        destroyed = row(vm_state=vm_states.ACTIVE)
        self.assertEqual([DST], stale(destroyed, [],
                                      {DST: {destroyed['uuid']}},
                                      deleted=True))
        self.assertEqual([], stale(destroyed, [], {DST: {'another'}},
                                   deleted=True))


def ended(**errors):
    """Every actor's result: done, or the error given for it."""
    names = ('compute-1', 'compute-2', 'periodic-1', 'periodic-2',
             'conductor')
    return {name: model.ActorResult(None if name in errors else True,
                                    errors.get(name), False)
            for name in names}


class ClassifyMoveTestCase(base.TestCase):
    """On a cloud brought to its end by the library's own operations."""

    def setUp(self):
        super(ClassifyMoveTestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture())
        self.providers = move_cloud.create_providers(self.placement)
        self.src, self.dst = self.providers

    def cloud(self, **kwargs):
        cloud = move_cloud.MoveCloud(self.placement, self.providers,
                                     **kwargs)
        self.addCleanup(cloud.remove_from_placement)
        return cloud

    def classify(self, cloud, injected=(), **errors):
        return move_outcomes.classify_move(cloud, ended(**errors), injected)

    def test_resized_not_confirmed(self):
        cloud = self.cloud()
        self.assertEqual({self.src}, set(cloud.held(cloud.migration_uuid)))
        self.assertEqual({self.dst}, set(cloud.held()))
        self.assertEqual(('ok',), self.classify(cloud))

    def test_confirmed(self):
        cloud = self.cloud()
        cloud.confirm()
        self.assertEqual(migration_obj.CONFIRMED,
                         cloud.saved_migration()['status'])
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        self.assertEqual(('ok',), self.classify(cloud))

    def test_a_leak_made_by_hand(self):
        cloud = self.cloud()
        cloud.confirm()
        # The migration given the source back after it was confirmed.
        self.assertTrue(cloud.client.claim_resources(
            context.get_admin_context(), cloud.migration_uuid,
            scenario.alloc_request(self.src), scenario.PROJECT,
            scenario.USER, scenario.CLAIM_VERSION))
        self.assertEqual((move_outcomes.MIGRATION_LEAKED,),
                         self.classify(cloud))

    def test_usage_lost_by_hand(self):
        cloud = self.cloud()
        cloud.confirm()
        cloud.rts[DST].compute_node_usage[DST] = {}
        self.assertEqual((outcomes.USAGE_UNTRACKED,), self.classify(cloud))
        # A flavor subtracted once more on the source.
        cloud.periodic(DST)
        cloud.rts[SRC]._update_usage(scenario.FLAVOR.resources, SRC,
                                     sign=-1)
        self.assertEqual((outcomes.USAGE_UNTRACKED,), self.classify(cloud))

    def test_reverted(self):
        cloud = self.cloud()
        cloud.revert()
        cloud.serve(SRC, timeout=5.0)
        self.assertEqual(migration_obj.REVERTED,
                         cloud.saved_migration()['status'])
        self.assertEqual(SRC, cloud.saved()['host'])
        self.assertEqual({self.src}, set(cloud.held()))
        self.assertEqual(('ok',), self.classify(cloud))

    def test_a_failed_confirm_as_a_fault(self):
        cloud = self.cloud(failing={SRC: ('confirm_migration',)})
        error = self.assertRaises(collaborators.DriverFailed, cloud.confirm)
        self.assertEqual(('ok',), self.classify(
            cloud, injected=(collaborators.DriverFailed,),
            **{'compute-1': error}))
        # Not injected: judged as the actor's error.
        self.assertEqual(('compute-1 error: DriverFailed',),
                         self.classify(cloud, **{'compute-1': error}))

    def test_an_evacuation_awaiting_its_source(self):
        cloud = self.cloud(start=move_cloud.EVACUATING)
        # Nothing done yet: the evacuation's task is left set.
        self.assertEqual((outcomes.TASK_STUCK,), self.classify(cloud))
        cloud.schedule_evacuation()
        cloud.serve(DST, timeout=5.0)
        self.assertEqual(migration_obj.DONE,
                         cloud.saved_migration()['status'])
        # The server still holds the source: removed by its next start.
        self.assertEqual({self.src, self.dst}, set(cloud.held()))
        self.assertEqual(('ok',), self.classify(cloud))
        cloud.source_starts()
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])
        self.assertEqual({self.dst}, set(cloud.held()))
        self.assertEqual(('ok',), self.classify(cloud))

    def test_an_evacuation_whose_source_cleaned_up_too_soon(self):
        cloud = self.cloud(start=move_cloud.EVACUATING)
        cloud.schedule_evacuation()
        # Completed by hand while the destination has not rebuilt yet.
        mig = migration_obj.Migration.get_by_uuid(cloud.migrations,
                                                  cloud.migration_uuid)
        mig.status = migration_obj.COMPLETED
        mig.save()
        self.assertIn(outcomes.LEAKED, self.classify(cloud))
