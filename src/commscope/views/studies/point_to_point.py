"""Two-rank studies: send modes (seeds 000, 002, 003), latency convergence (000), transports
(004)."""

from __future__ import annotations

import numpy as np

from ..report import figures
from ...system.sizes import format_bytes
from ...system.units import MB, US_PER_S
from . import Study
from .common import cases, figures_of, medians, plan, study_section


def _send_mode_plans(counts, mpi, max_time=None):
    launches = [plan(mpi, "pingpong", 2, "1:1MiB", "all", max_time=max_time)]
    wide = max(counts)
    if wide > 2:  # seed 000: each sender's time per send mode, at the widest count asked for
        launches.append(plan(mpi, "fanin", wide, "8", "all", max_time=max_time))
    return launches


def _send_mode_section(store, run_ids):
    found = cases(store, run_ids)
    figure = figures_of(store, run_ids)
    pingpong = [c for c in found if c.kernel == "pingpong"]
    fanin = [c for c in found if c.kernel == "fanin"]
    fig, axes = figures.new(2 if fanin else 1, 2)
    lat, bw = axes[0]
    colours = figures.mode_colors(c.send_mode for c in found)
    for mode in dict.fromkeys(c.send_mode for c in pingpong):
        mine = [c for c in pingpong if c.send_mode == mode]
        size, median, low, high, _ = medians(mine, figure)
        colour = colours[mode]
        lat.plot(size, median * US_PER_S, "o-", ms=3, color=colour, label=mode)
        lat.fill_between(size, low * US_PER_S, high * US_PER_S, color=colour, alpha=0.2)
        bw.plot(size, size / median / MB, "o-", ms=3, color=colour, label=mode)
    for ax in (lat, bw):
        figures.size_axis(ax)
    figures.log_axis(lat, "half round trip (us)")
    figures.log_axis(bw, "bandwidth (MB/s)")
    lat.legend(fontsize=8)
    if fanin:
        ax = axes[1][0]
        for c in fanin:
            per_rank = np.median(np.asarray(c.extra["phase_samples_s"]["fanin"]), axis=1)
            ax.plot(range(1, len(per_rank)), per_rank[1:] * US_PER_S, "o-",
                    color=colours[c.send_mode], label=c.send_mode)
        ax.set_xticks(range(1, fanin[0].ranks))
        ax.set_xlabel("sending rank")
        ax.set_ylabel("send completion (us)")
        ax.set_title(f"fan-in of {format_bytes(fanin[0].bytes)} to rank 0, {fanin[0].ranks} ranks")
        ax.legend(fontsize=8)
        axes[1][1].set_axis_off()
    return study_section(
        "send modes", fig, "latency and bandwidth per send mode",
        "Ping-pong half round trip (median, 95% CI band) and bandwidth per send mode, as seeds "
        "000, 002 and 003 compared them; below, each fan-in sender's median send-completion "
        "time per mode (seed 000 saw Ssend's grow with rank).")


def _convergence_plans(counts, mpi, max_time=None):
    return [plan(mpi, "pingpong", 2, "8,1KiB,64KiB", iters=2000, max_time=max_time)]


def running_mean(case) -> tuple[np.ndarray, np.ndarray]:
    """Iterations averaged, and the mean latency over them, sample by sample; valid samples
    only (late window starts left out), as in every other figure."""
    latency = case.latency_s
    counted = np.arange(1, latency.size + 1)
    return counted * case.batch, np.cumsum(latency) / counted


def _convergence_section(store, run_ids):
    """Seed 000's figure: the average per iteration against how many iterations it averages."""
    fig, axes = figures.new(1, 1)
    ax = axes[0][0]
    figure = figures_of(store, run_ids)
    for i, c in enumerate(cases(store, run_ids)):
        iterations, running = running_mean(c)
        s = figure[c.id]
        colour = figures.color(i)
        ax.plot(iterations, running * US_PER_S, color=colour, label=format_bytes(c.bytes))
        if s.ci_low_s is not None:
            ax.axhspan(s.ci_low_s * US_PER_S, s.ci_high_s * US_PER_S, color=colour, alpha=0.15)
    ax.set_xscale("log")
    ax.set_xlabel("iterations averaged")
    figures.log_axis(ax, "mean half round trip (us)")
    ax.legend(fontsize=8)
    return study_section(
        "latency convergence", fig, "running mean latency against iterations",
        "The running mean half round trip against the number of iterations it averages "
        "(seed 000's convergence plot), with the case's 95% CI over launches as a band: where the "
        "curve enters the band, a fixed count of that many iterations would have sufficed.")


def _transport_plans(counts, mpi, max_time=None):
    return [plan(mpi, name, 2, sizes, modes, max_time=max_time, transport=t)
            for t in ("shm", "tcp")
            for name, sizes, modes in (("pingpong", "8,1KiB,64KiB,1MiB", "standard,nonblocking"),
                                       ("bw", "1KiB:4MiB", None))]


def _transport_section(store, run_ids):
    fig, axes = figures.new(1, 2)
    lat, thr = axes[0]
    flavours = ("standard", "nonblocking", None)  # None: bw, streaming nonblocking sends
    figure = figures_of(store, run_ids)
    for run_id in run_ids:
        found = store.cases(run_id)
        over = found[0].settings.get("transport", "auto") if found else "auto"
        style = "o-" if over == "shm" else "o--"
        for i, mode in enumerate(flavours):
            mine = [c for c in found if c.send_mode == mode]
            if not mine:
                continue
            size, median, _, _, mbps = medians(mine, figure)
            label = f"{mine[0].kernel}{' ' + mode if mode else ''}, {over}"
            if mine[0].kernel == "pingpong":
                lat.plot(size, median * US_PER_S, style, ms=3, color=figures.color(i), label=label)
            thr.plot(size, mbps, style, ms=3, color=figures.color(i), label=label)
    for ax in (lat, thr):
        figures.size_axis(ax)
        ax.legend(fontsize=7)
    figures.log_axis(lat, "half round trip (us)")
    figures.log_axis(thr, "throughput (MB/s)")
    return study_section(
        "transports", fig, "blocking and nonblocking over shared memory and TCP",
        "Seed 004's comparison: blocking (standard) and nonblocking ping-pong latency, and "
        "throughput including streaming bw, over shared memory (solid) and TCP (dashed).")


STUDIES = [
    Study("send-modes", "000, 002, 003", "latency and bandwidth of every send mode; fan-in per "
          "sender and mode", "4", _send_mode_plans, _send_mode_section),
    Study("latency-convergence", "000", "running mean latency against the iterations averaged",
          "2", _convergence_plans, _convergence_section),
    Study("transports", "004", "blocking vs nonblocking, shared memory vs TCP: latency and "
          "throughput", "2", _transport_plans, _transport_section),
]
