"""Wakeup trees and sleep sets: what is still to explore at a choice point.

A *wakeup sequence* at a choice point ``E`` is a sequence of events, each an
``(actor, step)`` pair, that the search has promised to run right after
``E``: the reversal of a race (:mod:`shelvefix.explorer.dpor`). A *wakeup
tree* is an ordered tree of such sequences sharing prefixes; every edge is a
:class:`Branch` (an actor, its step there, the subtree below). The search
explores a choice point's tree left to right, each branch down to a leaf,
and each leaf onwards with free choices (Abdulla, Aronis, Jonsson and
Sagonas, "Optimal dynamic partial order reduction", POPL 2014).

*Weak initials.* An actor ``p`` is a weak initial of a sequence ``w`` after
``E`` when some run starting ``E.p`` is equivalent to one starting
``E.w``: either ``p``'s first event in ``w`` is independent of every event
before it in ``w``, or ``p`` has no event in ``w``, is enabled after ``E``
and its next step is independent of all of ``w``.

*Inserting* a sequence walks down from the root: at each node it follows
the first branch whose actor is a weak initial of what remains of the
sequence (removing that actor's first event from it), stops if it reaches a
leaf or uses the whole sequence up (a branch already there covers it), and
otherwise appends what remains as a new last branch. A sequence is not
inserted at all if an actor asleep at the choice point is one of its weak
initials: every run it leads to is equivalent to one already explored.

A branch is a *guess* when its step is guarded and the explorer has not
seen the guard evaluated in the state the sequence leads to (see
:mod:`shelvefix.explorer.dpor`): the guard may turn out false there. Only an
event known to be enabled can be a weak initial by independence, so a guess
never covers another sequence it does not contain.
"""

from shelvefix.explorer import model


class Branch(object):
    """One edge of a wakeup tree: an actor, its step there, the subtree.

    ``guess`` is True if the step's guard has not been seen true in the
    state this branch reaches; ``children`` is the list of branches below,
    in exploration order (empty for a leaf); ``origin`` the index of the
    run whose race inserted it, if known.
    """

    __slots__ = ('actor', 'step', 'guess', 'children', 'origin')

    def __init__(self, actor, step, guess=False, children=None,
                 origin=None):
        self.actor = actor
        self.step = step
        self.guess = guess
        self.children = children if children is not None else []
        self.origin = origin

    def sequences(self):
        """Every root-to-leaf path through this branch, as actor tuples."""
        if not self.children:
            return [(self.actor,)]
        return [(self.actor,) + rest for child in self.children
                for rest in child.sequences()]

    def __repr__(self):
        return 'Branch(%r%s, %r)' % (self.actor, '?' if self.guess else '',
                                     self.children)


def weak_initial(actor, step, sequence, enabled=True):
    """Tell whether an actor is a weak initial of a sequence.

    :param actor: the actor's name
    :param step: its next :class:`~shelvefix.explorer.model.Step` at the
        point where ``sequence`` starts
    :param sequence: list of ``(actor, step)`` events
    :param enabled: whether ``step`` is known to be enabled there; if not,
        the actor can only be a weak initial by having an event in
        ``sequence``
    :returns: None if it is not; else ``sequence`` without the actor's
        first event (unchanged if it has none)
    """
    for position, (other, other_step) in enumerate(sequence):
        if other == actor:
            return sequence[:position] + sequence[position + 1:]
        if model.dependent(step, other_step):
            return None
    return sequence if enabled else None


def asleep_initial(point, sequence):
    """Find an actor asleep at a choice point that covers a sequence.

    :param point: the :class:`~shelvefix.explorer.model.ChoicePoint`
    :param sequence: list of ``(actor, step)`` events starting there
    :returns: the name of an actor asleep at ``point`` (inherited or
        already explored there) that is a weak initial of ``sequence``, or
        None
    """
    for name in sorted(point.asleep()):
        if weak_initial(name, point.pending[name], sequence) is not None:
            return name
    return None


def insert(branches, sequence, guess=False, origin=None):
    """Insert a wakeup sequence into a wakeup tree.

    :param branches: the tree, as the list of its root's branches; updated
    :param sequence: non-empty list of ``(actor, step)`` events
    :param guess: whether the sequence's last event is a guess
    :param origin: the index of the run that found the race, kept on the
        branches added
    :returns: True if the tree grew, False if it already covered the
        sequence
    """
    last = sequence[-1]
    rest = list(sequence)
    level = branches
    at_root = True
    while True:
        if not level and not at_root:
            return False
        for branch in level:
            after = weak_initial(branch.actor, branch.step, rest,
                                 enabled=not branch.guess)
            if after is not None:
                break
        else:
            level.append(_chain(rest, guess and rest[-1] is last, origin))
            return True
        if not after:
            return False
        level, rest, at_root = branch.children, after, False


def _chain(sequence, guess, origin=None):
    """The branch spelling a sequence; its last event a guess or not."""
    actor, step = sequence[-1]
    branch = Branch(actor, step, guess, origin=origin)
    for actor, step in reversed(sequence[:-1]):
        branch = Branch(actor, step, children=[branch], origin=origin)
    return branch


def take(point):
    """Choose the next branch of a choice point's wakeup tree.

    Branches whose actor is not enabled at the point (a guess that turned
    out false) or is asleep there are dropped with their subtrees.

    :param point: the :class:`~shelvefix.explorer.model.ChoicePoint`;
        its ``wakeup`` loses the branches taken or dropped
    :returns: the :class:`Branch` taken, or None if none is left
    """
    asleep = point.asleep()
    while point.wakeup:
        branch = point.wakeup.pop(0)
        if branch.actor in point.enabled and branch.actor not in asleep:
            return branch
    return None
