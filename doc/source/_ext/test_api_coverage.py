"""Unit tests of api_coverage's offline check."""

import unittest

import api_coverage


class RemoteResourcesTestCase(unittest.TestCase):

    def test_tags_and_scripts_that_load_from_the_network(self):
        html = '''
<script src="https://cdn.example/x.js"></script>
<script src="_static/local.js"></script>
<link rel="stylesheet" href="//fonts.example/f.css">
<link rel="stylesheet" href="_static/local.css">
<a href="https://example.org/">a link loads nothing</a>
<script>script.src = "https://search.example/w.js?t=" + 1;</script>
<script>$.ajax({url : "https://docs.example/badge.html"});</script>
<pre>self.url = 'http://127.0.0.1:%d' % port  (source shown, not run)</pre>
'''
        self.assertEqual(['https://cdn.example/x.js',
                          'https://search.example/w.js?t=',
                          'https://docs.example/badge.html',
                          '//fonts.example/f.css'],
                         api_coverage.remote_resources(html))


if __name__ == '__main__':
    unittest.main()
