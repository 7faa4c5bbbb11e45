"""Mermaid sequence diagrams rendered to inline SVG at build time.

No JavaScript and no network: the diagram is laid out here and written into
the page as SVG. Only the subset of Mermaid's ``sequenceDiagram`` that
shelvefix emits (:func:`shelvefix.race.report.mermaid`) is understood::

    sequenceDiagram
        title Some title
        participant C as compute
        participant P as placement
        C->>P: GET /allocations/{instance}
        P-->>C: 200 gen=1
        Note over C,P: outcome: ok

plus ``participant X`` (labelled ``X``), ``Note over X``, ``Note left of X``
and ``Note right of X``, ``%%`` comments, blank lines and ``<br>`` line
breaks in texts. Participants that a message names without declaring are
added in order of appearance, as Mermaid does. Anything else (``loop``,
``alt``, ``activate``, other arrows...) is reported, naming the line, and
not drawn: under ``sphinx-build -W`` the build fails.

``.. mermaid::`` draws the directive's content; ``.. shelvefix-diagram::``
(:mod:`race_diagrams`) draws the explorer's counterexamples with
:func:`nodes_for`. A line not understood, or a diagram with no participant,
is a warning.

This module imports without Sphinx (only :func:`setup` and the directives
need it), so that the renderer can be tested on its own:
``python -m unittest discover -s doc/source/_ext -p "test_*.py"``.
"""

import collections
import re
from xml.sax import saxutils

__all__ = ['DiagramError', 'Diagram', 'Message', 'Note', 'parse',
           'render_svg', 'mermaid_blocks', 'nodes_for', 'setup']

Message = collections.namedtuple('Message', 'source target text dashed')
Note = collections.namedtuple('Note', 'participants placement text')


class DiagramError(ValueError):
    """A diagram that cannot be read; ``problems`` lists each bad line."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__('; '.join(problems))


class Diagram(object):
    """A parsed sequence diagram.

    ``participants`` is a list of ``(id, label)`` in column order,
    ``events`` a list of :class:`Message` and :class:`Note` in order,
    ``problems`` one text per line that was not understood.
    """

    def __init__(self):
        self.title = None
        self.participants = []
        self.events = []
        self.problems = []

    def participant(self, pid, label=None):
        for index, (known, _label) in enumerate(self.participants):
            if known == pid:
                if label is not None:
                    self.participants[index] = (pid, label)
                return
        self.participants.append((pid, pid if label is None else label))

    @property
    def messages(self):
        return [e for e in self.events if isinstance(e, Message)]

    @property
    def notes(self):
        return [e for e in self.events if isinstance(e, Note)]


_ID = r'[A-Za-z0-9_][A-Za-z0-9_.-]*?'
_PARTICIPANT = re.compile(
    r'^participant\s+(?P<id>[A-Za-z0-9_][A-Za-z0-9_.-]*)'
    r'(?:\s+as\s+(?P<label>\S.*))?$')
# Longest arrow first: '-->>' before '->>'.
_MESSAGE = re.compile(
    r'^(?P<source>%s)\s*(?P<arrow>-->>|->>)\s*(?P<target>%s)\s*:\s?'
    r'(?P<text>.*)$' % (_ID, _ID))
_NOTE = re.compile(
    r'^[Nn]ote\s+(?P<placement>over|left of|right of)\s+'
    r'(?P<ids>[A-Za-z0-9_.-]+(?:\s*,\s*[A-Za-z0-9_.-]+)?)\s*:\s?'
    r'(?P<text>.*)$')
_TITLE = re.compile(r'^title(?:\s*:\s*|\s+)(?P<text>.*)$')


def parse(text):
    """Parse Mermaid sequence diagram ``text`` into a :class:`Diagram`.

    Lines that are not understood are recorded in ``problems`` (with their
    line number and text) and left out of the diagram.
    """
    diagram = Diagram()
    lines = text.splitlines()
    started = False
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith('%%'):
            continue
        if not started:
            if line == 'sequenceDiagram':
                started = True
            else:
                diagram.problems.append(
                    'line %d: expected "sequenceDiagram", got %r'
                    % (number, raw))
                started = True
            continue
        match = _TITLE.match(line)
        if match:
            diagram.title = match.group('text').strip()
            continue
        match = _PARTICIPANT.match(line)
        if match:
            label = match.group('label')
            diagram.participant(match.group('id'),
                                label.strip() if label else None)
            continue
        match = _MESSAGE.match(line)
        if match:
            source, target = match.group('source'), match.group('target')
            diagram.participant(source)
            diagram.participant(target)
            diagram.events.append(Message(
                source, target, match.group('text').strip(),
                match.group('arrow') == '-->>'))
            continue
        match = _NOTE.match(line)
        if match:
            ids = [i.strip() for i in match.group('ids').split(',')]
            if match.group('placement') != 'over' and len(ids) > 1:
                diagram.problems.append(
                    'line %d: a note %s one participant only: %r'
                    % (number, match.group('placement'), raw))
                continue
            for pid in ids:
                diagram.participant(pid)
            diagram.events.append(Note(ids, match.group('placement'),
                                       match.group('text').strip()))
            continue
        diagram.problems.append('line %d: not understood: %r'
                                % (number, raw))
    if not started:
        diagram.problems.append('empty diagram: no "sequenceDiagram" line')
    return diagram


def parse_strict(text):
    """:func:`parse`, raising :class:`DiagramError` on any problem."""
    diagram = parse(text)
    if diagram.problems:
        raise DiagramError(diagram.problems)
    return diagram


# -- layout -----------------------------------------------------------------

FONT = ('-apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, '
        'sans-serif')
MONO = 'SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace'
TEXT_SIZE = 12           # messages and notes, monospace
CHAR_WIDTH = 7.3         # of TEXT_SIZE monospace (0.6 em), rounded up
LABEL_SIZE = 13          # participant boxes
TITLE_SIZE = 15
LINE_HEIGHT = 15
WRAP = 46                # characters per line of a message or a note
BOX_HEIGHT = 34
BOX_PAD = 12
MIN_GAP = 60             # between two participant boxes
MARGIN = 16
ARROW_GAP = 8            # between a message's text and its arrow
ROW_GAP = 14             # between two events
ARROW_HEAD = 8

_BR = re.compile(r'<br\s*/?>', re.I)


def _sans_width(text, size):
    """A generous estimate of ``text``'s width in a sans-serif font."""
    width = 0.0
    for char in text:
        if char in 'il.,:;|!\'`1 ()[]':
            width += 0.34
        elif char.isupper() or char in 'mwMW@%&':
            width += 0.78
        else:
            width += 0.6
    return width * size


