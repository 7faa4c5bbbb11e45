"""``shelvefix stress`` on Galera while processes die behind its back.

What an operator meets and the tool does not do itself, done from
outside the command, as it happened: ``shelvefix stress --database
galera`` runs as a process of its own, and once its corrected order is
cycling the test SIGKILLs the last node's ``mariadbd``, or the last
placement server's gunicorn master. The run must notice and name what
died (pid included), carry on with what remains, print its whole table
with the right exit status, and judge every cycle right: nothing leaked
or wiped, usages right, no ghost left, no judgement read otherwise on
another node. And a stale read forced (a node that has not applied a
write) does not fool the observer.

Run by ``tox -e stress`` (minutes each, on a Galera cluster); skips,
saying why, where Galera cannot be had; ``SHELVEFIX_REQUIRE_PLACEMENT_
SERVER=1`` turns the skips into failures. Every wait is bounded.
"""

import os
import re
import signal
import subprocess
import sys
import threading
import time

import requests
import sqlalchemy
import testscenarios

from shelvefix.backends import galera
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_galera

load_tests = testscenarios.load_tests_apply_scenarios

#: Seconds the whole command may take.
RUN_TIMEOUT = 900
#: Seconds until the corrected order is cycling.
START_TIMEOUT = 300


def descendants(pid):
    """``[(pid, start time, command line)]`` of ``pid``'s descendants."""
    children = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                text = f.read()
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                cmdline = f.read().replace(b'\0', b' ').decode(
                    'utf-8', 'replace')
        except OSError:
            continue
        fields = text[text.rindex(')') + 2:].split()
        children.setdefault(int(fields[1]), []).append(
            (int(entry), int(fields[19]), cmdline))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child[0])
    return found


