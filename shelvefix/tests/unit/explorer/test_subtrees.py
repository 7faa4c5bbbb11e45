"""Which pending subtrees a helper may still hand out."""

from unittest import mock

import testtools

from shelvefix.explorer import subtrees

PENDING = [(('a', 'b'), 'stack-ab'), (('a', 'b', 'c'), 'stack-abc'),
           (('a', 'c'), 'stack-ac'), (('d',), 'stack-d'),
           (('d', 'e'), 'stack-de'), (('a', 'b'), 'stack-ab-again')]


class UnclaimedTestCase(testtools.TestCase):

    def unclaimed(self, given=(), claimed=(), take=None):
        taken = []
        with mock.patch.object(subtrees, 'pending_subtrees',
                               return_value=iter(PENDING)) as pending:
            for key, stack in subtrees.unclaimed(['points'], True,
                                                 set(given), claimed):
                taken.append((key, stack))
                if take is not None and len(taken) == take:
                    break
        pending.assert_called_once_with(['points'], True)
        return taken

    def test_a_subtree_claims_what_lies_inside_it(self):
        # ('a', 'b', 'c') lies inside ('a', 'b'), ('d', 'e') inside ('d',),
        # and ('a', 'b') again is the same subtree.
        self.assertEqual([(('a', 'b'), 'stack-ab'), (('a', 'c'), 'stack-ac'),
                          (('d',), 'stack-d')], self.unclaimed())

    def test_given_and_claimed_are_left_out(self):
        self.assertEqual([(('a', 'b'), 'stack-ab'), (('d',), 'stack-d')],
                         self.unclaimed(given=[('a', 'c')]))
        self.assertEqual([(('d',), 'stack-d')],
                         self.unclaimed(claimed=[('a',)]))

    def test_the_caller_stops_when_it_has_no_room(self):
        self.assertEqual([(('a', 'b'), 'stack-ab')], self.unclaimed(take=1))

    def test_the_callers_claims_are_not_changed(self):
        claimed = [('z',)]
        self.unclaimed(claimed=claimed)
        self.assertEqual([('z',)], claimed)