def _mono_width(text):
    return len(text) * CHAR_WIDTH


def wrap(text, width=WRAP):
    """``text`` in lines of at most ``width`` characters where it can.

    ``<br>`` breaks a line; long lines break at spaces, and a word longer
    than ``width`` stays whole.
    """
    lines = []
    for part in _BR.split(text):
        words = part.split()
        current = ''
        for word in words:
            if current and len(current) + 1 + len(word) > width:
                lines.append(current)
                current = word
            else:
                current = word if not current else current + ' ' + word
        lines.append(current)
    return lines


def _esc(text):
    return saxutils.escape(text, {'"': '&quot;', "'": '&#39;'})


def _fmt(value):
    return ('%.1f' % value).rstrip('0').rstrip('.')


def render_svg(diagram):
    """The SVG document (a string) of a parsed :class:`Diagram`.

    Participants are columns: a labelled box at the top and at the bottom
    and a lifeline between them. Each message is an arrow (dashed for a
    reply) from its source's lifeline to its target's with its text above
    it; a message to itself is a loop. Notes are boxes over (or beside)
    their participants. The title is on top.
    """
    ids = [pid for pid, _label in diagram.participants]
    labels = [label for _pid, label in diagram.participants]
    column = {pid: index for index, pid in enumerate(ids)}
    count = len(ids)
    box_widths = [max(_sans_width(label, LABEL_SIZE) + 2 * BOX_PAD, 70)
                  for label in labels]

    # Gaps between adjacent lifelines: wide enough for the boxes, then
    # widened for every message and note (the shortest spans first).
    gaps = [box_widths[i] / 2 + MIN_GAP + box_widths[i + 1] / 2
            for i in range(count - 1)]
    left_extra = box_widths[0] / 2 if count else 0
    right_extra = box_widths[-1] / 2 if count else 0
    needs = []
    for event in diagram.events:
        lines = wrap(event.text)
        width = max(_mono_width(line) for line in lines)
        if isinstance(event, Message):
            a, b = sorted((column[event.source], column[event.target]))
            if a == b:
                needs.append((1, a, a + 1, width + 40))
            else:
                needs.append((b - a, a, b, width + 24))
        else:
            cols = sorted(column[p] for p in event.participants)
            a, b = cols[0], cols[-1]
            if event.placement == 'left of':
                needs.append((1, a - 1, a, width + 2 * BOX_PAD + 20))
            elif event.placement == 'right of':
                needs.append((1, a, a + 1, width + 2 * BOX_PAD + 20))
            elif a == b:
                half = (width + 2 * BOX_PAD) / 2
                needs.append((1, a - 1, a, half + 10))
                needs.append((1, a, a + 1, half + 10))
            else:
                needs.append((b - a, a, b, width + 2 * BOX_PAD - 40))
    for span, a, b, width in sorted(needs, key=lambda need: need[0]):
        if a < 0:
            left_extra = max(left_extra, width)
            continue
        if b > count - 1:
            right_extra = max(right_extra, width)
            continue
        have = sum(gaps[a:b])
        if have < width:
            for i in range(a, b):
                gaps[i] += (width - have) / span

    xs = []
    x = MARGIN + left_extra
    for index in range(count):
        xs.append(x)
        if index < count - 1:
            x += gaps[index]
    width = (xs[-1] if xs else MARGIN) + right_extra + MARGIN

    title_lines = wrap(diagram.title, 90) if diagram.title else []
    if title_lines:
        width = max(width, max(_sans_width(line, TITLE_SIZE)
                               for line in title_lines) + 2 * MARGIN)

    parts = []
    y = MARGIN
    for line in title_lines:
        y += TITLE_SIZE + 3
        parts.append('<text class="title" x="%s" y="%s" text-anchor="middle" '
                     'font-family=\'%s\' font-size="%d" font-weight="bold" '
                     'fill="#222">%s</text>'
                     % (_fmt(width / 2), _fmt(y), FONT, TITLE_SIZE,
                        _esc(line)))
    if title_lines:
        y += 12
    top = y

    def boxes(y_top, where):
        for index, label in enumerate(labels):
            bw = box_widths[index]
            parts.append(
                '<g class="participant %s"><rect x="%s" y="%s" width="%s" '
                'height="%d" rx="3" fill="#eaeaf7" stroke="#6c6ca8"/>'
                '<text x="%s" y="%s" text-anchor="middle" '
                'font-family=\'%s\' font-size="%d" fill="#222">%s</text></g>'
                % (where, _fmt(xs[index] - bw / 2), _fmt(y_top), _fmt(bw),
                   BOX_HEIGHT, _fmt(xs[index]),
                   _fmt(y_top + BOX_HEIGHT / 2 + LABEL_SIZE / 2 - 2),
                   FONT, LABEL_SIZE, _esc(label)))

    y = top + BOX_HEIGHT + ROW_GAP + 4
    events = []
    for event in diagram.events:
        lines = wrap(event.text)
        if isinstance(event, Message):
            text_top = y
            src, dst = xs[column[event.source]], xs[column[event.target]]
            y_arrow = text_top + len(lines) * LINE_HEIGHT + ARROW_GAP
            events.append(_message_svg(event, lines, src, dst, text_top,
                                       y_arrow))
            y = y_arrow + ROW_GAP + (18 if src == dst else 0)
        else:
            cols = [xs[column[p]] for p in event.participants]
            note_w = max(_mono_width(line) for line in lines) + 2 * BOX_PAD
            note_h = len(lines) * LINE_HEIGHT + 10
            if event.placement == 'left of':
                x0 = cols[0] - 10 - note_w
                x1 = cols[0] - 10
            elif event.placement == 'right of':
                x0 = cols[0] + 10
                x1 = x0 + note_w
            else:
                centre = (min(cols) + max(cols)) / 2
                x0 = min(min(cols) - 30, centre - note_w / 2)
                x1 = max(max(cols) + 30, centre + note_w / 2)
            events.append(_note_svg(lines, x0, x1, y, note_h))
            y += note_h + ROW_GAP
    bottom = y + 4

    for index in range(count):
        parts.append('<line class="lifeline" x1="%s" y1="%s" x2="%s" y2="%s" '
                     'stroke="#999" stroke-width="1"/>'
                     % (_fmt(xs[index]), _fmt(top + BOX_HEIGHT),
                        _fmt(xs[index]), _fmt(bottom)))
    boxes(top, 'top')
    parts.extend(events)
    boxes(bottom, 'bottom')
    height = bottom + BOX_HEIGHT + MARGIN

    label = diagram.title or 'sequence diagram'
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" class="sequence-diagram" '
        'role="img" aria-label="%s" width="%s" height="%s" '
        'viewBox="0 0 %s %s" style="max-width: 100%%; height: auto">'
        '<title>%s</title>%s</svg>'
        % (_esc(label), _fmt(width), _fmt(height), _fmt(width),
           _fmt(height), _esc(label), ''.join(parts)))


def _text_lines(lines, x, y_first, anchor, halo=False):
    # A white halo keeps a message legible where it crosses a lifeline.
    halo = (' stroke="#fff" stroke-width="3" paint-order="stroke"'
            if halo else '')
    return ''.join(
        '<text x="%s" y="%s" text-anchor="%s" font-family=\'%s\' '
        'font-size="%d" fill="#222"%s>%s</text>'
        % (_fmt(x), _fmt(y_first + i * LINE_HEIGHT), anchor, MONO, TEXT_SIZE,
           halo, _esc(line))
        for i, line in enumerate(lines))


def _arrowhead(x, y, direction):
    return ('<polygon class="arrowhead" points="%s,%s %s,%s %s,%s" '
            'fill="#333"/>'
            % (_fmt(x), _fmt(y), _fmt(x - direction * ARROW_HEAD),
               _fmt(y - ARROW_HEAD / 2), _fmt(x - direction * ARROW_HEAD),
               _fmt(y + ARROW_HEAD / 2)))


def _message_svg(message, lines, src, dst, text_top, y):
    dash = ' stroke-dasharray="5 4"' if message.dashed else ''
    kind = 'reply' if message.dashed else 'call'
    first = text_top + LINE_HEIGHT - 3
    if src == dst:
        loop = 30
        return ('<g class="message %s">%s<path d="M %s %s H %s V %s H %s" '
                'fill="none" stroke="#333" stroke-width="1.3"%s/>%s</g>'
                % (kind, _text_lines(lines, src + 8, first, 'start', True),
                   _fmt(src), _fmt(y), _fmt(src + loop), _fmt(y + 18),
                   _fmt(src + ARROW_HEAD), dash,
                   _arrowhead(src, y + 18, -1)))
    direction = 1 if dst > src else -1
    return ('<g class="message %s">%s<line x1="%s" y1="%s" x2="%s" y2="%s" '
            'stroke="#333" stroke-width="1.3"%s/>%s</g>'
            % (kind,
               _text_lines(lines, (src + dst) / 2, first, 'middle', True),
               _fmt(src), _fmt(y), _fmt(dst - direction * ARROW_HEAD),
               _fmt(y), dash, _arrowhead(dst, y, direction)))


