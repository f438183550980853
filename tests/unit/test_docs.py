"""The README starts short and every relative link in it and in docs/ leads somewhere: to a file of the
repository and, with an anchor, to a heading of that file (GitHub's heading ids)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
README_LIMIT = 300


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def heading_ids(page: Path) -> set[str]:
    """GitHub's ids: lower case, punctuation but `-` and `_` dropped, spaces as dashes."""
    ids, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            ids.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return ids


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code is not linked…
    text = re.sub(r"`[^`\n]*`", "", text)  # …nor are examples in inline code
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z]+:", t)]


def test_the_readme_starts_short_and_the_rest_lives_in_docs():
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_LIMIT
    assert len(pages()) > 1
    linked = {(ROOT / t.split("#")[0]).resolve() for t in relative_links(ROOT / "README.md") if t.startswith("docs/")}
    assert set(pages()[1:]) <= linked, "every docs page is linked from the README"


def test_every_relative_link_in_the_readme_and_docs_resolves():
    broken = []
    for page in pages():
        for target in relative_links(page):
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in heading_ids(resolved):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken
