r"""Pages a reader can scan: each literal block in its own language, none
wider than the page, no wall of prose.

Every literal block of the guide gets a language, in this order:

* the one its directive names (``.. code-block:: python``); a block
  highlighted as Python must then be Python (it parses);
* the one its ``.. ci:`` comment implies (see ``.ci/readme.py``):
  ``run`` and ``quickstart`` blocks are shell commands, shown as a console
  session (a ``$`` prompt before each command, not in the page's source,
  so that CI still runs the text as written); ``output`` and
  ``figures`` are plain text; ``python`` is Python; ``config`` is INI;
  a ``skip`` block is read as a block without a comment;
* for any other block (an example kept from running, a docstring's):
  Python if it parses as a program that is not a bare word or two, a diff
  if it looks like one, a console session if each line starts with a
  command shelvefix's pages run (``shelvefix``, ``tox``, ``python``...),
  plain text otherwise.

Then the build warns (an error under ``-W``), naming the page and line:

* a line of a literal block longer than ``readable_pages_width``
  characters (the column the theme gives a block at a laptop's width),
  unless an RST comment ``.. wide`` comes before the block (and its
  ``.. ci:`` comment, if any): that block is a tool's table (or a line
  whose point is that it is one) shown as the tool prints it, and
  scrolls sideways (class ``wide-block``, ``_static/shelvefix.css``; a
  directive may mark a block it makes so, as the diagrams do their
  Mermaid source). Other wide lines are folded: a command with ``\``
  (``.ci/readme.py`` joins the lines), a tool's output with ``...``,
  which ``.ci/readme.py`` reads as "anything";
* a paragraph of more than ``readable_pages_words`` words.

:func:`language` and :func:`check_block` need no Sphinx: the unit tests
(``test_readable_pages.py``) call them directly.
"""

import ast
import re

#: Commands that open a console line on shelvefix's pages.
COMMANDS = ('shelvefix', 'tox', 'python', 'python3', 'pip', 'git', 'cd',
            'dask', 'sudo', 'apt-get', 'export', 'mysql', 'psql',
            'oslo-config-generator', 'stestr', 'reno', '.venv/', '.tox/',
            'SHELVEFIX_', 'CI=', 'OS_', 'COLUMNS=', 'kill', 'bash', 'rm',
            'mkdir', 'cat', 'diff', 'docker', 'systemctl', 'source')
#: What a ``.. ci:`` kind says a block is.
KIND_LANGUAGES = {'run': 'console', 'quickstart': 'console',
                  'output': 'text', 'figures': 'text', 'python': 'python',
                  'config': 'ini'}
PYTHON = ('python', 'python3', 'py', 'py3')
CI_COMMENT = re.compile(r'^ci: (\S+)')


def _is_python(text):
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    # "foo", "a.b" or "x -y" parse too: a program states or defines.
    return any(not isinstance(node, ast.Expr) or
               isinstance(node.value, ast.Call) for node in tree.body)


def _is_command(line):
    line = line.lstrip()
    return line.startswith('$ ') or any(
        line == word or line.startswith(word + ' ') or
        (word.endswith(('/', '_', '=')) and line.startswith(word))
        for word in COMMANDS)


def language(text, kind=None):
    """The language to show ``text`` in, given its ``.. ci:`` kind."""
    if kind in KIND_LANGUAGES:
        return KIND_LANGUAGES[kind]
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return 'text'
    if lines[0].startswith(('--- ', 'diff ', '@@ ')):
        return 'diff'
    if all(_is_command(line) or line.lstrip().startswith('#') or
           previous.rstrip().endswith('\\')
           for previous, line in zip([''] + lines, lines)):
        return 'console'
    if _is_python(text):
        return 'python'
    return 'text'


def as_console(text):
    """Shell commands as a session: a prompt before each command."""
    shown = []
    continued = False
    for line in text.splitlines():
        if line.strip() and not continued and not line.startswith('$ '):
            line = '$ ' + line
        shown.append(line)
        continued = line.rstrip().endswith('\\')
    return '\n'.join(shown)


def check_block(text, lang, width):
    """What is wrong with a block shown in ``lang``: a list of sentences.

    ``width``: the widest line allowed, None for a ``wide`` block.
    """
    problems = []
    if lang in PYTHON and not _is_python(text):
        problems.append('highlighted as Python but is not Python: %r'
                        % text.splitlines()[0][:60])
    for number, line in enumerate(text.splitlines(), 1):
        if width is not None and len(line) > width:
            problems.append('line %d of the block is %d characters wide '
                            '(the page shows %d): %r...' % (
                                number, len(line), width, line[:40]))
    return problems


def words(text):
    return len(text.split())


def read_comments(doctree, nodes):
    """Each literal block's ``.. ci:`` kind, by the block's ``id()``.

    A comment belongs to the next literal block, as .ci/readme.py pairs
    them; a block after ``.. wide`` gets the class ``wide-block``.
    """
    kinds = {}
    pending, widen = None, False
    for node in doctree.findall(lambda n: isinstance(
            n, (nodes.comment, nodes.literal_block))):
        if isinstance(node, nodes.comment):
            text = node.astext().strip()
            match = CI_COMMENT.match(text)
            if match:
                pending = match.group(1)
            elif text == 'wide':
                widen = True
        else:
            kinds[id(node)] = pending
            if widen:
                node['classes'].append('wide-block')
            pending, widen = None, False
    return kinds


def _on_doctree_read(app, doctree):
    from docutils import nodes
    from sphinx.util import logging
    log = logging.getLogger(__name__)
    width = app.config.readable_pages_width
    kinds = read_comments(doctree, nodes)
    for node in list(doctree.findall(nodes.literal_block)):
        text = node.astext()
        explicit = node.get('language')
        if explicit in (None, 'default'):
            # A "::" block: Sphinx leaves it to highlight_language.
            lang = language(text, kinds.get(id(node)))
        else:
            lang = explicit
        if lang == 'console':
            shown = as_console(text)
            if shown != text:
                node.children = [nodes.Text(shown)]
                node.rawsource = shown
        node['language'] = lang
        # After ".. wide", or made so by a directive (a diagram's source).
        for problem in check_block(text, lang, None if 'wide-block' in
                                   node['classes'] else width):
            log.warning(problem, location=node)
    limit = app.config.readable_pages_words
    for node in doctree.findall(nodes.paragraph):
        count = words(node.astext())
        if count > limit:
            log.warning('a paragraph of %d words (at most %d: split it): '
                        '%r...', count, limit, node.astext()[:50],
                        location=node)


def setup(app):
    app.add_config_value('readable_pages_width', 90, 'env')
    app.add_config_value('readable_pages_words', 150, 'env')
    # Before Sphinx's own highlight settings reach a "::" block.
    app.connect('doctree-read', _on_doctree_read, priority=400)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
