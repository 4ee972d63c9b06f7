"""The stream reader: each record committed on arrival, the case in flight remembered."""

import json

import pytest

from commscope.measure.ingest import Ingest, RecordsError
from commscope.system.progress import Progress
from commscope.store.store import Store


def _case(nbytes):
    return {"type": "case", "kernel": "bw", "send_mode": None, "bytes": nbytes, "ranks": 2,
            "window": 64, "batch": 1, "warmup_iterations": 4, "validated": False,
            "timed_by": "origin", "samples_s": [1e-3, 2e-3], "rank_samples_s": [[1e-3, 2e-3]] * 2}


def test_records_land_as_they_arrive(db, capsys):
    store = Store(db)
    run = store.begin_run(["x"], "bw", 2, False)
    seen = []
    ingest = Ingest(store, run, store.begin_launch(run, 1, False), on_case=seen.append)
    ingest.feed(json.dumps({"type": "context", "schema": 1, "mpi_library": "MPICH",
                            "mpi_library_version": "MPICH Version: 5.0.2"}) + "\n")
    ingest.feed("some MPI library warning\n")
    ingest.feed(json.dumps({"type": "case_start", "kernel": "bw", "bytes": 8}) + "\n")
    assert store.run(run).in_flight["bytes"] == 8
    ingest.feed(json.dumps(_case(8)) + "\n")
    assert store.run(run).in_flight is None and len(store.cases(run)) == 1
    ingest.feed(json.dumps({"type": "case_start", "kernel": "bw", "bytes": 16}) + "\n")
    ingest.feed('{"type": "case", "kernel": "bw", "byt')  # cut short by a dying rank
    assert ingest.in_flight["bytes"] == 16 and not ingest.ended
    assert [c["bytes"] for c in seen] == [8]
    assert store.run(run).mpi_library == "MPICH"
    assert "some MPI library warning" in capsys.readouterr().err


def test_a_stream_of_an_unknown_schema_is_refused(db):
    store = Store(db)
    run = store.begin_run(["x"], "bw", 2, False)
    ingest = Ingest(store, run, store.begin_launch(run, 1, False))
    with pytest.raises(RecordsError, match="records of schema 2, this commscope reads schema 1"):
        ingest.feed(json.dumps({"type": "context", "schema": 2}) + "\n")
    assert ingest.context is None


def test_progress_draws_count_and_eta_on_a_terminal():
    class Tty:
        text = ""

        def isatty(self):
            return True

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    out = Tty()
    bar = Progress(4, "pingpong x2", stream=out)
    assert "0/4" in out.text and "ETA --:--" in out.text
    bar.advance("8 B")
    assert "1/4" in out.text.rsplit("\r", 1)[1] and "ETA 0:00" in out.text