class _Stderr(threading.Thread):
    """Collects a process's standard error as it comes."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.text = ''

    def run(self):
        while True:
            chunk = self.stream.read(1)
            if not chunk:
                return
            self.text += chunk


class OutsideKillTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = [('node', {'victim': 'mariadbd', 'named': 'node 3'}),
                 ('server', {'victim': 'gunicorn',
                             'named': 'placement server 3'})]

    def setUp(self):
        super().setUp()
        test_galera.require_galera(self)

    def kill_the_last(self, proc):
        """SIGKILL the last started victim under ``proc``; its pid."""
        if self.victim == 'mariadbd':
            victims = [(start, pid) for pid, start, cmdline
                       in descendants(proc.pid)
                       if cmdline.split(' ')[0].endswith('mariadbd') and
                       '--wsrep-recover' not in cmdline]
        else:
            # The gunicorn masters: children of the command itself (the
            # workers are theirs). With setproctitle installed their
            # command line reads "gunicorn: master [...]".
            victims = [(start, pid) for pid, start, cmdline
                       in descendants(proc.pid)
                       if 'gunicorn' in cmdline and
                       _parent(pid) == proc.pid]
        self.assertEqual(3, len(victims), victims)
        pid = sorted(victims)[-1][1]
        os.kill(pid, signal.SIGKILL)
        return pid

    def test_killed_from_outside(self):
        proc = subprocess.Popen(
            [sys.executable, '-m', 'shelvefix', 'stress', '--database',
             'galera', '--servers', '4', '--cycles', '15', '--progress'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        self.addCleanup(_end, proc)
        err = _Stderr(proc.stderr)
        err.start()
        deadline = time.monotonic() + START_TIMEOUT
        while 'stress corrected/delete: [' not in err.text:
            self.assertIsNone(proc.poll(), err.text[-2000:])
            self.assertLess(time.monotonic(), deadline, err.text[-2000:])
            time.sleep(0.1)
        killed = self.kill_the_last(proc)
        out, _err = proc.communicate(timeout=RUN_TIMEOUT)
        err.join(10)
        # The printed table: every ordering's row, the usages right.
        rows = dict((m.group(1), m) for m in _ROW.finditer(out))
        self.assertEqual(['corrected', 'legacy'], sorted(rows), out)
        for ordering, row in rows.items():
            self.assertEqual('as expected', row.group('usages'), out)
        corrected = rows['corrected']
        # Nothing the ordering caused: no 409, no claim wiped, no leak.
        self.assertEqual(['0'] * 4, [corrected.group(name) for name in (
            'sched', 'compute', 'wiped', 'leaked')], out)
        # Noticed and named, with its pid, in the run it happened in.
        self.assertRegex(out, r'corrected/delete: .*\n(  .*\n)*  noticed: '
                         r'%s \(.*pid %d\) died: SIGKILL at '
                         % (self.named, killed))
        # Every cycle judged by a synced read, none read otherwise; the
        # corrected order (its lines first) left no ghost.
        lines = re.findall(r'  ghost consumers healed: .*', out)
        self.assertEqual(2, len(lines), out)
        for line in lines:
            self.assertRegex(line, r'cycle judgements cross-checked: '
                             r'[1-9]\d*, disagreed: 0$')
        self.assertIn('left by the run: 0,', lines[0])
        self.assertIn('\nCorrected order: no bad outcome\n', out)
        self.assertEqual(0, proc.returncode, err.text[-3000:])


_ROW = re.compile(
    r'^(corrected|legacy) +delete +\d+ +[\d.]+ +(?P<ok>\d+) +(?P<sched>\d+) '
    r'+(?P<compute>\d+) +(?P<wiped>\d+) +(?P<leaked>\d+) +(?P<failed>\d+) '
    r'+(?P<usages>as expected|MISMATCH)', re.M)


def _parent(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            text = f.read()
    except OSError:
        return None
    return int(text[text.rindex(')') + 2:].split()[1])


def _end(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


class StaleReadTestCase(base.TestCase):
    """A stale read, forced: it does not fool the observer.

    Node 1 has not applied a write another node committed.
    """

    def setUp(self):
        super().setUp()
        test_galera.require_galera(self)

    def test_the_observer_is_not_fooled(self):
        with galera.GaleraPlacement(workers=1) as placement:
            session = requests.Session()
            session.trust_env = False
            headers = {'X-Auth-Token': 'admin',
                       'OpenStack-API-Version': 'placement 1.28'}
            rp = '5b0d8c4e-7d3a-4f6e-9a1b-2c3d4e5f6a7b'
            consumer = '9e8d7c6b-5a49-4838-a7b6-c5d4e3f2a1b0'
            first, last = placement.urls[0], placement.urls[-1]
            resp = session.post(first + '/resource_providers', headers=headers,
                                json={'name': 'stale', 'uuid': rp})
            self.assertEqual(200, resp.status_code, resp.text)
            resp = session.put(
                first + '/resource_providers/%s/inventories' % rp,
                headers=headers, json={'inventories': {'VCPU': {'total': 8}},
                                       'resource_provider_generation': 0})
            self.assertEqual(200, resp.status_code, resp.text)
            node = placement.cluster.nodes[0]
            # Node 1's applier paused: desynced (no flow control), its
            # tables locked; it still answers plain reads, from before.
            engine = sqlalchemy.create_engine(node.admin_url)
            self.addCleanup(engine.dispose)
            read = sqlalchemy.text(
                'SELECT COUNT(*) FROM %s.allocations WHERE consumer_id = '
                ':consumer' % placement.database_name)
            with engine.connect() as locker:
                locker.execute(sqlalchemy.text(
                    'SET GLOBAL wsrep_desync = ON'))
                locker.execute(sqlalchemy.text(
                    'FLUSH TABLES WITH READ LOCK'))
                try:
                    # The write, through node 3's placement server.
                    resp = session.put(
                        last + '/allocations/%s' % consumer, headers=headers,
                        json={'allocations': {rp: {'resources': {'VCPU': 1}}},
                              'consumer_generation': None,
                              'project_id': 'p', 'user_id': 'u'})
                    self.assertEqual(204, resp.status_code, resp.text)
                    # A read on node 1 as any client's: stale.
                    self.assertEqual(0, locker.execute(
                        read, {'consumer': consumer}).scalar())
                    observer = placement.observer()
                    self.addCleanup(observer.close)
                    held, index = observer.allocations(consumer)
                finally:
                    locker.execute(sqlalchemy.text('UNLOCK TABLES'))
                    locker.execute(sqlalchemy.text(
                        'SET GLOBAL wsrep_desync = OFF'))
            self.assertEqual({rp: {'VCPU': 1}}, held)
            # Node 1 could not give a causal read: another node did.
            self.assertNotEqual(0, index)
            self.assertEqual([], observer.cross_check(consumer, held, index))
            self.assertEqual((1, 0), (observer.checked, observer.disagreed))
