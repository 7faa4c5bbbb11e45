"""Tests for shelvefix.placement.query: the search filters' parsing."""

import testtools

from shelvefix.placement import errors
from shelvefix.placement import microversion
from shelvefix.placement import query

AGG1 = 'a1a1a1a1-0000-0000-0000-000000000001'
AGG2 = 'a2a2a2a2-0000-0000-0000-000000000002'


class FakeRequest(object):

    def __init__(self, version, *pairs):
        self.version = microversion.Version(*version)
        self.query_pairs = list(pairs)

    def query_all(self, name):
        return [value for key, value in self.query_pairs if key == name]


class QueryTestCase(testtools.TestCase):

    def assertBad(self, detail, func, *args, **kwargs):
        e = self.assertRaises(errors.BadRequest, func, *args, **kwargs)
        self.assertEqual(detail, e.detail)

    def test_resources(self):
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 8},
                         query.resources('VCPU:2,MEMORY_MB:8'))
        form = ('Badly formed resources parameter. Expected resources query '
                'string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. '
                'Got: %s.')
        self.assertBad(form % 'empty string', query.resources, ' ')
        self.assertBad(form % 'VCPU', query.resources, 'VCPU')
        self.assertBad('Requested resource VCPU expected positive integer '
                       'amount. Got: x.', query.resources, 'VCPU:x')
        self.assertBad('Requested resource VCPU requires amount >= 1. Got: '
                       '0.', query.resources, 'VCPU:0')

    def test_traits_forms(self):
        self.assertEqual(([{'A'}, {'B'}], set()), query.traits('A, B'))
        self.assertEqual(([{'A'}], {'B'}),
                         query.traits('A,!!B', allow_forbidden=True))
        self.assertEqual(([{'A', 'B'}], set()),
                         query.traits('in:A,B', allow_any=True))
        self.assertBad("Invalid query string parameters: Expected 'required' "
                       "parameter value of the form: HW_CPU_X86_VMX,"
                       "CUSTOM_MAGIC. Got: A,!B", query.traits, 'A,!B')
        self.assertBad("Invalid query string parameters: Expected 'required' "
                       "parameter value of the form: HW_CPU_X86_VMX,"
                       "!CUSTOM_MAGIC. Got an empty trait in: A,!",
                       query.traits, 'A,!', allow_forbidden=True)
        self.assertBad("Invalid query string parameters: The format "
                       "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
                       "microversion 1.39. Got: in:A", query.traits, 'in:A')
        self.assertBad("Invalid query string parameters: The format "
                       "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support "
                       "forbidden traits. Got: in:A,!B", query.traits,
                       'in:A,!B', allow_any=True)
        self.assertEqual({'A', '!B'}, query.traits_flat('A,!B', True))

    def test_required_params_by_version(self):
        pairs = (('required', 'A'), ('required', 'B'))
        self.assertEqual(([{'B'}], set()), query.required_params(
            FakeRequest((1, 38), *pairs)))
        self.assertEqual(([{'A'}, {'B'}], set()), query.required_params(
            FakeRequest((1, 39), *pairs)))
        self.assertEqual(([], {'A'}), query.required_params(
            FakeRequest((1, 22), ('required1', '!A')), '1'))

    def test_member_of(self):
        self.assertEqual(({AGG1, AGG2}, set()),
                         query.member_of('in:%s,%s' % (AGG1, AGG2)))
        self.assertEqual((set(), {AGG1}), query.member_of('!' + AGG1))
        self.assertBad("Multiple values for 'member_of' must be prefixed "
                       "with the 'in:' or '!in:' keyword using the valid "
                       "microversion. Got: %s,%s" % (AGG1, AGG2),
                       query.member_of, '%s,%s' % (AGG1, AGG2))
        self.assertBad("Invalid query string parameters: Expected "
                       "'member_of' parameter to contain valid UUID(s). "
                       "Got: nope", query.member_of, 'in:nope')

    def test_member_of_params_by_version(self):
        pairs = (('member_of', AGG1), ('member_of', '!' + AGG2))
        self.assertBad('Multiple member_of parameters are not supported',
                       query.member_of_params, FakeRequest((1, 23), *pairs))
        self.assertBad('Forbidden member_of parameters are not supported in '
                       'the specified microversion', query.member_of_params,
                       FakeRequest((1, 31), *pairs))
        self.assertEqual(([{AGG1}], {AGG2}), query.member_of_params(
            FakeRequest((1, 32), *pairs)))

    def test_in_tree(self):
        self.assertEqual(AGG1, query.in_tree(' %s ' % AGG1))
        self.assertBad("Invalid query string parameters: Expected 'in_tree' "
                       "parameter to be a format of uuid. Got: x",
                       query.in_tree, 'x')
