"""Tests for the resource tracker's move claims, drops and migration audit.

Two trackers share one instance store and one migration store: ``src``
(node ``src-node``), where the server was, and ``dst`` (node
``dst-node``), where it moves. The flavors differ so that what a node
counts says which flavor it counts.
"""

import threading
from unittest import mock

from oslo_utils import uuidutils

from shelvefix.compute import move_claims
from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import variants
from shelvefix.tests import base
from shelvefix import utils

OLD = instance_obj.Flavor(name='old', vcpus=1, memory_mb=512, root_gb=5)
NEW = instance_obj.Flavor(name='new', vcpus=2, memory_mb=1024, root_gb=10)
SEMAPHORE = resource_tracker.COMPUTE_RESOURCE_SEMAPHORE


def negated(resources):
    return {rc: -amount for rc, amount in resources.items()}


class MoveClaimsTestBase(base.TestCase):

    def setUp(self):
        super(MoveClaimsTestBase, self).setUp()
        self.store = instance_obj.InstanceStore()
        self.migrations = migration_obj.MigrationStore()
        self.client = mock.Mock()

    def tracker(self, host, cls=resource_tracker.ResourceTracker, **kw):
        return cls(host, reportclient=self.client, store=self.store,
                   migration_store=self.migrations, **kw)

    def instance(self, host='src', node='src-node', flavor=OLD,
                 vm_state=vm_states.ACTIVE, task_state=None):
        return instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(), host=host, node=node,
            flavor=flavor, vm_state=vm_state, task_state=task_state)

    def migration(self, inst, status=migration_obj.PRE_MIGRATING,
                  dest=('dst', 'dst-node'), source=('src', 'src-node'),
                  migration_type=migration_obj.RESIZE, old=OLD, new=NEW):
        return migration_obj.Migration.create(
            self.migrations, uuidutils.generate_uuid(),
            instance_uuid=inst.uuid, source_compute=source[0],
            source_node=source[1], dest_compute=dest[0], dest_node=dest[1],
            migration_type=migration_type, status=status, old_flavor=old,
            new_flavor=new)

    def set_saved(self, inst, **fields):
        """Change the saved row behind ``inst``'s back."""
        self.store.update(inst.uuid, fields)

    def audit(self, rt, node):
        rt.update_available_resource(self.context, node)


class InstanceInResizeStateTestCase(base.TestCase):

    def test_states(self):
        def in_resize(vm_state, task_state=None):
            inst = instance_obj.Instance(instance_obj.InstanceStore(),
                                         uuidutils.generate_uuid(),
                                         vm_state=vm_state,
                                         task_state=task_state)
            return move_claims.instance_in_resize_state(inst)

        self.assertTrue(in_resize(vm_states.RESIZED))
        self.assertTrue(in_resize(vm_states.RESIZED,
                                  task_states.RESIZE_REVERTING))
        for task in (task_states.resizing_states +
                     task_states.rebuild_states):
            self.assertTrue(in_resize(vm_states.ACTIVE, task))
            self.assertTrue(in_resize(vm_states.STOPPED, task))
            self.assertFalse(in_resize(vm_states.ERROR, task))
        self.assertFalse(in_resize(vm_states.ACTIVE))
        self.assertFalse(in_resize(vm_states.ACTIVE,
                                   task_states.RESIZE_REVERTING))
        self.assertFalse(in_resize(vm_states.ERROR))
        self.assertFalse(in_resize(vm_states.SHELVED_OFFLOADED,
                                   task_states.SPAWNING))


