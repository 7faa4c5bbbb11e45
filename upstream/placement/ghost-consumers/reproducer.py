#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

from unittest import mock

import os_resource_classes as orc
from oslo_db import exception as db_exc
from oslo_utils.fixture import uuidsentinel as uuids

from placement import direct
from placement.objects import consumer as consumer_obj
from placement.tests.functional import base


class TestDeleteAllocationsConsumerDeleteFails(base.TestCase):
    """Regression test for bug @BUG@

    DELETE /allocations/{consumer_uuid} removes the allocations of the
    consumer and then the consumer record, which no longer has any. When
    the second step fails, for example because the connection to the
    database is lost, the request answers 500 and the consumer is left
    without allocations but with its record, at the generation it had.
    GET /allocations/{consumer_uuid} shows no consumer_generation for a
    consumer without allocations, so the next claim for it is sent with
    consumer_generation null, as for a new consumer, and is refused with
    a consumer generation conflict, again and again.
    """

    def setUp(self):
        super(TestDeleteAllocationsConsumerDeleteFails, self).setUp()
        self.headers = {
            'x-auth-token': 'admin',
            'OpenStack-API-Version': 'placement 1.38',
            'X_ROLES': 'admin,service',
        }
        self.url = '/allocations/%s' % uuids.consumer
        with direct.PlacementDirect(self.conf_fixture.conf) as client:
            resp = client.post(
                '/resource_providers', headers=self.headers,
                json={'name': 'cn1', 'uuid': uuids.rp})
            self.assertEqual(200, resp.status_code)
            resp = client.put(
                '/resource_providers/%s/inventories' % uuids.rp,
                headers=self.headers,
                json={'inventories': {orc.VCPU: {'total': 8}},
                      'resource_provider_generation': 0})
            self.assertEqual(200, resp.status_code)

    def _claim(self, client, consumer_generation):
        return client.put(self.url, headers=self.headers, json={
            'allocations': {uuids.rp: {'resources': {orc.VCPU: 2}}},
            'project_id': uuids.project,
            'user_id': uuids.user,
            'consumer_generation': consumer_generation,
            'consumer_type': 'INSTANCE',
        })

    def _vcpu_usage(self, client):
        resp = client.get(
            '/resource_providers/%s/usages' % uuids.rp, headers=self.headers)
        self.assertEqual(200, resp.status_code)
        return resp.json()['usages'][orc.VCPU]

    def test_delete_allocations_consumer_delete_fails(self):
        with direct.PlacementDirect(self.conf_fixture.conf) as client:
            resp = self._claim(client, None)
            self.assertEqual(204, resp.status_code)
            resp = client.get(self.url, headers=self.headers)
            self.assertEqual(1, resp.json()['consumer_generation'])

            # The connection to the database is lost after the allocations
            # are deleted, before the consumer record is.
            with mock.patch.object(
                    consumer_obj, 'delete_consumers_if_no_allocations',
                    side_effect=db_exc.DBConnectionError()) as mock_delete:
                resp = client.delete(self.url, headers=self.headers)
            self.assertEqual(500, resp.status_code)
            mock_delete.assert_called_once_with(mock.ANY, {uuids.consumer})

            # FIXME(@NICK@): This is bug @BUG@. The failed DELETE has
            # removed the allocations but not the consumer record, which
            # stays at generation 1 while GET reports no generation for it.
            # Once fixed, the failed DELETE changes nothing: the allocations
            # are still there with consumer_generation 1 and the DELETE can
            # be retried.
            resp = client.get(self.url, headers=self.headers)
            self.assertEqual(200, resp.status_code)
            self.assertEqual({'allocations': {}}, resp.json())
            self.assertEqual(0, self._vcpu_usage(client))
            consumer = consumer_obj.Consumer.get_by_uuid(
                self.context, uuids.consumer)
            self.assertEqual(1, consumer.generation)

            # A client that reads no allocations claims as for a new
            # consumer, which the leftover consumer record refuses.
            resp = self._claim(client, None)
            self.assertEqual(409, resp.status_code)
            error = resp.json()['errors'][0]
            self.assertEqual('placement.concurrent_update', error['code'])
            self.assertIn(
                'consumer generation conflict - expected 1 but got None',
                error['detail'])

            # Nothing cleans the record up through the API: DELETE finds no
            # allocations to remove, and every later claim fails the same.
            resp = client.delete(self.url, headers=self.headers)
            self.assertEqual(404, resp.status_code)
            resp = self._claim(client, None)
            self.assertEqual(409, resp.status_code)
            self.assertEqual(0, self._vcpu_usage(client))
