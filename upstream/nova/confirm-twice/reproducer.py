# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

import threading

import fixtures

from nova.compute import manager as compute_manager
from nova.tests.functional import integrated_helpers


class TestDeleteDuringConfirmResize(
    integrated_helpers.ProviderUsageBaseTestCase,
):
    """Regression test for bug @BUG@

    Deleting a resized server makes the API confirm its resize first
    (_confirm_resize_on_deleting), and it looks for the migration in the
    'confirming' status too, so a confirm the user started a moment before
    and the delete's own confirm both reach confirm_resize on the source
    host. The second one waits for the instance lock, then checks the
    status of the migration object the API handed it, still 'confirming',
    instead of the saved one, 'confirmed' by then, and confirms again: the
    migration context is gone, the confirm fails, and the server is put in
    ERROR instead of being deleted.
    """

    compute_driver = 'fake.MediumFakeDriver'

    # How long a paused step waits for the other one, in seconds.
    TIMEOUT = 60

    def setUp(self):
        super().setUp()
        self._start_compute('compute1')
        self._start_compute('compute2')

    def test_delete_while_the_user_confirm_runs(self):
        server = self._create_server(host='compute1', networks='none')
        server = self._migrate_server(server, host='compute2')
        migration = self._wait_for_migration_status(server, ['finished'])
        source_rp = self._get_provider_uuid_by_host('compute1')
        dest_rp = self._get_provider_uuid_by_host('compute2')

        # Count the confirms that reach a compute; the second one lets the
        # first go on, and then waits for it on the instance lock.
        second_confirm = threading.Event()
        confirms = []
        orig_confirm = compute_manager.ComputeManager.confirm_resize

        def count_confirm(_self, context, instance, migration):
            confirms.append(migration.status)
            if len(confirms) == 2:
                second_confirm.set()
            return orig_confirm(_self, context, instance, migration)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.ComputeManager.confirm_resize',
            count_confirm))

        # The user's confirm holds the instance lock until the delete's
        # confirm has reached compute1.
        first_inside = threading.Event()
        waited = []
        orig_do_confirm = compute_manager.ComputeManager._confirm_resize

        def wait_for_the_delete(_self, context, instance, migration=None):
            if not waited:
                first_inside.set()
                waited.append(second_confirm.wait(self.TIMEOUT))
            return orig_do_confirm(_self, context, instance,
                                   migration=migration)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.ComputeManager._confirm_resize',
            wait_for_the_delete))

        self.api.post_server_action(server['id'], {'confirmResize': None})
        self.assertTrue(first_inside.wait(self.TIMEOUT))

        # FIXME(@NICK@): The delete's confirm runs once the user's one is
        # over, confirms the confirmed migration again, fails, and the
        # delete request fails with it: the server is left in ERROR on
        # compute2 instead of being deleted.
        response = self.api.api_delete(
            '/servers/%s' % server['id'], check_response_status=[204, 500])
        self.assertEqual(500, response.status)

        self.assertEqual([True], waited)
        self.assertEqual(['confirming', 'confirming'], confirms)
        server = self._wait_for_server_parameter(
            server, {'status': 'ERROR', 'OS-EXT-SRV-ATTR:host': 'compute2'})
        self.assertIn('AttributeError', server['fault']['message'])
        self.assertEqual(
            migration['id'],
            self._wait_for_migration_status(server, ['error'])['id'])

        # The first confirm did its work: nothing is left on compute1.
        self.assertRequestMatchesUsage({}, source_rp)
        self.assertEqual(
            {dest_rp}, set(self._get_allocations_by_server_uuid(server['id'])))
