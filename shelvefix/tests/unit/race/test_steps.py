"""Tests for what the race lab's steps say they touch."""

from unittest import mock

from shelvefix import explorer
from shelvefix.explorer import model
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import steps
from shelvefix.tests import base

C1, C2 = 'c1', 'c2'
SRC, DST = 'rp-src', 'rp-dst'
FIRST = '6d4c3d8a-3a6e-4f0e-9d59-4b7c1e2a0021'
SECOND = '6d4c3d8a-3a6e-4f0e-9d59-4b7c1e2a0022'


class Response(object):

    def __init__(self, status, body=None):
        self.status_code = status
        self._body = body or {}

    def json(self):
        return self._body


class FootprintTestCase(base.TestCase):

    def setUp(self):
        super(FootprintTestCase, self).setUp()
        self.transport = steps.StepTransport(
            mock.Mock(), mock.Mock(), steps.Names([]), (SRC, DST),
            {C1: {SRC}})

    def footprint(self, method, path, body=None):
        return self.transport.footprint(method, path, body)

    def test_reading_a_consumer_touches_only_it(self):
        self.assertEqual((frozenset(['consumer:c1']), model.READ),
                         self.footprint('GET', '/allocations/c1'))

    def test_writing_touches_old_and_new_providers(self):
        resource, access = self.footprint(
            'PUT', '/allocations/c1', {'allocations': {DST: {}}})
        self.assertEqual(model.WRITE, access)
        self.assertEqual({'consumer:c1', 'provider:rp-src',
                          'provider:rp-dst'}, resource)
        self.assertEqual({'consumer:c1', 'provider:rp-src'},
                         self.footprint('DELETE', '/allocations/c1')[0])

    def test_unrelated_consumers_do_not_meet(self):
        # c2 holds nothing yet and claims on the destination: nothing in
        # common with freeing c1 on the source.
        freeing = self.footprint('DELETE', '/allocations/c1')[0]
        claiming = self.footprint('PUT', '/allocations/c2',
                                  {'allocations': {DST: {}}})[0]
        self.assertEqual(frozenset(), freeing & claiming)

    def test_candidates_read_every_provider(self):
        self.assertEqual(
            (frozenset(['provider:rp-src', 'provider:rp-dst']), model.READ),
            self.footprint('GET', '/allocation_candidates'))

    def test_reading_a_providers_allocations_touches_only_it(self):
        for what in ('allocations', 'usages'):
            self.assertEqual(
                (frozenset(['provider:rp-src']), model.READ),
                self.footprint('GET', '/resource_providers/rp-src/' + what))
        self.assertEqual(model.WRITE, self.footprint(
            'PUT', '/resource_providers/rp-src/inventories')[1])

    def test_anything_else_touches_everything(self):
        resource, access = self.footprint('PUT', '/resource_providers/x')
        self.assertEqual(model.WRITE, access)
        self.assertEqual({'provider:rp-src', 'provider:rp-dst',
                          'consumer:c1'}, resource)

    def test_holdings_follow_the_responses(self):
        learn = self.transport._learn
        learn('DELETE', '/allocations/c1', None, Response(204))
        self.assertEqual(set(), self.transport.holdings[C1])
        learn('PUT', '/allocations/c2', {'allocations': {DST: {}}},
              Response(204))
        self.assertEqual({DST}, self.transport.holdings[C2])
        learn('PUT', '/allocations/c2', {'allocations': {SRC: {}}},
              Response(409))
        self.assertEqual({DST}, self.transport.holdings[C2])
        learn('GET', '/allocations/c2', None,
              Response(200, {'allocations': {SRC: {}}}))
        self.assertEqual({SRC}, self.transport.holdings[C2])
        # Placement failing may have done part of it: anything goes.
        learn('DELETE', '/allocations/c2', None, Response(500))
        self.assertEqual({SRC, DST}, self.transport.holdings[C2])
        learn('DELETE', '/allocations/c1', None, None)
        self.assertEqual({SRC, DST}, self.transport.holdings[C1])

    def test_labels(self):
        label = self.transport._label
        self.assertEqual('PUT /allocations/c1 (empty) gen=3', label(
            'PUT', '/allocations/c1',
            {'allocations': {}, 'consumer_generation': 3}))
        self.assertEqual('PUT /allocations/c1 gen=null', label(
            'PUT', '/allocations/c1',
            {'allocations': {DST: {}}, 'consumer_generation': None}))
        self.assertEqual('GET /allocation_candidates', label(
            'GET', '/allocation_candidates?resources=VCPU:1', None))


