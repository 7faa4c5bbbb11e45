"""The command's side of the nova target: frames, and the runner's answers.

Nothing here imports nova or starts the runner: the frames are read from
and written to memory.
"""

import io
import pickle
from unittest import mock

from shelvefix.explorer import pickling
from shelvefix import nova
from shelvefix.nova import lab
from shelvefix import race
from shelvefix.race import scenarios
from shelvefix.tests import base


class FakeNovaError(Exception):
    """An exception as nova's are: keywords only, a formatted message."""

    def __init__(self, **kwargs):
        super(FakeNovaError, self).__init__(
            'Instance %(uuid)s could not be found.' % kwargs)
        self.kwargs = kwargs


FakeNovaError.__module__ = 'nova.exception'


class FakeInstance(object):
    """An object of nova's that the command cannot import."""

    def __repr__(self):
        return 'Instance(uuid=i-1)'


FakeInstance.__module__ = 'nova.objects.instance'


class LocalError(Exception):
    """An exception the command can import."""


def _frames(*values):
    """A stream holding ``values`` as frames."""
    stream = io.BytesIO()
    channel = lab.Channel(None, stream)
    for value in values:
        channel.send(value)
    stream.seek(0)
    return stream


class ChannelTestCase(base.TestCase):
    """``lab.Channel``: a length, then a pickle."""

    def test_frames_round_trip_in_order(self):
        values = [('path', 'double'), (lab.PROGRESS, 3),
                  (lab.RESULT, {'ok': 12}), (lab.QUIT,)]
        channel = lab.Channel(_frames(*values), None)
        self.assertEqual(values, [channel.receive() for _ in values])
        self.assertRaises(EOFError, channel.receive)

    def test_a_frame_cut_short_is_the_end(self):
        stream = _frames(('first',), ('second', 'x' * 100))
        data = stream.getvalue()
        channel = lab.Channel(io.BytesIO(data[:-1]), None)
        self.assertEqual(('first',), channel.receive())
        self.assertRaises(EOFError, channel.receive)
        # A length cut short too.
        channel = lab.Channel(io.BytesIO(data[:3]), None)
        self.assertRaises(EOFError, channel.receive)

    def test_nova_exceptions_travel_by_name_and_text(self):
        error = FakeNovaError(uuid='i-1')
        channel = lab.Channel(_frames((lab.RESULT, error)), None)
        kind, received = channel.receive()
        self.assertEqual(lab.RESULT, kind)
        self.assertIsInstance(received, pickling.ForeignError)
        self.assertEqual('FakeNovaError', type(received).__name__)
        self.assertEqual('Instance i-1 could not be found.', str(received))


class ForeignPicklingTestCase(base.TestCase):
    """``pickling.dumps(value, foreign=...)``: what the receiver lacks."""

    def test_a_foreign_class_does_not_pickle_otherwise(self):
        self.assertRaises(pickle.PicklingError, pickling.dumps,
                          FakeNovaError(uuid='i-1'))

    def test_a_foreign_exception_becomes_a_surrogate(self):
        received = pickle.loads(pickling.dumps(
            [FakeNovaError(uuid='i-1'), FakeNovaError(uuid='i-2')],
            foreign=('nova',)))
        for error, uuid in zip(received, ('i-1', 'i-2')):
            self.assertIsInstance(error, pickling.ForeignError)
            self.assertNotIsInstance(error, FakeNovaError)
            self.assertEqual('FakeNovaError', type(error).__name__)
            self.assertEqual('nova.exception', type(error).__module__)
            self.assertEqual('Instance %s could not be found.' % uuid,
                             str(error))
        # One surrogate class per foreign class.
        self.assertIs(type(received[0]), type(received[1]))

    def test_a_foreign_object_becomes_its_repr(self):
        received = pickle.loads(pickling.dumps(
            {'instance': FakeInstance(), 'count': 2}, foreign=('nova',)))
        self.assertEqual({'instance': 'Instance(uuid=i-1)', 'count': 2},
                         received)

    def test_what_is_not_foreign_keeps_its_class(self):
        error = LocalError('no room')
        error.host = 'compute-2'
        received = pickle.loads(pickling.dumps(
            (error, ValueError('bad')), foreign=('nova',)))
        self.assertIs(LocalError, type(received[0]))
        self.assertEqual(('no room',), received[0].args)
        self.assertEqual('compute-2', received[0].host)
        self.assertIs(ValueError, type(received[1]))
        self.assertEqual('bad', str(received[1]))


