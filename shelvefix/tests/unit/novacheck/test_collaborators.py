"""A collaborator the check trusts, re-bound elsewhere in the class.

``self.rt`` and ``self.reportclient`` are trusted by name to free
placement allocations. Re-bound anywhere in ``ComputeManager`` (in
``__init__``, another method, by ``setattr``, the object or one of its
methods), they may no longer do so, and the check cannot tell: it says
which binding, and where.
"""

import ast

import testscenarios
import testtools

from shelvefix.novacheck import check
from shelvefix.novacheck import classes
from shelvefix.novacheck import collaborators
from shelvefix.novacheck import fixes
from shelvefix.novacheck import outcome
from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import nova_18_3
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck import test_corpus
from shelvefix.tests.unit.novacheck import test_fixes

load_tests = testscenarios.load_tests_apply_scenarios

DISPLAY = 'nova/compute/manager.py'
# nova's own __init__ bindings, as in 21.0.0 and later.
INIT_34 = '''\
    def __init__(self, compute_driver=None, *args, **kwargs):
        self.reportclient = report.report_client_singleton()
        self.driver = driver.load_compute_driver(None, compute_driver)
        self.rt = resource_tracker.ResourceTracker(
            self.host, self.driver, reportclient=self.reportclient)
'''


def manager_class(text):
    return classes.find_class(ast.parse(text), 'ComputeManager')[0]


def with_helpers(*helpers, base=nova_34.MANAGER):
    """``base`` with ``helpers`` inserted before the checked method."""
    return edits.insert_helpers(base, *helpers)


class RebindingTestCase(testscenarios.WithScenarios, testtools.TestCase):
    """Each way of re-binding a collaborator gives CANNOT TELL."""

    scenarios = [
        ('method_in_init', {
            'helpers': (INIT_34 + '''\
        self.reportclient.delete_allocation_for_instance = _noop
''',),
            'binding': 'self.reportclient.delete_allocation_for_instance = '
                       '_noop',
            'name': 'reportclient'}),
        ('object_in_init', {
            'helpers': ('''\
    def __init__(self, compute_driver=None, *args, **kwargs):
        self.reportclient = report.report_client_singleton()
        self.rt = fake_tracker.FakeTracker()
''',),
            'binding': 'self.rt = fake_tracker.FakeTracker()',
            'name': 'rt'}),
        ('object_in_other_method', {
            'helpers': (INIT_34, '''\
    def reset(self):
        self.rt = fake_tracker.FakeTracker()
'''),
            'binding': 'self.rt = fake_tracker.FakeTracker()',
            'name': 'rt'}),
        ('method_in_other_method', {
            'helpers': (INIT_34, '''\
    def _quiet_frees(self):
        self.rt.delete_allocation_for_shelve_offloaded_instance = _noop
'''),
            'binding': 'self.rt.delete_allocation_for_shelve_offloaded_'
                       'instance = _noop',
            'name': 'rt'}),
        ('object_by_setattr', {
            'helpers': (INIT_34, '''\
    def reset(self):
        setattr(self, 'reportclient', fake_client.FakeClient())
'''),
            'binding': "setattr(self, 'reportclient'",
            'name': 'reportclient'}),
        ('method_by_setattr', {
            'helpers': (INIT_34 + '''\
        setattr(self.rt, 'delete_allocation_for_shelve_offloaded_instance',
                _noop)
''',),
            'binding': 'setattr(self.rt, ',
            'name': 'rt'}),
        ('setattr_name_unknown', {
            'helpers': (INIT_34, '''\
    def configure(self, name, value):
        setattr(self, name, value)
'''),
            'binding': 'setattr(self, name, value)',
            'name': '*'}),
        ('method_through_accessor_local', {
            'helpers': ('''\
    def _mute(self):
        rt = self._get_resource_tracker()
        rt.delete_allocation_for_shelve_offloaded_instance = _noop
''',),
            'binding': 'rt.delete_allocation_for_shelve_offloaded_instance '
                       '= _noop',
            'name': 'rt',
            'base': nova_18_3.MANAGER}),
        ('tracker_report_client', {
            'helpers': (INIT_34, '''\
    def reset(self):
        self.rt.reportclient = fake_client.FakeClient()
'''),
            'binding': 'self.rt.reportclient = fake_client.FakeClient()',
            'name': 'rt'}),
        ('deleted', {
            'helpers': (INIT_34, '''\
    def cleanup_host(self):
        del self.reportclient
'''),
            'binding': 'del self.reportclient',
            'name': 'reportclient'}),
        ('in_nested_function_of_init', {
            'helpers': ('''\
    def __init__(self, compute_driver=None, *args, **kwargs):
        def later():
            self.rt = resource_tracker.ResourceTracker(self.host, None)
        self.later = later
''',),
            'binding': 'self.rt = resource_tracker.ResourceTracker('
                       'self.host, None)',
            'name': 'rt'}),
        ('class_attribute', {
            'helpers': ('    reportclient = fake_client.FakeClient()\n',),
            'binding': 'reportclient = fake_client.FakeClient()',
            'name': 'reportclient'}),
    ]
    base = nova_34.MANAGER

    def test_cannot_tell_and_names_the_binding(self):
        text = with_helpers(*self.helpers, base=self.base)
        line = test_corpus.line_of(text, self.binding)
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status, result.render())
        self.assertIn('%s:%d' % (DISPLAY, line), result.reason)
        self.assertIn(self.binding, result.reason)
        self.assertIn('re-binds', result.reason)
        found = collaborators.rebindings(manager_class(text))
        self.assertEqual([(self.name, line)],
                         [(f.name, f.line) for f in found])

    def test_every_manager_check_cannot_tell(self):
        # The unshelve and host-lost checks read the same class.
        text = with_helpers(test_fixes.UNSHELVE, *self.helpers,
                            base=self.base)
        report = fixes.check_texts(test_fixes.texts(text, unshelve=None),
                                   fixes.BUGS)
        for bug in ('1798688', '1862633', 'host-lost'):
            self.assertEqual(outcome.UNKNOWN, report.verdicts[bug].status,
                             bug)
            self.assertIn('re-binds', report.verdicts[bug].reason, bug)


