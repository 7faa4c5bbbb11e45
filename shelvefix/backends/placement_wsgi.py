"""openstack-placement's WSGI application, as shelvefix's server runs it.

gunicorn serves this module's ``application``: placement's own
(``placement.wsgi.api:application``), loaded once in gunicorn's master and
forked into the workers, with two things a deployment would also need for
that:

* each worker forgets the database connections it inherited (SQLAlchemy's
  advice for forked processes: two processes must never share one);
* on a sqlite database, transactions wait for each other instead of
  failing (see :mod:`shelvefix.backends.sqlite`).
"""

import os

from shelvefix.backends import sqlite

sqlite.serialise_writers()

from placement import db_api  # noqa: E402
from placement.wsgi.api import application  # noqa: E402,F401


def _forget_inherited_connections():
    db_api.get_placement_engine().dispose(close=False)


os.register_at_fork(after_in_child=_forget_inherited_connections)
