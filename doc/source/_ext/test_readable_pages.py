"""Unit tests of readable_pages: languages, prompts and the checks."""

import unittest

import readable_pages as pages


class LanguageTestCase(unittest.TestCase):

    def test_the_ci_kind_decides(self):
        self.assertEqual('console', pages.language('make it so', 'run'))
        self.assertEqual('text', pages.language('import os', 'output'))
        self.assertEqual('ini', pages.language('[DEFAULT]\na = 1', 'config'))

    def test_guessed_without_a_kind(self):
        guess = pages.language
        self.assertEqual('python', guess('import os\nos.getcwd()\n'))
        self.assertEqual('console', guess('shelvefix race --scenario all'))
        self.assertEqual('console', guess('tox -e docs \\\n  -- -v\n'))
        self.assertEqual('diff', guess('@@ -1,2 +1,2 @@\n-a\n+b\n'))
        # Prose and tables parse as neither.
        self.assertEqual('text', guess("corrected: in and out, it's ok"))
        self.assertEqual('text', guess('bug  family  runs\n1798688  race  9'))
        # A bare name or two parses as Python, and is not.
        self.assertEqual('text', guess('lifecycle'))
        self.assertEqual('text', guess('a.b'))

    def test_skip_is_guessed(self):
        self.assertEqual('console', pages.language('shelvefix check x',
                                                   'skip'))


class ConsoleTestCase(unittest.TestCase):

    def test_a_prompt_before_each_command(self):
        self.assertEqual('$ a \\\n  b\n$ c\n\n$ d',
                         pages.as_console('a \\\n  b\nc\n\nd'))
        self.assertEqual('$ a', pages.as_console('$ a'))


class CheckTestCase(unittest.TestCase):

    def test_not_python_shown_as_python(self):
        self.assertEqual(1, len(pages.check_block('in and out', 'python',
                                                  80)))
        self.assertEqual([], pages.check_block('x = 1', 'python', 80))
        self.assertEqual([], pages.check_block('in and out', 'text', 80))

    def test_too_wide(self):
        problems = pages.check_block('ok\n' + 'x' * 81, 'text', 80)
        self.assertEqual(1, len(problems))
        self.assertIn('line 2 of the block is 81 characters wide',
                      problems[0])
        self.assertEqual([], pages.check_block('x' * 81, 'text', 81))
        # A wide block scrolls: no limit.
        self.assertEqual([], pages.check_block('x' * 500, 'text', None))


class CommentsTestCase(unittest.TestCase):
    """A page's comments belong to the literal block after them."""

    PAGE = """
.. wide

.. ci: output

::

    a table

.. ci: run

::

    shelvefix race

Unmarked::

    x = 1
"""

    def test_kinds_and_wide_blocks(self):
        from docutils import core
        from docutils import nodes
        doctree = core.publish_doctree(self.PAGE)
        blocks = list(doctree.findall(nodes.literal_block))
        kinds = pages.read_comments(doctree, nodes)
        self.assertEqual(['output', 'run', None],
                         [kinds.get(id(block)) for block in blocks])
        self.assertEqual([['wide-block'], [], []],
                         [block['classes'] for block in blocks])


if __name__ == '__main__':
    unittest.main()
