"""Tests for shelvefix.backends.database: a URL's password is not shown."""

import testtools

from shelvefix.backends import database

SECRET = 'S3cr3tPw'


class MaskUrlTestCase(testtools.TestCase):

    def test_password_masked(self):
        for url, shown in (
                ('postgresql+psycopg2://placement:%s@127.0.0.1:1/placement'
                 % SECRET,
                 'postgresql+psycopg2://placement:***@127.0.0.1:1/placement'),
                ('mysql+pymysql://u:%s@db.example:3306/x?charset=utf8'
                 % SECRET,
                 'mysql+pymysql://u:***@db.example:3306/x?charset=utf8')):
            self.assertEqual(shown, database.mask_url(url))

    def test_nothing_to_mask(self):
        for url in ('sqlite:////tmp/x.db', 'mysql+pymysql://u@h/x'):
            self.assertEqual(url, database.mask_url(url))
        self.assertIsNone(database.mask_url(None))

    def test_url_sqlalchemy_cannot_read(self):
        # A bad port: make_url fails, the pattern still masks.
        shown = database.mask_url('postgresql://u:%s@h:abc/x' % SECRET)
        self.assertEqual('postgresql://u:***@h:abc/x', shown)
        self.assertEqual('::nope::', database.mask_url('::nope::'))


class ScrubTestCase(testtools.TestCase):

    def test_known_url_and_any_credentials(self):
        url = 'mysql+pymysql://u:%s@127.0.0.1:1/x' % SECRET
        other = 'postgresql://admin:Other%s@10.0.0.1/p' % SECRET
        text = ("db sync failed on %s\nTraceback...\n  engine for '%s' "
                'failed' % (url, other))
        scrubbed = database.scrub(text, url, None)
        self.assertNotIn(SECRET, scrubbed)
        self.assertIn('mysql+pymysql://u:***@127.0.0.1:1/x', scrubbed)
        self.assertIn("'postgresql://admin:***@10.0.0.1/p'", scrubbed)

    def test_password_with_an_at_sign(self):
        scrubbed = database.scrub('on mysql://u:p@ss%s@h/x.' % SECRET)
        self.assertEqual('on mysql://u:***@h/x.', scrubbed)

    def test_other_text_left_alone(self):
        text = ('placement at http://127.0.0.1:8778/ refused: '
                'user placement, e-mail a@b.c')
        self.assertEqual(text, database.scrub(
            text, 'postgresql://placement:placement@elsewhere/placement'))