class ClaimTestCase(MoveClaimsTestBase):

    def setUp(self):
        super(ClaimTestCase, self).setUp()
        self.dst = self.tracker('dst')
        self.inst = self.instance(task_state=task_states.RESIZE_PREP)
        # As the conductor records it: no destination yet.
        self.mig = self.migration(self.inst, dest=(None, None))

    def claim(self):
        return self.dst.resize_claim(self.context, self.inst, NEW,
                                     'dst-node', self.mig, {})

    def test_resize_claim_counts_the_new_flavor_and_tracks_the_migration(
            self):
        claim = self.claim()
        self.assertIsInstance(claim, move_claims.MoveClaim)
        self.assertEqual(NEW, claim.flavor)
        self.assertEqual(NEW.resources, self.dst.usage('dst-node'))
        self.assertEqual({}, self.dst.usage('src-node'))
        self.assertIs(self.mig, self.dst.tracked_migrations[self.inst.uuid])
        # The instance is not the node's yet.
        self.assertEqual([], self.dst.tracked_on('dst-node'))
        saved = self.migrations.peek(self.mig.uuid)
        self.assertEqual(('dst', 'dst-node', migration_obj.PRE_MIGRATING),
                         (saved['dest_compute'], saved['dest_node'],
                          saved['status']))
        self.assertEqual('src', self.store.peek(self.inst.uuid)['host'])

    def test_resize_claim_takes_the_lock(self):
        seen = []
        locks = utils.Locks()
        locks.interceptor = lambda op, name, held: seen.append((op, name))
        dst = self.tracker('dst', locks=locks)
        dst.resize_claim(self.context, self.inst, NEW, 'dst-node', self.mig,
                         {})
        self.assertEqual([('acquire', SEMAPHORE), ('release', SEMAPHORE)],
                         seen)

    def test_abort_subtracts_the_claimed_flavor(self):
        claim = self.claim()
        claim.abort()
        self.assertEqual({}, self.dst.usage('dst-node'))
        self.assertNotIn(self.inst.uuid, self.dst.tracked_migrations)
        self.assertIn('Aborting move claim of instance %s on dst-node'
                      % self.inst.uuid, self.log.output)

    def test_failure_in_the_with_block_aborts(self):
        def move():
            with self.claim():
                raise ValueError('boom')
        self.assertRaises(ValueError, move)
        self.assertEqual({}, self.dst.usage('dst-node'))
        self.assertNotIn(self.inst.uuid, self.dst.tracked_migrations)

    def test_with_block_that_succeeds_keeps_the_claim(self):
        with self.claim():
            pass
        self.assertEqual(NEW.resources, self.dst.usage('dst-node'))

    def test_rebuild_claim_counts_the_instance_flavor(self):
        evac = self.migration(self.inst, dest=(None, None),
                              status=migration_obj.ACCEPTED,
                              migration_type=migration_obj.EVACUATION,
                              new=OLD)
        claim = self.dst.rebuild_claim(self.context, self.inst, 'dst-node',
                                       {}, migration=evac)
        self.assertEqual(OLD, claim.flavor)
        self.assertEqual(OLD.resources, self.dst.usage('dst-node'))
        self.assertIs(evac, self.dst.tracked_migrations[self.inst.uuid])
        saved = self.migrations.peek(evac.uuid)
        self.assertEqual(('dst', 'dst-node', migration_obj.PRE_MIGRATING),
                         (saved['dest_compute'], saved['dest_node'],
                          saved['status']))

    def test_a_claim_needs_the_migration(self):
        self.assertRaises(exception.Invalid, self.dst.rebuild_claim,
                          self.context, self.inst, 'dst-node', {})
        self.assertRaises(exception.Invalid, self.dst.resize_claim,
                          self.context, self.inst, NEW, 'dst-node', None, {})
        self.assertEqual({}, self.dst.usage('dst-node'))
        self.assertEqual({}, self.dst.tracked_migrations)

    def test_drop_move_claim_without_flavor_drops_the_tracked_one(self):
        self.claim()
        self.dst.drop_move_claim(self.context, self.inst, 'dst-node')
        self.assertEqual({}, self.dst.usage('dst-node'))
        self.assertNotIn(self.inst.uuid, self.dst.tracked_migrations)
        # Nothing tracked, no flavor: nothing subtracted.
        self.dst.drop_move_claim(self.context, self.inst, 'dst-node')
        self.assertEqual({}, self.dst.usage('dst-node'))