class OtherStepsTestCase(base.TestCase):

    def test_store_steps(self):
        store = instance_obj.InstanceStore()
        for uuid in ('6d4c3d8a-3a6e-4f0e-9d59-4b7c1e2a0001',
                     '6d4c3d8a-3a6e-4f0e-9d59-4b7c1e2a0002'):
            instance_obj.Instance.create(store, uuid)
        controller = mock.Mock()
        stepper = steps.StoreStepper(controller, store, 'wait for it')
        stepper('update', 'u1')
        stepper('wait', 'u1', guard=bool)
        stepper('list', None)
        self.assertEqual([
            mock.call('instance', frozenset(['instance:u1']),
                      access=model.WRITE, label='save instance', guard=None),
            mock.call('instance', frozenset(['instance:u1']),
                      access=model.READ, label='wait for it', guard=bool),
            mock.call('instance', frozenset(
                ['instance:' + uuid for uuid in store.uuids()] +
                ['instance:*']),
                access=model.READ, label='list instances on the node',
                guard=None)], controller.step.call_args_list)

    def test_lock_steps_are_per_host_and_guarded(self):
        controller = mock.Mock()
        stepper = steps.LockStepper(controller, 'h1',
                                    steps.Names([('u1', '{instance}')]))
        held = [True]
        stepper('acquire', 'u1', lambda: held[0])
        args, kwargs = controller.step.call_args
        self.assertEqual(('lock', frozenset(['lock:h1:{instance}'])), args)
        self.assertEqual('acquire lock {instance}', kwargs['label'])
        self.assertFalse(kwargs['guard']())
        held[0] = False
        self.assertTrue(kwargs['guard']())
        self.assertIs(steps.LockStepper.MODEL, kwargs['guard_model'])
        stepper('release', 'u1', lambda: True)
        self.assertIsNone(controller.step.call_args[1]['guard'])
        self.assertIsNone(controller.step.call_args[1]['guard_model'])

    def test_lock_model_reads_the_labels(self):
        def lock_step(op):
            return model.Step('a', 'lock', 'lock:h1:n', model.WRITE,
                              '%s lock n' % op)
        free = steps.LockStepper.MODEL
        self.assertTrue(free(()))
        self.assertFalse(free((lock_step('acquire'),)))
        self.assertTrue(free((lock_step('acquire'), lock_step('release'))))

    def test_rpc_steps(self):
        controller = mock.Mock()
        stepper = steps.RpcStepper(controller)
        stepper('receive', ('compute', 'h2'), guard=bool)
        controller.step.assert_called_once_with(
            'rpc', frozenset(['rpc:compute.h2']), access=model.WRITE,
            label='receive on compute.h2', guard=bool,
            guard_model=steps.RpcStepper.MODEL)
        stepper('cast', ('compute', 'h2'))
        self.assertIsNone(controller.step.call_args[1]['guard_model'])

    def test_rpc_model_reads_the_labels(self):
        def rpc_step(label):
            return model.Step('a', 'rpc', 'rpc:compute.h2', model.WRITE,
                              label)
        cast = rpc_step('cast to compute.h2')
        receive = rpc_step('receive on compute.h2')
        waiting = steps.RpcStepper.MODEL
        self.assertFalse(waiting(()))
        self.assertTrue(waiting((cast,)))
        self.assertFalse(waiting((cast, receive)))


class StableNamesTestCase(base.TestCase):
    """Footprints name the run's objects the same way in every run."""

    def test_uuids_become_names(self):
        names = steps.Names([(C1, '{instance}'), (SRC, '{compute-1}')])
        transport = steps.StepTransport(mock.Mock(), mock.Mock(), names,
                                        (SRC, DST), {C1: {SRC}})
        self.assertEqual(
            {'consumer:{instance}', 'provider:{compute-1}'},
            transport.footprint('DELETE', '/allocations/c1', None)[0])
        store = instance_obj.InstanceStore()
        uuid = '6d4c3d8a-3a6e-4f0e-9d59-4b7c1e2a0003'
        instance_obj.Instance.create(store, uuid)
        controller = mock.Mock()
        steps.StoreStepper(controller, store, 'wait',
                           steps.Names([(uuid, '{instance}')]))('list', None)
        self.assertEqual(frozenset(['instance:{instance}', 'instance:*']),
                         controller.step.call_args[0][1])


class RowAppearingTestCase(base.TestCase):
    """A list and a create of another row are explored in both orders.

    The list reads the rows saved so far; a row created after it is none
    of them, so only the table resource (``migration:*``) both write and
    read makes the two dependent. Without it the explorer would never run
    the list after the create, and would miss what the audit does with a
    second move's migration.
    """

    def program(self, controller):
        store = migration_obj.MigrationStore()
        migration_obj.Migration.create(store, FIRST, status='finished')
        store.interceptor = steps.StoreStepper(controller, store, 'wait',
                                               kind='migration')
        seen = []

        def create():
            migration_obj.Migration.create(store, SECOND,
                                           status='pre-migrating')

        def listing():
            seen.append(len(migration_obj.MigrationList.get_by_filters(
                store, {})))

        def check(results):
            store.interceptor = None
            return tuple(seen)
        return explorer.RunSpec([('create', create), ('list', listing)],
                                check=check)

    def test_both_orders(self):
        exploration = explorer.explore(self.program)
        self.assertTrue(exploration.complete)
        self.assertEqual({(1,): 1, (2,): 1}, exploration.outcome_counts())
