"""Tests for the options exposed to oslo-config-generator."""

from oslo_config import cfg

from shelvefix.conf import opts
from shelvefix.conf import placement
from shelvefix.tests import base


class ListOptsTestCase(base.TestCase):

    def test_placement_group(self):
        (group, group_opts), = opts.list_opts()
        self.assertEqual('placement', group.name)
        names = [o.name for o in group_opts]
        self.assertEqual(sorted(names), names)
        for name in ('claim_retry_attempts', 'claim_retry_max_delay',
                     'auth_type', 'endpoint-override', 'service-type',
                     'token', 'timeout'):
            self.assertIn(name, names)
        self.assertEqual(len(names), len(set(names)))

    def test_defaults(self):
        placement.register_ksa_opts(self.flags_fixture.conf)
        self.assertEqual(4, self.flags_fixture.conf.placement
                         .claim_retry_attempts)
        self.assertEqual('placement',
                         self.flags_fixture.conf.placement.service_type)
        self.assertEqual(['internal', 'public'],
                         self.flags_fixture.conf.placement.valid_interfaces)

    def test_import_leaves_keystoneauth_options_to_others(self):
        # What nova does at import: its own variant of an adapter option.
        conf = cfg.ConfigOpts()
        placement.register_own_opts(conf)
        conf.register_opt(cfg.StrOpt('service_type', default='nova-says'),
                          group='placement')
        placement.register_ksa_opts(conf)
        conf([])
        self.assertEqual('nova-says', conf.placement.service_type)
        self.assertEqual(4, conf.placement.claim_retry_attempts)
        self.assertIsNone(conf.placement.auth_type)
