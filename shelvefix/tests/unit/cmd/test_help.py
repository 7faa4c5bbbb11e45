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
            description = main._description(module)
            for paragraph in description.split('\n\n'):
                # Each paragraph ends a sentence.
                self.assertTrue(paragraph.rstrip().endswith('.'),
                                '%s: %r' % (name, paragraph))
            self.assertIn('Exit status: 0 and 1 are the verdict', text)
            self.assertIn('Verdict:', text)

    def test_top_level_help(self):
        text = self.help_text(['--help'])
        self.assertIsNone(MARKUP.search(text))
        for name in main.COMMANDS:
            self.assertIn(name, text)
