"""The test suite's virtual cluster: commscope.cluster (network namespaces as hosts on
one bridge; see its docstring), and the fixture that gives a test two hosts."""

from __future__ import annotations

import pytest

from commscope.cluster import (  # noqa: F401  (the names the tests use)
    BRIDGE, CPUS, NETNS_ETC, PREFIX, SUBNET, Cluster, ClusterUnavailable, down, unavailable,
    up)


@pytest.fixture
def virtual_cluster():
    """Two hosts for one test (skipped where unavailable), removed whatever the outcome."""
    try:
        made = up(2)
    except ClusterUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield made
    finally:
        down(made)
