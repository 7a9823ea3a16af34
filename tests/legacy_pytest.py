"""A stand-in for pytest 4.6, the last pytest for Python 2, which the tests cannot download.

It takes the options bugbout's runs give (and ignores those that only tune pytest), runs
the `test_*` functions of the `test_*.py` files under the paths it is given, and writes
the JUnit report pytest writes: a case per test with `classname` and `file`, a failed
test with `<failure>`, a module that cannot be imported with `<error>` and no
`classname`. Its exit status is pytest's: 0 when every test passed, 1 otherwise.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bugbout_tui.infra.package_index import PackageIndex, build_wheel

MAIN = r"""
import imp, os, sys, traceback
from xml.sax.saxutils import escape, quoteattr

def main(argv):
    paths, junit, rootdir, i = [], None, os.getcwd(), 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-p", "-o", "-c"):
            i += 2
            continue
        if arg.startswith("--junitxml="):
            junit = arg.split("=", 1)[1]
        elif arg.startswith("--rootdir="):
            rootdir = arg.split("=", 1)[1]
        elif not arg.startswith("-"):
            paths.append(arg)
        i += 1
    files = []
    for path in paths or [rootdir]:
        path = path if os.path.isabs(path) else os.path.join(rootdir, path)
        if not os.path.isdir(path):
            files.append(path)
            continue
        for folder, _, names in sorted(os.walk(path)):
            files += [os.path.join(folder, n) for n in sorted(names)
                      if n.startswith("test_") and n.endswith(".py")]
    cases = []
    for path in files:
        relative = os.path.relpath(path, rootdir)
        dotted = relative[:-3].replace(os.sep, ".")
        sys.path.insert(0, os.path.dirname(path))
        try:
            module = imp.load_source(os.path.basename(path)[:-3], path)
        except Exception:
            cases.append(("", dotted, relative, "error", traceback.format_exc()))
            continue
        tests = sorted((f.__code__.co_firstlineno, name, f) for name, f in vars(module).items()
                       if name.startswith("test_") and callable(f))
        for _, name, function in tests:
            try:
                function()
                cases.append((dotted, name, relative, None, ""))
            except Exception:
                cases.append((dotted, name, relative, "failure", traceback.format_exc()))
    report = ['<?xml version="1.0" encoding="utf-8"?><testsuites>'
              '<testsuite name="pytest" tests="%d">' % len(cases)]
    for classname, name, relative, kind, text in cases:
        report.append("<testcase classname=%s name=%s file=%s>"
                      % (quoteattr(classname), quoteattr(name), quoteattr(relative)))
        if kind:
            last = text.strip().splitlines()[-1]
            report.append("<%s message=%s>%s</%s>" % (kind, quoteattr(last), escape(text), kind))
        report.append("</testcase>")
    report.append("</testsuite></testsuites>")
    if junit:
        with open(junit, "w") as handle:
            handle.write("".join(report))
    bad = [case for case in cases if case[3]]
    print("%d passed, %d failed" % (len(cases) - len(bad), len(bad)))
    return 1 if bad else 0

sys.exit(main(sys.argv[1:]))
"""


def publish_legacy_pytest(index: PackageIndex, dest: Path, *, requires: list[str]) -> None:
    """The stand-in, as pytest 4.6.11 for Python 2 and 3, needing `requires`, in `index`."""
    files = {"pytest/__init__.py": "", "pytest/__main__.py": MAIN}
    wheel = build_wheel(dest, "pytest", "4.6.11", files, requires=requires, tag="py2.py3-none-any")
    index.publish(wheel, uploaded=datetime(2020, 1, 1, tzinfo=UTC))
