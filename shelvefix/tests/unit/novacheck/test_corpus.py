"""The check against the corpus of reviewed shelve-offload variants.

Each variant of :mod:`shelvefix.tests.unit.novacheck.corpus` is a whole
compute manager module with the verdict a careful reviewer gives it; the
check must reach the same verdict, show the path behind a LEGACY one and
say why when it cannot tell.
"""

import ast
import collections

import testscenarios
import testtools

from shelvefix.novacheck import check
from shelvefix.tests.unit.novacheck import corpus

load_tests = testscenarios.load_tests_apply_scenarios

VARIANTS = corpus.variants()
# The first save of SHELVED_OFFLOADED in both copies of real releases.
OFFLOADED_SAVE = 'instance.save(expected_task_state=[task_states.SHELVING,'


def line_of(text, fragment):
    """The number (from 1) of the one line of ``text`` with ``fragment``."""
    numbers = [number for number, line in enumerate(text.splitlines(), 1)
               if fragment in line]
    if len(numbers) != 1:
        raise AssertionError('%r is on lines %s' % (fragment, numbers))
    return numbers[0]


class VariantVerdictTestCase(testscenarios.WithScenarios,
                             testtools.TestCase):
    """One scenario per variant: the check agrees with the reviewer."""

    scenarios = [(variant.name, {'variant': variant})
                 for variant in VARIANTS]

    def test_verdict(self):
        result = check.check_source(self.variant.text)
        self.assertEqual(
            self.variant.verdict, result.status,
            '%s: %s\nreviewer: %s\ncheck says:\n%s' % (
                self.variant.name, self.variant.description,
                self.variant.why, result.render()))
        if result.status == check.LEGACY:
            self.assertPath(result)
        elif result.status == check.UNKNOWN:
            self.assertIsInstance(result.reason, str)
            self.assertNotEqual('', result.reason.strip())

    def assertPath(self, result):
        """A LEGACY verdict names the lines of a path that decided it."""
        self.assertTrue(result.path, 'a LEGACY verdict without a path')
        last = len(self.variant.text.splitlines())
        for entry in result.path:
            self.assertIsInstance(entry.line, int)
            self.assertTrue(1 <= entry.line <= last,
                            'line %d is not in the module' % entry.line)


class CorpusTestCase(testtools.TestCase):
    """The corpus itself: big, balanced, well formed."""

    def test_size_and_balance(self):
        self.assertGreaterEqual(len(VARIANTS), 45)
        counts = collections.Counter(v.verdict for v in VARIANTS)
        self.assertEqual({check.FIXED, check.LEGACY, check.UNKNOWN},
                         set(counts))
        for verdict, count in counts.items():
            self.assertGreaterEqual(count, 10, verdict)

    def test_each_kind_of_construct_the_check_refuses_has_ten(self):
        # Issue 20's kinds: a free on a receiver that may not free, a
        # helper that does not run when called, a method re-bound in the
        # class body, a return through a finally that saves or frees.
        kinds = {'receivers': ('receivers', 'receivers_2'),
                 'not run': ('not_run', 'not_run_2'),
                 'class body': ('class_body',),
                 'finally and return': ('finally_return',
                                        'finally_return_2')}
        by_module = collections.Counter(
            corpus.MODULE_OF[v.name] for v in VARIANTS)
        for kind, modules in kinds.items():
            count = sum(by_module[m] for m in modules)
            self.assertGreaterEqual(count, 10, kind)
            verdicts = {v.verdict for v in VARIANTS
                        if corpus.MODULE_OF[v.name] in modules}
            self.assertIn(check.FIXED, verdicts, kind)
            self.assertTrue(verdicts - {check.FIXED}, kind)

    def test_names_unique(self):
        names = [v.name for v in VARIANTS]
        self.assertEqual(sorted(set(names)), sorted(names))

    def test_every_variant_explained(self):
        for variant in VARIANTS:
            self.assertTrue(variant.description.strip(), variant.name)
            self.assertTrue(variant.why.strip(), variant.name)
            # One sentence.
            self.assertTrue(variant.why.endswith('.'), variant.name)

    def test_texts_parse(self):
        for variant in VARIANTS:
            if variant.name in corpus.UNPARSABLE:
                self.assertRaises(SyntaxError, ast.parse, variant.text)
            else:
                ast.parse(variant.text, filename=variant.name)

    def test_texts_hold_the_method(self):
        for variant in VARIANTS:
            if variant.name in (corpus.UNPARSABLE + corpus.NO_METHOD +
                                corpus.ODD_CLASS):
                continue
            tree = ast.parse(variant.text)
            classes = [node for node in tree.body
                       if isinstance(node, ast.ClassDef) and
                       node.name == 'ComputeManager']
            self.assertEqual(1, len(classes), variant.name)
            methods = [node.name for node in classes[0].body
                       if isinstance(node, ast.FunctionDef)]
            self.assertIn('_shelve_offload_instance', methods, variant.name)


class RealReleasesTestCase(testtools.TestCase):
    """The embedded copies of nova 34.0.0 and 18.3.0 as released."""

    def test_nova_34_0_0_is_fixed(self):
        result = check.check_source(corpus.NOVA_34_MANAGER)
        self.assertEqual(check.FIXED, result.status, result.render())

    def test_nova_18_3_0_is_legacy(self):
        text = corpus.NOVA_18_3_MANAGER
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status, result.render())
        # The path leads to the save of SHELVED_OFFLOADED that comes before
        # the free.
        self.assertIn(line_of(text, OFFLOADED_SAVE),
                      [entry.line for entry in result.path])

    def test_variants_use_the_copies(self):
        by_name = {v.name: v for v in VARIANTS}
        self.assertIs(corpus.NOVA_34_MANAGER, by_name['nova_34_0_0'].text)
        self.assertIs(corpus.NOVA_18_3_MANAGER,
                      by_name['nova_18_3_0_rocky'].text)
