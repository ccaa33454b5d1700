"""The handwriting post's ablation report (ablations.json) as `make check` reads it: where it lives, its shape, the code it
must come from, and whether the table the post printed is the report's. Torch-free: the training that writes it
is tools/live/ablations.py."""
import ast
import hashlib
import json
import math
import re
import subprocess

from tools.core.notebooks import REPO_ROOT, code_cells, describe_cell
from tools.core.printed import cell_text
from tools.core.seal import seal_matches, sealed

RESULT_KEY = "reading-digits/result"  # as _results.py records a result
POST = "2026-07-09-reading-handwriting"
REPORT = REPO_ROOT / "posts" / POST / "ablations.json"
CODE = ("_cure.py", "_encoder_decoder.py", "_reader.py", "_handwriting.py", "_pen.py")  # the helpers that train and score its rows
# The runs' budget, which the report records and the post prints (tools/live/ablations.py trains with it).
BUDGET = {"epochs": 3, "train_size": 30_000, "written_digits": 8_000, "scribbles": 750,
          "test_size": 2_000, "pen_per_length": 1_000}


def behaviour_digest(text):
    """SHA-256 of what a module does: its syntax tree, docstrings left out.

    Comments, docstrings and how lines are wrapped change no result, so a report outlives
    them (helpers are rewrapped to fit the page's column); any other change does not.
    """
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode("utf-8")).hexdigest()


def code_digests(root=REPO_ROOT):
    """{helper: behaviour_digest of its text}: the code a report was made with."""
    return {name: behaviour_digest((root / name).read_text(encoding="utf-8")) for name in CODE}


def rekey(ref, path=REPORT, root=REPO_ROOT):
    """Re-key a report whose `code` holds SHA-256s of its helpers' bytes (the digests before
    behaviour_digest) to behaviour digests, when, and only when, the helpers at git ref `ref`
    are byte for byte the ones it records and do what this repository's helpers do. Nothing
    else in it changes; it is sealed again by this tool, not by hand. Returns what it did, in
    words; raises ValueError saying why it cannot."""
    made = json.loads(path.read_text(encoding="utf-8"))
    if not seal_matches(made):
        raise ValueError(f"{path.name}: its seal does not match its content; run `make ablations` again")
    current = code_digests(root)
    for name in CODE:
        shown = subprocess.run(["git", "show", f"{ref}:{name}"], cwd=root, capture_output=True)
        if shown.returncode != 0:
            raise ValueError(f"git ref {ref} has no {name}: {shown.stderr.decode().strip()}")
        if hashlib.sha256(shown.stdout).hexdigest() != made.get("code", {}).get(name):
            raise ValueError(f"{path.name} was not made by {ref}'s {name}")
        if behaviour_digest(shown.stdout.decode("utf-8")) != current[name]:
            raise ValueError(f"{ref}'s {name} does other things than this repository's; run `make ablations` again")
    rekeyed = sealed({**{key: value for key, value in made.items() if key != "seal"}, "code": current,
                      "rekeyed_from": ref})
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(rekeyed, indent=1) + "\n", encoding="utf-8")
    partial.replace(path)  # never a half-written report
    return f"{path.name}: re-keyed from the helpers at {ref} to behaviour digests (seal {rekeyed['seal'][:16]})"


