"""The reduction against the full search: one run per trace, same outcomes.

For each program the full search (``reduce=False``) runs every
interleaving; the Mazurkiewicz traces among them are told apart by their
Foata normal forms, computed here from the executed steps with
:func:`~shelvefix.explorer.model.dependent`. The reduced search must give
the same outcomes (every actor's observations and the final state), one run
per trace, and abandon nothing.
"""

import testtools

from shelvefix import explorer
from shelvefix.tests.unit.explorer import programs

Op = programs.Op
READ_X = Op('x', 'read')
WRITE_X = Op('x', 'write')
READ_Y = Op('y', 'read')
WRITE_Y = Op('y', 'write')
# A lock: acquiring waits until L was written an even number of times.
ACQUIRE, RELEASE = programs.lock_ops(model_it=False)

HAND_WRITTEN = {
    'independent writers': {
        name: [Op(resource, 'write')] * 2
        for name, resource in zip('abc', 'xyz')},
    'read/write race': {name: [READ_X, WRITE_X] for name in 'ab'},
    'readers and a writer': {'a': [READ_X, READ_Y], 'b': [READ_X],
                             'c': [WRITE_X, WRITE_Y]},
    'three actors': {'a': [WRITE_X, READ_Y], 'b': [READ_X, WRITE_Y],
                     'c': [READ_Y, READ_X, WRITE_X]},
    'four actors': {'a': [WRITE_X], 'b': [READ_X, WRITE_Y], 'c': [READ_Y],
                    'd': [READ_X, WRITE_X]},
    'lock': {name: [ACQUIRE, READ_X, WRITE_X, RELEASE] for name in 'abc'},
    'lock twice': {name: [ACQUIRE, WRITE_X, RELEASE, ACQUIRE, READ_X,
                          RELEASE] for name in 'ab'},
    'lock and a bystander': {'a': [ACQUIRE, WRITE_X, RELEASE],
                             'b': [ACQUIRE, READ_X, RELEASE],
                             'c': [READ_X, WRITE_Y]},
    'flag': {'waiter': [Op('flag', 'read', (1, None), 'wait'), READ_X],
             'setter': [WRITE_X, Op('flag', 'write', None, 'set')],
             'other': [WRITE_X]},
    'resource sets': {'a': [Op(('x', 'y'), 'write')],
                      'b': [READ_X, Op(('y', 'z'), 'read')],
                      'c': [WRITE_Y, Op(('x', 'z'), 'read')],
                      'd': [Op('z', 'write')]},
}


# Locks taken after other steps: without a model the explorer guesses.
LOCKED = {
    'work then lock': {'a': [WRITE_X, ACQUIRE, WRITE_Y, RELEASE],
                       'b': [WRITE_X, ACQUIRE, READ_Y, RELEASE]},
    'lock after a read': {'a': [READ_Y, ACQUIRE, WRITE_X, RELEASE],
                          'b': [WRITE_Y, ACQUIRE, READ_X, RELEASE]},
    'three lockers': {'a': [WRITE_X, ACQUIRE, WRITE_Y, RELEASE],
                      'b': [ACQUIRE, READ_Y, RELEASE],
                      'c': [READ_X, ACQUIRE, WRITE_Y, RELEASE]},
    'lock taken twice': {'a': [WRITE_X, ACQUIRE, WRITE_Y, RELEASE, ACQUIRE,
                               WRITE_X, RELEASE],
                         'b': [WRITE_Y, ACQUIRE, READ_X, RELEASE]},
}


def modelled(plan):
    """The plan with a LockModel on every acquire."""
    acquire = programs.lock_ops()[0]
    return {name: [acquire if op == ACQUIRE else op for op in ops]
            for name, ops in plan.items()}


def producer_consumer(items, consumers, takes=1, busy=False,
                      model_it=False):
    """A producer puts items on a queue; consumers wait to take them.

    With ``busy`` the producer comes first and each consumer does another
    step before taking; ``model_it`` gives the takes a QueueModel.
    """
    def program(controller):
        queue = []
        taken = {name: [] for name in consumers}
        guard_model = (explorer.QueueModel(put='put', take='take')
                       if model_it else None)

        def producer():
            for item in range(items):
                controller.step('queue', 'q', 'write', label='put')
                queue.append(item)

        def consumer(name):
            def run():
                if busy:
                    controller.step('mem', 'busy', 'write', label='busy')
                for _ in range(takes):
                    controller.step('queue', 'q', 'write', label='take',
                                    guard=lambda: bool(queue),
                                    guard_model=guard_model)
                    taken[name].append(queue.pop(0))
            return run

        def check(results):
            return (tuple(sorted((name, tuple(items))
                                 for name, items in taken.items())),
                    tuple(queue),
                    tuple(sorted(name for name, result in results.items()
                                 if result.stuck)))
        actors = [(name, consumer(name)) for name in consumers]
        if busy:
            actors.insert(0, ('producer', producer))
        else:
            actors.append(('producer', producer))
        return explorer.RunSpec(actors, check)
    return program


