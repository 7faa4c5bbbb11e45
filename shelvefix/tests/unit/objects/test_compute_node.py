"""The service and compute node records (shelvefix.objects.compute_node)."""

from oslo_utils import uuidutils

from shelvefix import exception
from shelvefix.objects import compute_node as node_obj
from shelvefix.tests import base


class ServiceTestCase(base.TestCase):

    def setUp(self):
        super(ServiceTestCase, self).setUp()
        self.store = node_obj.ServiceStore()
        self.uuid = uuidutils.generate_uuid()
        node_obj.Service.create(self.store, self.uuid, 'compute-1', 1)

    def test_a_change_is_seen_once_saved(self):
        service = node_obj.Service.get_by_compute_host(self.store,
                                                       'compute-1')
        service.disabled = True
        self.assertEqual({'disabled'}, service.obj_what_changed())
        self.assertFalse(node_obj.Service.get_by_compute_host(
            self.store, 'compute-1').disabled)
        service.save()
        self.assertEqual(set(), service.obj_what_changed())
        self.assertTrue(node_obj.Service.get_by_compute_host(
            self.store, 'compute-1').disabled)

    def test_no_such_host(self):
        self.assertRaises(exception.ComputeHostNotFound,
                          node_obj.Service.get_by_compute_host, self.store,
                          'compute-2')

    def test_the_uuid_is_fixed(self):
        service = node_obj.Service.get_by_compute_host(self.store,
                                                       'compute-1')
        self.assertRaises(AttributeError, setattr, service, 'uuid', 'x')
        self.assertRaises(AttributeError, setattr, service, 'color', 'x')


class ComputeNodeTestCase(base.TestCase):

    def setUp(self):
        super(ComputeNodeTestCase, self).setUp()
        self.store = node_obj.ComputeNodeStore()
        self.uuid = uuidutils.generate_uuid()
        self.node = node_obj.ComputeNode.create(self.store, self.uuid,
                                                'compute-1', 'node-1')

    def test_listed_by_host(self):
        nodes = node_obj.ComputeNodeList.get_all_by_host(self.store,
                                                         'compute-1')
        self.assertEqual([self.uuid], [node.uuid for node in nodes])
        self.assertRaises(exception.ComputeHostNotFound,
                          node_obj.ComputeNodeList.get_all_by_host,
                          self.store, 'compute-2')

    def test_a_destroyed_node_is_found_only_reading_deleted(self):
        self.node.destroy()
        self.assertTrue(self.node.deleted)
        self.assertRaises(exception.ComputeHostNotFound,
                          node_obj.ComputeNode.get_by_uuid, self.store,
                          self.uuid)
        self.assertRaises(exception.ComputeHostNotFound,
                          node_obj.ComputeNodeList.get_all_by_host,
                          self.store, 'compute-1')
        found = node_obj.ComputeNode.get_by_uuid(self.store, self.uuid,
                                                 read_deleted='yes')
        self.assertTrue(found.deleted)

    def test_no_destroy_of_a_node_another_host_took_over(self):
        # compute-1 listed its node; compute-2 takes it over meanwhile.
        listed = node_obj.ComputeNodeList.get_all_by_host(self.store,
                                                          'compute-1')[0]
        taker = node_obj.ComputeNode.get_by_uuid(self.store, self.uuid)
        taker.host = 'compute-2'
        taker.save()
        self.assertRaises(exception.ObjectActionError, listed.destroy)
        saved = node_obj.ComputeNode.get_by_uuid(self.store, self.uuid)
        self.assertEqual(('compute-2', False), (saved.host, saved.deleted))

    def test_no_second_destroy(self):
        other = node_obj.ComputeNode.get_by_uuid(self.store, self.uuid)
        self.node.destroy()
        self.assertRaises(exception.ObjectActionError, other.destroy)

    def test_a_deleted_node_taken_over_lives_again(self):
        self.node.destroy()
        taker = node_obj.ComputeNode.get_by_uuid(self.store, self.uuid,
                                                 read_deleted='yes')
        taker.host = 'compute-2'
        taker.deleted = False
        taker.save()
        nodes = node_obj.ComputeNodeList.get_all_by_host(self.store,
                                                         'compute-2')
        self.assertEqual(['node-1'],
                         [node.hypervisor_hostname for node in nodes])

    def test_one_row_per_uuid(self):
        self.assertRaises(exception.Invalid, node_obj.ComputeNode.create,
                          self.store, self.uuid, 'compute-2', 'node-1')