class AuditTestCase(MoveClaimsTestBase):
    """``update_available_resource`` counting the migrations in progress."""

    IN_PROGRESS = (migration_obj.PRE_MIGRATING, migration_obj.MIGRATING,
                   migration_obj.POST_MIGRATING, migration_obj.FINISHED,
                   migration_obj.CONFIRMING, migration_obj.REVERTING,
                   migration_obj.ACCEPTED)

    def test_incoming_counted_while_in_progress(self):
        for status in self.IN_PROGRESS:
            inst = self.instance(task_state=task_states.RESIZE_MIGRATING)
            mig = self.migration(inst, status=status)
            dst = self.tracker('dst')
            self.audit(dst, 'dst-node')
            self.assertEqual(NEW.resources, dst.usage('dst-node'), status)
            self.assertEqual(mig.uuid,
                             dst.tracked_migrations[inst.uuid].uuid)
            self.assertEqual([], dst.tracked_on('dst-node'))
            mig.status = migration_obj.ERROR
            mig.save()

    def test_ended_migrations_are_not_counted(self):
        for status in migration_obj.NOT_IN_PROGRESS:
            inst = self.instance(task_state=task_states.RESIZE_MIGRATING)
            self.migration(inst, status=status)
            inst_out = self.instance(host='dst', node='dst-node',
                                     vm_state=vm_states.RESIZED, flavor=NEW)
            self.migration(inst_out, status=status)
            dst, src = self.tracker('dst'), self.tracker('src')
            self.audit(dst, 'dst-node')
            self.audit(src, 'src-node')
            # src counts the first instance, saved on it; dst the second.
            self.assertEqual(OLD.resources, src.usage('src-node'), status)
            self.assertEqual(NEW.resources, dst.usage('dst-node'), status)
            self.assertEqual({}, src.tracked_migrations)
            self.assertEqual({}, dst.tracked_migrations)
            for i in (inst, inst_out):
                self.set_saved(i, vm_state=vm_states.DELETED)

    def test_instance_not_in_a_resize_state_is_not_counted(self):
        inst = self.instance()
        self.migration(inst, status=migration_obj.MIGRATING)
        dst = self.tracker('dst')
        self.audit(dst, 'dst-node')
        self.assertEqual({}, dst.usage('dst-node'))
        self.assertEqual({}, dst.tracked_migrations)

    def test_outbound_counted_with_the_old_flavor(self):
        inst = self.instance(host='dst', node='dst-node', flavor=NEW,
                             vm_state=vm_states.RESIZED)
        mig = self.migration(inst, status=migration_obj.FINISHED)
        src = self.tracker('src')
        self.audit(src, 'src-node')
        self.assertEqual(OLD.resources, src.usage('src-node'))
        self.assertEqual(mig.uuid, src.tracked_migrations[inst.uuid].uuid)
        self.assertEqual([], src.tracked_on('src-node'))

    def test_no_double_count_of_an_instance_on_the_node(self):
        inst = self.instance(host='dst', node='dst-node', flavor=NEW,
                             vm_state=vm_states.RESIZED)
        self.migration(inst, status=migration_obj.FINISHED)
        dst = self.tracker('dst')
        for _ in range(2):
            self.audit(dst, 'dst-node')
            self.assertEqual(NEW.resources, dst.usage('dst-node'))
            self.assertEqual([inst.uuid], dst.tracked_on('dst-node'))
            self.assertEqual({}, dst.tracked_migrations)

    def test_no_double_count_of_an_outbound_one_still_on_the_source(self):
        # resize_instance has not saved it on the destination yet.
        inst = self.instance(task_state=task_states.RESIZE_MIGRATING)
        self.migration(inst, status=migration_obj.MIGRATING)
        src = self.tracker('src')
        self.audit(src, 'src-node')
        self.assertEqual(OLD.resources, src.usage('src-node'))
        self.assertEqual({}, src.tracked_migrations)

    def test_resize_on_one_node_holds_the_other_flavor(self):
        inst = self.instance(host='h', node='n', flavor=NEW,
                             vm_state=vm_states.RESIZED)
        self.migration(inst, status=migration_obj.FINISHED,
                       source=('h', 'n'), dest=('h', 'n'))
        rt = self.tracker('h')
        self.audit(rt, 'n')
        self.assertEqual({rc: OLD.resources[rc] + NEW.resources[rc]
                          for rc in NEW.resources}, rt.usage('n'))

    def test_migration_of_another_node_is_not_counted(self):
        inst = self.instance(task_state=task_states.RESIZE_MIGRATING)
        self.migration(inst, status=migration_obj.MIGRATING,
                       dest=('dst', 'other-node'))
        dst = self.tracker('dst')
        self.audit(dst, 'dst-node')
        self.assertEqual({}, dst.usage('dst-node'))

    def test_vanished_instance_is_skipped(self):
        ghost = instance_obj.Instance(self.store, uuidutils.generate_uuid())
        self.migration(ghost, status=migration_obj.MIGRATING)
        inst = self.instance(task_state=task_states.RESIZE_MIGRATING)
        self.migration(inst, status=migration_obj.MIGRATING)
        dst = self.tracker('dst')
        self.audit(dst, 'dst-node')
        self.assertEqual(NEW.resources, dst.usage('dst-node'))
        self.assertEqual([inst.uuid], list(dst.tracked_migrations))

    def test_audit_forgets_migrations_that_ended(self):
        inst = self.instance(task_state=task_states.RESIZE_MIGRATING)
        mig = self.migration(inst, status=migration_obj.MIGRATING)
        dst = self.tracker('dst')
        self.audit(dst, 'dst-node')
        mig.status = migration_obj.ERROR
        mig.save()
        self.audit(dst, 'dst-node')
        self.assertEqual({}, dst.usage('dst-node'))
        self.assertEqual({}, dst.tracked_migrations)


