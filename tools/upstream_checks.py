"""A series proven on a target: what a reviewer would run by hand.

:func:`prove` takes one series (:mod:`upstream_series`) on one target
(:mod:`upstream_trees`), from the target's base commit:

1. ``git am`` 0001 (the reproducer), then in each test mode the reproducer
   runs ``repeat`` times and must pass each time (the bug shown), while
   0002's version of the test, on this unfixed code, must fail on an
   assertion (the first negative control);
2. ``git am`` 0002 (the fix), then in each mode the test runs ``repeat``
   times and must pass each time (fixed), 0001's reproducer on the fixed
   code must fail on an assertion (the second control), and the project's
   own tests of the changed code (the series' ``existing``) must pass.

A control's test is put next to the other as a module of its own
(``..._control.py``), so that both run in one process. Each row of the
result is one mode: :class:`Row`, and :func:`table` prints them.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

import upstream_series

HERE = os.path.dirname(os.path.abspath(__file__))
REPEAT = os.path.join(HERE, 'upstream_repeat.py')
#: How an exploration runs: ``shelvefix`` of the Python running this.
EXPLORER = (sys.executable, '-m', 'shelvefix')
COLUMNS = ('finding', 'target', 'mode', 'applies', 'bug shown', 'fixed',
           'controls', 'existing tests', 'exploration')


class Row(object):
    """What one series did on one target in one mode."""

    def __init__(self, series, target, mode):
        self.series = series
        self.target = target
        self.mode = mode
        self.applies = None     # 'yes', or which patch did not apply
        self.bug = None         # (runs shown, runs)
        self.fixed = None       # (runs passed, runs)
        self.controls = {}      # name: failed on an assertion as it must
        self.existing = None    # {'passed': N, 'failed': N, 'skipped': N}
        self.explored = None    # (shown unfixed, shown fixed), if asked
        self.problems = []

    @property
    def ok(self):
        return (self.applies == 'yes' and not self.problems and
                self.bug is not None and self.bug[0] == self.bug[1] and
                self.fixed is not None and self.fixed[0] == self.fixed[1] and
                len(self.controls) == 2 and all(self.controls.values()) and
                self.existing is not None and
                self.existing['passed'] > 0 and
                not self.existing['failed'] and
                (self.series.exploration is None or
                 self.explored == (True, False)))

    def cells(self):
        def ratio(pair):
            return '-' if pair is None else '%d/%d' % pair
        controls = '-' if not self.controls else '%d/%d fail' % (
            sum(self.controls.values()), 2)
        existing = '-' if self.existing is None else (
            '%(passed)d passed, %(failed)d failed' % self.existing)
        explored = '-' if self.explored is None else '%s, then %s' % tuple(
            'shown' if shown else 'not shown' for shown in self.explored)
        return (self.series.title, self.target.label, self.mode,
                self.applies or '-', ratio(self.bug), ratio(self.fixed),
                controls, existing, explored)


def table(rows):
    """The rows as an aligned text table, a header first."""
    lines = [COLUMNS] + [row.cells() for row in rows]
    widths = [max(len(line[i]) for line in lines)
              for i in range(len(COLUMNS))]
    return '\n'.join('  '.join(cell.ljust(width) for cell, width in
                               zip(line, widths)).rstrip()
                     for line in lines)


def judge(outcomes, must):
    """Did each run do what it ``must`` (``pass`` or ``fail``)?

    A run passes when it ran tests and every one passed; it fails as a
    control must when an assertion failed and nothing else went wrong
    (an error, an import failure, no test at all is no evidence).

    :returns: (runs that did, problems of those that did not)
    """
    good, problems = 0, []
    for outcome in outcomes:
        if must == 'pass':
            done = outcome['tests'] > 0 and \
                outcome['passed'] == outcome['tests']
        else:
            done = bool(outcome['failures']) and not outcome['errors']
        if done:
            good += 1
        else:
            problems.append('; '.join(outcome['failures'] +
                                      outcome['errors']) or
                            '%(tests)d tests, %(passed)d passed, '
                            '%(skipped)d skipped' % outcome)
    return good, problems


def repeat(target, mode, specs, log):
    """Run ``[(module, runs), ...]`` in one process of the tree's tests.

    :returns: ``{module: [outcome, ...]}``
    """
    with tempfile.NamedTemporaryFile('r', suffix='.json') as output:
        with open(log, 'a') as err:
            proc = subprocess.run(
                (sys.executable, REPEAT, output.name) + tuple(
                    '%s:%d' % spec for spec in specs),
                cwd=target.tree, env=target.env(mode), stdout=err,
                stderr=subprocess.STDOUT, timeout=1800)
        if proc.returncode:
            raise upstream_series.SeriesError(
                'the test runner failed (exit %d): see %s'
                % (proc.returncode, log))
        return json.load(output)


def existing(series, target, mode, workdir, log):
    """The series' existing tests on the tree: counts, via stestr."""
    counts = {'passed': 0, 'failed': 0, 'skipped': 0, 'empty': []}
    for path, regexes in sorted(series.suites(target.tree).items()):
        repo = os.path.join(workdir, 'stestr', series.slug, mode,
                            path.strip('./').replace('/', '-'))
        os.makedirs(repo, exist_ok=True)
        stestr = (sys.executable, '-m', 'stestr', '--test-path', path,
                  '--top-dir', './', '--repo-url', repo)
        env = dict(target.env(mode), PYTHON=sys.executable)
        if not os.path.isdir(os.path.join(repo, '.stestr')):
            subprocess.run(stestr + ('init',), cwd=target.tree, env=env,
                           stdout=subprocess.DEVNULL, check=True)
        excludes = target.excludes(mode, path)
        with open(os.path.join(repo, 'run.subunit'), 'wb') as out, \
                open(log, 'a') as err:
            subprocess.run(stestr + (
                'run', '--subunit', '--concurrency', '2') + ((
                    '--exclude-list', excludes) if excludes else ()) +
                tuple(regexes), cwd=target.tree, env=env, stdout=out,
                stderr=err, timeout=3600)
        with open(os.path.join(repo, 'run.subunit'), 'rb') as stream:
            statuses = _statuses(stream)
        for status in statuses.values():
            key = {'success': 'passed', 'xfail': 'passed',
                   'skip': 'skipped'}.get(status, 'failed')
            counts[key] += 1
        counts['empty'] += [regex for regex in regexes if not any(
            re.search(regex, test_id) for test_id in statuses)]
    return counts