def merged(path, new_rows, order, machine, torch_version):
    """The report at `path` with `new_rows` in place of its rows of the same keys (or beside them), in the
    order of the keys in `order`, sealed again. Each row keeps when it was made; the report's `made` spans
    them. Raises ValueError, saying why, when the report cannot take rows made now: there is none, it is
    not current (`report_problems`), its budget is not BUDGET, or it was made on another machine or torch."""
    if not path.exists():
        raise ValueError("there is none to add rows to; run `make ablations` for every row")
    problems = report_problems(path)
    if problems:
        raise ValueError(problems[0])
    before = json.loads(path.read_text(encoding="utf-8"))
    if any(before[key] != value for key, value in BUDGET.items()):
        raise ValueError("its budget is not the one this tool trains with; run `make ablations` for every row")
    for key, here in (("machine", machine), ("torch", torch_version)):
        if before.get(key) != here:
            raise ValueError(f"it was made with {key} {before.get(key)}, not this one ({here}): rows made "
                             "apart do not compare; run `make ablations` for every row here")
    rows = {row["key"]: {"made": before["made"], **row} for row in before["rows"]}
    rows.update({row["key"]: row for row in new_rows})
    unknown = sorted(set(rows) - set(order))
    if unknown:
        raise ValueError(f"its rows {', '.join(unknown)} are no longer the tool's; run `make ablations` for every row")
    ordered = [rows[key] for key in order if key in rows]
    dates = sorted({row["made"] for row in ordered})
    span = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return sealed({**{key: value for key, value in before.items() if key != "seal"}, "rows": ordered, "made": span})


SCORES = ("mnist", "synthetic", "pen_tuning_1", "pen_tuning_2", "pen_tuning_3", "pen_test_1", "pen_test_2", "pen_test_3")


def shape_problem(made):
    """Why a report's content is not shaped as `run` and `report` write it (what the post and make check read)."""
    def number(value):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if not isinstance(made.get("rows"), list):
        return "its rows are missing or not a list"
    for index, row in enumerate(made["rows"]):
        if not isinstance(row, dict):
            return f"its rows[{index}] is not an object"
        for key in ("key", "name"):
            if not isinstance(row.get(key), str):
                return f"its rows[{index}].{key} is missing or not text"
        for key in SCORES:
            if not number(row.get(key)):
                return f"its rows[{index}].{key} is missing or not a number"
    for key in BUDGET:
        if not isinstance(made.get(key), int) or isinstance(made.get(key), bool):
            return f"its {key} is missing or not a whole number"
    if not isinstance(made.get("code"), dict) or not all(isinstance(value, str) for value in made["code"].values()):
        return "its code is missing or not an object of digests"
    for key in ("made", "machine"):
        if not isinstance(made.get(key), str):
            return f"its {key} is missing or not text"
    return None


def report_problems(path=REPORT, root=REPO_ROOT):
    """Why a report beside a post cannot be shown as this repository's code's: [] when it can."""
    if not path.exists():
        return []
    try:
        made = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return [f"{path.name} is not JSON ({error}); run `make ablations` again"]
    if not isinstance(made, dict):
        return [f"{path.name} is not a JSON object, so not what `make ablations` writes; run `make ablations` again"]
    if not seal_matches(made):
        return [f"{path.name}: its seal does not match its content (edited by hand?); run `make ablations` again"]
    shape = shape_problem(made)
    if shape:  # sealed, yet not what the tool writes: sealed again by hand, or by another version of the tool
        return [f"{path.name}: {shape}, so not what `make ablations` writes; run `make ablations` again"]
    stale = [name for name, digest in code_digests(root).items() if made.get("code", {}).get(name) != digest]
    if stale:
        return [f"{path.name} was made by other code than this repository's {', '.join(stale)}; "
                "run `make ablations` again, then `make execute` for the post that prints it"]
    return []


# What the handwriting post prints of the report (its cell that reads ablations.json): the header, a table with a column per
# score and a row per run, and a result per row and pen column (`ablation_<key>_pen_test_1`).


PRINTED_HEADER = re.compile(r"^ablations\.json: (?P<rows>\d+) runs of (?P<epochs>\d+) epoch\(s\) on "
                            r"(?P<train_size>[\d,]+) canvases, made (?P<made>.+?) on (?P<machine>.+?); checked unedited$",
                            re.MULTILINE)
PRINTED_COLUMNS = {"MNIST": "mnist", "synthetic": "synthetic",
                   **{f"tuning {k}": f"pen_tuning_{k}" for k in (1, 2, 3)},
                   **{f"test {k}": f"pen_test_{k}" for k in (1, 2, 3)}}
