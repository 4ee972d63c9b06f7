"""`commscope profile ... --measure`: the benchmark cases a profile needs to be priced
(profiles/price.py: its calls at their sizes, process counts and spread), measured as
runs of --db and nothing else, so that `predict --profile RUN` prices it next."""

from __future__ import annotations

import shlex

from ..system.kernels import catalog
from ..measure.launches import measure_runs
from ..measure.plan import plans, sampling
from ..profiles import Profile
from ..profiles.price import needs, runs_of
from .common import show_runs


def measure_profile(store, mpi, run_id: int, profile: Profile, hosts, db: str,
                    as_json: bool) -> list[dict]:
    """The runs measured, as profile --json lists them."""
    groups = runs_of([n for _, n in needs(profile.summed(), hosts) if n is not None], hosts)
    known = catalog(mpi)
    planned = [p for (kernel, mode, ranks, where), sizes in sorted(
                   groups.items(), key=lambda kv: str(kv[0]))
               for p in plans(known, mpi, kernel=kernel, np=str(ranks),
                              sizes=",".join(map(str, sizes)), modes=mode,
                              hosts=where, sampling=sampling())]
    if not as_json:
        print(f"measuring what profile {run_id} needs: "
              + "; ".join(f"{p.kernel.name} on {p.ranks} ranks at "
                          f"{len(p.sizes)} size{'s' * (len(p.sizes) > 1)}" for p in planned))
    runs = measure_runs(store, mpi, planned, ["commscope", "profile", "--measure",
                                              f"profile:{run_id}"])
    if not as_json:
        show_runs(store, runs, db, False)
        print(f"next: commscope predict --profile {run_id} --db {shlex.quote(str(db))}")
    return [{"run": r.run_id, "kernel": r.plan.kernel.name, "ranks": r.plan.ranks,
             "bytes": list(r.plan.sizes), "status": r.status,
             "message": r.outcomes[-1].message if r.status != "complete" else None}
            for r in runs]
