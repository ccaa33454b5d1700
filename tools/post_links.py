"""Write each post's links (Colab, source on GitHub, notebook download) into its front matter.

Every post links to its own notebook in Colab and on GitHub. Those URLs hold the
repository's address and the post's folder, and Quarto cannot compute them: a
shared `posts/_metadata.yml` entry would give every post the same URL. So the
address is kept in one place, `website.repo-url` in `_quarto.yml`, and this tool
writes the links into each post's front matter (`code-links`, `other-links`, and
`index.ipynb` in `resources`, which the download link needs). `--check` reports
posts whose links are missing or out of date; `make check` runs it.
"""
import argparse
import re
import sys

import yaml

from tools.notebooks import FRONT_MATTER, REPO_ROOT, NotebookError, front_matter, sync_posts


def repository_url(root=REPO_ROOT):
    config = yaml.safe_load((root / "_quarto.yml").read_text(encoding="utf-8"))
    url = (config.get("website") or {}).get("repo-url", "")
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url):
        raise NotebookError(f"_quarto.yml website.repo-url must be https://github.com/<owner>/<repo>, not {url!r}")
    return url


def expected_links(folder, repo_url):
    """The front matter entries a post in `posts/<folder>/` should carry."""
    owner_repo = repo_url.removeprefix("https://github.com/")
    notebook = f"blob/main/posts/{folder}/index.ipynb"
    return {
        "code-links": [
            {"text": "Open in Colab", "icon": "play-circle",
             "href": f"https://colab.research.google.com/github/{owner_repo}/{notebook}"},
            {"text": "Notebook on GitHub", "icon": "github", "href": f"{repo_url}/{notebook}"},
        ],
        "other-links": [{"text": "Download the notebook", "icon": "file-code", "href": "index.ipynb"}],
    }


def links_drift(nb, folder, repo_url):
    """What is wrong with the post's links, or None when they are right."""
    matter = front_matter(nb)
    if matter is None:
        return "no front matter to hold the links"
    wrong = [key for key, value in expected_links(folder, repo_url).items() if matter.get(key) != value]
    if "index.ipynb" not in (matter.get("resources") or []):
        wrong.append("resources (index.ipynb)")
    return f"links out of date: {', '.join(wrong)}" if wrong else None


def write_links(nb, folder, repo_url):
    """Rewrite the front matter with the expected links, keeping every other key and the prose below it."""
    matter = front_matter(nb)
    if matter is None:
        raise NotebookError("no front matter to hold the links: the first cell must be markdown with a --- block")
    matter.update(expected_links(folder, repo_url))
    resources = list(matter.get("resources") or [])
    matter["resources"] = resources if "index.ipynb" in resources else ["index.ipynb", *resources]
    block = yaml.safe_dump(matter, sort_keys=False, allow_unicode=True, width=100).strip()
    first = nb.cells[0]
    first.source = FRONT_MATTER.sub(lambda _: f"---\n{block}\n---\n", first.source, count=1).rstrip("\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report posts whose links are out of date; write nothing")
    args = parser.parse_args(argv)
    try:
        repo_url = repository_url()
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 2

    def drift_of(nb, path):
        drift = links_drift(nb, path.parent.name, repo_url)
        return f"cell 1 (front matter): {drift}" if drift else None

    def bring_in_line(nb, path):
        write_links(nb, path.parent.name, repo_url)
        return "links written"

    return sync_posts(drift_of, bring_in_line, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