def _note_svg(lines, x0, x1, y, height):
    return ('<g class="note"><rect x="%s" y="%s" width="%s" height="%s" '
            'fill="#fff5ad" stroke="#aaaa33"/>%s</g>'
            % (_fmt(x0), _fmt(y), _fmt(x1 - x0), _fmt(height),
               _text_lines(lines, (x0 + x1) / 2, y + LINE_HEIGHT + 1,
                           'middle')))


# -- Markdown ---------------------------------------------------------------

_BLOCK = re.compile(r'^```mermaid[ \t]*\n(.*?)^```[ \t]*$', re.M | re.S)


def mermaid_blocks(markdown):
    """The contents of the ```` ```mermaid ```` blocks of a Markdown text."""
    return [block.rstrip('\n') for block in _BLOCK.findall(markdown)]


# -- Sphinx -----------------------------------------------------------------

def nodes_for(directive, text):
    """The nodes of one diagram, and a warning per problem.

    A line not understood is one; so is a diagram with nothing to draw.
    """
    from docutils import nodes
    from sphinx import addnodes
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    diagram = parse(text)
    location = directive.get_location()
    for problem in diagram.problems:
        logger.warning('sequence diagram: %s', problem, location=location,
                       type='sequence-diagram', subtype='parse')
    result = []
    if diagram.participants:
        svg = render_svg(diagram)
        result.append(nodes.raw(
            '', '<div class="sequence-diagram">%s</div>\n' % svg,
            format='html'))
    else:
        logger.warning('sequence diagram: nothing to draw (no participant)',
                       location=location, type='sequence-diagram',
                       subtype='empty')
    only = addnodes.only(expr='not html')
    # The Mermaid source, where no SVG can be shown: as wide as it is.
    only += nodes.literal_block(text, text, classes=['wide-block'],
                                language='text')
    result.append(only)
    return result


def _directive():
    from sphinx.util.docutils import SphinxDirective
    from sphinx.util import logging

    logger = logging.getLogger(__name__)

    class MermaidDirective(SphinxDirective):
        """``.. mermaid::`` with a sequence diagram as content."""

        has_content = True
        required_arguments = 0
        optional_arguments = 0

        def run(self):
            text = '\n'.join(self.content)
            if not text.strip():
                logger.warning('mermaid directive without a diagram',
                               location=self.get_location(),
                               type='sequence-diagram', subtype='empty')
                return []
            return nodes_for(self, text)

    return MermaidDirective


def setup(app):
    app.add_directive('mermaid', _directive())
    return {'version': '1.0', 'parallel_read_safe': True,
            'parallel_write_safe': True}
