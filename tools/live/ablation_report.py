"""Post 4's ablation report (ablations.json) as `make check` reads it: where it lives, which code it must
come from, and why it cannot be shown. Torch-free: the training that writes it is tools/live/ablations.py."""
import hashlib
import json

from tools.core.notebooks import REPO_ROOT
from tools.core.seal import seal_matches

POST = "2026-07-09-reading-handwriting"
REPORT = REPO_ROOT / "posts" / POST / "ablations.json"
CODE = ("_cure.py", "_reader.py", "_handwriting.py", "_pen.py")  # the helpers that train and score its rows


def code_digests(root=REPO_ROOT):
    """{helper: SHA-256 of its text}: the code a report was made with."""
    return {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in CODE}


def report_problems(path=REPORT, root=REPO_ROOT):
    """Why a report beside a post cannot be shown as this repository's code's: [] when it can."""
    if not path.exists():
        return []
    try:
        made = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return [f"{path.name} is not JSON ({error}); run `make ablations` again"]
    if not seal_matches(made):
        return [f"{path.name}: its seal does not match its content (edited by hand?); run `make ablations` again"]
    stale = [name for name, digest in code_digests(root).items() if made.get("code", {}).get(name) != digest]
    if stale:
        return [f"{path.name} was made by other code than this repository's {', '.join(stale)}; "
                "run `make ablations` again, then `make execute` for the post that prints it"]
    return []
