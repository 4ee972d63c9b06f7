"""The test suite's virtual cluster: commscope.cluster (network namespaces as hosts on
one bridge; see its docstring), and the fixture that gives a test two hosts."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from commscope.cluster import (  # noqa: F401  (the names the tests use)
    BRIDGE, CPUS, NETNS_ETC, PREFIX, SUBNET, Cluster, ClusterUnavailable, down, unavailable,
    up)


@contextmanager
def cluster_of(n: int):
    """n hosts (the test skipped where unavailable), removed whatever the outcome."""
    try:
        made = up(n)
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
