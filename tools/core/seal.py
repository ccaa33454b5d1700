"""Tamper evidence: is what a notebook stores what `make execute` ran, and is a report what its tool wrote?

Two seals, one idea. `make execute` seals a notebook's code cells (source, outputs, the metadata Quarto
reads) and its provenance (tools/core/notebooks.py computes it); the checks here say which cell an edit
touched. A report beside a post (spread.json, ablations.json) carries `seal`: the SHA-256 of its other
keys written one way only (`seal_of`, from _seal.py: the posts inline the same file). Neither prevents a deliberate re-seal by hand: both catch edits
made without the tool, and a stale output left behind; this module is torch-free so `make check` can run
without the training stack.
"""
import argparse
import sys

from _seal import seal_of  # the one seal of a report, which the posts inline too
from tools.core.notebooks import (
    INJECTED_TAG, NO_DOWNLOAD, blog_metadata, cell_key, code_cells, compute_seal, describe_cell, download_calls,
    REPO_ROOT, SEAL_VERSION, find_posts, has_tag, post_name, read_notebook, record_seal, sealed_code_cells,
    sealed_metadata, write_notebook_atomically,
)

SEAL_VERSIONS = tuple(range(1, SEAL_VERSION + 1))


def sealed(report):
    """The report with its seal."""
    return {**report, "seal": seal_of(report)}


def seal_matches(report):
    return isinstance(report, dict) and report.get("seal") == seal_of(report)


def check_provenance(nb, path, root):
    provenance = blog_metadata(nb).get("provenance")
    if not provenance:
        yield "notebook", "no provenance: its outputs were not made by `make execute`; run it"
    elif provenance.get("parameters_overridden"):
        yield "notebook", (f"outputs are from a smoke run (parameters overridden: {provenance['parameters_overridden']}); "
                           "run `make execute` with the post's own parameters")
    else:
        data = provenance.get("data")
        downloads = download_calls(nb)
        if not downloads and data != NO_DOWNLOAD:
            yield "notebook", (f"provenance says the run read {data!r}, but no cell downloads anything; "
                               "run `make execute` (it records what the code reads)")
        elif downloads and data == NO_DOWNLOAD:
            yield "notebook", "provenance says nothing was downloaded, but the code downloads data; run `make execute`"
    for number, cell in code_cells(nb):
        if has_tag(cell, INJECTED_TAG):
            yield describe_cell(number, cell), "injected parameters cell from a smoke run; delete it and re-execute"


def check_seal(nb, path, root):
    """Do the outputs, their order and the provenance still match what `make execute` sealed?"""
    if not blog_metadata(nb).get("provenance"):
        return  # check_provenance says so
    seal = blog_metadata(nb).get("seal")
    if not isinstance(seal, dict) or not isinstance(seal.get("cells"), list):
        yield "notebook", "no seal over its outputs: they were not made by this project's `make execute`; run it"
        return
    recorded = {entry.get("id"): (position, entry) for position, entry in enumerate(seal["cells"])
                if isinstance(entry, dict)}
    if recorded and not any("metadata_sha256" in entry for _, entry in recorded.values()):
        yield "notebook", ("sealed by an older `make execute`, which left the cells' metadata (tags, options Quarto "
                           "reads) out of the seal; run `make execute`")
        return
    version = seal.get("version", 1)
    if version not in SEAL_VERSIONS:
        yield "notebook", (f"sealed as version {version!r}, which this project does not know (it knows "
                           f"{', '.join(map(str, SEAL_VERSIONS))}); run `make execute`")
        return
    now = compute_seal(nb, version)
    current = [(cell_key(position, cell), number, cell, entry) for position, ((number, cell), entry)
               in enumerate(zip(sealed_code_cells(nb), now["cells"]))]
    renamed = renamed_cells(current, recorded)
    found = [(describe_cell(number, cell), f"its id changed after the run (it ran as {renamed[key]}); run `make execute`")
             for key, number, cell, _ in current if key in renamed]
    current = [(renamed.get(key, key), *rest) for key, *rest in current]
    found += sealed_cell_problems(current, recorded)
    found += deleted_cells(current, seal["cells"])
    found += moved_cells(current, recorded)
    if now["provenance_sha256"] != seal.get("provenance_sha256"):
        found.append(("notebook", "provenance edited after the run (device, data, parameters, versions or times "
                                  "differ from what was sealed); run `make execute`"))
    never_ran = any(cell.execution_count is None for _, _, cell, _ in current)  # check_execution names them
    if not found and not never_ran and now["sha256"] != seal.get("sha256"):
        found.append(("notebook", "the seal itself was edited; run `make execute`"))
    yield from found