class OptimalityMixin(object):

    def explore_both(self, program):
        full = explorer.explore(program, reduce=False)
        reduced = explorer.explore(program)
        self.assertTrue(full.complete and reduced.complete)
        return full, reduced

    def assertSound(self, program, message=None):
        """Same outcomes, every trace run, nothing abandoned."""
        full, reduced = self.explore_both(program)
        traces = {programs.foata(run) for run in full.runs}
        forms = [programs.foata(run) for run in reduced.runs]
        self.assertEqual({run.outcome for run in full.runs},
                         {run.outcome for run in reduced.runs}, message)
        self.assertEqual(traces, set(forms), message)
        self.assertEqual(0, reduced.blocked, message)
        self.assertEqual(0, full.pruned, message)
        # Only a failed guess repeats a trace, and it is counted.
        self.assertEqual(len(forms) - reduced.repeated, len(set(forms)),
                         message)
        return full, reduced, traces

    def assertOptimal(self, program, message=None):
        """Sound, and exactly one run per trace."""
        full, reduced, traces = self.assertSound(program, message)
        self.assertEqual(len(traces), len(reduced.runs), message)
        self.assertEqual(0, reduced.repeated, message)
        return full, reduced


class HandWrittenTestCase(OptimalityMixin, testtools.TestCase):

    def test_hand_written_plans(self):
        counts = {}
        for name, plan in sorted(HAND_WRITTEN.items()):
            full, reduced = self.assertOptimal(
                programs.plan_program(plan), name)
            counts[name] = len(reduced.runs)
        self.assertEqual({'independent writers': 1, 'read/write race': 4,
                          'readers and a writer': 8, 'three actors': 24,
                          'four actors': 18, 'lock': 6, 'lock twice': 6,
                          'lock and a bystander': 4, 'flag': 3,
                          'resource sets': 44}, counts)

    def test_producer_consumer(self):
        for items, consumers, takes, runs in ((2, 'cd', 1, 4),
                                              (1, 'cd', 1, 2),
                                              (3, 'cd', 2, 30),
                                              (2, 'cde', 1, 12)):
            full, reduced = self.assertOptimal(
                producer_consumer(items, consumers, takes))
            self.assertEqual(runs, len(reduced.runs))
            stuck = {run.outcome[2] for run in reduced.runs}
            self.assertEqual(items < len(consumers) * takes, stuck != {()})

    def test_pruned_counts_choices_never_made(self):
        full, reduced = self.assertOptimal(
            programs.plan_program(HAND_WRITTEN['independent writers']))
        self.assertEqual(90, len(full.runs))
        self.assertGreater(reduced.pruned, 0)


class GuessTestCase(OptimalityMixin, testtools.TestCase):
    """The one case where a trace may be run twice (see search)."""

    @staticmethod
    def program(guard, before_wait=True):
        # p writes r; q (maybe after writing y) waits on r. The first run
        # lets p write before q reaches its wait: whether q could have
        # waited before p's write was never seen.
        wait = Op('r', 'read', guard, 'wait')
        return programs.plan_program({
            'p': [Op('r', 'write')],
            'q': [WRITE_Y, wait] if before_wait else [wait]})

    def test_failed_guess_repeats_a_trace(self):
        full, reduced, traces = self.assertSound(self.program((1, None)))
        self.assertEqual(1, len(traces))
        self.assertEqual(2, len(reduced.runs))
        self.assertEqual(1, reduced.repeated)
        self.assertEqual(0, reduced.blocked)

    def test_right_guess_costs_nothing(self):
        self.assertEqual(2, len(self.assertOptimal(
            self.program((0, None)))[1].runs))

    def test_no_guess_when_the_wait_comes_first(self):
        self.assertEqual(1, len(self.assertOptimal(
            self.program((1, None), before_wait=False))[1].runs))

    def test_guard_on_two_resources(self):
        # a waits for x and y to be written: the state with y written and
        # x not was never seen in the first run (x was written first).
        program = programs.plan_program({
            'a': [Op(('x', 'y'), 'read', (2, None), 'wait for both')],
            'b': [WRITE_X], 'c': [WRITE_Y]})
        full, reduced, traces = self.assertSound(program)
        self.assertEqual(1, len(traces))
        self.assertEqual(1 + reduced.repeated, len(reduced.runs))


