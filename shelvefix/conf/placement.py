"""The ``[placement]`` group: how to reach placement, and claim retries.

The keystoneauth1 session, auth and adapter options are registered the way
nova registers them, so a nova.conf ``[placement]`` section works unchanged.
For a deployment without keystone, ``auth_type = admin_token`` with
``token`` and ``endpoint`` (or ``endpoint_override``) talks to a placement
running with ``auth_strategy = noauth2``.
"""

import math

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_config import types

GROUP_NAME = 'placement'
DEFAULT_SERVICE_TYPE = 'placement'
#: Seconds to connect to placement and for each answer, when ``[placement]
#: timeout`` is not set: placement answers in milliseconds, and its slowest
#: queries (allocation candidates over thousands of providers) in seconds.
DEFAULT_TIMEOUT = 30
#: The longest claim_retry_max_delay: retry N sleeps up to N times it.
MAX_CLAIM_RETRY_DELAY = 60.0


class FiniteFloat(types.Float):
    """A float option's type that refuses ``nan`` and ``inf``.

    oslo.config's ``Float`` takes both (``nan`` passes every ``min`` and
    ``max``), and a ``nan`` delay fails every retry's sleep.
    """

    def __call__(self, value):
        value = super().__call__(value)
        if not math.isfinite(value):
            raise ValueError('should be a finite number, not %s' % value)
        return value


def _group():
    # A new OptGroup each time: oslo.config keeps the registered options on
    # the group object, so sharing one between ConfigOpts would share them.
    return cfg.OptGroup(
        GROUP_NAME,
        title='Placement Service Options',
        help='Where the placement service is and how shelvefix retries '
             'allocation writes that lose a resource provider generation '
             'race.')


placement_opts = [
    cfg.IntOpt('claim_retry_attempts',
               default=4,
               min=1,
               help='How many times an allocation write (claim_resources, '
                    'put_allocations, move_allocations) is attempted when '
                    'placement answers 409 with a resource provider '
                    'generation conflict. Consumer generation conflicts are '
                    'not retried: they mean another actor changed the '
                    'consumer. The one exception is removing a host from a '
                    'consumer\'s allocations '
                    '(remove_provider_tree_from_instance_allocation, an '
                    'evacuation\'s clean-up), which re-reads and retries '
                    'either conflict, since it writes back what it read '
                    'less that host.'),
    cfg.Opt('claim_retry_max_delay',
            type=FiniteFloat(min=0.0, max=MAX_CLAIM_RETRY_DELAY),
            default=2.0,
            help='Before retry N (1, 2, ...) the client sleeps a random '
                 'time between 0 and N times this many seconds, so that '
                 'competing writers fall out of step, as nova does (at '
                 'most %g).' % MAX_CLAIM_RETRY_DELAY),
]


def _adapter_opts():
    # Defaults set on the options themselves (not with conf.set_default,
    # which a config fixture's reset() forgets) and so also in the sample.
    opts = ks_loading.get_adapter_conf_options(include_deprecated=False)
    cfg.set_defaults(opts, service_type=DEFAULT_SERVICE_TYPE,
                     valid_interfaces=['internal', 'public'])
    return opts


def _session_opts():
    opts = ks_loading.get_session_conf_options()
    cfg.set_defaults(opts, timeout=DEFAULT_TIMEOUT)
    return opts


def register_own_opts(conf):
    """Register only shelvefix's own [placement] options.

    This is what importing :mod:`shelvefix.conf` does to the global CONF:
    keystoneauth1's options are left alone, because nova registers its own
    variants of them in the same group and oslo.config refuses an option
    registered twice with different defaults. See :func:`register_ksa_opts`.
    """
    conf.register_group(_group())
    conf.register_opts(placement_opts, group=GROUP_NAME)


def register_ksa_opts(conf):
    """Register keystoneauth1's session, auth and adapter options.

    An option already registered under the same name (by nova, say) is
    kept: both describe the same setting, and keeping the first one is what
    lets shelvefix live in a nova process. The report client calls this
    when it builds its adapter from configuration.
    """
    conf.register_group(_group())
    for opt in (_session_opts() +
                ks_loading.get_auth_common_conf_options() +
                _adapter_opts()):
        try:
            conf.register_opt(opt, group=GROUP_NAME)
        except cfg.DuplicateOptError:
            pass


def register_opts(conf):
    """Register every [placement] option, keystoneauth1's included."""
    register_own_opts(conf)
    register_ksa_opts(conf)


def request_timeout(conf):
    """Seconds a request to placement may take.

    ``[placement] timeout``, or :data:`DEFAULT_TIMEOUT` when it is unset
    (as with nova's own variant of the option, which has no default).
    """
    timeout = conf[GROUP_NAME].timeout
    return DEFAULT_TIMEOUT if timeout is None else timeout


def load_adapter(conf, **kwargs):
    """A keystoneauth1 ``Adapter`` for placement, from ``[placement]``.

    The one place a configuration becomes a connection to placement: the
    report client and the remote backend both build theirs here.
    keystoneauth1's options are registered first (see
    :func:`register_ksa_opts`).

    Every request is bounded in time (:func:`request_timeout`): a
    placement that accepts connections and never answers is an error
    after that long, not a hang.

    :param conf: an oslo.config ``ConfigOpts``
    :param kwargs: passed on to the adapter (``raise_exc=False``...)
    :returns: the adapter; its ``session`` is the keystoneauth1 session
    :raises keystoneauth1.exceptions.ClientException: the auth or session
        options cannot be loaded
    """
    register_ksa_opts(conf)
    auth = ks_loading.load_auth_from_conf_options(conf, GROUP_NAME)
    session = ks_loading.load_session_from_conf_options(
        conf, GROUP_NAME, auth=auth, timeout=request_timeout(conf))
    return ks_loading.load_adapter_from_conf_options(
        conf, GROUP_NAME, session=session, auth=auth, **kwargs)


def list_opts():
    """The options of the group, for the sample config generator."""
    return {
        _group(): (
            placement_opts +
            _session_opts() +
            ks_loading.get_auth_common_conf_options() +
            ks_loading.get_auth_plugin_conf_options('password') +
            ks_loading.get_auth_plugin_conf_options('admin_token') +
            _adapter_opts())
    }
