"""What a household runs and what changed: one version, read from the installed package,
on every page's footer and on the command line, and CHANGELOG.md in step with it."""

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# A release's heading, as Keep a Changelog writes it: "## [1.17.0] - 2026-12-05".
RELEASE = re.compile(r"^## \[(\d+)\.(\d+)\.(\d+)\] - \d{4}-\d{2}-\d{2}$", re.MULTILINE)


def releases() -> list[tuple[int, int, int]]:
    """The changelog's versions, newest first as it lists them."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return [tuple(map(int, found)) for found in RELEASE.findall(text)]


def installed() -> str:
    """The version pip installed from pyproject.toml (make run installs it editable)."""
    return version(PYPROJECT["name"])


@pytest.mark.parametrize(
    ("language", "words"),
    [("en", "6 nimmt! companion"), ("de", "6 nimmt! Begleiter"), ("fr", "Compagnon de 6")],
)
def test_every_page_says_which_version_runs(client, language, words):
    page = client.get("/rules", headers={"Accept-Language": language}).get_data(as_text=True)
    footer = re.search(r'<footer class="site-footer">(.*?)</footer>', page, re.DOTALL)
    assert footer, "the page has no footer"
    assert words in footer.group(1)
    assert installed() in footer.group(1)


def test_the_command_line_says_which_version_runs(runner):
    result = runner.invoke(args=["version"])
    assert result.exit_code == 0, result.output
    assert result.output == f"6 nimmt! companion {installed()}\n"


def test_the_changelog_names_the_version_in_pyproject_first():
    """A release raises pyproject.toml's version and writes its changelog entry together."""
    newest = ".".join(map(str, releases()[0]))
    assert newest == PYPROJECT["version"]


def test_the_changelog_lists_each_version_once_newest_first_from_1_0_0():
    found = releases()
    assert found == sorted(set(found), reverse=True)
    assert found[-1] == (1, 0, 0)


def test_the_installed_version_is_pyproject_s():
    """make run reinstalls when pyproject.toml changes: the footer never shows an old one."""
    assert installed() == PYPROJECT["version"]
