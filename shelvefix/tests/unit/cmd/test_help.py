"""``--help``: plain text, complete, an explanation for every option."""

import argparse
import importlib
import io
import re

import fixtures

from shelvefix.cmd import main
from shelvefix.tests import base

# What reStructuredText would leave in a help text: inline literals,
# roles, references, a literal block's "::".
MARKUP = re.compile(r'``|:(mod|class|func|meth|data|attr|ref):|`_|::\s*$',
                    re.MULTILINE)


class HelpTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.parser = main.build_parser()

    def help_text(self, argv):
        out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.assertRaises(SystemExit, self.parser.parse_args, argv)
        return out.getvalue()

    def test_every_option_has_help(self):
        for name, command in self.parser.commands.items():
            for action in command._actions:
                if isinstance(action, argparse._HelpAction):
                    continue
                self.assertTrue(
                    action.help and action.help != argparse.SUPPRESS,
                    '%s %s has no help' % (name, action.option_strings))

    def test_help_is_plain_text_and_complete(self):
        for name in main.COMMANDS:
            text = self.help_text([name, '--help'])
            self.assertIsNone(MARKUP.search(text), '%s:\n%s' % (name, text))
            module = importlib.import_module('shelvefix.cmd.%s' % name)
            for paragraph in module.DESCRIPTION:
                if callable(paragraph):
                    paragraph = paragraph()
                # Each paragraph ends a sentence; a list has a heading.
                if isinstance(paragraph, str):
                    self.assertTrue(paragraph.rstrip().endswith('.'),
                                    '%s: %r' % (name, paragraph))
                else:
                    self.assertTrue(paragraph[0].endswith(':'), name)
                    self.assertTrue(paragraph[1], name)
            self.assertIn('Exit status: 0 and 1 are the verdict', text)
            self.assertIn('Verdict:', text)

    def test_top_level_help(self):
        text = self.help_text(['--help'])
        self.assertIsNone(MARKUP.search(text))
        for name in main.COMMANDS:
            self.assertIn(name, text)

    def test_race_lists_every_scenario_it_accepts(self):
        text = self.help_text(['race', '--help'])
        block = text[text.index('Scenarios (--scenario):'):]
        block = block[:block.index('\n\n')]
        listed = re.findall(r'^  (\S+)  ', block, re.MULTILINE)
        race_parser = self.parser.commands['race']
        choices, = [action.choices for action in race_parser._actions
                    if '--scenario' in action.option_strings]
        self.assertEqual(list(choices), listed)
        self.assertIn('  offload-unshelve    [the default] shelve-offload',
                      text)
        self.assertIn('  resize              [nova target only] resize',
                      text)

    def test_a_list_paragraph(self):
        text = main._paragraph(('Things:', [('a', 'one ' * 30),
                                            ('long-name', 'two')]))
        lines = text.split('\n')
        self.assertEqual('Things:', lines[0])
        self.assertTrue(lines[1].startswith('  a          one one'))
        self.assertTrue(lines[2].startswith(' ' * 13 + 'one'))
        self.assertEqual('  long-name  two', lines[-1])
        self.assertLessEqual(max(len(line) for line in lines), 79)

    def test_variant_and_ordering_are_one_option(self):
        race_parser = self.parser.commands['race']
        action, = [action for action in race_parser._actions
                   if '--variant' in action.option_strings]
        self.assertEqual(['--variant', '--ordering'], action.option_strings)
        text = ' '.join(self.help_text(['race', '--help']).split())
        for variant in action.choices:
            self.assertIn(variant, text)
        args = self.parser.parse_args(['race', '--ordering', 'legacy',
                                       '--variant', 'pre-2025480'])
        self.assertEqual(['legacy', 'pre-2025480'], args.variant)

    def test_every_choice_is_in_the_help_and_it_fits_a_terminal(self):
        # An option with a metavar hides its choices from the usage line:
        # the help names them instead. No line is wider than 79 (the
        # guide shows each --help as printed).
        self.useFixture(fixtures.EnvironmentVariable('COLUMNS', '79'))
        for name, command in self.parser.commands.items():
            text = self.help_text([name, '--help'])
            folded = ' '.join(text.split())
            for action in command._actions:
                for choice in action.choices or ():
                    self.assertIn(str(choice), folded,
                                  '%s %s' % (name, action.option_strings))
            wide = [line for line in text.splitlines() if len(line) > 79]
            self.assertEqual([], wide, name)
