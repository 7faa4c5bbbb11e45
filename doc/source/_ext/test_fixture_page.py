"""The fixture page promises only what the fixture has.

``fixture.rst`` lists what a test can look at and arm, as a definition
list. Every name it gives must exist: the terms on ``PlacementFixture``
(with the parameters and defaults the page spells), the methods named
with ``()`` in the definitions, the fields of ``Call(...)`` and of the
consumers, and the accessors of ``state`` (those followed by what they
give, in parentheses). Run in the docs env (tox -e docs).
"""

import inspect
import os
import re
import unittest

from shelvefix.backends import faults
from shelvefix.backends import fixture
from shelvefix.backends import transport
from shelvefix.placement.objects import models

PAGE = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                    'fixture.rst')
HEADING = 'What a test can look at and arm:'


def definitions(text=None):
    """``[(term, body)]`` of the page's list of attributes."""
    if text is None:
        with open(PAGE) as f:
            text = f.read()
    lines = text[text.index(HEADING) + len(HEADING):].split('\n')
    found = []
    for line in lines:
        if line.startswith('``'):
            found.append([line, ''])
        elif line.startswith('    ') and found:
            found[-1][1] += line.strip() + ' '
        elif line.strip() and found:
            break
    return [tuple(entry) for entry in found]


def signature(spelt):
    """``{parameter: default text}`` of ``name(a=None, b=1)``."""
    inside = spelt[spelt.index('(') + 1:spelt.rindex(')')]
    return dict(part.strip().split('=', 1)
                for part in inside.split(',') if part.strip())


class FixturePageTestCase(unittest.TestCase):

    def setUp(self):
        self.placement = fixture.PlacementFixture()
        self.placement.setUp()
        self.addCleanup(self.placement.cleanUp)
        self.entries = definitions()

    def test_the_page_lists_what_a_test_uses(self):
        terms = ' '.join(term for term, _ in self.entries)
        for name in ('adapter', 'calls', 'inject_fault', 'state'):
            self.assertIn('``%s' % name, terms)

    def test_every_term_exists_with_its_parameters(self):
        for term, _ in self.entries:
            for spelt in re.findall(r'``([^`]+)``', term):
                name = spelt.split('(')[0]
                self.assertTrue(hasattr(self.placement, name), spelt)
                if '(' not in spelt:
                    continue
                parameters = inspect.signature(
                    getattr(self.placement.transport, name, None) or
                    getattr(self.placement, name)).parameters
                for parameter, default in signature(spelt).items():
                    self.assertIn(parameter, parameters, spelt)
                    self.assertEqual(
                        default, repr(parameters[parameter].default), spelt)

    def test_every_method_and_field_named_exists(self):
        state = self.placement.state
        fault = faults.Fault('PUT', None, 1, 409, None, None, 'before', 1)
        for term, body in self.entries:
            for method in re.findall(r'``(\w+)\(\)``', body):
                self.assertTrue(hasattr(self.placement, method), method)
            for fields in re.findall(r'``Call\(([^`]+)\)``', body):
                self.assertEqual(
                    list(transport.Call._fields),
                    [field.strip() for field in fields.split(',')])
            if 'whose ``fired``' in body:
                self.assertTrue(hasattr(fault, 'fired'))
            if term == '``state``':
                accessors = re.findall(r'``(\w+)(?:\(\w+\))?`` \(', body)
                self.assertEqual(['consumers', 'allocations',
                                  'allocations_for', 'usages', 'providers'],
                                 accessors)
                for name in accessors:
                    self.assertTrue(hasattr(state, name), name)
                consumer = re.search(r'with ((?:``\w+``,? ?)+)\)', body)
                self.assertEqual(list(models.Consumer._fields),
                                 re.findall(r'``(\w+)``', consumer.group(1)))

    def test_a_missing_name_is_found(self):
        text = '%s\n\n``adapter``, ``no_such_thing``\n    x\n' % HEADING
        self.assertEqual([('``adapter``, ``no_such_thing``', 'x ')],
                         definitions(text))
        self.assertFalse(hasattr(self.placement, 'no_such_thing'))


if __name__ == '__main__':
    unittest.main()