class NewestMigrationTestCase(MoveClaimsTestBase):
    """Of several migrations of one instance, the audit counts the newest.

    A stale migration (here: a resize to dst, never confirmed, with the
    BIG flavor) is still in progress when the instance moves to dst again
    with NEW; counted too, dst would count the instance twice.
    """

    BIG = instance_obj.Flavor(name='big', vcpus=8, memory_mb=8192,
                              root_gb=80)
    # Fixed uuids, so that each order of the rows can be tried: the store
    # and the audit read them in uuid order.
    LOW = '00000000-0000-4000-8000-000000000000'
    HIGH = 'ffffffff-ffff-4fff-bfff-ffffffffffff'

    def setUp(self):
        super(NewestMigrationTestCase, self).setUp()
        self.inst = self.instance(task_state=task_states.RESIZE_MIGRATING)
        self.dst = self.tracker('dst')

    def make(self, uuid, new, status=migration_obj.MIGRATING):
        return migration_obj.Migration.create(
            self.migrations, uuid, instance_uuid=self.inst.uuid,
            source_compute='src', source_node='src-node',
            dest_compute='dst', dest_node='dst-node',
            migration_type=migration_obj.RESIZE, status=status,
            old_flavor=OLD, new_flavor=new)

    def assertCounts(self, migration):
        self.audit(self.dst, 'dst-node')
        self.assertEqual(migration.new_flavor.resources,
                         self.dst.usage('dst-node'))
        self.assertEqual({self.inst.uuid: migration.uuid},
                         {uuid: m.uuid for uuid, m in
                          self.dst.tracked_migrations.items()})

    def test_the_newest_created_counts_in_either_order(self):
        for stale_uuid, current_uuid in ((self.LOW, self.HIGH),
                                         (self.HIGH, self.LOW)):
            self.migrations = migration_obj.MigrationStore()
            self.dst = self.tracker('dst')
            self.make(stale_uuid, self.BIG, status=migration_obj.FINISHED)
            current = self.make(current_uuid, NEW)
            self.assertCounts(current)

    def test_the_last_updated_counts(self):
        first = self.make(self.LOW, self.BIG)
        second = self.make(self.HIGH, NEW)
        self.assertCounts(second)
        # Saved after the second one was created: now the newest.
        first.status = migration_obj.POST_MIGRATING
        first.save()
        self.assertCounts(first)
        second.status = migration_obj.FINISHED
        second.save()
        self.assertCounts(second)

    def test_a_drop_after_the_audit_leaves_nothing_counted(self):
        self.make(self.LOW, self.BIG, status=migration_obj.FINISHED)
        current = self.make(self.HIGH, NEW)
        self.audit(self.dst, 'dst-node')
        self.dst.drop_move_claim(self.context, self.inst, 'dst-node')
        self.assertEqual({}, self.dst.usage('dst-node'))
        self.assertEqual(migration_obj.MIGRATING,
                         self.migrations.peek(current.uuid)['status'])

    def test_each_instance_is_read_once(self):
        self.make(self.LOW, self.BIG)
        self.make(self.HIGH, NEW)
        other = self.instance(task_state=task_states.RESIZE_MIGRATING)
        self.migration(other, status=migration_obj.MIGRATING)
        reads = []

        def interceptor(op, uuid, guard=None):
            reads.append((op, uuid))
            return mock.Mock()
        self.store.interceptor = interceptor
        self.audit(self.dst, 'dst-node')
        self.assertEqual(
            [('list', None)] + sorted([('get', self.inst.uuid),
                                       ('get', other.uuid)]),
            [reads[0]] + sorted(reads[1:]))
        self.assertEqual(
            {rc: NEW.resources[rc] * 2 for rc in NEW.resources},
            self.dst.usage('dst-node'))


