"""digest.digest: equal for equal explorations, whichever process made them."""

import collections

import testtools

from shelvefix.explorer import model
from shelvefix.race import digest

Run = collections.namedtuple('Run', ['schedule', 'trace', 'outcome'])
Exploration = collections.namedtuple('Exploration', ['runs'])
UUID_A = '11111111-2222-3333-4444-555555555555'
UUID_B = '66666666-7777-8888-9999-aaaaaaaaaaaa'


def exploration(*results, outcome=('ok',), label='GET /allocations/{i}'):
    step = model.Step('conductor', 'http', 'allocations', 'read', label)
    trace = [model.TraceEntry(step, result) for result in results]
    return Exploration([Run(('conductor', 'compute-1'), trace, outcome)])


class DigestTestCase(testtools.TestCase):

    def test_what_each_process_makes_afresh_is_left_out(self):
        self.assertEqual(
            digest.digest(exploration('200 consumer %s' % UUID_A,
                                      'node-1-d7548246 of compute-1',
                                      '<Instance at 0x7f00aa>')),
            digest.digest(exploration('200 consumer %s' % UUID_B,
                                      'node-1-5e62a47d of compute-1',
                                      '<Instance at 0x7f11bb>')))

    def test_what_a_step_saw_counts(self):
        one = exploration('200 1 candidate(s)')
        self.assertNotEqual(digest.digest(one),
                            digest.digest(exploration('200 3 candidate(s)')))
        self.assertNotEqual(digest.digest(one), digest.digest(
            exploration('200 1 candidate(s)', outcome=('claim wiped',))))
        self.assertNotEqual(digest.digest(one), digest.digest(
            exploration('200 1 candidate(s)', label='GET /other')))
        self.assertEqual(digest.digest(one),
                         digest.digest(exploration('200 1 candidate(s)')))
