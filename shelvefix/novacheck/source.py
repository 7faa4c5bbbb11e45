"""Find ``nova/compute/manager.py`` without importing nova.

A downstream maintainer may point at a git checkout of nova, at the
``nova`` package directory inside some virtualenv's ``site-packages``, or
at the file itself; ``--installed`` asks the running Python where its
``nova`` package is. Importing nova to find out would run its import-time
code and need its dependencies, so only the import system's finders are
asked (``importlib.util.find_spec`` on a top-level name loads nothing).
"""

import importlib.metadata
import importlib.util
import lzma
import os
import re
import sys
import tarfile
import zipfile
import zlib

MANAGER_RELPATH = os.path.join('nova', 'compute', 'manager.py')
# Archive members use '/' whatever the platform.
MANAGER_MEMBER = 'nova/compute/manager.py'
ARCHIVE_SUFFIXES = ('.whl', '.zip', '.tar.gz', '.tgz')
# nova-18.3.0-py2.py3-none-any.whl, nova-19.0.0.tar.gz
_RELEASE_RE = re.compile(r'^nova-(\d[^-]*?)(?:-py|\.tar\.gz|\.tgz|\.zip)')


class SourceError(Exception):
    """The file to check cannot be found or read."""


class ManagerFile(object):
    """A compute manager file to check.

    :ivar filename: the path to open (a file, or a release archive)
    :ivar display: how evidence names it (``nova/compute/manager.py`` when
        found in a tree, package or archive, else the path as given)
    :ivar version: the distribution's version, when known
    :ivar member: the manager's name inside the archive, if ``filename``
        is one (a wheel or an sdist, as ``pip download nova==X`` fetches)
    """

    def __init__(self, filename, display, version=None, member=None):
        self.filename = filename
        self.display = display
        self.version = version
        self.member = member

    def sibling(self, name):
        """The file ``name`` of the same ``nova/compute`` directory.

        ``resource_tracker.py`` or ``vm_states.py``, from the same tree,
        package directory or archive (for a ``manager.py`` given alone,
        from the directory it is in). Whether it exists is found out when
        it is read.
        """
        if self.member is not None:
            member = self.member[:-len('manager.py')] + name
            return ManagerFile(self.filename, self.display[:-len(
                'manager.py')] + name, self.version, member)
        filename = os.path.join(os.path.dirname(self.filename), name)
        display = (os.path.join(os.path.dirname(self.display), name)
                   if self.display == MANAGER_RELPATH else filename)
        return ManagerFile(filename, display, self.version)

    def _bytes(self):
        if self.member is None:
            with open(self.filename, 'rb') as f:
                return f.read()
        if zipfile.is_zipfile(self.filename):
            with zipfile.ZipFile(self.filename) as archive:
                return archive.read(self.member)
        with tarfile.open(self.filename) as archive:
            return archive.extractfile(self.member).read()

    def read(self):
        """The file's text.

        :raises SourceError: it cannot be read or decoded
        """
        try:
            data = self._bytes()
        except OSError as e:
            raise SourceError('cannot read %s: %s' % (self.filename,
                                                      e.strerror or e))
        except (KeyError, zipfile.BadZipFile, tarfile.TarError, EOFError,
                zlib.error, lzma.LZMAError) as e:
            # A damaged member: its data does not decompress.
            raise SourceError('cannot read %s from %s: %s'
                              % (self.member, self.filename,
                                 ' '.join(str(e).split()) or
                                 type(e).__name__))
        if b'\0' in data:
            raise SourceError('cannot read %s: not Python source (a NUL '
                              'byte at offset %d)'
                              % (self.filename, data.index(b'\0')))
        try:
            return data.decode('utf-8')
        except UnicodeDecodeError as e:
            raise SourceError('cannot read %s: not UTF-8 (%s)'
                              % (self.filename, e))