class GenuineBindingsTestCase(testtools.TestCase):
    """nova's own bindings of its collaborators are not re-bindings."""

    def assertStill(self, status, text):
        result = check.check_source(text)
        self.assertEqual(status, result.status, result.render())
        self.assertEqual([], collaborators.rebindings(manager_class(text)))

    def test_modern_init(self):
        text = with_helpers(test_fixes.UNSHELVE, INIT_34)
        self.assertStill(check.FIXED, text)
        report = fixes.check_texts(test_fixes.texts(text, unshelve=None),
                                   fixes.BUGS)
        self.assertEqual(outcome.FIXED, report.verdicts['1862633'].status)
        self.assertEqual(outcome.MISSING,
                         report.verdicts['host-lost'].status)

    def test_queens_init_and_a_reset_to_none(self):
        self.assertStill(check.LEGACY, with_helpers('''\
    def __init__(self, compute_driver=None, *args, **kwargs):
        self.scheduler_client = scheduler_client.SchedulerClient()
        self.reportclient = self.scheduler_client.reportclient
        self._resource_tracker = None
''', '''\
    def update_available_resource_for_node(self, context, nodename):
        self._resource_tracker = None
''', base=nova_18_3.MANAGER))

    def test_collaborators_handed_to_the_constructor(self):
        # shelvefix's own manager: its caller's collaborators, or its own.
        self.assertStill(check.FIXED, with_helpers('''\
    def __init__(self, host=None, reportclient=None, rt=None):
        self.reportclient = (reportclient or
                             (rt and rt.reportclient) or
                             report.SchedulerReportClient())
        self.rt = rt or resource_tracker.ResourceTracker(
            host, None, reportclient=self.reportclient)
'''))

    def test_stein_takes_the_trackers_report_client(self):
        self.assertStill(check.FIXED, with_helpers('''\
    def __init__(self, compute_driver=None, *args, **kwargs):
        self.rt = resource_tracker.ResourceTracker(self.host, None)
        self.reportclient = self.rt.reportclient
'''))

    def test_the_class_is_read_as_it_is_now(self):
        # Nothing is remembered of a class between two readings: the
        # same tree, its __init__ renamed, binds as another method does.
        cls = manager_class(with_helpers(INIT_34))
        self.assertEqual([], collaborators.rebindings(cls))
        init = [node for node in cls.body
                if getattr(node, 'name', None) == '__init__'][0]
        init.name = 'reset'
        self.assertNotEqual([], collaborators.rebindings(cls))

    def test_a_parameter_does_not_cover_another_value(self):
        text = with_helpers('''\
    def __init__(self, host=None, reportclient=None):
        self.reportclient = reportclient or fake_client.FakeClient()
''')
        found = collaborators.rebindings(manager_class(text))
        self.assertEqual(['reportclient'], [f.name for f in found])

    def test_loads_and_calls_through_collaborators(self):
        self.assertStill(check.FIXED, with_helpers(INIT_34, '''\
    def reset(self):
        rt = self.rt
        rt.reportclient.clear_provider_cache()
        setattr(self.driver, 'rt', None)
'''))