class DropTestCase(MoveClaimsTestBase):
    """Ending a move: status and drop in one critical section (1879878)."""

    def resized(self, src_cls=resource_tracker.ResourceTracker):
        """A resize to dst, finished; both nodes audited since."""
        self.inst = self.instance(host='dst', node='dst-node', flavor=NEW,
                                  vm_state=vm_states.RESIZED)
        self.mig = self.migration(self.inst, status=migration_obj.FINISHED)
        self.src = self.tracker('src', cls=src_cls)
        self.dst = self.tracker('dst')
        self.audit(self.src, 'src-node')
        self.audit(self.dst, 'dst-node')
        self.assertEqual(OLD.resources, self.src.usage('src-node'))
        self.assertEqual(NEW.resources, self.dst.usage('dst-node'))

    def watch_saves(self, rt):
        """``[(saved status, tracker lock held)]`` of each migration save."""
        seen = []
        self.migrations.observers.append(
            lambda uuid, row: seen.append((row['status'],
                                           rt.locks.held(SEMAPHORE))))
        return seen

    def test_drop_at_source_confirms_and_subtracts_under_the_lock(self):
        self.resized()
        seen = self.watch_saves(self.src)
        self.src.drop_move_claim_at_source(self.context, self.inst, self.mig)
        self.assertEqual([(migration_obj.CONFIRMED, True)], seen)
        self.assertEqual(migration_obj.CONFIRMED,
                         self.migrations.peek(self.mig.uuid)['status'])
        self.assertEqual({}, self.src.usage('src-node'))
        self.assertEqual({}, self.src.tracked_migrations)
        self.assertFalse(self.src.locks.held(SEMAPHORE))
        # The destination keeps counting the server.
        self.assertEqual(NEW.resources, self.dst.usage('dst-node'))

    def test_a_second_drop_at_source_subtracts_nothing(self):
        # Two confirms of one migration (the user's and the delete's): the
        # second reads the server the first saved ACTIVE, as nova's reads
        # the instance whose stashed old_flavor the first cleared.
        self.resized()
        second = self.mig.obj_clone()
        self.src.drop_move_claim_at_source(self.context, self.inst, self.mig)
        self.inst.vm_state = vm_states.ACTIVE
        self.inst.save()
        self.assertIsNone(move_claims.stashed_old_flavor(self.inst, second))
        self.src.drop_move_claim_at_source(self.context, self.inst, second)
        self.assertEqual({}, self.src.usage('src-node'))
        self.assertIn('its old flavor is dropped already', self.log.output)
        # Even after an audit in between (it counts nothing any more).
        self.audit(self.src, 'src-node')
        self.src.drop_move_claim_at_source(self.context, self.inst, second)
        self.assertEqual({}, self.src.usage('src-node'))

    def test_the_old_flavor_is_stashed_while_resized(self):
        self.resized()
        self.assertEqual(OLD, move_claims.stashed_old_flavor(self.inst,
                                                             self.mig))
        for state in (vm_states.ACTIVE, vm_states.STOPPED, vm_states.ERROR):
            self.inst.vm_state = state
            self.assertIsNone(move_claims.stashed_old_flavor(self.inst,
                                                             self.mig))

    def test_drop_at_dest_reverts_and_subtracts_under_the_lock(self):
        self.resized()
        seen = self.watch_saves(self.dst)
        self.dst.drop_move_claim_at_dest(self.context, self.inst, self.mig)
        self.assertEqual([(migration_obj.REVERTED, True)], seen)
        self.assertEqual(migration_obj.REVERTED,
                         self.migrations.peek(self.mig.uuid)['status'])
        self.assertEqual({}, self.dst.usage('dst-node'))
        self.assertEqual([], self.dst.tracked_on('dst-node'))
        self.assertEqual(OLD.resources, self.src.usage('src-node'))

    def test_pre_1879878_saves_the_status_outside_the_lock(self):
        self.resized(src_cls=variants.status_outside_lock_tracker())
        seen = self.watch_saves(self.src)
        self.src.drop_move_claim_at_source(self.context, self.inst, self.mig)
        self.assertEqual([(migration_obj.CONFIRMED, False)], seen)

    def audit_after_save(self, rt, migration, node):
        """Start an audit of ``node`` right after ``migration`` is saved.

        The audit runs in a thread, as the periodic task does: while the
        saver holds the tracker's lock it waits, otherwise it runs to its
        end before the saver goes on. Returns the threads and whether
        each was still waiting once the saver went on.
        """
        real_save = migration.save
        started = []

        def save(*args, **kwargs):
            real_save(*args, **kwargs)
            thread = threading.Thread(target=self.audit, args=(rt, node))
            thread.start()
            locked = rt.locks.held(SEMAPHORE)
            thread.join(0.1 if locked else 30)
            started.append((thread, thread.is_alive()))
        # Migration only lets its fields be set the ordinary way.
        object.__setattr__(migration, 'save', save)
        return started

    def test_audit_waits_for_the_drop_at_source(self):
        self.resized()
        started = self.audit_after_save(self.src, self.mig, 'src-node')
        self.src.drop_move_claim_at_source(self.context, self.inst, self.mig)
        [(thread, waited)] = started
        thread.join(30)
        self.assertFalse(thread.is_alive())
        self.assertTrue(waited)
        self.assertEqual({}, self.src.usage('src-node'))

    def test_pre_1879878_audit_in_between_makes_the_usage_negative(self):
        self.resized(src_cls=variants.status_outside_lock_tracker())
        started = self.audit_after_save(self.src, self.mig, 'src-node')
        self.src.drop_move_claim_at_source(self.context, self.inst, self.mig)
        [(thread, waited)] = started
        self.assertFalse(waited)
        # The audit no longer counted the confirmed migration; the drop
        # then subtracted the old flavor once more.
        self.assertEqual(negated(OLD.resources), self.src.usage('src-node'))


