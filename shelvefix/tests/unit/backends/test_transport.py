"""Tests for shelvefix.backends.transport."""

import json
import threading

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
import requests
import testtools

from shelvefix.backends import transport

ENDPOINT = 'http://placement.transport.test'


class EchoApp(object):
    """A WSGI app answering with what it saw; counts the calls it served."""

    def __init__(self):
        self.served = 0
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self.lock:
            self.served += 1
        length = int(environ.get('CONTENT_LENGTH') or 0)
        seen = {
            'method': environ['REQUEST_METHOD'],
            'script_name': environ['SCRIPT_NAME'],
            'path': environ['PATH_INFO'],
            'query': environ['QUERY_STRING'],
            'content_type': environ.get('CONTENT_TYPE'),
            'content_length': environ.get('CONTENT_LENGTH'),
            'body': environ['wsgi.input'].read(length).decode('utf-8'),
            'token': environ.get('HTTP_X_AUTH_TOKEN'),
            'version': environ.get('HTTP_OPENSTACK_API_VERSION'),
            'server': [environ['SERVER_NAME'], environ['SERVER_PORT']],
            'scheme': environ['wsgi.url_scheme'],
        }
        status = environ.get('HTTP_X_STATUS', '200 OK')
        body = json.dumps(seen).encode('utf-8')
        start_response(status, [('Content-Type',
                                 'application/json; charset=UTF-8'),
                                ('X-Twice', 'a'), ('X-Twice', 'b')])
        return [body[:10], b'', body[10:]]


