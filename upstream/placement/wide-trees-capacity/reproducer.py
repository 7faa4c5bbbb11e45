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

from oslo_utils.fixture import uuidsentinel as uuids

from placement import direct
from placement.tests.functional import base


class TestWideTreesOptimizationCapacity(base.TestCase):
    """Regression test for bug @BUG@

    With [workarounds]optimize_for_wide_provider_trees the product of the
    request groups' candidates is pruned by _exceeds_capacity, and the
    final capacity check of each merged candidate is skipped as already
    done. _exceeds_capacity compares the amount a partial product takes
    from a provider with the provider's capacity, but not with what is
    left of it once its usage is counted: a provider with usage is offered
    beyond its capacity when two groups land on it, and the claim of that
    candidate is refused.
    """

    def setUp(self):
        super(TestWideTreesOptimizationCapacity, self).setUp()
        self.headers = {
            'x-auth-token': 'admin',
            'OpenStack-API-Version': 'placement 1.38',
        }
        # A compute with one device provider of two VFs, one of them used.
        with direct.PlacementDirect(self.conf_fixture.conf) as client:
            for name, uuid, parent in (('cn1', uuids.cn1, None),
                                       ('cn1_pf', uuids.pf, uuids.cn1)):
                resp = client.post(
                    '/resource_providers', headers=self.headers,
                    json={'name': name, 'uuid': uuid,
                          'parent_provider_uuid': parent})
                self.assertEqual(200, resp.status_code)
            resp = client.put(
                '/resource_classes/CUSTOM_VF', headers=self.headers)
            self.assertEqual(201, resp.status_code)
            resp = client.put(
                '/resource_providers/%s/inventories' % uuids.pf,
                headers=self.headers,
                json={'inventories': {'CUSTOM_VF': {'total': 2}},
                      'resource_provider_generation': 0})
            self.assertEqual(200, resp.status_code)
            resp = self._claim(client, uuids.other, {uuids.pf: 1})
            self.assertEqual(204, resp.status_code)

    def _claim(self, client, consumer, amounts):
        return client.put(
            '/allocations/%s' % consumer, headers=self.headers,
            json={'allocations': {
                      rp: {'resources': {'CUSTOM_VF': amount}}
                      for rp, amount in amounts.items()},
                  'project_id': uuids.project,
                  'user_id': uuids.user,
                  'consumer_generation': None,
                  'consumer_type': 'INSTANCE'})

    def _candidates(self, client):
        resp = client.get(
            '/allocation_candidates?resources1=CUSTOM_VF:1'
            '&resources2=CUSTOM_VF:1&group_policy=none',
            headers=self.headers)
        self.assertEqual(200, resp.status_code)
        return [
            {rp: alloc['resources']['CUSTOM_VF']
             for rp, alloc in areq['allocations'].items()}
            for areq in resp.json()['allocation_requests']]

    def test_candidates_beyond_capacity(self):
        with direct.PlacementDirect(self.conf_fixture.conf) as client:
            # Without the optimization the only VF left is not offered for
            # two groups.
            self.assertEqual([], self._candidates(client))

            self.conf_fixture.config(
                group='workarounds', optimize_for_wide_provider_trees=True)
            candidates = self._candidates(client)

            # FIXME(@NICK@): This is bug @BUG@. With the optimization both
            # groups are offered the provider's one free VF, two VFs in
            # all, and the claim of that candidate is refused.
            self.assertEqual([{uuids.pf: 2}], candidates)
            resp = self._claim(client, uuids.instance, candidates[0])
            self.assertEqual(409, resp.status_code)
            error = resp.json()['errors'][0]
            self.assertEqual('placement.undefined_code', error['code'])
            self.assertIn('The requested amount would exceed the capacity.',
                          error['detail'])