class RevertAtSourceTestCase(MoveClaimsTestBase):
    """``revert_migration_at_source``: counted once, whatever the audits."""

    def setUp(self):
        super(RevertAtSourceTestCase, self).setUp()
        self.src = self.tracker('src')
        self.inst = self.instance(host='dst', node='dst-node', flavor=NEW,
                                  vm_state=vm_states.RESIZED,
                                  task_state=task_states.RESIZE_REVERTING)
        self.mig = self.migration(self.inst, status=migration_obj.REVERTING)

    def reverted_by_dest(self):
        self.mig.status = migration_obj.REVERTED
        self.mig.save()

    def revert(self):
        self.src.revert_migration_at_source(self.context, self.inst,
                                            self.mig)

    def assertCountedOnce(self):
        self.assertEqual(OLD.resources, self.src.usage('src-node'))
        self.assertEqual([self.inst.uuid], self.src.tracked_on('src-node'))
        self.assertEqual({}, self.src.tracked_migrations)
        saved = self.store.peek(self.inst.uuid)
        self.assertEqual(('src', 'src-node', OLD),
                         (saved['host'], saved['node'], saved['flavor']))
        # And the next audit agrees.
        self.audit(self.src, 'src-node')
        self.assertEqual(OLD.resources, self.src.usage('src-node'))

    def test_audit_still_counting_the_migration(self):
        self.audit(self.src, 'src-node')
        self.assertIn(self.inst.uuid, self.src.tracked_migrations)
        self.reverted_by_dest()
        self.revert()
        self.assertCountedOnce()

    def test_audit_that_forgot_the_migration(self):
        self.reverted_by_dest()
        self.audit(self.src, 'src-node')
        self.assertEqual({}, self.src.usage('src-node'))
        self.assertEqual({}, self.src.tracked_migrations)
        self.revert()
        self.assertCountedOnce()

    def test_source_still_counting_the_instance(self):
        # Counted as an instance before the resize; no audit since.
        self.src.tracked_instances[self.inst.uuid] = (
            'src-node', dict(OLD.resources))
        self.src._update_usage(OLD.resources, 'src-node')
        self.reverted_by_dest()
        self.revert()
        self.assertCountedOnce()

    def test_saved_under_the_lock(self):
        seen = []
        self.store.observers.append(
            lambda uuid, row: seen.append((row['host'],
                                           self.src.locks.held(SEMAPHORE))))
        self.reverted_by_dest()
        self.revert()
        self.assertEqual([('src', True)], seen)

    def test_unexpected_task_state_counts_nothing(self):
        self.set_saved(self.inst, task_state=None)
        self.reverted_by_dest()
        self.assertRaises(exception.UnexpectedTaskStateError, self.revert)
        self.assertEqual({}, self.src.usage('src-node'))
        self.assertEqual([], self.src.tracked_on('src-node'))
        self.assertEqual('dst', self.store.peek(self.inst.uuid)['host'])


