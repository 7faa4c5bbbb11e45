"""The outcomes of ``tools/nova_functional.py``'s runs, kept and compared.

A run of one backend on one shard is a :class:`Run`: the tests selected,
each finished test's status and time, stestr's exit status and the
workers the watchdog killed. It is saved as JSON under
``WORKDIR/results/<nova>/<backend>-<I>of<N>.json``, so that the shards of
a whole-suite run, made by several invocations (or machines), can be
added up and compared by ``--report N``.
"""

import json
import os
import statistics

from shelvefix import utils

#: subunit statuses that end a test, and what they count as.
FINISHED = {'success': 'passed', 'xfail': 'passed', 'fail': 'failed',
            'uxsuccess': 'failed', 'skip': 'skipped'}


class Outcomes(object):
    """A testtools ``StreamResult``: each test's last status and time.

    :ivar finished: ``{test id: status}`` of the tests that ended.
    :ivar seconds: ``{test id: seconds}`` of those with timestamps.
    :ivar unended: the tests that began and never ended (after the run).
    """

    def __init__(self):
        self.finished = {}
        self.seconds = {}
        self._started = {}

    def startTestRun(self):
        pass

    def stopTestRun(self):
        pass

    @property
    def unended(self):
        return sorted(self._started)

    def status(self, test_id=None, test_status=None, timestamp=None,
               **kwargs):
        if test_id is None or test_status is None:
            return
        if test_status == 'inprogress':
            self._started[test_id] = timestamp
        elif test_status in FINISHED:
            self.finished[test_id] = test_status
            begun = self._started.pop(test_id, None)
            if begun is not None and timestamp is not None:
                self.seconds[test_id] = (timestamp - begun).total_seconds()


def read_subunit(path):
    """The :class:`Outcomes` of a subunit v2 file."""
    import subunit
    outcomes = Outcomes()
    with open(path, 'rb') as stream:
        subunit.ByteStreamToStreamResult(
            stream, non_subunit_name='stdout').run(outcomes)
    return outcomes


class Run(object):
    """One backend's run of one shard (or, added up, of all shards).

    ``selected`` are the ids ``stestr list`` gave; a test with scenarios
    (testscenarios) is one listed id and runs, and is reported, as
    ``id(scenario)``, once per scenario. ``status`` and ``seconds`` are
    keyed by the ids that ran; ``started`` are ids that began and never
    ended (their worker died).
    """

    def __init__(self, backend, selected, status=None, seconds=None,
                 wall=0.0, returncode=0, hung=(), differential=None,
                 differences=(), shards=(1, 1), started=()):
        self.backend = backend
        self.selected = list(selected)
        self.status = dict(status or {})
        self.seconds = dict(seconds or {})
        self.wall = wall
        self.returncode = returncode
        self.hung = list(hung)
        self.differential = differential
        self.differences = list(differences)
        self.shards = tuple(shards)
        self.started = list(started)

    def outcomes(self):
        """``{test id: passed, failed, skipped or did not finish}``.

        Every test that ran, every selected id of which nothing ran, and
        every test that began and never ended.
        """
        ran = {test_id.split('(')[0] for test_id in self.status}
        found = {test_id: FINISHED[status]
                 for test_id, status in self.status.items()}
        for test_id in self.selected:
            if test_id not in found and test_id not in ran:
                found[test_id] = 'did not finish'
        for test_id in self.started:
            found.setdefault(test_id, 'did not finish')
        return found

    def counts(self):
        counts = dict.fromkeys(('passed', 'failed', 'skipped',
                                'did not finish'), 0)
        for outcome in self.outcomes().values():
            counts[outcome] += 1
        counts['selected'] = len(self.selected)
        counts['ran'] = len(self.status)
        counts['unfinished'] = counts.pop('did not finish')
        return counts

    def line(self):
        counts = self.counts()
        return ('%s: selected %d, ran %d, passed %d, failed %d, skipped %d,'
                ' did not finish %d in %.1f min (tests %.1f min)'
                % (self.backend, counts['selected'], counts['ran'],
                   counts['passed'], counts['failed'], counts['skipped'],
                   counts['unfinished'], self.wall / 60,
                   sum(self.seconds.values()) / 60))

    def to_dict(self):
        return dict(backend=self.backend, selected=self.selected,
                    status=self.status, seconds=self.seconds,
                    wall=self.wall, returncode=self.returncode,
                    hung=self.hung, differential=self.differential,
                    differences=self.differences, shards=self.shards,
                    started=self.started)

    @classmethod
    def from_dict(cls, data):
        return cls(**data)


def repeated(run, number):
    """``run`` with ``#number`` before each test id, to add repeats up."""
    def renamed(ids):
        return ['#%d %s' % (number, test_id) for test_id in ids]
    copy = Run.from_dict(run.to_dict())
    copy.selected = renamed(run.selected)
    copy.started = renamed(run.started)
    copy.status = dict(zip(renamed(run.status), run.status.values()))
    copy.seconds = dict(zip(renamed(run.seconds), run.seconds.values()))
    return copy


