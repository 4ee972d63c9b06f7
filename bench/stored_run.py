"""A stream of native records stored as one run of one launch, by the calls `commscope run`
makes (launches.py, measure.py): begin_run, begin_launch, Ingest.feed, finish_launch,
finish_run. The one place bench/ writes runs through the store's API, so that a change
to that API is one edit here, and tests/test_bench.py finds it when it is not made.
"""

from __future__ import annotations

from typing import Iterable

from commscope.measure.ingest import Ingest
from commscope.store.store import Store


def store_run(store: Store, lines: Iterable[str], kernel: str, ranks: int,
              kernel_facts: dict | None = None) -> int:
    """The run's id; `lines` are JSON Lines as rank 0 writes them, context to end."""
    run_id = store.begin_run(["bench"], kernel, ranks, False, kernel_facts=kernel_facts)
    launch_id = store.begin_launch(run_id, 1, False)
    ingest = Ingest(store, run_id, launch_id)
    for line in lines:
        ingest.feed(line)
    if not ingest.ended or ingest.errors:
        # A stream the bench made wrong would time less than a run stores: stop, not report.
        raise SystemExit(f"bench: the records of {kernel} at {ranks} ranks did not end "
                         f"cleanly ({ingest.errors[:1] or 'no end record'})")
    store.finish_launch(launch_id, "complete")
    store.finish_run(run_id, "complete")
    return run_id
