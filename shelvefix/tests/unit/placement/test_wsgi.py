"""Tests for shelvefix.placement.wsgi."""

import datetime
import io

import testtools

from shelvefix.placement import wsgi


class WsgiTestCase(testtools.TestCase):

    def test_acceptable_offers(self):
        offers = ['text/html', 'application/json']
        cases = {
            None: offers,
            'application/json': ['application/json'],
            '*/*': offers,
            'text/*': ['text/html'],
            'text/html;q=0.5, application/json': ['application/json',
                                                  'text/html'],
            'text/*, application/json;q=0': ['text/html'],
            'application/xml': [],
            'APPLICATION/JSON;q=0.1': ['application/json'],
            'text/html;q=bad': [],
        }
        for accept, expected in cases.items():
            self.assertEqual(expected, wsgi.acceptable_offers(accept, offers),
                             accept)

    def test_request(self):
        env = {'REQUEST_METHOD': 'put', 'PATH_INFO': '/a',
               'SCRIPT_NAME': '/placement', 'QUERY_STRING': 'x=1&x=2&y=',
               'CONTENT_TYPE': 'application/json; charset=UTF-8',
               'CONTENT_LENGTH': '4', 'wsgi.input': io.BytesIO(b'body+'),
               'HTTP_X_AUTH_TOKEN': 't', 'wsgi.url_scheme': 'https',
               'SERVER_NAME': 'h', 'SERVER_PORT': '8443'}
        req = wsgi.Request(env)
        self.assertEqual('PUT', req.method)
        self.assertEqual('/a', req.path)
        self.assertEqual('/placement', req.script_name)
        self.assertEqual({'x': '2', 'y': ''}, req.query)
        self.assertEqual('application/json', req.content_type)
        self.assertEqual(b'body', req.body)
        self.assertEqual('t', req.header('x-auth-token'))
        self.assertEqual('4', req.header('Content-Length'))
        self.assertIsNone(req.header('Accept'))
        self.assertEqual('https://h:8443', req.host_url)
        env['HTTP_HOST'] = 'virtual'
        self.assertEqual('https://virtual', req.host_url)

    def test_response(self):
        response = wsgi.json_response({'a': [1]}, 201)
        response.add_header('X-A', 'b')
        self.assertTrue(response.has_header('x-a'))
        seen = {}

        def start_response(status, headers):
            seen['status'], seen['headers'] = status, headers

        self.assertEqual([b'{"a": [1]}'], response({}, start_response))
        self.assertEqual('201 Created', seen['status'])
        self.assertEqual([('Content-Type', 'application/json'),
                          ('X-A', 'b'), ('Content-Length', '10')],
                         seen['headers'])
        empty = wsgi.empty_response()
        self.assertEqual((204, b'', []),
                         (empty.status, empty.body, empty.headers))

    def test_http_date(self):
        moment = datetime.datetime(2024, 1, 2, 3, 4, 5,
                                   tzinfo=datetime.timezone.utc)
        self.assertEqual('Tue, 02 Jan 2024 03:04:05 GMT',
                         wsgi.http_date(moment))
        self.assertEqual('Unknown', wsgi.reason(599))
