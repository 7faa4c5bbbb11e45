"""Configuration options for shelvefix, registered on ``CONF``."""

from oslo_config import cfg

from shelvefix.conf import placement

CONF = cfg.CONF

placement.register_own_opts(CONF)
