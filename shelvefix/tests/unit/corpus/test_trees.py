"""Patched copies of a nova tree (a small fake tree: nova is not imported)."""

import os

import fixtures
import testtools

from shelvefix.corpus import trees
from shelvefix import nova

PATCH = '''Re-introduce a fake bug.

--- a/nova/compute/manager.py
+++ b/nova/compute/manager.py
@@ -1,3 +1,3 @@
 def shelve():
-    free()
+    pass
     save()
'''


class TreesTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.root = self.useFixture(fixtures.TempDir()).path
        self.scratch = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(self.root, 'nova', 'compute'))
        os.makedirs(os.path.join(self.root, 'nova', 'scheduler'))
        for name, text in (('nova/__init__.py', ''),
                           ('nova/compute/__init__.py', ''),
                           ('nova/compute/manager.py',
                            'def shelve():\n    free()\n    save()\n'),
                           ('nova/compute/api.py', 'API = 1\n'),
                           ('nova/scheduler/__init__.py', '')):
            with open(os.path.join(self.root, name), 'w') as f:
                f.write(text)
        self.patch = self.write('fake.patch', PATCH)

    def write(self, name, text):
        path = os.path.join(self.scratch, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_patched_copy(self):
        dest = trees.patched(self.root, '34.0.0', self.patch,
                             os.path.join(self.scratch, 'copy'))
        manager = os.path.join(dest, 'nova', 'compute', 'manager.py')
        with open(manager) as f:
            self.assertEqual('def shelve():\n    pass\n    save()\n',
                             f.read())
        self.assertFalse(os.path.islink(manager))
        # The rest is the tree's own files, linked; the tree is untouched.
        for name in ('nova/__init__.py', 'nova/compute/api.py',
                     'nova/scheduler'):
            self.assertTrue(os.path.islink(os.path.join(dest, name)), name)
        with open(os.path.join(self.root, 'nova/compute/manager.py')) as f:
            self.assertIn('free()', f.read())
        self.assertEqual('34.0.0', nova.tree.version(dest))
        self.assertEqual(['nova/compute/manager.py'],
                         trees.targets(PATCH))

    def test_a_patch_that_does_not_apply(self):
        stale = self.write('stale.patch', PATCH.replace('free()', 'gone()'))
        e = self.assertRaises(trees.PatchError, trees.patched, self.root,
                              '34.0.0', stale,
                              os.path.join(self.scratch, 'copy'))
        self.assertIn('patch failed', str(e))
        self.assertFalse(trees.applies(self.root, stale, self.scratch))
        self.assertTrue(trees.applies(self.root, self.patch, self.scratch))
        # What applies() made for its check is gone.
        self.assertEqual(sorted(['fake.patch', 'stale.patch', 'copy']),
                         sorted(os.listdir(self.scratch)))

    def test_a_patch_of_no_nova_file(self):
        other = self.write('other.patch', PATCH.replace(
            'nova/compute/manager.py', 'setup.py'))
        e = self.assertRaises(trees.PatchError, trees.patched, self.root,
                              '34.0.0', other,
                              os.path.join(self.scratch, 'copy'))
        self.assertIn('changes no file of the nova package', str(e))
        missing = self.write('missing.patch', PATCH.replace(
            'compute/manager.py', 'compute/gone.py'))
        e = self.assertRaises(trees.PatchError, trees.patched, self.root,
                              '34.0.0', missing,
                              os.path.join(self.scratch, 'copy'))
        self.assertIn('this tree has no nova/compute/gone.py', str(e))

    def test_source_of_a_tree(self):
        root, version = trees.source(self.root, self.scratch)
        self.assertEqual(self.root, root)
        e = self.assertRaises(nova.NovaUnusable, trees.source,
                              self.scratch, self.scratch)
        self.assertIn('not a nova source tree', str(e))
