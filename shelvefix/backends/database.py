"""An empty database of its own for one placement server, dropped after.

:class:`ScratchDatabase` creates a database with a random name on a server
whose role may create databases, and drops it at cleanup. Creating one per
placement server (rather than emptying a shared one) lets servers run side
by side, from parallel test workers too. Each engine says how to connect
(:meth:`ScratchDatabase.connect`) and what its statements and URL need:
:class:`~shelvefix.backends.postgresql.PostgreSQLDatabase`,
:class:`~shelvefix.backends.mariadb.MariaDBDatabase`.
"""

import uuid

import fixtures


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
