"""Unit tests of the sequence diagram renderer (sequence_diagrams.py).

Run in the docs env (tox -e docs runs them before the build):
``python -m unittest discover -s doc/source/_ext -p "test_*.py"``.
"""

import textwrap
import unittest
from xml.etree import ElementTree

import sequence_diagrams as sd

SVG = '{http://www.w3.org/2000/svg}'

# What shelvefix.race.report.mermaid() writes, abridged.
RACE = textwrap.dedent('''\
    sequenceDiagram
        title legacy order, free with get-put: scheduler 409
        participant C as compute
        participant I as instance store
        participant P as placement
        participant S as API + scheduler
        C->>I: read instance
        I-->>C: vm_state=shelved task_state=shelving_offloading host=compute-1
        C->>P: GET /allocations/{instance}
        P-->>C: 200 gen=1
        S->>P: PUT /allocations/{instance} gen=1
        P-->>S: 409 consumer generation conflict - expected null but got 1
        Note over C,S: outcome: scheduler 409
    ''')


def svg_tree(diagram):
    return ElementTree.fromstring(sd.render_svg(diagram))


def texts(tree):
    return [t.text for t in tree.iter(SVG + 'text')]


class TestParse(unittest.TestCase):

    def test_race_diagram(self):
        diagram = sd.parse(RACE)
        self.assertEqual([], diagram.problems)
        self.assertEqual('legacy order, free with get-put: scheduler 409',
                         diagram.title)
        self.assertEqual([('C', 'compute'), ('I', 'instance store'),
                          ('P', 'placement'), ('S', 'API + scheduler')],
                         diagram.participants)
        self.assertEqual(6, len(diagram.messages))
        self.assertEqual(sd.Message('C', 'I', 'read instance', False),
                         diagram.messages[0])
        self.assertEqual(sd.Message('I', 'C', 'vm_state=shelved '
                                    'task_state=shelving_offloading '
                                    'host=compute-1', True),
                         diagram.messages[1])
        self.assertEqual([sd.Note(['C', 'S'], 'over',
                                  'outcome: scheduler 409')], diagram.notes)

    def test_undeclared_participants_in_order_of_appearance(self):
        diagram = sd.parse('sequenceDiagram\n  B->>A: hi\n  A-->>C: ho\n')
        self.assertEqual([('B', 'B'), ('A', 'A'), ('C', 'C')],
                         diagram.participants)

    def test_participant_without_label(self):
        diagram = sd.parse('sequenceDiagram\nparticipant Alice\n')
        self.assertEqual([('Alice', 'Alice')], diagram.participants)

    def test_comments_and_blank_lines(self):
        diagram = sd.parse('%% a comment\nsequenceDiagram\n\n'
                           '  %% another\n  A->>B: x\n')
        self.assertEqual([], diagram.problems)
        self.assertEqual(1, len(diagram.messages))

    def test_bad_line_is_reported_with_its_text(self):
        diagram = sd.parse('sequenceDiagram\n  A->>B: ok\n'
                           '  loop every minute\n  A-)B: async\n')
        self.assertEqual(2, len(diagram.problems))
        self.assertIn('line 3', diagram.problems[0])
        self.assertIn('loop every minute', diagram.problems[0])
        self.assertIn('line 4', diagram.problems[1])
        self.assertIn('A-)B: async', diagram.problems[1])
        self.assertEqual(1, len(diagram.messages))

    def test_strict_parse_raises(self):
        with self.assertRaises(sd.DiagramError) as cm:
            sd.parse_strict('sequenceDiagram\n  activate A\n')
        self.assertIn('activate A', str(cm.exception))
        self.assertEqual(1, len(cm.exception.problems))

    def test_not_a_sequence_diagram(self):
        diagram = sd.parse('graph TD\n  A-->B\n')
        self.assertIn('sequenceDiagram', diagram.problems[0])
        self.assertIn('graph TD', diagram.problems[0])
        self.assertIn('A-->B', diagram.problems[1])
        self.assertEqual(['empty diagram: no "sequenceDiagram" line'],
                         sd.parse('').problems)

    def test_note_beside_two_participants_is_a_problem(self):
        diagram = sd.parse('sequenceDiagram\n  Note left of A,B: x\n')
        self.assertEqual(1, len(diagram.problems))
        self.assertEqual([], diagram.events)

    def test_message_text_may_contain_arrows_and_colons(self):
        diagram = sd.parse('sequenceDiagram\n'
                           '  A->>B: wait for X -> y: z\n')
        self.assertEqual([], diagram.problems)
        self.assertEqual('wait for X -> y: z', diagram.messages[0].text)


