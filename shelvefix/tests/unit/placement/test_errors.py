"""Tests for shelvefix.placement.errors."""

import json

import testtools

from shelvefix.placement import errors
from shelvefix.placement import microversion


def environ(accept='application/json', **extra):
    env = {'HTTP_ACCEPT': accept, 'REQUEST_METHOD': 'PATCH',
           'openstack.request_id': 'req-1'}
    env.update(extra)
    return env


V1_22 = microversion.Version(1, 22)
V1_23 = microversion.Version(1, 23)


class ErrorsTestCase(testtools.TestCase):

    def render(self, error, version=V1_23, **env):
        response = error.render(environ(**env), version)
        return response, response.body.decode('utf-8')

    def test_strip_tags(self):
        self.assertEqual('a b\n\n  c x  d', errors.strip_tags(
            'a\nb<br /><br />\n c<!-- x -->\r\n<i>d</i>'))

    def test_detail_has_explanation_prefix_and_trailing_spaces(self):
        response, body = self.render(errors.Conflict(
            'consumer generation conflict - expected null but got 1',
            code=errors.CONCURRENT_UPDATE))
        self.assertEqual(409, response.status)
        self.assertEqual({'errors': [{
            'status': 409, 'title': 'Conflict',
            'detail': 'There was a conflict when trying to complete your '
                      'request.\n\n consumer generation conflict - '
                      'expected null but got 1  ',
            'code': 'placement.concurrent_update',
            'request_id': 'req-1'}]}, json.loads(body))

    def test_code_from_1_23_only(self):
        _resp, body = self.render(errors.NotFound(), version=V1_22)
        self.assertNotIn('code', json.loads(body)['errors'][0])
        _resp, body = self.render(errors.NotFound())
        error = json.loads(body)['errors'][0]
        self.assertEqual(errors.DEFAULT, error['code'])
        self.assertEqual('The resource could not be found.\n\n   ',
                         error['detail'])

    def test_406_versions_only_without_microversion(self):
        _resp, body = self.render(errors.NotAcceptable('x'), version=None)
        error = json.loads(body)['errors'][0]
        self.assertEqual(('1.39', '1.0'),
                         (error['max_version'], error['min_version']))
        self.assertEqual('The resource could not be generated that was '
                         'acceptable to your browser (content of type '
                         'application/json. \n\n x', error['detail'])
        _resp, body = self.render(errors.NotAcceptable('x'))
        self.assertNotIn('max_version', json.loads(body)['errors'][0])

    def test_templates_quote_request(self):
        _resp, body = self.render(errors.MethodNotAllowed(
            'No.', headers=[('allow', 'GET')]))
        self.assertEqual('The method PATCH is not allowed for this '
                         'resource. \n\n No.',
                         json.loads(body)['errors'][0]['detail'])
        response, body = self.render(errors.UnsupportedMediaType('No.'),
                                     CONTENT_TYPE='text/plain')
        self.assertEqual('The request media type text/plain is not '
                         'supported by this server. \n\n No.',
                         json.loads(body)['errors'][0]['detail'])
        self.assertEqual([('Content-Type', 'application/json')],
                         response.headers)

    def test_extra_headers(self):
        response, _body = self.render(errors.MethodNotAllowed(
            headers=[('allow', 'GET, PUT')]))
        self.assertIn(('allow', 'GET, PUT'), response.headers)

    def test_plain_and_html(self):
        response, body = self.render(errors.BadRequest('bad <x>'),
                                     accept='text/plain')
        self.assertEqual(('Content-Type', 'text/plain; charset=UTF-8'),
                         response.headers[0])
        self.assertEqual('400 Bad Request\n\nThe server could not comply '
                         'with the request since it is either malformed or '
                         'otherwise incorrect.\n\n bad   ', body)
        response, body = self.render(errors.BadRequest('bad <x>'),
                                     accept='text/html')
        self.assertEqual(('Content-Type', 'text/html; charset=UTF-8'),
                         response.headers[0])
        self.assertIn('<title>400 Bad Request</title>', body)
        self.assertIn('bad &lt;x&gt;', body)

    def test_unauthorized_uses_webob_document(self):
        _resp, body = self.render(errors.Unauthorized(), version=None)
        document = json.loads(body)
        self.assertEqual(['code', 'message', 'title'], sorted(document))
        self.assertEqual('401 Unauthorized', document['code'])
        self.assertTrue(document['message'].endswith('<br /><br />\n\n\n'))
