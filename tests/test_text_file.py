"""Every file a user hands the runner says the same thing, with file and line, when it cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from webmcp_eval.data_file import FileProblem, read_text
from webmcp_eval.suite.evals_json import read_evals
from webmcp_eval.suite.folder import SuiteError, read_suite_file
from webmcp_eval.suite.loader import load_cases
from webmcp_eval.suite.site import SiteConfigError, load_site_config
from webmcp_eval.suite.validate import CatalogError, SuiteCatalog

BAD = b"a: 1\nb: 2\nc: \xff\n"  # the bad byte is on line 3


def test_read_text_drops_a_byte_order_mark_and_names_each_problem(tmp_path: Path) -> None:
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbfa: 1\n")
    assert read_text(tmp_path / "bom.yaml") == "a: 1\n"
    (tmp_path / "bad.yaml").write_bytes(BAD)
    cases = {tmp_path / "absent.yaml": (None, "no such file"), tmp_path: (None, "is a directory")}
    cases[tmp_path / "bad.yaml"] = (3, "not UTF-8: invalid start byte at byte 13")
    for path, (line, what) in cases.items():
        with pytest.raises(FileProblem) as err:
            read_text(path)
        assert err.value.line == line and err.value.what.startswith(what), err.value.what


@pytest.mark.parametrize("name", ["case.yaml", "suite.yaml", "site.yaml", "catalog.json", "evals.json"])
def test_every_reader_gives_file_and_line_of_a_bad_byte(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(BAD)
    if name == "case.yaml":
        [problem] = load_cases([path])[1]
        message = f"{problem.file}:{problem.line}: {problem.message}"
    elif name == "evals.json":
        [problem] = read_evals(path)[2]
        message = f"{problem.file}:{problem.line}: {problem.message}"
    else:
        reader, error = {
            "suite.yaml": (read_suite_file, SuiteError),
            "site.yaml": (lambda p: load_site_config(p, None), SiteConfigError),
            "catalog.json": (SuiteCatalog.load, CatalogError),
        }[name]
        with pytest.raises(error) as err:
            reader(path)
        message = str(err.value)
    assert f"{path}:3: not UTF-8" in message and "\n" not in message