class TestRender(unittest.TestCase):

    def test_well_formed_svg_with_no_script(self):
        svg = sd.render_svg(sd.parse(RACE))
        tree = ElementTree.fromstring(svg)
        self.assertEqual(SVG + 'svg', tree.tag)
        self.assertNotIn('script', svg.lower())
        self.assertNotIn('href', svg.lower())

    def test_arrow_per_message(self):
        diagram = sd.parse(RACE)
        tree = svg_tree(diagram)
        heads = [p for p in tree.iter(SVG + 'polygon')
                 if p.get('class') == 'arrowhead']
        groups = [g for g in tree.iter(SVG + 'g')
                  if g.get('class', '').startswith('message')]
        self.assertEqual(len(diagram.messages), len(heads))
        self.assertEqual(len(diagram.messages), len(groups))
        dashed = [g for g in groups if g.get('class') == 'message reply']
        self.assertEqual(3, len(dashed))
        for group in dashed:
            line = group.find(SVG + 'line')
            self.assertIsNotNone(line.get('stroke-dasharray'))
        for group in groups:
            if group.get('class') == 'message call':
                self.assertIsNone(
                    group.find(SVG + 'line').get('stroke-dasharray'))

    def test_participants_title_and_notes(self):
        tree = svg_tree(sd.parse(RACE))
        words = texts(tree)
        self.assertEqual('legacy order, free with get-put: scheduler 409',
                         words[0])
        for label in ('compute', 'instance store', 'placement',
                      'API + scheduler'):
            # A box at the top and one at the bottom.
            self.assertEqual(2, words.count(label), label)
        lifelines = [line for line in tree.iter(SVG + 'line')
                     if line.get('class') == 'lifeline']
        self.assertEqual(4, len(lifelines))
        notes = [g for g in tree.iter(SVG + 'g') if g.get('class') == 'note']
        self.assertEqual(1, len(notes))
        self.assertIn('outcome: scheduler 409', words)

    def test_columns_left_to_right_and_arrow_direction(self):
        tree = svg_tree(sd.parse(RACE))
        xs = [float(line.get('x1')) for line in tree.iter(SVG + 'line')
              if line.get('class') == 'lifeline']
        self.assertEqual(sorted(xs), xs)
        self.assertEqual(len(set(xs)), len(xs))
        calls = [g.find(SVG + 'line') for g in tree.iter(SVG + 'g')
                 if g.get('class') == 'message call']
        # C->>I goes right, S->>P goes left.
        self.assertLess(float(calls[0].get('x1')), float(calls[0].get('x2')))
        self.assertGreater(float(calls[2].get('x1')),
                           float(calls[2].get('x2')))

    def test_message_text_fits_between_its_lifelines(self):
        diagram = sd.parse('sequenceDiagram\nparticipant A\nparticipant B\n'
                           'A->>B: ' + 'x' * 40 + '\n')
        tree = svg_tree(diagram)
        xs = [float(line.get('x1')) for line in tree.iter(SVG + 'line')
              if line.get('class') == 'lifeline']
        self.assertGreaterEqual(xs[1] - xs[0], 40 * sd.CHAR_WIDTH)

    def test_xml_escaping(self):
        text = 'a < b & c > d "quoted" \'single\' </svg><script>x</script>'
        diagram = sd.parse('sequenceDiagram\n'
                           '  title <T> & "title"\n'
                           '  participant A as <Alice & co>\n'
                           '  A->>B: %s\n'
                           '  Note over A: 1 < 2 & 3\n' % text)
        self.assertEqual([], diagram.problems)
        svg = sd.render_svg(diagram)
        self.assertNotIn('<script>', svg)
        self.assertNotIn('<Alice', svg)
        tree = ElementTree.fromstring(svg)   # well-formed
        words = texts(tree)
        self.assertIn('<Alice & co>', words)
        self.assertIn('<T> & "title"', words)
        self.assertIn('1 < 2 & 3', words)
        joined = ' '.join(w for w in words if w)
        self.assertIn('</svg><script>x</script>', joined)
        self.assertEqual('<T> & "title"', tree.get('aria-label'))

    def test_long_text_is_wrapped(self):
        diagram = sd.parse('sequenceDiagram\nA->>B: ' +
                           ' '.join(['word'] * 30) + '\n')
        group = [g for g in svg_tree(diagram).iter(SVG + 'g')
                 if g.get('class') == 'message call'][0]
        lines = [t.text for t in group.iter(SVG + 'text')]
        self.assertGreater(len(lines), 1)
        self.assertTrue(all(len(line) <= sd.WRAP for line in lines))
        self.assertEqual(' '.join(['word'] * 30), ' '.join(lines))

    def test_br_breaks_lines(self):
        self.assertEqual(['one', 'two'], sd.wrap('one<br>two'))
        self.assertEqual(['one', 'two'], sd.wrap('one<br/>two'))

    def test_self_message_and_notes_beside(self):
        diagram = sd.parse('sequenceDiagram\nA->>A: think\n'
                           'Note left of A: l\nNote right of A: r\n')
        self.assertEqual([], diagram.problems)
        tree = svg_tree(diagram)
        self.assertEqual(1, len([g for g in tree.iter(SVG + 'g')
                                 if g.get('class') == 'message call']))
        rects = [r for g in tree.iter(SVG + 'g') if g.get('class') == 'note'
                 for r in g.iter(SVG + 'rect')]
        self.assertEqual(2, len(rects))
        # Nothing drawn left of the canvas.
        self.assertTrue(all(float(r.get('x')) >= 0 for r in rects))


class TestMarkdown(unittest.TestCase):

    MARKDOWN = ('# heading\n\n## one\n\n```mermaid\nsequenceDiagram\n'
                '    A->>B: one\n```\n\n## two\n\n```mermaid\n'
                'sequenceDiagram\n    A->>B: two\n```\n')

    def test_mermaid_blocks(self):
        blocks = sd.mermaid_blocks(self.MARKDOWN)
        self.assertEqual(['sequenceDiagram\n    A->>B: one',
                          'sequenceDiagram\n    A->>B: two'], blocks)
        self.assertEqual([], sd.mermaid_blocks('No bad outcome was found.'))


if __name__ == '__main__':
    unittest.main()
