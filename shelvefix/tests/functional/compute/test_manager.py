"""Two shelve-offloads of one instance at once, in real threads.

The first offload's power-off waits (a real wait of up to
:attr:`RendezvousDriver.WAIT` seconds) for a second one to reach it; the
per-instance lock keeps the second away, so the wait runs out. The rest of
ComputeManager's shelve-offload is in the unit tests.
"""

import threading

from shelvefix.compute import collaborators
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.tests.unit.compute import test_manager


class RendezvousDriver(collaborators.RecordingDriver):
    """Holds the first power-off until a second one starts, or a while.

    With the per-instance lock the second offload never gets this far
    while the first runs, so the wait runs out; without it both offloads
    meet here and go on together.
    """

    WAIT = 0.5

    def __init__(self):
        super(RendezvousDriver, self).__init__()
        self.second = threading.Event()
        self.entered = 0
        self._entry_lock = threading.Lock()

    def power_off(self, instance, timeout=0, retry_interval=0):
        with self._entry_lock:
            self.entered += 1
            first = self.entered == 1
        if first:
            self.second.wait(self.WAIT)
        else:
            self.second.set()
        super(RendezvousDriver, self).power_off(instance, timeout,
                                                retry_interval)


class ConcurrentOffloadTestCase(test_manager.ManagerTestBase):
    """Two offloads of one instance at once: one runs, one is refused."""

    def test_second_offload_is_refused_cleanly(self):
        self.compute.driver = RendezvousDriver()
        results = {}

        def offload(name):
            # Each request carries its own copy of the instance, as two
            # RPC casts would.
            inst = instance_obj.Instance.get_by_uuid(self.store,
                                                     self.inst.uuid)
            try:
                self.compute.shelve_offload_instance(self.context, inst,
                                                     clean_shutdown=True)
                results[name] = 'done'
            except exception.UnexpectedTaskStateError as e:
                results[name] = e
        threads = [threading.Thread(target=offload, args=(name,))
                   for name in ('first', 'second')]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        self.assertEqual(
            ['done'], [r for r in results.values() if r == 'done'])
        refused = [r for r in results.values() if r != 'done']
        self.assertEqual(1, len(refused))
        self.assertIsInstance(refused[0], exception.UnexpectedTaskStateError)
        # Only one of them touched the hypervisor and placement.
        self.assertEqual(
            1, [c[0] for c in self.compute.driver.calls].count('destroy'))
        self.assertEqual(
            1, [t[0] for t in self.timeline].count('free_allocations'))
        saved = self.store.get(self.inst.uuid)
        self.assertEqual((vm_states.SHELVED_OFFLOADED, None),
                         (saved['vm_state'], saved['task_state']))
