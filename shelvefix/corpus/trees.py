"""Patched copies of a nova tree, for the corpus's rows.

A row's re-introduction patch is applied to a copy of the nova named
(:func:`source`): a directory of symbolic links to the tree's files,
except the files the patch changes, which are copied and then patched
with ``git apply`` (git is all a machine needs; the copy is not a
repository). The copy is a tree :mod:`shelvefix.nova.tree` loads like
any other, with a ``PKG-INFO`` that gives the version it was made from.

This module does not import nova.
"""

import importlib.util
import os
import re
import shutil
import subprocess

from shelvefix.nova import tree as nova_tree

_TARGET = re.compile(r'^\+\+\+ b/(\S+)', re.MULTILINE)


class PatchError(Exception):
    """A patch does not apply to the tree (``git apply`` says why)."""


def source(path, scratch):
    """The directory holding the ``nova`` package named, and its version.

    :param path: None for the installed nova, else a tree, an unpacked
        sdist or a wheel (unpacked into ``scratch``)
    :raises shelvefix.nova.NovaUnusable: as :func:`~shelvefix.nova.tree.
        locate`
    """
    entry, _where = nova_tree.locate(path)
    if entry is None:
        spec = importlib.util.find_spec('nova')
        root = os.path.dirname(os.path.dirname(spec.origin))
        return root, nova_tree.version(None)
    if os.path.isfile(entry):
        return nova_tree.unpack(entry, scratch), nova_tree.version(entry)
    return entry, nova_tree.version(entry)


def targets(patch_text):
    """The files a unified diff changes, relative to the tree."""
    return sorted(set(_TARGET.findall(patch_text)))


def _link_tree(root, dest, changed):
    """Links to ``root/nova`` under ``dest``; real copies of ``changed``."""
    parents = set()
    for name in changed:
        parts = name.split('/')
        parents.update('/'.join(parts[:i]) for i in range(1, len(parts)))

    def fill(relative):
        os.makedirs(os.path.join(dest, relative), exist_ok=True)
        for child in sorted(os.listdir(os.path.join(root, relative))):
            if child == '__pycache__':
                continue
            name = '%s/%s' % (relative, child)
            source_path = os.path.join(root, name)
            target = os.path.join(dest, name)
            if name in parents:
                fill(name)
            elif name in changed:
                shutil.copyfile(source_path, target)
            else:
                os.symlink(source_path, target)
    fill('nova')


def _git_apply(patch_file, directory, check=False):
    command = ['git', 'apply', '--whitespace=nowarn']
    if check:
        command.append('--check')
    try:
        done = subprocess.run(command + [patch_file], cwd=directory,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise PatchError('cannot run git apply: %s' % e)
    if done.returncode:
        lines = done.stderr.strip().splitlines()
        raise PatchError(lines[0] if lines else 'git apply failed')


def patched(root, version, patch_file, dest):
    """A copy of the tree at ``root`` with ``patch_file`` applied.

    :param version: the tree's version, written to the copy's PKG-INFO
    :param dest: a directory that does not exist yet
    :returns: ``dest``
    :raises PatchError: the patch does not apply to this tree
    """
    with open(patch_file) as f:
        changed = targets(f.read())
    if not changed or any(not name.startswith('nova/') for name in changed):
        raise PatchError('%s changes no file of the nova package'
                         % os.path.basename(patch_file))
    for name in changed:
        if not os.path.isfile(os.path.join(root, name)):
            raise PatchError('%s: this tree has no %s'
                             % (os.path.basename(patch_file), name))
    _link_tree(root, dest, set(changed))
    with open(os.path.join(dest, 'PKG-INFO'), 'w') as f:
        f.write('Metadata-Version: 2.1\nName: nova\nVersion: %s\n'
                % version)
    _git_apply(os.path.abspath(patch_file), dest)
    return dest


def applies(root, patch_file, scratch):
    """Whether ``patch_file`` applies to the tree at ``root``.

    A re-introduction patch applies where the tree has the fixed code in
    the shape the patch undoes: a static hint, beside what the
    exploration shows.
    """
    dest = os.path.join(scratch, 'check-%s' % os.path.basename(patch_file))
    try:
        with open(patch_file) as f:
            changed = set(targets(f.read()))
        if not all(os.path.isfile(os.path.join(root, name))
                   for name in changed):
            return False
        _link_tree(root, dest, changed)
        _git_apply(os.path.abspath(patch_file), dest, check=True)
        return True
    except PatchError:
        return False
    finally:
        shutil.rmtree(dest, ignore_errors=True)
