"""Per-request latency of the placement double: full client stack vs direct.

The same 1,000 requests (250 rounds of GET, PUT, GET, DELETE on
``/allocations/{consumer}``, each round with a new consumer) are made twice
in one run:

* through the full client stack: SchedulerReportClient ->
  keystoneauth1 Adapter/Session -> requests -> WSGITransport -> the double's
  WSGI application;
* straight to the double's WSGI application with a prepared environ.

The ratio between the two is what matters on a shared, noisy machine.
Usage: ``python benchmarks/bench_placement_double.py [--requests N]``.
"""

import argparse
import io
import json
import statistics
import sys
import time
import uuid

from shelvefix.backends import fixture as placement_fixture
from shelvefix import context

# A sibling of this script: its directory is first on sys.path.
import figures

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512}


def _environ(method, path, body=None, version='1.28'):
    data = json.dumps(body).encode('utf-8') if body is not None else b''
    environ = {
        'REQUEST_METHOD': method, 'SCRIPT_NAME': '', 'PATH_INFO': path,
        'QUERY_STRING': '', 'SERVER_NAME': 'placement', 'SERVER_PORT': '80',
        'SERVER_PROTOCOL': 'HTTP/1.1', 'wsgi.version': (1, 0),
        'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(data),
        'wsgi.errors': sys.stderr, 'wsgi.multithread': True,
        'wsgi.multiprocess': False, 'wsgi.run_once': False,
        'HTTP_OPENSTACK_API_VERSION': 'placement %s' % version,
        'HTTP_ACCEPT': 'application/json', 'HTTP_X_AUTH_TOKEN': 'admin',
    }
    if data:
        environ['CONTENT_TYPE'] = 'application/json'
        environ['CONTENT_LENGTH'] = str(len(data))
    return environ


def _round_bodies(rp, consumer):
    put = {'allocations': {rp: {'resources': RESOURCES}},
           'consumer_generation': None, 'project_id': 'p', 'user_id': 'u'}
    url = '/allocations/%s' % consumer
    return [('GET', url, None, 200), ('PUT', url, put, 204),
            ('GET', url, None, 200), ('DELETE', url, None, 204)]


def bench_client(rounds):
    """Time each request through the full client stack."""
    ctx = context.get_admin_context()
    times = []
    with placement_fixture.PlacementFixture() as placement:
        rp = placement.create_provider('bench', inventory={
            'VCPU': 100000, 'MEMORY_MB': 10 ** 9})
        client = placement.client
        for _ in range(rounds):
            for method, url, body, status in _round_bodies(
                    rp, str(uuid.uuid4())):
                call = getattr(client, method.lower())
                args = (url,) if body is None else (url, body)
                start = time.perf_counter()
                resp = call(*args, version='1.28',
                            global_request_id=ctx.global_id)
                times.append(time.perf_counter() - start)
                assert resp.status_code == status, (method, resp.text)
    return times


def bench_direct(rounds):
    """Time each request sent straight to the WSGI application."""
    times = []
    with placement_fixture.PlacementFixture() as placement:
        rp = placement.create_provider('bench', inventory={
            'VCPU': 100000, 'MEMORY_MB': 10 ** 9})
        app = placement.app
        for _ in range(rounds):
            for method, url, body, status in _round_bodies(
                    rp, str(uuid.uuid4())):
                captured = []
                environ = _environ(method, url, body)
                start = time.perf_counter()
                b''.join(app(environ, lambda s, h, e=None: captured.append(
                    s)))
                times.append(time.perf_counter() - start)
                assert captured[0].startswith(str(status)), captured
    return times


def _summary(name, times):
    us = sorted(t * 1e6 for t in times)
    return {'path': name, 'requests': len(us),
            'mean_us': statistics.fmean(us),
            'median_us': statistics.median(us),
            'p95_us': us[int(len(us) * 0.95) - 1],
            'total_s': sum(us) / 1e6}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--requests', type=int, default=1000,
                        help='requests per path, a multiple of 4 '
                             '(default 1000)')
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args(argv)
    if args.requests < 4 or args.requests % 4:
        parser.error('--requests must be a positive multiple of 4')
    rounds = args.requests // 4
    # Warm both paths once so imports and first-call costs are not timed.
    bench_client(5)
    bench_direct(5)
    results = [_summary('full client stack', bench_client(rounds)),
               _summary('direct to the WSGI app', bench_direct(rounds))]
    ratio = figures.ratio(results[0]['mean_us'], results[1]['mean_us'],
                          'client stack / direct (mean)')
    if args.json:
        print(json.dumps({'results': results, 'ratio_mean': ratio},
                         indent=2))
        return 0
    print('%-24s %8s %10s %10s %10s %9s' % (
        'path', 'requests', 'mean us', 'median us', 'p95 us', 'total s'))
    for r in results:
        print('%-24s %8d %10.1f %10.1f %10.1f %9.3f' % (
            r['path'], r['requests'], r['mean_us'], r['median_us'],
            r['p95_us'], r['total_s']))
    print('client stack / direct (mean): %.1fx' % ratio)
    return 0


if __name__ == '__main__':
    sys.exit(figures.main(main))
