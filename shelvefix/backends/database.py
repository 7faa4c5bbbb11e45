"""An empty database of its own for one placement server, dropped after.

:class:`ScratchDatabase` creates a database with a random name on a server
whose role may create databases, and drops it at cleanup. Creating one per
placement server (rather than emptying a shared one) lets servers run side
by side, from parallel test workers too. Each engine says how to connect
(:meth:`ScratchDatabase.connect`) and what its statements and URL need:
:class:`~shelvefix.backends.postgresql.PostgreSQLDatabase`,
:class:`~shelvefix.backends.mariadb.MariaDBDatabase`.

A database URL holds a password: :func:`mask_url` is how one is shown
(in a message, a log, a report), and :func:`scrub` removes any from a
text that came from elsewhere (placement-manage's output, an exception).
:func:`placement_options` bounds how long placement may take to
connect to one.
"""

import re
import uuid

import fixtures

#: What a password is shown as.
MASK = '***'
# scheme://user:password@ (a URL's credentials, whatever the scheme).
# Greedy up to the last '@' of the word: SQLAlchemy ends a password at
# the first, but a driver or a shell may not; hiding more is harmless.
_CREDENTIALS = re.compile(
    r'(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*:)\S*@')


#: How placement connects at start-up (db sync, loading the application):
#: the seconds one attempt may take (PostgreSQL and MySQL; a URL's own
#: ``connect_timeout`` wins), and the attempts. oslo.db's defaults, 10
#: attempts 10 s apart, made a MySQL that refuses take 100 s to report
#: (it does not retry PostgreSQL's refusal); every database shelvefix
#: starts is up before placement connects.
CONNECT_TIMEOUT = 10
CONNECT_ATTEMPTS = 1


def connection_parameters(url):
    """The query placement adds to ``url`` when it connects.

    ``connect_timeout`` (:data:`CONNECT_TIMEOUT`) for PostgreSQL and
    MySQL, unless the URL sets one; nothing for sqlite.
    """
    from sqlalchemy.engine import url as sa_url
    parsed = sa_url.make_url(url)
    if (parsed.get_backend_name() not in ('postgresql', 'mysql') or
            'connect_timeout' in parsed.query):
        return ''
    return 'connect_timeout=%d' % CONNECT_TIMEOUT


_PLACEMENT_OPTIONS = """\
connection = {url}
# Bounded: a database that cannot be reached is reported in seconds, not
# minutes (shelvefix.backends.database.CONNECT_TIMEOUT).
connection_parameters = {parameters}
max_retries = {attempts}
# oslo.db waits this long after every failed attempt, the last too.
retry_interval = 0"""


def placement_options(url):
    """placement.conf's ``[placement_database]`` lines for ``url``.

    Its ``connection``, and how placement connects at start-up: one
    attempt (:data:`CONNECT_ATTEMPTS`), of at most :data:`CONNECT_TIMEOUT`
    seconds (:func:`connection_parameters`).
    """
    return _PLACEMENT_OPTIONS.format(
        url=url, parameters=connection_parameters(url),
        attempts=CONNECT_ATTEMPTS)


def mask_url(url):
    """``url`` as it may be shown: its password replaced by ``***``.

    :param url: a SQLAlchemy URL (a string or a ``URL``), or None
    :returns: the text to show; a URL SQLAlchemy cannot parse is shown
        with whatever stands where a password would (see :func:`scrub`)
    """
    if url is None:
        return None
    from sqlalchemy.engine import url as sa_url
    try:
        return sa_url.make_url(url).render_as_string(hide_password=True)
    except Exception:
        # Not a URL SQLAlchemy reads (a bad --db-url): the pattern still
        # finds user:password@.
        return scrub(str(url))


def scrub(text, *urls):
    """``text`` with no database password in it.

    Each of ``urls`` (the URLs the text may quote verbatim) is replaced by
    its masked form, then any other ``scheme://user:password@`` by
    ``scheme://user:***@``: for the output of another program, or an
    exception's text.

    :param text: what is about to be shown
    :param urls: the URLs known to be in use (None is skipped)
    """
    # (Not the bare password: drivers do not quote it, and a common one,
    # such as "placement", would mangle the text.)
    for url in urls:
        if url:
            text = text.replace(str(url), mask_url(url))
    return _CREDENTIALS.sub(lambda m: m.group('head') + MASK + '@', text)


class ScratchDatabase(fixtures.Fixture):
    """An empty database of its own on the server at ``admin_url``.

    :param admin_url: the SQLAlchemy URL of a role that may create
        databases

    After setUp, ``name`` is the new database's name and ``url`` its URL.
    """

    #: The statements, ``{name}`` the database's.
    create = 'CREATE DATABASE {name}'
    drop = 'DROP DATABASE IF EXISTS {name}'
    #: The query of the new database's URL (None: the admin URL's).
    query = None

    def __init__(self, admin_url):
        super().__init__()
        self.admin_url = admin_url

    def connect(self, url):
        """A DB-API connection to the server at ``url``, autocommitting.

        ``CREATE DATABASE`` and ``DROP DATABASE`` run outside a
        transaction.
        """
        raise NotImplementedError

    def _execute(self, sql):
        from sqlalchemy.engine import url as sa_url

        url = sa_url.make_url(self.admin_url)
        conn = self.connect(url)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
        finally:
            conn.close()
        return url

    def _setUp(self):
        # Random, so never quoted wrongly nor shared.
        self.name = 'placement_%s' % uuid.uuid4().hex[:16]
        url = self._execute(self.create.format(name=self.name))
        self.addCleanup(self._execute, self.drop.format(name=self.name))
        url = url.set(database=self.name)
        if self.query is not None:
            url = url.set(query=self.query)
        self.url = url.render_as_string(hide_password=False)
