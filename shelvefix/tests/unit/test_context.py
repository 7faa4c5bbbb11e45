"""Tests for the request context."""

from shelvefix import context
from shelvefix import exception
from shelvefix.tests import base


class RequestContextTestCase(base.TestCase):

    def test_global_id(self):
        ctx = context.RequestContext(user_id='u', project_id='p')
        self.assertTrue(ctx.request_id.startswith('req-'))
        self.assertEqual(ctx.request_id, ctx.global_id)
        ctx = context.RequestContext(global_request_id='req-global')
        self.assertEqual('req-global', ctx.global_id)
        self.assertIn("global_id='req-global'", repr(ctx))

    def test_admin_context(self):
        ctx = context.get_admin_context()
        self.assertIsNone(ctx.user_id)
        self.assertIsNone(ctx.project_id)
        self.assertNotEqual(ctx.request_id,
                            context.get_admin_context().request_id)


class ExceptionTestCase(base.TestCase):

    def test_message_from_kwargs(self):
        e = exception.AllocationDeleteFailed(consumer_uuid='c', error='boom')
        self.assertEqual('Failed to delete allocations for consumer c. '
                         'Error: boom', str(e))
        self.assertEqual({'consumer_uuid': 'c', 'error': 'boom'}, e.kwargs)

    def test_explicit_message(self):
        self.assertEqual('plain', str(exception.Invalid('plain')))

    def test_missing_keyword_is_reported(self):
        e = exception.AllocationUpdateFailed(consumer_uuid='c')
        self.assertIn('Failed to update allocations for consumer '
                      '%(consumer_uuid)s', str(e))
        self.assertIn("message could not be formatted: KeyError('error')",
                      str(e))
