"""webmcp-eval inside a team's own pytest run: the ``webmcp`` fixture and suites as test items.

``plugin.py`` is the ``pytest11`` entry point (options, marker, fixture, hooks);
``page_webmcp.py`` is the fixture's object on one test's page (``page_audit.py`` its audit,
``page_assertions.py`` its assertions); ``expectations.py``
turns the assertion helpers' arguments into the case format's expectations and
judges them with the runner's own checks; ``suite_items.py`` plays a suite's
(case, trial) pairs as test items through the run's own code path; ``expect.py`` holds
``expect(webmcp)``, the assertions that wait, importable from here.
"""

from webmcp_eval.pytest_plugin.expect import expect

__all__ = ["expect"]
