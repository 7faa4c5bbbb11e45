"""Configuration options for shelvefix, registered on ``CONF``."""

from oslo_config import cfg

from shelvefix.conf import placement

CONF = cfg.CONF

placement.register_own_opts(CONF)


def load_config_files(config_files):
    """A configuration of its own, read from ``config_files``.

    Every shelvefix option is registered on a new ``ConfigOpts`` (the
    global CONF is left alone) and read once, so that a bad value is
    reported now rather than in the middle of a run.

    :param config_files: paths of oslo.config files (a nova.conf works:
        only ``[placement]`` is read)
    :returns: the ``ConfigOpts``
    :raises oslo_config.cfg.Error: a file cannot be read or parsed, or a
        value is invalid
    """
    conf = cfg.ConfigOpts()
    placement.register_opts(conf)
    conf([], project='shelvefix', default_config_files=list(config_files))
    for opt in placement.placement_opts:
        getattr(conf.placement, opt.dest)
    return conf