def sealed_cell_problems(current, recorded):
    for key, number, cell, entry in current:
        where = describe_cell(number, cell)
        if cell.execution_count is None:
            if key in recorded and recorded[key][1].get("source_sha256") != entry["source_sha256"]:
                yield where, ("its code was edited while `make execute` ran, so the run's outputs were not kept "
                              "for it (the seal holds the code that ran); run `make execute` again")
            continue  # check_execution: it never ran
        if key not in recorded:
            yield where, "added after the run: the seal has no such code cell; run `make execute`"
        elif recorded[key][1].get("source_sha256") != entry["source_sha256"]:
            yield where, "stale: its code changed after it ran; run `make execute`"
        elif recorded[key][1].get("sha256") != entry["sha256"]:
            yield where, "outputs edited after the run: its text or images differ from what ran; run `make execute`"
        elif recorded[key][1].get("metadata_sha256") != entry["metadata_sha256"]:
            changed = ", ".join(sorted(sealed_metadata(cell))) or "all of it removed"
            yield where, (f"metadata edited after the run (now: {changed}): Quarto reads tags such as remove-cell "
                          "and options such as output from it, so it could hide or change what ran; "
                          "undo the edit, or run `make execute`")


def deleted_cells(current, sealed):
    present = {key: number for key, number, _, _ in current}
    last_seen = None
    for entry in sealed:
        key = entry.get("id") if isinstance(entry, dict) else None
        if key in present:
            last_seen = present[key]
            continue
        place = f"after cell {last_seen}" if last_seen else "before the first code cell"
        yield "notebook", (f"a code cell that ran ({place}, id {key}) was deleted after the run; "
                           "later cells' outputs may depend on it: run `make execute`")


def renamed_cells(current, recorded):
    """{id now: id it ran as} for cells whose id alone changed: same source and outputs as a sealed cell now missing."""
    present = {key for key, *_ in current}
    missing = {entry.get("sha256"): key for key, (_, entry) in recorded.items() if key not in present}
    return {key: missing[entry["sha256"]] for key, _, _, entry in current
            if key not in recorded and entry["sha256"] in missing}


def moved_cells(current, recorded):
    """The fewest cells whose moves explain the new order: those off the longest run still in sealed order."""
    kept = [(recorded[key][0], key, number, cell) for key, number, cell, _ in current if key in recorded]
    in_order = longest_increasing(kept)
    number_of = {key: number for _, key, number, _ in kept}
    sealed_order = sorted(recorded, key=lambda key: recorded[key][0])
    for position, key, number, cell in kept:
        if key in in_order:
            continue
        before = next((sealed_order[earlier] for earlier in range(position - 1, -1, -1)
                       if sealed_order[earlier] in number_of), None)
        ran = f"right after cell {number_of[before]}" if before else "before every other code cell"
        yield describe_cell(number, cell), f"moved after the run: it ran {ran}; run `make execute`"


def longest_increasing(kept):
    """The keys of a longest subsequence of `kept` whose sealed positions increase (n is small: quadratic is fine)."""
    best = []
    for index, (position, key, *_) in enumerate(kept):
        longest = max((chain for chain in best[:index] if kept[chain[-1]][0] < position), key=len, default=[])
        best.append(longest + [index])
    return {kept[index][1] for index in max(best, key=len, default=[])}


def upgrade_seal(nb, path, root):
    """Re-seal `nb` in the current version, only if it holds under its own: a list of what stops that.

    An upgrade re-digests what `make execute` sealed; it never seals an edit. A notebook whose seal does
    not hold as it is keeps its old seal and is named with the reason."""
    problems = [f"{where}: {what}" for where, what in (*check_provenance(nb, path, root), *check_seal(nb, path, root))]
    if not problems:
        record_seal(nb)
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=(
        f"Re-seal posts sealed by an older `make execute` in seal version {SEAL_VERSION}, which leaves out the "
        "options that only fold or label code; only posts whose seal holds as they are."))
    parser.add_argument("--post", help="only posts whose folder name contains this")
    args = parser.parse_args(argv)
    refused = 0
    for path in find_posts(args.post, every_match=True):
        nb = read_notebook(path)
        if blog_metadata(nb).get("seal", {}).get("version", 1) == SEAL_VERSION:
            print(f"{post_name(path)}: already sealed in version {SEAL_VERSION}")
            continue
        problems = upgrade_seal(nb, path, REPO_ROOT)
        if problems:
            refused += 1
            print(f"{post_name(path)}: kept its seal, which does not hold: {'; '.join(problems)}")
            continue
        write_notebook_atomically(nb, path)
        print(f"{post_name(path)}: re-sealed in version {SEAL_VERSION} (its seal held)")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
