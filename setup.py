"""The wheel's packages: the code under webmcp_eval/, and the seed suite and the recorded demo run mapped in
beside it from the checkout's cases/ and traces/day26/ (docs/packaging.md). Everything else is pyproject.toml's."""

from setuptools import find_namespace_packages, setup

# Folders of the checkout shipped inside the package as they are: the package name each becomes, and its folder.
SHIPPED_DATA = {
    "webmcp_eval.cases": "cases",
    "webmcp_eval.traces.day26": "traces/day26",
}

setup(
    packages=[
        *find_namespace_packages(include=["webmcp_eval", "webmcp_eval.*"], exclude=["*.__pycache__"]),
        *SHIPPED_DATA,
    ],
    package_dir=SHIPPED_DATA,
    package_data={
        "webmcp_eval.play.page": ["*.js"],
        "webmcp_eval.mutation": ["*.js"],
        "webmcp_eval.report.templates": ["*"],
        "webmcp_eval.site_under_test.static": ["*"],
        "webmcp_eval.examples": ["shop/*/*", "shop/*/*/*"],  # the example shop's pages, scripts and web font
        **{name: ["*", "*/*"] for name in SHIPPED_DATA},
    },
)
