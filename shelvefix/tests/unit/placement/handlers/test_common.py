"""Tests for shelvefix.placement.handlers.common."""

import datetime

import testtools

from shelvefix.placement import errors
from shelvefix.placement.handlers import common
from shelvefix.placement import microversion
from shelvefix.placement import wsgi


def request(minor=28, **environ):
    req = wsgi.Request(dict({'REQUEST_METHOD': 'GET'}, **environ))
    req.version = microversion.Version(1, minor)
    return req


class CommonTestCase(testtools.TestCase):

    def test_require_version(self):
        common.require_version(request(13), (1, 13))
        self.assertRaises(errors.NotFound, common.require_version,
                          request(12), (1, 13))
        self.assertRaises(errors.MethodNotAllowed, common.require_version,
                          request(4), (1, 5), status=405)

    def test_check_accept(self):
        common.check_accept(request(HTTP_ACCEPT='application/json'))
        common.check_accept(request(HTTP_ACCEPT='*/*'))
        common.check_accept(request())
        exc = self.assertRaises(errors.NotAcceptable, common.check_accept,
                                request(HTTP_ACCEPT='text/html'))
        self.assertEqual('Only application/json is provided', exc.detail)

    def test_require_json(self):
        common.require_json(request(CONTENT_TYPE='application/json; a=b'))
        req = request()
        exc = self.assertRaises(errors.UnsupportedMediaType,
                                common.require_json, req)
        self.assertEqual('The media type None is not supported, use '
                         'application/json', exc.detail)
        self.assertEqual('None', req.environ['CONTENT_TYPE'])

    def test_cache_headers(self):
        moment = datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)
        response = common.cache_headers(request(14), wsgi.Response())
        self.assertEqual([], response.headers)
        response = common.cache_headers(request(15), wsgi.Response(), moment)
        self.assertEqual([('Last-Modified', 'Tue, 02 Jan 2024 00:00:00 GMT'),
                          ('Cache-Control', 'no-cache')], response.headers)
        response = common.cache_headers(request(15), wsgi.Response(), None)
        self.assertEqual([('Cache-Control', 'no-cache')], response.headers)

    def test_urls_and_newest(self):
        self.assertEqual('/placement/resource_providers/u',
                         common.provider_url(request(SCRIPT_NAME='/placement'),
                                             'u'))
        old = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
        new = datetime.datetime(2021, 1, 1, tzinfo=datetime.timezone.utc)
        self.assertEqual(new, common.newest([old, None, new]))
        self.assertGreater(common.newest([]), new)