def _statuses(stream):
    """``{test id: last status}`` of a subunit v2 byte stream."""
    import subunit
    import testtools

    class Statuses(testtools.StreamResult):
        def __init__(self):
            super(Statuses, self).__init__()
            self.last = {}

        def status(self, test_id=None, test_status=None, **kwargs):
            if test_id and test_status in ('success', 'fail', 'skip',
                                           'xfail', 'uxsuccess'):
                self.last[test_id] = test_status

    result = Statuses()
    subunit.ByteStreamToStreamResult(stream, non_subunit_name='stdout').run(
        result)
    return result.last


def explore(series, target, commit, log):
    """Does shelvefix's exploration show the symptom at ``commit``?

    The series' ``[exploration]`` command (``shelvefix`` arguments,
    ``{tree}`` the tree) runs on the tree's code at ``commit``; its
    standard output is searched for the ``symptom`` expression.
    """
    command, symptom = series.exploration
    upstream_series.git(target.tree, 'checkout', '--quiet', commit)
    with open(log, 'a') as err:
        proc = subprocess.run(
            EXPLORER + tuple(
                arg.replace('{tree}', target.tree)
                for arg in command.split()),
            env=target.default_env(), text=True,
            stdout=subprocess.PIPE, stderr=err, timeout=3600)
    with open(log, 'a') as out:
        out.write(proc.stdout)
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        raise upstream_series.SeriesError(
            'shelvefix %s exited %d: see %s'
            % (command, proc.returncode, log))
    return re.search(symptom, proc.stdout) is not None