def result_path(workdir, tree_name, backend, shard, shards):
    return os.path.join(workdir, 'results', tree_name,
                        '%s-%dof%d.json' % (backend, shard, shards))


def save(run, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '.new', 'w') as out:
        json.dump(run.to_dict(), out, sort_keys=True)
    os.replace(path + '.new', path)


def load(path):
    with open(path) as saved:
        return Run.from_dict(json.load(saved))


def add_up(backend, runs):
    """One :class:`Run` of every shard's ``runs`` of ``backend``."""
    total = Run(backend, [])
    differential = None
    for run in runs:
        total.selected.extend(run.selected)
        total.started.extend(run.started)
        total.status.update(run.status)
        total.seconds.update(run.seconds)
        total.wall += run.wall
        total.returncode = total.returncode or run.returncode
        total.hung.extend(run.hung)
        total.differences.extend(run.differences)
        if run.differential is not None:
            differential = differential or {}
            for name, value in run.differential.items():
                differential[name] = differential.get(name, 0) + value
    total.differential = differential
    return total


def disagreements(first, second):
    """The tests whose outcome differs: ``[(id, a, b)]``."""
    a, b = first.outcomes(), second.outcomes()
    return [(test_id, a.get(test_id, 'not run'), b.get(test_id, 'not run'))
            for test_id in sorted(set(a) | set(b))
            if a.get(test_id) != b.get(test_id)]


def time_ratio(first, second):
    """``second``'s time over ``first``'s, on the tests both passed.

    :returns: ``(tests, ratio of the sums, median per-test ratio)`` or
        None when no test passed on both with a time.
    """
    a, b = first.outcomes(), second.outcomes()
    both = [test_id for test_id in a
            if a[test_id] == b.get(test_id) == 'passed' and
            first.seconds.get(test_id) and second.seconds.get(test_id)]
    if not both:
        return None
    return (len(both),
            sum(second.seconds[t] for t in both) /
            sum(first.seconds[t] for t in both),
            statistics.median(second.seconds[t] / first.seconds[t]
                              for t in both))


def verdict(runs, missing=()):
    """The reasons the runs are not a pass (empty: they are).

    :param runs: the :class:`Run` of each backend, in the order asked.
    :param missing: shards with no saved result.
    """
    reasons = []
    if missing:
        reasons.append('shards never run: %s'
                       % ', '.join(str(shard) for shard in missing))
    for run in runs:
        counts = run.counts()
        if not counts['selected']:
            reasons.append('%s: no test selected' % run.backend)
        if counts['unfinished']:
            reasons.append('%s: %s did not finish' % (
                run.backend, utils.plural(counts['unfinished'], 'test')))
        if run.hung:
            reasons.append('%s: %s hung' % (
                run.backend, utils.plural(len(run.hung), 'worker')))
        if run.returncode and not counts['failed']:
            reasons.append('%s: stestr exited %d with no test failing'
                           % (run.backend, run.returncode))
        if (run.backend == 'differential' and counts['ran'] and
                not (run.differential or {}).get('compared')):
            # Real placement's answers alone: nothing shows the double.
            reasons.append('differential: no request was compared')
        if run.differential and run.differential.get('differing'):
            reasons.append('%s: %s differed' % (
                run.backend,
                utils.plural(run.differential['differing'], 'answer')))
    for first, second in zip(runs, runs[1:]):
        differing = disagreements(first, second)
        if differing:
            reasons.append('%s ended differently on %s and %s' % (
                utils.plural(len(differing), 'test'), first.backend,
                second.backend))
    return reasons


def report(runs, missing=()):
    """Print the comparison of ``runs``; returns the exit status."""
    for run in runs:
        print(run.line())
    for first, second in zip(runs, runs[1:]):
        for test_id, a, b in disagreements(first, second):
            print('differs: %s: %s %s, %s %s' % (
                test_id, first.backend, a, second.backend, b))
        ratio = time_ratio(first, second)
        if ratio:
            print('%s/%s time on the %d tests both passed: %.2f (sum), '
                  '%.2f (median per test)' % ((second.backend,
                                               first.backend) + ratio))
    every = [run.outcomes() for run in runs]
    failing = sorted(test_id for test_id in every[0]
                     if all(outcomes.get(test_id) == 'failed'
                            for outcomes in every))
    if failing:
        print('failed on every backend: %s' % ', '.join(failing))
    for run in runs:
        if run.differential is not None:
            print('%s: %d requests compared, %d identical, %d differing, %d '
                  'not replayed (%d fixtures)' % (
                      run.backend, run.differential['compared'],
                      run.differential['identical'],
                      run.differential['differing'],
                      run.differential['not_replayed'],
                      run.differential['fixtures']))
            for found in run.differences:
                print('  %(test)s: %(method)s %(url)s: %(field)s: real '
                      '%(real)s, double %(double)s' % found)
        for hung in run.hung:
            print('%s: hung worker %d (%s %s), stacks in %s'
                  % (run.backend, hung['pid'], hung['state'], hung['test'],
                     hung['stacks']))
    reasons = verdict(runs, missing)
    print('verdict: %s' % ('; '.join(reasons) if reasons else
                           'every test finished, the backends agree'))
    return 1 if reasons else 0
