#!/usr/bin/env python3
"""Run the examples of README.rst and of the guide, so that none can rot.

The pages are README.rst, then every page of the guide (``doc/source``,
``*.rst``, in path order). Every literal block (``::``, or a
``code-block`` directive) follows a comment saying what it is (an RST
comment: it does not show on the rendered page)::

    .. ci: quickstart   the quick start's two commands, printed one per
                        line by ``readme.py quickstart`` for .ci/run
    .. ci: run          shell commands, one per line (a line ending in
                        a backslash goes on on the next), run in order
                        with bash from the clone's root, the quick
                        start's virtualenv first on PATH; each must
                        exit 0
    .. ci: run exit=N   the same, each must exit N
    .. ci: output       what the last command of the ``run`` block before
                        it prints: every line of the block must appear in
                        that output, in order, with runs of spaces folded;
                        ``...`` in a line matches anything
    .. ci: figures [NOTE]
                        machine-dependent figures README quotes from what
                        the last command before it printed (NOTE: where
                        they were measured): each line must appear in that
                        output, in order, as for ``output``, except that
                        every number in it matches any number; CI then
                        prints each line as README says it and as it was
                        measured, and never fails because they differ
    .. ci: python       a Python program, run with the virtualenv's Python
    .. ci: config       an oslo.config file; shelvefix must load it
    .. ci: skip REASON  shown, not run: it needs what a fresh machine does
                        not have (a deployment, your own nova checkout)

A literal block without such a comment is an error, so an example cannot
be added without being run. A time, a rate or a ratio that depends on the
machine belongs in a ``figures`` block (or in the command's own output),
never in prose: there, CI shows it beside the figure it measures.

Each page starts with a fresh notion of "the last command": an
``output`` block judges the commands of its own page.

Usage::

    readme.py quickstart        print the quick start's commands
    readme.py run [WORD ...]    run every example (or those whose text
                                holds a WORD); a summary at the end
    readme.py list              the examples, one line each
    readme.py pages             the pages read, one per line

Only the standard library is used: this runs before anything is installed.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, 'README.rst')
GUIDE = os.path.join(ROOT, 'doc', 'source')
VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
KINDS = ('quickstart', 'run', 'output', 'figures', 'python', 'config',
         'skip')
#: The kinds that judge the output of the commands run before them.
OUTPUT_KINDS = ('output', 'figures')
#: A number in a ``figures`` line: 7, 12,137, 0.25 (a sign is text).
NUMBER = re.compile(r'\d+(?:,\d{3})*(?:\.\d+)?')
COMMAND_TIMEOUT = 1800

Block = collections.namedtuple('Block', ['kind', 'argument', 'text', 'line',
                                         'page'])
Block.__new__.__defaults__ = ('README.rst',)
# A directive whose content is a literal block.
CODE_DIRECTIVE = re.compile(
    r'^\s*\.\. (code-block|code|sourcecode|literalinclude)::')


class ReadmeError(Exception):
    """README.rst breaks the rules above."""


def blocks(text, page='README.rst'):
    """The literal blocks of an RST text, with their ``ci`` comments.

    :returns: a list of :class:`Block`
    :raises ReadmeError: a literal block with no comment, or an unknown
        kind
    """
    lines = text.splitlines()
    found = []
    pending = None
    index = 0
    while index < len(lines):
        line = lines[index]
        match = re.match(r'^\.\. ci: (\S+)\s*(.*)$', line)
        if match:
            if match.group(1) not in KINDS:
                raise ReadmeError('line %d: unknown kind %r'
                                  % (index + 1, match.group(1)))
            pending = (match.group(1), match.group(2).strip(), index + 1)
            index += 1
            continue
        if CODE_DIRECTIVE.match(line):
            # Only literal blocks are run: a directive's body would not be,
            # and its ci comment would go to the next literal block.
            if pending is None:
                raise ReadmeError('line %d: a %s without a ".. ci:" comment '
                                  'before it' % (index + 1, line.strip()))
            raise ReadmeError('line %d: %s is never run: write it as a '
                              'literal block (::)' % (index + 1,
                                                      line.strip()))
        if line.endswith('::') and not line.lstrip().startswith('..'):
            body, index = _literal_block(lines, index + 1)
            if body is None:
                continue
            if pending is None:
                raise ReadmeError('line %d: a literal block without a '
                                  '".. ci:" comment before it' % index)
            found.append(Block(pending[0], pending[1], body, pending[2],
                               page))
            pending = None
            continue
        index += 1
    return found


def _literal_block(lines, index):
    """The indented block starting after ``::``; (text, next index)."""
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index >= len(lines) or not lines[index].startswith((' ', '\t')):
        return None, index
    indent = len(lines[index]) - len(lines[index].lstrip())
    body = []
    while index < len(lines) and (not lines[index].strip() or
                                  lines[index].startswith(' ' * indent)):
        body.append(lines[index][indent:])
        index += 1
    while body and not body[-1].strip():
        body.pop()
    return '\n'.join(body), index


def pages():
    """README.rst, then the guide's pages, as paths from the clone's root."""
    found = ['README.rst']
    for directory, _dirs, files in sorted(os.walk(GUIDE)):
        for name in sorted(files):
            if name.endswith('.rst'):
                found.append(os.path.relpath(os.path.join(directory, name),
                                             ROOT))
    return found


def read_blocks(paths=None):
    """The blocks of every page (or of ``paths``), page by page.

    :raises ReadmeError: as :func:`blocks`, naming the page
    """
    found = []
    for page in paths or pages():
        with open(os.path.join(ROOT, page)) as f:
            try:
                found.extend(blocks(f.read(), page))
            except ReadmeError as e:
                raise ReadmeError('%s: %s' % (page, e))
    return found


def quickstart(found):
    """The quick start's two commands.

    :raises ReadmeError: not exactly one such block of two commands
    """
    starts = [b for b in found if b.kind == 'quickstart']
    if any(b.page != 'README.rst' for b in starts):
        raise ReadmeError('the quick start belongs in README.rst, not in %s'
                          % ', '.join(b.page for b in starts
                                      if b.page != 'README.rst'))
    if len(starts) != 1:
        raise ReadmeError('README needs exactly one quick start block, has '
                          '%d' % len(starts))
    commands = [line for line in starts[0].text.splitlines()
                if line.strip()]
    if len(commands) != 2:
        raise ReadmeError('the quick start must have two commands, has %d'
                          % len(commands))
    return commands


def commands(text):
    """A ``run`` block's commands, one per line.

    A line ending in ``\\`` goes on on the next, as a shell reads it: the
    guide folds a long command so that it fits the page.
    """
    found, pending = [], ''
    for line in text.splitlines():
        if line.rstrip().endswith('\\'):
            pending += line.rstrip()[:-1].strip() + ' '
            continue
        line = (pending + line.strip()).strip()
        pending = ''
        if line:
            found.append(line)
    if pending.strip():
        found.append(pending.strip())
    return found


def _fold(text):
    return ' '.join(text.split())


def output_matches(expected, actual):
    """Every line of ``expected`` in ``actual``, in order.

    :returns: None, or the first expected line not found
    """
    remaining = [_fold(line) for line in actual.splitlines()]
    position = 0
    for line in expected.splitlines():
        if not line.strip():
            continue
        pattern = '.*'.join(re.escape(part)
                            for part in _fold(line).split('...'))
        for at in range(position, len(remaining)):
            if re.search(pattern, remaining[at]):
                position = at + 1
                break
        else:
            return line
    return None


def _figure_pattern(line):
    """A regular expression for a figures line: each number a group."""
    pieces = []
    for piece in _fold(line).split('...'):
        parts, start = [], 0
        for number in NUMBER.finditer(piece):
            parts.append(re.escape(piece[start:number.start()]))
            parts.append('(%s)' % NUMBER.pattern)
            start = number.end()
        parts.append(re.escape(piece[start:]))
        pieces.append(''.join(parts))
    return '.*'.join(pieces)


def figures_match(expected, actual):
    """Every line of ``expected`` in ``actual``, in order, numbers free.

    :returns: ``(pairs, missing)``: for each line found, README's line,
        the line as measured and whether their numbers are the same; and
        None, or the first expected line not found
    """
    remaining = [_fold(line) for line in actual.splitlines()]
    position = 0
    pairs = []
    for line in expected.splitlines():
        if not line.strip():
            continue
        pattern = _figure_pattern(line)
        for at in range(position, len(remaining)):
            found = re.search(pattern, remaining[at])
            if found:
                position = at + 1
                said = NUMBER.findall(_fold(line))
                pairs.append((_fold(line), found.group(0),
                              list(found.groups()) == said))
                break
        else:
            return pairs, line
    return pairs, None


def environment():
    env = dict(os.environ)
    env['PATH'] = VENV_BIN + os.pathsep + env.get('PATH', '')
    env['VIRTUAL_ENV'] = os.path.dirname(VENV_BIN)
    env.pop('PYTHONHOME', None)
    return env


def _run(command, env):
    started = time.monotonic()
    proc = subprocess.run(['bash', '-c', command], cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=COMMAND_TIMEOUT)
    return proc, time.monotonic() - started


def _python(block, env):
    with tempfile.NamedTemporaryFile('w', suffix='.py', delete=False) as f:
        f.write(block.text + '\n')
    try:
        return _run('python %s' % f.name, env)
    finally:
        os.unlink(f.name)


def _config(block, env):
    with tempfile.NamedTemporaryFile('w', suffix='.conf', delete=False) as f:
        f.write(block.text + '\n')
    code = ('from shelvefix import conf; '
            'conf.load_config_files([%r])' % f.name)
    try:
        return _run('python -c %s' % _quote(code), env)
    finally:
        os.unlink(f.name)


def _quote(text):
    return "'%s'" % text.replace("'", "'\"'\"'")


def run(found, words=(), out=sys.stdout):
    """Run the examples; returns (passed, failed, skipped) counts."""
    env = environment()
    passed = failed = skipped = 0
    last_output = None
    last_ran = False

    failures = []

    def report(ok, what, seconds, detail='', where=None):
        out.write('%s %s (%.1f s)%s\n' % ('ok  ' if ok else 'FAIL', what,
                                          seconds, detail))
        out.flush()
        if not ok:
            failures.append(what if where is None else
                            '%s, at %s' % (what, where))

    page = None
    for block in found:
        if block.page != page:
            page, last_output, last_ran = block.page, None, False
        where = '%s:%d' % (block.page, block.line)
        if words and block.kind not in OUTPUT_KINDS and not any(
                word in block.text for word in words):
            last_ran = False
            continue
        if block.kind == 'quickstart':
            continue
        if block.kind == 'skip':
            skipped += 1
            out.write('skip %s: %s\n' % (block.text.splitlines()[0],
                                         block.argument))
            # What follows shows the skipped command's output: nothing
            # ran to judge it by.
            last_output, last_ran = None, False
            continue
        if block.kind == 'output':
            if not last_ran:
                continue
            missing = output_matches(block.text, last_output or '')
            if missing is None:
                passed += 1
                report(True, 'output as %s shows' % where, 0)
            else:
                failed += 1
                report(False, 'output as %s shows' % where, 0,
                       ': no line matches %r; it printed:'
                       '\n%s' % (missing, last_output))
            continue
        if block.kind == 'figures':
            if not last_ran:
                continue
            pairs, missing = figures_match(block.text, last_output or '')
            what = 'figures %s quotes%s' % (
                where, ' (%s)' % block.argument if block.argument else '')
            if missing is None:
                passed += 1
                report(True, what, 0, ', beside this run\'s:')
            else:
                failed += 1
                report(False, what, 0, ': no line matches %r; it printed:'
                       '\n%s' % (missing, last_output))
            for said, measured, same in pairs:
                if same:
                    out.write('       %s says, measured too: %s\n'
                              % (block.page, said))
                else:
                    out.write('       %s says: %s\n'
                              '       measured: %s\n'
                              % (block.page, said, measured))
            out.flush()
            continue
        if block.kind in ('python', 'config'):
            proc, seconds = (_python if block.kind == 'python' else
                             _config)(block, env)
            ok = proc.returncode == 0
            passed, failed = passed + ok, failed + (not ok)
            report(ok, '%s example at %s' % (block.kind, where),
                   seconds, '' if ok else ':\n%s%s' % (proc.stdout,
                                                       proc.stderr))
            continue
        expected = int(block.argument.split('=', 1)[1]) if block.argument \
            else 0
        for command in commands(block.text):
            proc, seconds = _run(command, env)
            ok = proc.returncode == expected
            passed, failed = passed + ok, failed + (not ok)
            last_output, last_ran = proc.stdout + proc.stderr, True
            report(ok, '$ %s -> %d' % (command, proc.returncode), seconds,
                   '' if ok else ' (%s says %d):\n%s' % (
                       where, expected, (proc.stdout + proc.stderr)[-4000:]),
                   where=where)
    # Named again at the end, where a log cut to its last lines shows them.
    for what in failures:
        out.write('failed: %s\n' % what)
    out.write('examples: %d passed, %d failed, %d skipped\n'
              % (passed, failed, skipped))
    return passed, failed, skipped


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('action', choices=('quickstart', 'run', 'list',
                                           'pages'))
    parser.add_argument('words', nargs='*')
    args = parser.parse_args(argv)
    try:
        found = read_blocks()
        if args.action == 'quickstart':
            print('\n'.join(quickstart(found)))
            return 0
        if args.action == 'list':
            for block in found:
                print('%s:%d %-10s %s' % (block.page, block.line, block.kind,
                                          block.text.splitlines()[0]))
            return 0
        if args.action == 'pages':
            print('\n'.join(pages()))
            return 0
        quickstart(found)
    except ReadmeError as e:
        sys.stderr.write('%s\n' % e)
        return 2
    _passed, failed, _skipped = run(found, args.words)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
