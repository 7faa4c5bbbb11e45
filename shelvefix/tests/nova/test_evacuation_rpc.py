"""The RPC call of an evacuated host's start-up, on nova's own code.

When compute-1's service starts again after its server was evacuated,
nova's ``_destroy_evacuated_instances`` destroys the guest left on
compute-1's hypervisor, and its disk too unless the disk is on storage
the evacuation's destination shares: an RPC call
(``check_instance_shared_storage``) asks the other host. compute-1's own
RPC server does not consume before ``init_host`` is over, so a call to
compute-1 times out (:mod:`shelvefix.nova.bus`); nova logs that, takes
the disk for shared and keeps it (bug 2085975, where nova routed the call
by the server's host, still compute-1 while the evacuation is in flight).
The lab's drivers keep local disks only.

What nova's latest release shows, explored without the conductor and the
audit (compute-2 holding the ``rebuild_instance`` cast, against the
start-up): once compute-2's claim has saved the migration with its
destination (``pre-migrating``), the call goes to compute-2, which says
no, and the disk is destroyed; if the start-up lists the migration before
that claim (``accepted``, no destination yet), nova routes the call by
the server's host, and unless compute-2 saved the server there before the
start-up read its record, the call goes to compute-1 and times out
(nova logs it and keeps the disk: ``source disk kept``): bug 2085975's
fix covers the evacuations in flight that have a destination only.
"""

import logging

import fixtures
import oslo_messaging

from shelvefix import explorer
from shelvefix.tests.nova import base

TIMED_OUT = 'source disk kept'
REMOTE_CHECK = ('compute-2 driver.check_instance_shared_storage_remote',)


def positions(run, actor, label, result=None):
    """Where ``actor`` took a step ``label`` (returning ``result``)."""
    return [index for index, entry in enumerate(run.trace)
            if (entry.step.actor, entry.step.label) == (actor, label) and (
                result is None or entry.result == result)]


class BusTestCase(base.NovaTestCase):
    """Calls through the lab's compute RPC router."""

    def setUp(self):
        super(BusTestCase, self).setUp()
        self.bus = base.load('shelvefix.nova.bus')
        self.router = self.bus.ComputeRouter(None)

    def test_call_to_a_host_not_consuming_times_out(self):
        self.router.endpoints['compute-1'] = self.bus.NOT_CONSUMING
        client = self.router.client(None).prepare(
            server='compute-1', version='6.0', topic='compute-alt')
        self.assertRaises(oslo_messaging.MessagingTimeout, client.call,
                          self.harness.context('compute-1'),
                          'check_instance_shared_storage', data={})
        self.assertEqual(
            [('compute-1', 'check_instance_shared_storage')],
            [(host, method) for host, method, _error
             in self.router.timed_out])

    def test_call_runs_the_hosts_method_as_its_service(self):
        served = []

        class Manager(object):
            def check_instance_shared_storage(self, ctxt, data):
                served.append(('method', ctxt.user_id, data))
                return False

        def run_as(func):
            def run():
                served.append('as compute-2')
                return func()
            return run
        self.router.endpoints['compute-2'] = (run_as, Manager())
        client = self.router.client(None).prepare(server='compute-2')
        self.assertIs(False, client.call(
            self.harness.context('compute-1'),
            'check_instance_shared_storage', data={'filename': 'f'}))
        self.assertEqual(
            ['as compute-2',
             ('method', self.harness.context('compute-1').user_id,
              {'filename': 'f'})], served)
        self.assertEqual([], self.router.timed_out)


class HostDriverTestCase(base.NovaTestCase):
    """The drivers' shared-storage check."""

    def setUp(self):
        super(HostDriverTestCase, self).setUp()
        self.doubles = base.load('shelvefix.nova.doubles')
        self.events = []
        self.driver = self.doubles.HostDriver(
            'compute-1', 'rp', {'VCPU': 1, 'MEMORY_MB': 1, 'DISK_GB': 1},
            self.events)
        self.instance = type('Server', (), {'uuid': 'server'})

    def test_not_implemented_unless_enabled(self):
        # As the other scenarios' runs expect: nova takes the disk for
        # local without an RPC call.
        self.assertRaises(NotImplementedError,
                          self.driver.check_instance_shared_storage_local,
                          None, self.instance)
        self.assertEqual([], self.events)

    def test_local_disks(self):
        self.driver.checks_shared_storage = True
        data = self.driver.check_instance_shared_storage_local(
            None, self.instance)
        self.assertIn('filename', data)
        self.assertIs(False,
                      self.driver.check_instance_shared_storage_remote(
                          None, data))
        self.driver.check_instance_shared_storage_cleanup(None, data)
        self.assertEqual(
            [('compute-1 driver.check_instance_shared_storage_local',),
             ('compute-1 driver.check_instance_shared_storage_remote',),
             ('compute-1 driver.check_instance_shared_storage_cleanup',)],
            self.events)


class StartUpCheckTestCase(base.NovaTestCase):
    """The start-up's shared-storage check against the rebuild."""

    def setUp(self):
        super(StartUpCheckTestCase, self).setUp()
        # A hundred runs of nova's code: see test_lifecycle.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        moves = base.load('shelvefix.nova.moves')
        move_program = base.load('shelvefix.nova.move_program')

        class Program(move_program.NovaMoveProgram):
            """Keeps each run's recorded events."""

            events = []

            def _finish(self, run, results):
                self.events.append(list(run.events))
                return super(Program, self)._finish(run, results)

        cloud = self.useFixture(moves.NovaMoveCloud(backend='double'))
        self.program = Program(cloud, move_program.EVACUATE,
                               without=('conductor', 'periodic-2'))
        self.program.events = []
        self.exploration = explorer.explore(self.program)
        self.assertExplored(self.exploration)
        self.assertTrue(self.exploration.complete)

    def test_check_goes_to_the_destination_once_it_claimed(self):
        routed = timed_out = 0
        for run, events in zip(self.exploration.runs, self.program.events):
            # The start-up reads the migration, then (after its own list
            # of the host's instances) the guests' records.
            listed, = positions(run, 'compute-1',
                                'list migrations on the node')
            _host_list, guests = positions(run, 'compute-1',
                                           'list instances on the node')
            claimed, = positions(run, 'compute-2', 'save migration',
                                 'status=pre-migrating')
            moved = positions(run, 'compute-2', 'save instance',
                              'vm_state=active task_state=None '
                              'host=compute-2')[0]
            self.assertIn(
                ('compute-1 driver.check_instance_shared_storage_local',),
                events)
            self.assertIn(
                ('compute-1 driver.check_instance_shared_storage_cleanup',),
                events)
            if claimed < listed or moved < guests:
                # The migration names compute-2, or the server's record
                # does: compute-2 answers, not shared.
                routed += 1
                self.assertIn(REMOTE_CHECK, events, run.format_trace())
                self.assertIn(('compute-1 driver.destroy', True), events)
                self.assertNotIn(TIMED_OUT, run.outcome)
            else:
                # No destination yet, and the server's host still
                # compute-1: the call goes to compute-1 itself.
                timed_out += 1
                self.assertNotIn(REMOTE_CHECK, events, run.format_trace())
                self.assertIn(('compute-1 rpc.call timed out',
                               'check_instance_shared_storage',
                               'compute-1'), events)
                self.assertIn(('compute-1 driver.destroy', False), events)
                self.assertIn(TIMED_OUT, run.outcome)
        self.assertTrue(routed and timed_out, (routed, timed_out))