class AnswerTestCase(base.TestCase):
    """``NovaLab``'s reading of the runner's answers."""

    def lab(self, *answers, stderr=b''):
        nova_lab = lab.NovaLab(None, 'double')
        self.sent = io.BytesIO()
        nova_lab._channel = lab.Channel(_frames(*answers), self.sent)
        nova_lab._process = mock.Mock(**{'wait.return_value': 3})
        nova_lab._stderr = io.BytesIO(stderr)
        return nova_lab

    def test_progress_is_passed_on_until_the_result(self):
        nova_lab = self.lab((lab.PROGRESS, 1), (lab.PROGRESS, 2),
                            (lab.RESULT, 'counts'), (lab.PROGRESS, 9))
        progress = mock.Mock()
        self.assertEqual((lab.RESULT, 'counts'), nova_lab._answer(progress))
        self.assertEqual([mock.call(1), mock.call(2)],
                         progress.call_args_list)

    def test_progress_without_a_callback_is_skipped(self):
        nova_lab = self.lab((lab.PROGRESS, 1), (lab.LOADED, 'the tree x'))
        self.assertEqual((lab.LOADED, 'the tree x'), nova_lab._answer())

    def test_a_failure_in_nova_is_unusable(self):
        nova_lab = self.lab((lab.PROGRESS, 1),
                            (lab.FAILED, 'TypeError: bad argument'))
        error = self.assertRaises(nova.NovaUnusable, nova_lab._answer)
        self.assertEqual("nova's code failed in the runner: TypeError: bad "
                         "argument", str(error))

    def test_a_runner_gone_says_its_status_and_last_words(self):
        nova_lab = self.lab(
            (lab.PROGRESS, 1),
            stderr=b'Traceback (most recent call last):\nImportError: x\n')
        error = self.assertRaises(nova.NovaUnusable, nova_lab._answer)
        self.assertEqual('the nova runner ended without an answer (status '
                         '3): ImportError: x', str(error))

    def test_explore_asks_for_one_cell(self):
        scenario = scenarios.get_scenario(race.RESIZE_CONFIRM)
        cell = scenarios.Cell(race.CORRECTED, None)
        nova_lab = self.lab((lab.PROGRESS, 1), (lab.RESULT, 'summary'))
        progress = mock.Mock()
        self.assertEqual('summary', nova_lab.explore(
            scenario, cell, reduce=False, progress=progress, workers=2,
            stop_at=['usage untracked']))
        progress.assert_called_once_with(1)
        self.assertEqual(
            (lab.EXPLORE, race.RESIZE_CONFIRM, cell,
             {'reduce': False, 'workers': 2,
              'stop_at': ('usage untracked',)}),
            lab.Channel(io.BytesIO(self.sent.getvalue()), None).receive())

    def test_random_asks_for_runs(self):
        scenario = scenarios.get_scenario(race.EVACUATE)
        cell = scenarios.Cell(race.CORRECTED, None, race.REBUILD_FAILS)
        nova_lab = self.lab((lab.RESULT, 'random result'))
        self.assertEqual('random result',
                         nova_lab.random(scenario, cell, 5, seed=7))
        self.assertEqual(
            (lab.RANDOM, race.EVACUATE, cell, {'runs': 5, 'seed': 7}),
            lab.Channel(io.BytesIO(self.sent.getvalue()), None).receive())

    def test_a_cell_nova_cannot_run_is_unusable(self):
        scenario = scenarios.get_scenario(race.RESIZE_REVERT)
        nova_lab = self.lab((lab.UNUSABLE, 'no such method'))
        error = self.assertRaises(
            nova.NovaUnusable, nova_lab.explore, scenario,
            scenarios.Cell(race.CORRECTED, None))
        self.assertEqual('no such method', str(error))


class _BrokenPipe(io.RawIOBase):
    """The write end of a pipe whose reader has gone."""

    def writable(self):
        return True

    def write(self, data):
        raise BrokenPipeError(32, 'Broken pipe')


class ExitTestCase(base.TestCase):
    """``NovaLab.__exit__``: the runner stopped, whatever state it is in."""

    def test_a_runner_that_has_gone_is_no_error(self):
        # The runner answered and exited, but has not been reaped: the
        # QUIT frame cannot be written, and closing its stdin must not
        # try again.
        nova_lab = lab.NovaLab(None, 'double')
        stdin = io.BufferedWriter(_BrokenPipe())
        process = mock.Mock(stdin=stdin, stdout=io.BytesIO())
        process.poll.return_value = None
        process.wait.return_value = 0
        nova_lab._process = process
        nova_lab._stderr = io.BytesIO()
        nova_lab._channel = lab.Channel(process.stdout, stdin)
        nova_lab.__exit__(None, None, None)
        self.assertIsNone(nova_lab._process)
        self.assertTrue(process.stdout.closed)
        process.wait.assert_called_once_with(timeout=30)
        process.terminate.assert_not_called()

    def test_an_interrupted_search_stops_the_runner_at_once(self):
        # A runner in the middle of a search reads no QUIT until the search
        # ends: on the way out of an interrupt it is terminated.
        nova_lab = lab.NovaLab(None, 'double')
        process = mock.Mock(stdin=io.BytesIO(), stdout=io.BytesIO())
        process.poll.return_value = None
        process.wait.return_value = -15
        nova_lab._process = process
        nova_lab._stderr = io.BytesIO()
        nova_lab._channel = lab.Channel(process.stdout, process.stdin)
        nova_lab.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
        process.terminate.assert_called_once_with()
        self.assertIsNone(nova_lab._process)