def _control(series, target, text):
    """Write ``text`` as the reproducer's control module; its name."""
    path = os.path.join(target.tree, series.reproducer[:-3] + '_control.py')
    with open(path, 'w') as f:
        f.write(text)
    return series.test_id + '_control'


def _apply(target, patch):
    proc = upstream_series.git(target.tree, 'am', '--quiet', patch,
                               check=False)
    if proc.returncode:
        upstream_series.git(target.tree, 'am', '--abort', check=False)
        return False
    return True


def prove(series, target, modes, runs, workdir, say):
    """Prove ``series`` on ``target`` in each of ``modes``.

    :param runs: how many times the reproducer and the fixed test run
    :param say: a function taking one progress line
    :returns: the rows, one a mode
    """
    rows = [Row(series, target, mode) for mode in modes]
    log = os.path.join(workdir, 'logs', '%s-%s.log' % (
        series.slug, target.label.replace(' ', '_').replace('/', '_')))
    os.makedirs(os.path.dirname(log), exist_ok=True)
    one, two = series.patches()
    target.reset()
    try:
        for number, patch in ((1, one), (2, two)):
            if not _apply(target, patch):
                for row in rows:
                    row.applies = 'no (%04d)' % number
                say('%s on %s: %s does not apply' % (
                    series.slug, target.label, os.path.basename(patch)))
                return rows
        for row in rows:
            row.applies = 'yes'
        fixed_commit = upstream_series.git(
            target.tree, 'rev-parse', 'HEAD').stdout.strip()
        fixed_test = upstream_series.git(
            target.tree, 'show', 'HEAD:' + series.reproducer).stdout
        old_test = upstream_series.git(
            target.tree, 'show', 'HEAD~1:' + series.reproducer).stdout
        # The unfixed code: the reproducer, and the fixed test as control;
        # then the fixed code: the fixed test, the reproducer as control.
        for commit, control_text, shown, control in (
                (fixed_commit + '~1', fixed_test, 'bug shown',
                 'fixed test on unfixed code'),
                (fixed_commit, old_test, 'fixed',
                 'reproducer on fixed code')):
            upstream_series.git(target.tree, 'checkout', '--quiet', commit)
            module = _control(series, target, control_text)
            for row in rows:
                got = repeat(target, row.mode, [(series.test_id, runs),
                                                (module, 1)], log)
                passed, problems = judge(got[series.test_id], 'pass')
                setattr(row, 'bug' if commit != fixed_commit else 'fixed',
                        (passed, runs))
                row.problems += ['%s: %s' % (shown, p) for p in problems]
                failed, problems = judge(got[module], 'fail')
                row.controls[control] = failed == 1
                row.problems += ['%s: %s' % (control, p) for p in problems]
                say('%s on %s (%s): %s %d/%d; %s: %s' % (
                    series.slug, target.label, row.mode, shown, passed,
                    runs, control, 'fails' if failed else 'does not fail'))
            upstream_series.git(target.tree, 'clean', '--quiet', '-fdx')
        for row in rows:
            row.existing = existing(series, target, row.mode, workdir, log)
            row.problems += ['existing test %s matched no test' % regex
                             for regex in row.existing['empty']]
            say('%s on %s (%s): existing tests %d passed, %d failed, %d '
                'skipped' % (series.slug, target.label, row.mode,
                             row.existing['passed'], row.existing['failed'],
                             row.existing['skipped']))
        if series.exploration is not None:
            explored = (explore(series, target, fixed_commit + '~1', log),
                        explore(series, target, fixed_commit, log))
            for row in rows:
                row.explored = explored
            say('%s on %s: %s' % (series.slug, target.label,
                                  rows[0].cells()[-1]))
    except (upstream_series.SeriesError, subprocess.SubprocessError) as e:
        for row in rows:
            row.problems.append(str(e))
        say('%s on %s: %s' % (series.slug, target.label, e))
    finally:
        target.reset()
    return rows
