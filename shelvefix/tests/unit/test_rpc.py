"""Tests for the in-process casts between services."""

from oslo_utils import uuidutils

from shelvefix.compute import rpcapi
from shelvefix.objects import instance as instance_obj
from shelvefix import rpc
from shelvefix.tests import base


class Endpoint(object):

    def __init__(self):
        self.calls = []

    def unshelve_instance(self, context, **kwargs):
        self.calls.append((context, kwargs))
        return 'done'


class TransportTestCase(base.TestCase):

    def setUp(self):
        super(TransportTestCase, self).setUp()
        self.transport = rpc.Transport()
        self.store = instance_obj.InstanceStore()
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid())

    def test_cast_copies_and_delivers_in_order(self):
        self.inst.host = 'unsaved'
        spec = {'limits': {}}
        api = rpcapi.ComputeAPI(self.transport)
        api.unshelve_instance(self.context, self.inst, 'compute-2', spec,
                              node='n2')
        api.unshelve_instance(self.context, self.inst, 'compute-2', spec,
                              node='n3')
        self.assertEqual(2, self.transport.waiting('compute', 'compute-2'))
        self.assertEqual(0, self.transport.waiting('compute', 'compute-1'))
        endpoint = Endpoint()
        server = rpc.Server(self.transport, 'compute', 'compute-2',
                            endpoint)
        self.assertEqual('done', server.handle_one())
        context, kwargs = endpoint.calls[0]
        self.assertIs(self.context, context)
        self.assertEqual('n2', kwargs['node'])
        received = kwargs['instance']
        self.assertIsNot(self.inst, received)
        # Unsaved changes travel, as with nova's serialised objects.
        self.assertEqual('unsaved', received.host)
        self.assertEqual({'host'}, received.obj_what_changed())
        self.assertIsNot(spec, kwargs['request_spec'])
        self.assertEqual(spec, kwargs['request_spec'])
        server.handle_one()
        self.assertEqual('n3', endpoint.calls[1][1]['node'])

    def test_interceptor_sees_casts_and_guarded_receives(self):
        seen = []

        class Handle(object):
            def __init__(self, entry):
                self.entry = entry

            def done(self, result=None):
                self.entry.append(result)

        def interceptor(op, queue, guard=None):
            entry = [op, queue, guard() if guard else None]
            seen.append(entry)
            return Handle(entry)
        self.transport.interceptor = interceptor
        self.transport.cast('compute', 'h', 'unshelve_instance',
                            self.context, node='n')
        message = self.transport.receive('compute', 'h')
        self.assertEqual('unshelve_instance', message.method)
        self.assertEqual(
            [['cast', ('compute', 'h'), None, 'unshelve_instance'],
             ['receive', ('compute', 'h'), True, 'unshelve_instance']],
            seen)

    def test_unknown_method(self):
        self.transport.cast('compute', 'h', 'no_such_method', self.context)
        server = rpc.Server(self.transport, 'compute', 'h', Endpoint())
        self.assertRaises(AttributeError, server.handle_one)

    def test_call_runs_now_on_copies(self):
        seen = []

        class Checks(object):
            def check_can_live_migrate_source(self, context, instance,
                                              dest_check_data):
                seen.append((instance, dest_check_data))
                dest_check_data['checked'] = True
                return dest_check_data

        self.transport.serve_calls('compute', 'compute-1', Checks())
        # A call is no step of its own: the interceptor sees nothing.
        self.transport.interceptor = lambda *args, **kwargs: self.fail(
            'intercepted')
        self.inst.host = 'compute-1'
        data = {'block_migration': False}
        answer = rpcapi.ComputeAPI(
            self.transport).check_can_live_migrate_source(
                self.context, self.inst, data)
        received, received_data = seen[0]
        self.assertIsNot(self.inst, received)
        self.assertEqual('compute-1', received.host)
        self.assertIsNot(data, received_data)
        self.assertEqual({'block_migration': False}, data)
        # The answer is a copy of what the callee returned.
        self.assertEqual({'block_migration': False, 'checked': True},
                         answer)
        self.assertIsNot(received_data, answer)
        self.assertEqual(0, self.transport.waiting('compute', 'compute-1'))

    def test_call_nobody_answers(self):
        error = self.assertRaises(
            rpc.NoReply, self.transport.call, 'compute', 'compute-2',
            'pre_live_migration', self.context)
        self.assertEqual('no reply to pre_live_migration from '
                         'compute.compute-2', str(error))