PRINTED_ROW = re.compile(r"^(?P<name>\S.*?)\s+(?P<values>(?:-?\d+(?:\.\d+)?\s?%\s*)+)$")
ROW_RESULT = re.compile(r"ablation_(?P<key>.+)_(?P<column>mnist|synthetic|pen_(?:tuning|test)_\d)")
NOT_PRINTED = "no ablations.json beside this notebook"


def printed_problems(nb, path=REPORT):
    """[(where, problem)]: what the post printed of the report beside it (header, table, results) that the report
    does not hold: a report made again after the post ran, or a table edited and sealed again by hand."""
    if not path.exists():
        return []
    made = json.loads(path.read_text(encoding="utf-8"))  # report_problems has read it, seal and shape
    rows = {row["key"]: row for row in made["rows"]}
    again = f"{path.name} changed after the post ran; run `make execute` for the post"
    found = []
    for number, cell in code_cells(nb):
        where, text = describe_cell(number, cell), cell_text(cell)
        if NOT_PRINTED in text:
            found.append((where, f"prints that there is no {path.name}, but there is one beside the post: {again}"))
        for header in PRINTED_HEADER.finditer(text):
            found += [(where, problem) for problem in table_problems(text[header.start():], header, made, path.name)]
        for output in cell.get("outputs", []):
            record = (output.get("metadata") or {}).get(RESULT_KEY)
            named = ROW_RESULT.fullmatch(str(record.get("name", ""))) if isinstance(record, dict) else None
            if named is None:
                continue
            if not record.get("reference"):
                # A run's own results have a spread across seeds; these come from the report, the same file for
                # every re-run, so they are references: a range over them would measure which report each read.
                found.append((where, f"result {record['name']} is recorded as this run's own, but it is read from "
                                     f"{path.name}: record it with reference=True (and quote it with ref=)"))
            row = rows.get(named["key"])
            expected = None if row is None else 100 * float(row[named["column"]])
            if expected is None or not math.isclose(record.get("number") or 0.0, expected, rel_tol=1e-9):
                holds = "no such row" if row is None else f"{expected:.1f} %"
                found.append((where, f"result {record['name']} is {record.get('text')}, but {path.name} holds "
                                     f"{holds}: {again}"))
    return found


def table_problems(text, header, made, name):
    """The header's counts and each printed row of the table under it, against the report."""
    again = f"{name} changed after the post ran; run `make execute` for the post"
    said = []
    printed = {"rows": int(header["rows"]), "epochs": int(header["epochs"]),
               "train_size": int(header["train_size"].replace(",", "")), "made": header["made"],
               "machine": header["machine"]}
    for key, value in printed.items():
        held = len(made["rows"]) if key == "rows" else made.get(key)
        if value != held:
            what = {"rows": "runs", "epochs": "epoch(s)", "train_size": "canvases"}.get(key, key)
            said.append(f"prints {value} {what} in its header, but {held} in {name}: {again}")
    lines = text.split("\n")[1:]
    columns = [PRINTED_COLUMNS.get(label) for label in re.split(r"\s{2,}", lines[0].strip())[1:]] if lines else []
    table = []
    for line in lines[1:]:
        row = PRINTED_ROW.match(line.rstrip())
        if row is None:
            break
        table.append((row["name"], [float(value) for value in re.findall(r"-?\d+(?:\.\d+)?", row["values"])]))
    if len(table) != len(made["rows"]):
        said.append(f"its table has {len(table)} rows, but {name} {len(made['rows'])}: {again}")
    for (shown_name, values), row in zip(table, made["rows"]):
        expected = [100 * float(row[column]) if column in row else None for column in columns]
        off = [(value, held) for value, held in zip(values, expected)
               if held is None or abs(value - held) > 0.05 + 1e-9]
        if shown_name != row["name"] or off or len(values) != len(expected):
            shown = "  ".join(f"{value:.1f} %" for value in values)
            held = "  ".join("?" if value is None else f"{value:.1f} %" for value in expected)
            said.append(f"its table prints {shown_name!r} {shown}, but {name} holds {row['name']!r} {held}: "
                        f"{again}")
    return said