class TransportTestCase(testtools.TestCase):

    def setUp(self):
        super(TransportTestCase, self).setUp()
        self.app = EchoApp()
        self.transport = transport.WSGITransport(self.app)
        self.session = requests.Session()
        self.session.mount(ENDPOINT, self.transport)
        self.addCleanup(self.session.close)

    def send(self, method, path, **kwargs):
        return self.session.request(method, ENDPOINT + path, **kwargs)

    # -- environ and response -------------------------------------------

    def test_environ_from_request(self):
        resp = self.send('PUT', '/allocations/a%20b?x=1&y=2',
                         json={'a': 1},
                         headers={'X-Auth-Token': 'tok',
                                  'OpenStack-API-Version': 'placement 1.28'})
        seen = resp.json()
        self.assertEqual('PUT', seen['method'])
        self.assertEqual('/allocations/a b', seen['path'])
        self.assertEqual('x=1&y=2', seen['query'])
        self.assertEqual('application/json', seen['content_type'])
        self.assertEqual(str(len('{"a": 1}')), seen['content_length'])
        self.assertEqual({'a': 1}, json.loads(seen['body']))
        self.assertEqual('tok', seen['token'])
        self.assertEqual('placement 1.28', seen['version'])
        self.assertEqual(['placement.transport.test', '80'], seen['server'])
        self.assertEqual('http', seen['scheme'])

    def test_script_name_is_stripped(self):
        self.transport = transport.WSGITransport(self.app,
                                                 script_name='/placement/')
        self.session.mount(ENDPOINT, self.transport)
        seen = self.send('GET', '/placement/usages').json()
        self.assertEqual('/placement', seen['script_name'])
        self.assertEqual('/usages', seen['path'])
        self.assertEqual('/usages', self.transport.calls[0].path)

    def test_response_built_from_app_answer(self):
        resp = self.send('GET', '/x', headers={'X-Status': '418 Teapot'})
        self.assertEqual(418, resp.status_code)
        self.assertEqual('Teapot', resp.reason)
        self.assertEqual('a, b', resp.headers['x-twice'])
        self.assertEqual('UTF-8', resp.encoding)
        self.assertEqual(ENDPOINT + '/x', resp.url)
        self.assertEqual('GET', resp.request.method)
        self.assertEqual('/x', resp.json()['path'])

    def test_stream_and_str_bodies(self):
        for body in ('plain text', b'bytes', iter([b'it', b'er'])):
            self.send('POST', '/b', data=body,
                      headers={'Content-Type': 'text/plain'})
        self.assertEqual(['plain text', 'bytes', 'iter'],
                         [c.body for c in self.transport.calls])

    # -- call log ---------------------------------------------------------

    def test_call_log_records_each_call(self):
        self.send('PUT', '/allocations/c?q=1', json={'allocations': {}},
                  headers={'OpenStack-API-Version': 'placement 1.28',
                           'X-OpenStack-Request-ID': 'req-abc'})
        self.send('GET', '/', headers={
            'OpenStack-API-Version': 'compute 2.1, placement latest'})
        self.send('GET', '/x', headers={'X-Status': '404 Not Found'})
        self.assertEqual([
            transport.Call('PUT', '/allocations/c?q=1', '1.28',
                           {'allocations': {}}, 200, 'req-abc'),
            transport.Call('GET', '/', 'latest', None, 200, None),
            transport.Call('GET', '/x', None, None, 404, None),
        ], self.transport.calls)

    def test_non_json_body_logged_as_text(self):
        self.send('PUT', '/x', data='{not json',
                  headers={'Content-Type': 'application/json'})
        self.assertEqual('{not json', self.transport.calls[0].body)

    def test_reset_calls(self):
        self.send('GET', '/a')
        calls = self.transport.calls
        self.transport.reset_calls()
        self.assertEqual([], self.transport.calls)
        self.assertIs(calls, self.transport.calls)

    def test_calls_for(self):
        self.send('GET', '/allocations/1')
        self.send('PUT', '/allocations/1', json={})
        self.send('GET', '/resource_providers')
        self.assertEqual(['/allocations/1', '/resource_providers'],
                         [c.path for c in self.transport.calls_for('get')])
        self.assertEqual(['PUT'], [c.method for c in self.transport.calls_for(
            method='PUT', path='^/allocations/')])
        self.assertEqual(2, len(self.transport.calls_for(path='alloc')))

    # -- faults -------------------------------------------------------------

    def test_status_fault_before_never_reaches_app(self):
        fault = self.transport.inject_fault('GET', path='/allocations/',
                                            status=503)
        resp = self.send('GET', '/allocations/c')
        self.assertEqual(503, resp.status_code)
        self.assertEqual('Service Unavailable', resp.reason)
        error = resp.json()['errors'][0]
        self.assertEqual(503, error['status'])
        self.assertEqual('placement.undefined_code', error['code'])
        self.assertEqual(resp.headers['x-openstack-request-id'],
                         error['request_id'])
        self.assertEqual(0, self.app.served)
        self.assertEqual(1, fault.fired)
        self.assertEqual(503, self.transport.calls[0].status)
        # Only once (times=1): the next one goes through.
        self.assertEqual(200, self.send('GET', '/allocations/c').status_code)
        self.assertEqual(1, self.app.served)

    def test_status_fault_custom_body(self):
        self.transport.inject_fault(status=409, body='{"errors": []}')
        self.assertEqual({'errors': []}, self.send('GET', '/').json())
        self.transport.inject_fault(status=500, body=b'boom')
        self.assertEqual(b'boom', self.send('GET', '/').content)

    def test_success_status_fault_has_no_body(self):
        self.transport.inject_fault(status=204)
        resp = self.send('DELETE', '/allocations/c')
        self.assertEqual(204, resp.status_code)
        self.assertEqual(b'', resp.content)
        self.assertNotIn('Content-Type', resp.headers)

    def test_after_fault_lets_app_process(self):
        self.transport.inject_fault(method='PUT', status=500, when='after')
        resp = self.send('PUT', '/x', json={})
        self.assertEqual(500, resp.status_code)
        self.assertEqual(1, self.app.served)
        self.assertEqual(500, self.transport.calls[0].status)

    def test_exception_faults(self):
        for name, exc, recorded in (
                ('connect', requests.exceptions.ConnectionError,
                 'ConnectFailure'),
                ('timeout', requests.exceptions.ReadTimeout, 'Timeout')):
            self.transport.reset_calls()
            self.transport.inject_fault(exception=name)
            self.assertRaises(exc, self.send, 'GET', '/x?y=1')
            self.assertEqual([transport.Call('GET', '/x?y=1', None, None,
                                             recorded, None)],
                             self.transport.calls)
        self.assertEqual(0, self.app.served)

    def test_after_exception_fault_loses_reply(self):
        self.transport.inject_fault(exception='timeout', when='after')
        self.assertRaises(requests.exceptions.Timeout, self.send, 'PUT', '/x')
        self.assertEqual(1, self.app.served)

    def test_nth_and_times_count_matching_requests_only(self):
        fault = self.transport.inject_fault(method='PUT', path='/alloc',
                                            nth=2, times=2, status=409)
        statuses = []
        for method, path in (('PUT', '/alloc/1'), ('GET', '/alloc/1'),
                             ('PUT', '/other'), ('PUT', '/alloc/2'),
                             ('PUT', '/alloc/3'), ('PUT', '/alloc/4')):
            statuses.append(self.send(method, path).status_code)
        self.assertEqual([200, 200, 200, 409, 409, 200], statuses)
        self.assertEqual(2, fault.fired)
        self.assertEqual(4, fault.seen)

    def test_every_matching_fault_counts(self):
        first = self.transport.inject_fault(status=500)
        second = self.transport.inject_fault(nth=2, status=502)
        self.assertEqual(500, self.send('GET', '/').status_code)
        self.assertEqual(502, self.send('GET', '/').status_code)
        self.assertEqual((1, 1), (first.fired, second.fired))

    def test_overlapping_faults_first_wins(self):
        first = self.transport.inject_fault(status=500, times=2)
        second = self.transport.inject_fault(status=502, times=3)
        self.assertEqual([500, 500, 502, 200], [
            self.send('GET', '/').status_code for _ in range(4)])
        self.assertEqual((2, 1), (first.fired, second.fired))
        self.assertEqual((4, 4), (first.seen, second.seen))

    def test_clear_faults(self):
        self.transport.inject_fault(status=500, times=5)
        self.transport.clear_faults()
        self.assertEqual(200, self.send('GET', '/').status_code)

    def test_fault_arguments_are_validated(self):
        bad = [
            {},
            {'status': 500, 'exception': 'connect'},
            {'exception': 'refused'},
            {'exception': 'connect', 'body': 'x'},
            {'status': '500'},
            {'status': 99},
            {'status': True},
            {'status': 500, 'body': {'a': 1}},
            {'status': 500, 'when': 'during'},
            {'status': 500, 'nth': 0},
            {'status': 500, 'times': 0},
            {'status': 500, 'nth': 1.5},
            {'status': 500, 'method': 1},
            {'status': 500, 'path': '('},
        ]
        for kwargs in bad:
            self.assertRaises(ValueError, self.transport.inject_fault,
                              **kwargs)
        self.assertEqual([], self.transport._faults)

    def test_fault_error_message_names_the_problem(self):
        exc = self.assertRaises(ValueError, self.transport.inject_fault,
                                exception='boom')
        self.assertIn("unknown exception 'boom'", str(exc))
        self.assertIn('connect, timeout', str(exc))

    # -- concurrency -------------------------------------------------------

    def test_concurrent_requests_all_logged(self):
        fault = self.transport.inject_fault(path='/faulty', status=500,
                                            times=10)

        def worker(n):
            for i in range(25):
                self.send('GET', '/faulty' if i % 5 == 0 else '/w%d' % n)

        threads = [threading.Thread(target=worker, args=(n,))
                   for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(200, len(self.transport.calls))
        self.assertEqual(10, fault.fired)
        self.assertEqual(40, fault.seen)
        self.assertEqual(160 + 30, self.app.served)
        self.assertEqual(10, len([c for c in self.transport.calls
                                  if c.status == 500]))


class KeystoneauthTestCase(testtools.TestCase):
    """The transport mounted in a keystoneauth1 session."""

    def setUp(self):
        super(KeystoneauthTestCase, self).setUp()
        self.transport = transport.WSGITransport(EchoApp())
        session = ks_session.Session(
            auth=token_endpoint.Token(ENDPOINT, 'secret'))
        session.session.mount(ENDPOINT, self.transport)
        self.adapter = ks_adapter.Adapter(
            session, service_type='placement', endpoint_override=ENDPOINT,
            raise_exc=False)

    def test_headers_and_log(self):
        resp = self.adapter.get('/usages', microversion='1.9',
                                global_request_id='req-%s' % ('1' * 36))
        self.assertEqual('secret', resp.json()['token'])
        self.assertEqual([transport.Call('GET', '/usages', '1.9', None, 200,
                                         'req-%s' % ('1' * 36))],
                         self.transport.calls)

    def test_injected_exceptions_become_keystoneauth_errors(self):
        self.transport.inject_fault(exception='connect')
        self.assertRaises(ks_exc.ConnectFailure, self.adapter.get, '/')
        self.transport.inject_fault(exception='timeout')
        self.assertRaises(ks_exc.ConnectTimeout, self.adapter.get, '/')
        self.assertEqual(['ConnectFailure', 'Timeout'],
                         [c.status for c in self.transport.calls])