class GuardModelTestCase(OptimalityMixin, testtools.TestCase):
    """With guard models the explorer never guesses: one run per trace."""

    def test_locks(self):
        repeated, counts = 0, {}
        for name, plan in sorted(LOCKED.items()):
            repeated += self.assertSound(programs.plan_program(plan),
                                         name)[1].repeated
            full, reduced = self.assertOptimal(
                programs.plan_program(modelled(plan)), name)
            counts[name] = len(reduced.runs)
        # Without the models these programs do repeat traces.
        self.assertEqual(8, repeated)
        self.assertEqual({'work then lock': 4, 'lock after a read': 4,
                          'three lockers': 12, 'lock taken twice': 6},
                         counts)

    def test_queues(self):
        for items, consumers, takes, runs, guessed in ((1, 'c', 1, 1, 1),
                                                       (2, 'cd', 1, 8, 3),
                                                       (2, 'c', 2, 2, 1),
                                                       (3, 'cd', 2, 60, 5)):
            plain = self.assertSound(producer_consumer(
                items, consumers, takes, busy=True))[1]
            self.assertEqual(guessed, plain.repeated)
            full, reduced = self.assertOptimal(producer_consumer(
                items, consumers, takes, busy=True, model_it=True))
            self.assertEqual(runs, len(reduced.runs))

    def test_former_guesses(self):
        for guard, before_wait in (((1, None), True), ((0, None), True)):
            plan = programs.plan_program(programs.with_models({
                'p': [Op('r', 'write')],
                'q': ([WRITE_Y] if before_wait else [])
                + [Op('r', 'read', guard, 'wait')]}))
            self.assertOptimal(plan)
        program = programs.plan_program(programs.with_models({
            'a': [Op(('x', 'y'), 'read', (2, None), 'wait for both')],
            'b': [WRITE_X], 'c': [WRITE_Y]}))
        self.assertEqual(1, len(self.assertOptimal(program)[1].runs))


class RandomProgramsTestCase(OptimalityMixin, testtools.TestCase):
    """Many small random programs (see programs.random_plan)."""

    def check_seeds(self, seeds, models=False, largest=(4, 4),
                    max_interleavings=200, **kwargs):
        actors = steps = repeated = 0
        for seed in seeds:
            plan = programs.random_plan(
                seed, max_interleavings=max_interleavings, **kwargs)
            message = 'seed %d: %r' % (seed, plan)
            if models:
                self.assertOptimal(programs.plan_program(
                    programs.with_models(plan)), message)
            if kwargs.get('anywhere') or kwargs.get('locks'):
                repeated += self.assertSound(programs.plan_program(
                    _unmodelled(plan)), message)[1].repeated
            else:
                self.assertOptimal(programs.plan_program(plan), message)
            actors = max(actors, len(plan))
            steps = max([steps] + [len(ops) for ops in plan.values()])
        # The seeds reach the generator's largest sizes.
        self.assertGreaterEqual((actors, steps), largest)
        return repeated

    def test_without_guards(self):
        self.check_seeds(range(50), guards=False)

    def test_with_guards(self):
        self.check_seeds(range(100, 170))

    def test_guards_anywhere_are_sound(self):
        self.check_seeds(range(200, 250), anywhere=True)

    def test_guards_anywhere_with_models_are_optimal(self):
        # The same programs without models repeat traces.
        repeated = self.check_seeds(range(250, 300), anywhere=True,
                                    models=True)
        self.assertGreater(repeated, 0)

    def test_locks_with_models_are_optimal(self):
        # A lock cuts the interleavings the full search runs: allow more.
        repeated = self.check_seeds(range(300, 340), guards=False,
                                    locks=True, models=True, largest=(3, 5),
                                    max_interleavings=600)
        self.assertGreater(repeated, 0)


def _unmodelled(plan):
    return {name: [op._replace(model=None) for op in ops]
            for name, ops in plan.items()}
