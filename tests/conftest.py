"""How the suite shares out between workers (`make test` runs pytest-xdist with --dist loadgroup).

Each test file is one group, run by one worker, so a file's module fixtures (a browser, a served
site, a Colab-like venv) are set up once. A test that is long on its own names its own group
(pytest.mark.xdist_group), so another worker can take it while its file runs.

Workers take groups in the order collected, so the groups with a slow test (minutes: notebooks,
Chromium reading whole sets) come first and the many quick ones fill in behind them; a long
group taken last would leave the other workers idle at the end.
"""
import pytest


def group_of(item):
    marker = item.get_closest_marker("xdist_group")
    return marker.kwargs.get("name", marker.args[0] if marker.args else "")


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    slow_groups = {group_of(item) for item in items if item.get_closest_marker("slow")}
    # a stable sort: within a group, and among the slow or the quick groups, the collected order stays
    items.sort(key=lambda item: group_of(item) not in slow_groups)