def from_archive(path):
    """The manager file inside a nova wheel or sdist.

    :param path: ``nova-X-py3-none-any.whl`` or ``nova-X.tar.gz``
    :raises SourceError: not an archive, or no compute manager in it
    """
    name = os.path.basename(path)
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        else:
            with tarfile.open(path) as archive:
                names = archive.getnames()
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error,
            lzma.LZMAError, ValueError):
        # Truncated or not an archive at all: tarfile's own text lists
        # every compression it tried, several lines that say no more.
        raise SourceError('%s: not a wheel, sdist or nova tree (not a '
                          'zip or tar archive that can be read)' % path)
    except OSError as e:
        raise SourceError('cannot read %s: %s' % (path, e.strerror or e))
    members = sorted((n for n in names
                      if n == MANAGER_MEMBER or
                      n.endswith('/' + MANAGER_MEMBER)), key=len)
    if not members:
        raise SourceError('file not found: no %s in %s'
                          % (MANAGER_MEMBER, path))
    match = _RELEASE_RE.match(name)
    return ManagerFile(path, MANAGER_RELPATH,
                       match.group(1) if match else None, members[0])


def from_path(path):
    """The manager file for a path given on the command line.

    :param path: ``manager.py`` itself, a nova source tree (holding
        ``nova/compute/manager.py``), a ``nova`` package directory
        (holding ``compute/manager.py``), or a release's wheel or sdist
    :raises SourceError: nothing to check there
    """
    if os.path.isfile(path):
        if path.endswith(ARCHIVE_SUFFIXES):
            return from_archive(path)
        return ManagerFile(path, path)
    if not os.path.isdir(path):
        try:
            os.stat(path)
        except FileNotFoundError:
            if os.path.islink(path):
                raise SourceError('file not found: %s is a symbolic link '
                                  'to nothing' % path)
            raise SourceError('file not found: %s does not exist' % path)
        except OSError as e:
            # A symbolic link loop, a directory that cannot be searched...
            raise SourceError('cannot read %s: %s' % (path, e.strerror))
        raise SourceError('cannot read %s: not a regular file or a '
                          'directory (a device, a pipe or a socket)' % path)
    tree = os.path.join(path, MANAGER_RELPATH)
    if os.path.isfile(tree):
        return ManagerFile(tree, MANAGER_RELPATH)
    package = os.path.join(path, 'compute', 'manager.py')
    if os.path.isfile(package):
        return ManagerFile(package, MANAGER_RELPATH)
    raise SourceError('file not found: neither %s nor %s exists'
                      % (tree, package))


def installed(find_spec=importlib.util.find_spec,
              distribution=importlib.metadata.distribution):
    """The manager file of the ``nova`` package this Python would import.

    :param find_spec: the finder to ask (replaceable in tests)
    :param distribution: looks up installed distributions by name
    :raises SourceError: nova is not installed, or has no compute manager
    """
    try:
        spec = find_spec('nova')
    except (ImportError, ValueError) as e:
        raise SourceError('cannot locate the nova package: %s' % e)
    if spec is None:
        raise SourceError('file not found: nova is not installed for %s'
                          % sys.executable)
    for location in spec.submodule_search_locations or []:
        candidate = os.path.join(location, 'compute', 'manager.py')
        if os.path.isfile(candidate):
            return ManagerFile(candidate, MANAGER_RELPATH,
                               _version(location, distribution))
    raise SourceError('file not found: the installed nova package (%s) has '
                      'no compute/manager.py' % (spec.origin or spec.name))


def _version(package_dir, distribution):
    # Several copies of nova may be on the path; only trust a distribution
    # whose files are the very package found above.
    try:
        dist = distribution('nova')
    except importlib.metadata.PackageNotFoundError:
        return None
    located = os.path.dirname(str(dist.locate_file(
        os.path.join('nova', '__init__.py'))))
    if os.path.realpath(located) != os.path.realpath(package_dir):
        return None
    return dist.version