class FinishEvacuationTestCase(MoveClaimsTestBase):
    """``finish_evacuation``: counted once, whatever the audits."""

    def setUp(self):
        super(FinishEvacuationTestCase, self).setUp()
        self.dst = self.tracker('dst')
        self.inst = self.instance(task_state=task_states.REBUILDING)
        self.mig = self.migration(self.inst, status=migration_obj.ACCEPTED,
                                  dest=(None, None), new=OLD,
                                  migration_type=migration_obj.EVACUATION)
        self.dst.rebuild_claim(self.context, self.inst, 'dst-node', {},
                               migration=self.mig)

    def finish(self):
        self.inst.vm_state = vm_states.ACTIVE
        self.inst.task_state = None
        self.dst.finish_evacuation(self.inst, 'dst-node', self.mig)

    def assertCountedOnce(self):
        self.assertEqual(OLD.resources, self.dst.usage('dst-node'))
        self.assertEqual([self.inst.uuid], self.dst.tracked_on('dst-node'))
        self.assertEqual({}, self.dst.tracked_migrations)
        saved = self.store.peek(self.inst.uuid)
        self.assertEqual(('dst', 'dst-node', vm_states.ACTIVE, None),
                         (saved['host'], saved['node'], saved['vm_state'],
                          saved['task_state']))
        self.assertEqual(migration_obj.DONE,
                         self.migrations.peek(self.mig.uuid)['status'])
        self.audit(self.dst, 'dst-node')
        self.assertEqual(OLD.resources, self.dst.usage('dst-node'))

    def test_no_audit_after_the_claim(self):
        self.finish()
        self.assertCountedOnce()

    def test_audit_after_the_claim(self):
        self.audit(self.dst, 'dst-node')
        self.assertEqual(OLD.resources, self.dst.usage('dst-node'))
        self.assertIn(self.inst.uuid, self.dst.tracked_migrations)
        self.finish()
        self.assertCountedOnce()

    def test_audit_that_forgot_the_migration(self):
        # Saved out of a rebuild state behind the tracker's back: the
        # audit stops counting the migration.
        self.set_saved(self.inst, task_state=None)
        self.audit(self.dst, 'dst-node')
        self.assertEqual({}, self.dst.usage('dst-node'))
        self.finish()
        self.assertCountedOnce()

    def test_saved_under_the_lock(self):
        seen = []
        self.store.observers.append(
            lambda uuid, row: seen.append(
                ('instance', row['host'], self.dst.locks.held(SEMAPHORE))))
        self.migrations.observers.append(
            lambda uuid, row: seen.append(
                ('migration', row['status'],
                 self.dst.locks.held(SEMAPHORE))))
        self.finish()
        self.assertEqual([('instance', 'dst', True),
                          ('migration', migration_obj.DONE, True)], seen)

    def test_without_a_migration(self):
        self.dst.finish_evacuation(self.inst, 'dst-node', None)
        self.assertEqual(OLD.resources, self.dst.usage('dst-node'))
        self.assertEqual(migration_obj.PRE_MIGRATING,
                         self.migrations.peek(self.mig.uuid)['status'])
