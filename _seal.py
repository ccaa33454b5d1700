"""A report's seal, written once, for every writer and checker of a report.

A report beside a post (spread.json, ablations.json) carries `seal`, the
SHA-256 of its other keys written one way only. The posts check it when they
read a report, the tools when they write or check one: all call this function.
It needs only the standard library, so `make check` runs without the training
stack. A seal catches an edit made without the tool; it cannot stop a
deliberate re-seal.
"""
import hashlib
import json


def seal_of(report):
    """SHA-256 of a report's content, every key but the seal, written one way only."""
    content = {key: value for key, value in report.items() if key != "seal"}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
