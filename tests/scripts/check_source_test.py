#!/usr/bin/env python3
"""Tests of scripts/check-source: each breaks one rule in a temporary copy of
the tree and expects the check to fail, naming the file and line. Run by
ctest as check_source_selftest."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(REPO, "scripts", "check-source")
# What the check reads; installed packages, recordings, corpora and builds
# are left out of the copy.
COPIED = ["src", "doc", "scripts", "tests", "bench", "fuzz", ".ci",
          "README.md", "ARCHITECTURE.md", "CMakeLists.txt",
          "CMakePresets.json"]
# Built here, so that this file does not cite them itself.
MISSING_DOC = "doc/" + "durations" + ".md"
DESIGN_NOTE = "DESIGN" + ".md"
IGNORED = shutil.ignore_patterns("node_modules", "transcripts", "results",
                                 "corpus", "build", "__pycache__")


class CheckSourceTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="check-source-test-")
        for name in COPIED:
            source = os.path.join(REPO, name)
            target = os.path.join(self.root, name)
            if os.path.isdir(source):
                shutil.copytree(source, target, ignore=IGNORED)
            elif os.path.isfile(source):
                shutil.copy(source, target)

    def tearDown(self):
        shutil.rmtree(self.root)

    def run_check(self, *checks):
        done = subprocess.run([sys.executable, CHECK, "--root", self.root,
                               *checks], capture_output=True, text=True,
                              timeout=60)
        return done.returncode, done.stdout + done.stderr

    def path(self, rel):
        return os.path.join(self.root, rel)

    def insert_after_first_include(self, rel, text):
        """Inserts `text` as a line after the file's first #include; returns
        its line number."""
        with open(self.path(rel)) as f:
            lines = f.read().split("\n")
        at = next(i for i, l in enumerate(lines) if l.startswith("#include"))
        lines.insert(at + 1, text)
        with open(self.path(rel), "w") as f:
            f.write("\n".join(lines))
        return at + 2

    def append(self, rel, text):
        with open(self.path(rel), "a") as f:
            f.write(text)

    def test_the_tree_as_it_is_passes(self):
        code, out = self.run_check()
        self.assertEqual(code, 0, out)

    def test_a_cli_file_that_includes_daemon_fails(self):
        line = self.insert_after_first_include(
            "src/baton/cli/cli.cc", '#include "baton/daemon/daemon.h"')
        code, out = self.run_check("layers")
        self.assertEqual(code, 1, out)
        self.assertIn(f"src/baton/cli/cli.cc:{line}: cli/ may not include "
                      "baton/daemon/daemon.h", out)

    def test_loop_may_not_include_core(self):
        line = self.insert_after_first_include(
            "src/baton/loop/event_loop.h", '#include "baton/core/ports.h"')
        code, out = self.run_check("layers")
        self.assertEqual(code, 1, out)
        self.assertIn(f"src/baton/loop/event_loop.h:{line}: loop/ may not "
                      "include baton/core/ports.h", out)

    def test_a_relative_include_of_a_baton_header_fails(self):
        line = self.insert_after_first_include(
            "src/baton/cli/format.cc", '#include "../daemon/daemon.h"')
        code, out = self.run_check("layers")
        self.assertEqual(code, 1, out)
        self.assertIn(f"src/baton/cli/format.cc:{line}: include", out)

    def test_a_folder_without_a_line_fails(self):
        os.makedirs(self.path("src/baton/web"))
        with open(self.path("src/baton/web/board.cc"), "w") as f:
            f.write('#include "baton/daemon/daemon.h"\n')
        code, out = self.run_check("layers")
        self.assertEqual(code, 1, out)
        self.assertIn("src/baton/web/: a folder without a line", out)

    def test_a_table_that_differs_from_architecture_md_fails(self):
        self.append("src/baton/layers.txt", "web: util daemon\n")
        code, out = self.run_check("layers")
        self.assertEqual(code, 1, out)
        self.assertIn("ARCHITECTURE.md: its table of layers differs", out)

    def test_a_cycle_in_the_table_fails(self):
        with open(self.path("src/baton/layers.txt")) as f:
            text = f.read()
        with open(self.path("src/baton/layers.txt"), "w") as f:
            f.write(text.replace("\nutil:\n", "\nutil: cli\n"))
        code, out = self.run_check("layers")
        self.assertEqual(code, 1, out)
        self.assertIn("cycle: ", out)

    def test_one_helper_name_in_two_test_files_fails(self):
        helper = ("\nnamespace {\nTaskRecord FullTask() {\n  return {};\n}\n"
                  "}  // namespace\n")
        self.append("src/baton/ipc/codec_test.cc", helper)
        self.append("src/baton/util/duration_test.cc", helper)
        code, out = self.run_check("unity")
        self.assertEqual(code, 1, out)
        self.assertIn("FullTask is also defined in", out)
        self.assertIn("another file of unit_tests", out)

    def test_one_constant_name_in_two_files_of_a_library_fails(self):
        helper = ("\nnamespace {\nconstexpr int kLimit = 3;\n"
                  "}  // namespace\n")
        self.append("src/baton/util/duration.cc", helper)
        self.append("src/baton/util/byte_size.cc", helper)
        code, out = self.run_check("unity")
        self.assertEqual(code, 1, out)
        self.assertIn("kLimit is also defined in src/baton/util/", out)
        self.assertIn("another file of baton_util", out)

    def test_std_sto_fails_anywhere_in_src(self):
        line = self.insert_after_first_include(
            "src/baton/util/duration_test.cc",
            'int kN = std::stoi("1");')
        code, out = self.run_check("throwing")
        self.assertEqual(code, 1, out)
        self.assertIn(f"src/baton/util/duration_test.cc:{line}: std::sto*",
                      out)

    def test_a_throwing_json_accessor_outside_the_list_fails(self):
        self.append("src/baton/util/duration.cc",
                    "\nint F(const J& j) { return j.at(\"x\").get<int>(); }\n")
        code, out = self.run_check("throwing")
        self.assertEqual(code, 1, out)
        self.assertIn("src/baton/util/duration.cc:", out)
        self.assertIn("a throwing accessor", out)

    def test_a_listed_file_may_not_gain_one_more(self):
        self.append("src/baton/store/task_rows.cc",
                    "\nint F(const J& j) { return j.get<int>(); }\n")
        code, out = self.run_check("throwing")
        self.assertEqual(code, 1, out)
        self.assertIn("allows 2 in this file, no more", out)

    def test_the_list_only_shrinks(self):
        path = self.path("src/baton/store/task_rows.cc")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace(".get_ref<", ".value_or_whatever<", 1))
        code, out = self.run_check("throwing")
        self.assertEqual(code, 1, out)
        self.assertIn("src/baton/store/task_rows.cc has 1 throwing "
                      "accessors now, not 2: lower the count", out)

    def test_a_comment_is_not_code(self):
        self.append("src/baton/util/duration.cc",
                    "\n// never std::stoi(x) or j.get<int>() here\n")
        code, out = self.run_check("throwing")
        self.assertEqual(code, 0, out)

    def test_a_cited_document_that_is_missing_fails(self):
        line = self.insert_after_first_include(
            "src/baton/util/duration.cc", f"// See {MISSING_DOC}.")
        code, out = self.run_check("docs")
        self.assertEqual(code, 1, out)
        self.assertIn(f"src/baton/util/duration.cc:{line}: cites "
                      f"{MISSING_DOC}", out)

    def test_a_shared_design_note_is_not_a_document_of_the_repo(self):
        line = self.insert_after_first_include(
            "src/baton/util/duration.cc", f"// As {DESIGN_NOTE} §1 says.")
        code, out = self.run_check("docs")
        self.assertEqual(code, 1, out)
        self.assertIn(f"src/baton/util/duration.cc:{line}: cites "
                      f"{DESIGN_NOTE}", out)

    def test_a_long_function_not_named_in_architecture_md_fails(self):
        rel = "src/baton/util/duration.cc"
        body = "\n".join(f"  (void){i};" for i in range(125))
        with open(self.path(rel), "a") as f:
            f.write(f"\nnamespace baton {{\nint TooLong(int x) {{\n{body}\n"
                    "  return x;\n}\n}  // namespace baton\n")
        code, out = self.run_check("sizes")
        self.assertEqual(code, 1, out)
        self.assertIn("TooLong is 128 lines, over 120", out)

    def test_a_long_file_not_named_fails_and_a_name_back_within_fails(self):
        rel = "src/baton/util/duration.cc"
        with open(self.path(rel), "a") as f:
            f.write("\n" * 700)
        with open(self.path("ARCHITECTURE.md"), "a") as f:
            f.write("- `src/baton/util/split.cc` for a reason\n")
        code, out = self.run_check("sizes")
        self.assertEqual(code, 1, out)
        self.assertIn(f"{rel}: ", out)
        self.assertIn("src/baton/util/split.cc is within the size limits",
                      out)


if __name__ == "__main__":
    unittest.main()
