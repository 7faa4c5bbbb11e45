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
import time

from nova.compute import manager as compute_manager
from nova import context as nova_context
from nova import objects
from nova.tests.functional import integrated_helpers


class TestPeriodicsWithACellSwitchWaiting(
    integrated_helpers.ProviderUsageBaseTestCase,
):
    """Regression test for bug @BUG@

    _run_periodics runs update_available_resource inside target_cell, so
    the CellDatabases fixture holds its reader-writer lock as a reader
    while the periodic waits for the per-node updates, which run in
    another thread since update_available_resource spawns them on the
    UPDATE_RESOURCES executor. When another thread asks for the write lock
    meanwhile, to target another cell, fasteners makes every new reader
    wait behind that writer, and an untargeted database read takes a read
    lock: a per-node update reading with an untargeted context, as the
    libvirt driver's _get_disk_over_committed_size_total does, waits for
    the writer, which waits for the periodic, which waits for the per-node
    update. The test makes that read from another thread, so that it ends.
    """

    compute_driver = 'fake.MediumFakeDriver'

    # How long a step waits for another thread, in seconds.
    TIMEOUT = 30
    # How long the per-node update waits to see whether the read ends.
    WAIT = 5

    def setUp(self):
        super().setUp()
        self._start_compute('compute1')

    def test_untargeted_read_while_the_periodic_waits(self):
        # The CellDatabases fixture whose target_cell the test runs with.
        cell_lock = nova_context.target_cell.__self__._cell_lock
        cell0 = self.cell_mappings['cell0']
        switched = threading.Event()
        read = threading.Event()
        seen = {}

        def switch_to_cell0():
            ctxt = nova_context.get_admin_context()
            with nova_context.target_cell(ctxt, cell0):
                pass
            switched.set()

        def read_untargeted():
            objects.InstanceList.get_by_filters(
                nova_context.get_admin_context(), {'host': 'compute1'})
            read.set()

        orig_update = (
            compute_manager.ComputeManager._update_available_resource_for_node)

        def update_for_node(_self, context, nodename, *args, **kwargs):
            if not seen:
                # Another thread targets cell0 while the periodic waits in
                # its target_cell block for this per-node update.
                threading.Thread(target=switch_to_cell0, daemon=True).start()
                for _ in range(self.TIMEOUT * 10):
                    if cell_lock.has_pending_writers or switched.is_set():
                        break
                    time.sleep(0.1)
                seen['writer pending'] = cell_lock.has_pending_writers
                threading.Thread(target=read_untargeted, daemon=True).start()
                seen['read'] = read.wait(self.WAIT)
                seen['switched'] = switched.is_set()
            return orig_update(_self, context, nodename, *args, **kwargs)

        self.stub_out(
            'nova.compute.manager.ComputeManager.'
            '_update_available_resource_for_node', update_for_node)

        self._run_periodics()

        # FIXME(@NICK@): The untargeted read waited behind the writer, which
        # waited for the periodic's read lock: had the per-node update made
        # that read itself, the periodic would never have ended.
        self.assertEqual(
            {'writer pending': True, 'read': False, 'switched': False}, seen)

        # Once the periodic has left its target_cell block, the writer and
        # then the reader go on.
        self.assertTrue(switched.wait(self.TIMEOUT))
        self.assertTrue(read.wait(self.TIMEOUT))
