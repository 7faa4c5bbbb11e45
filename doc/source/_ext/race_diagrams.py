"""``.. shelvefix-diagram::``: the explorer's counterexamples, drawn.

``.. shelvefix-diagram:: ARGS`` runs ``python -m shelvefix race ARGS
--diagram FILE`` at build time and renders the first Mermaid block of FILE
(every block with ``:all:``; with ``:outcome: TEXT``, the blocks whose
title ends with that outcome, e.g. ``usage untracked``). A page with one is
read again on every build: its diagrams follow the code. ``race`` exits 0
or 1 (its verdict on the corrected code); any other status, a timeout
(120 s), no diagram or none with the outcome asked for is a warning with
the command's output.

``:saved: PATH`` (a path from the guide's source directory) reads a file
``race --diagram`` wrote instead of running it: for the counterexamples of
nova's own code, which the guide's build does not install. The nova tests
check that such a file is what the explorer finds today
(``shelvefix/tests/nova/test_finding_diagrams.py``).

The diagrams are drawn by :mod:`sequence_diagrams`. This module imports
without Sphinx (only :func:`setup` needs it): ``test_race_diagrams.py``
calls :func:`run_shelvefix_race` and :func:`select` directly.
"""

import os
import shlex
import subprocess
import sys
import tempfile

import sequence_diagrams

RACE_TIMEOUT = 120
#: How a diagram's title line ends: "title <cell>: <outcome>".
TITLE = 'title '


class RaceError(RuntimeError):
    """``shelvefix race`` failed or wrote no diagram; the text says why."""


def run_shelvefix_race(arguments, timeout=RACE_TIMEOUT, cwd=None):
    """Run ``python -m shelvefix race ARGUMENTS --diagram FILE``.

    :param arguments: the arguments, a list or a shell-like string
    :returns: the Mermaid blocks of the Markdown it wrote
    :raises RaceError: it did not run, timed out, exited with neither 0
        nor 1 (its verdicts), or wrote no diagram
    """
    if isinstance(arguments, str):
        arguments = shlex.split(arguments)
    if any(a == '--diagram' or a.startswith('--diagram=') for a in arguments):
        raise RaceError('the arguments must not include --diagram: %s'
                        % ' '.join(arguments))
    with tempfile.TemporaryDirectory(prefix='shelvefix-diagram-') as tmp:
        path = os.path.join(tmp, 'race.md')
        command = [sys.executable, '-m', 'shelvefix', 'race'] + list(
            arguments) + ['--diagram', path]
        shown = ' '.join(shlex.quote(a) for a in ['python'] + command[1:-1])
        try:
            proc = subprocess.run(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, timeout=timeout, cwd=cwd,
                universal_newlines=True, errors='replace')
        except subprocess.TimeoutExpired as e:
            output = e.output or ''
            if isinstance(output, bytes):
                output = output.decode('utf-8', 'replace')
            raise RaceError('%s FILE timed out after %d s:\n%s'
                            % (shown, timeout, output)) from e
        except OSError as e:
            raise RaceError('%s FILE could not run: %s' % (shown, e)) from e
        if proc.returncode not in (0, 1):
            raise RaceError('%s FILE exited %d:\n%s'
                            % (shown, proc.returncode, proc.stdout))
        try:
            with open(path, encoding='utf-8') as f:
                markdown = f.read()
        except OSError as e:
            raise RaceError('%s FILE wrote no diagram file (%s):\n%s'
                            % (shown, e, proc.stdout)) from e
    blocks = sequence_diagrams.mermaid_blocks(markdown)
    if not blocks:
        raise RaceError('%s FILE wrote no Mermaid diagram:\n%s\n%s'
                        % (shown, markdown.strip(), proc.stdout))
    return blocks


def select(blocks, outcome=None, every=False):
    """The blocks to draw: the first, every one, or those of ``outcome``.

    :raises RaceError: no block shows ``outcome``
    """
    if outcome:
        chosen = [block for block in blocks if any(
            line.strip().startswith(TITLE) and
            line.strip().endswith(': ' + outcome)
            for line in block.splitlines())]
        if not chosen:
            raise RaceError('no counterexample ends %r (titles: %s)' % (
                outcome, '; '.join(line.strip()[len(TITLE):]
                                   for block in blocks
                                   for line in block.splitlines()
                                   if line.strip().startswith(TITLE))))
        return chosen if every else chosen[:1]
    return blocks if every else blocks[:1]


def read_saved(path):
    """The Mermaid blocks of a file ``race --diagram`` wrote.

    :raises RaceError: it cannot be read or has no diagram
    """
    try:
        with open(path, encoding='utf-8') as f:
            markdown = f.read()
    except OSError as e:
        raise RaceError('cannot read %s: %s' % (path, e)) from e
    blocks = sequence_diagrams.mermaid_blocks(markdown)
    if not blocks:
        raise RaceError('%s has no Mermaid diagram' % path)
    return blocks


def _directive():
    from docutils.parsers.rst import directives
    from sphinx.util.docutils import SphinxDirective
    from sphinx.util import logging

    logger = logging.getLogger(__name__)

    class ShelvefixDiagramDirective(SphinxDirective):
        """``.. shelvefix-diagram:: ARGS``: shelvefix race's diagrams."""

        has_content = False
        required_arguments = 0
        optional_arguments = 1
        final_argument_whitespace = True
        option_spec = {'all': directives.flag,
                       'outcome': directives.unchanged_required,
                       'saved': directives.path}

        def run(self):
            arguments = self.arguments[0] if self.arguments else ''
            saved = self.options.get('saved')
            try:
                if saved:
                    path = os.path.join(self.env.srcdir, saved)
                    self.env.note_dependency(path)
                    blocks = read_saved(path)
                else:
                    # The diagram comes from the code, not the page: read
                    # the page again on every build (see _reread).
                    _diagram_docs(self.env).add(self.env.docname)
                    blocks = run_shelvefix_race(arguments,
                                                cwd=self.env.srcdir)
                blocks = select(blocks, self.options.get('outcome'),
                                'all' in self.options)
            except (RaceError, ValueError) as e:
                logger.warning('shelvefix-diagram %s: %s',
                               saved or arguments, e,
                               location=self.get_location(),
                               type='sequence-diagram', subtype='race')
                return []
            result = []
            for block in blocks:
                result.extend(sequence_diagrams.nodes_for(self, block))
            return result

    return ShelvefixDiagramDirective


def _diagram_docs(env):
    if not hasattr(env, 'shelvefix_diagram_docs'):
        env.shelvefix_diagram_docs = set()
    return env.shelvefix_diagram_docs


def _reread(app, env, added, changed, removed):
    return sorted(_diagram_docs(env) - set(removed))


def _purge(app, env, docname):
    _diagram_docs(env).discard(docname)


def _merge(app, env, docnames, other):
    _diagram_docs(env).update(_diagram_docs(other) & set(docnames))


def setup(app):
    app.setup_extension('sequence_diagrams')
    app.add_directive('shelvefix-diagram', _directive())
    app.connect('env-get-outdated', _reread)
    app.connect('env-purge-doc', _purge)
    app.connect('env-merge-info', _merge)
    return {'version': '1.0', 'parallel_read_safe': True,
            'parallel_write_safe': True}
