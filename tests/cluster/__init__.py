"""The test suite's virtual cluster: commscope.system.cluster (network namespaces as hosts on
one bridge, or on racks joined by a router; see its docstring), and the fixtures that
give a test two hosts, or two racks of two."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from commscope.system.cluster import (BRIDGE, CPUS, NETNS_ETC, PREFIX, ROUTER, SUBNET, Cluster,
                                      ClusterUnavailable, down, unavailable, up)


@contextmanager
def cluster_of(n: int, racks: int = 1):
    """n hosts in `racks` racks (the test skipped where unavailable), removed whatever the
    outcome."""
    try:
        made = up(n, racks)
    except ClusterUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield made
    finally:
        down(made)


@pytest.fixture
def virtual_cluster():
    """Two hosts for one test."""
    with cluster_of(2) as made:
        yield made


@pytest.fixture
def racks_cluster():
    """Two racks of two hosts for one test: cscl-h0 and h1 in rack 0, h2 and h3 in rack 1,
    the trunk between them not shaped."""
    with cluster_of(4, racks=2) as made:
        yield made
