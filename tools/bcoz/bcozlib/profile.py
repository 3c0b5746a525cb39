# SPDX-License-Identifier: GPL-2.0
"""Reading profiles: COZ's tab-separated text format, as bcoz run writes it."""
import math


class ProfileError(Exception):
    """A profile that cannot be understood; str() names the file and line."""


_INT_FIELDS = {
    "experiment": {"duration", "selected-samples", "delay"},
    "throughput-point": {"delta"},
    "progress-point": {"delta"},
    "latency-point": {"arrivals", "departures", "difference"},
    "runtime": {"time"},
    "startup": {"time"},
    "shutdown": {"time", "samples"},
    "samples": {"count"},
}
_REQUIRED = {
    "experiment": {"selected", "speedup", "duration"},
    "throughput-point": {"name", "delta"},
    "progress-point": {"name", "delta"},
    "latency-point": {"name", "arrivals", "departures", "difference"},
    "runtime": {"time"},
    "startup": {"time"},
    "shutdown": {"time"},
    "samples": {"location", "count"},
}


def parse_profile(text, source="profile.coz", warn=None):
    """Parse COZ's tab-separated text format.

    Returns (experiments, samples, runs): experiments is a list of dicts
    {selected, speedup, duration, run, selected_samples, points: [...]} (run:
    the index of the run it belongs to, from 0, counted by startups) where each
    point is {kind: 'throughput'|'latency', name, delta | arrivals, departures,
    difference}, and a throughput point has base (visits per ns) where
    local_baselines() found one; samples maps location -> weighted count (the
    last, cumulative dump of each run, summed over runs); runs counts startups.
    Raises ProfileError with "source:line: reason" for anything malformed.
    A last line without its newline was cut off while being written (bcoz
    writes whole lines): it is skipped, and warn(message) says so.
    """
    experiments = []
    samples = {}
    run_samples = {}
    runs = 0
    cur = None
    run_exps = [[]]     # each run's experiments, in order (local_baselines)
    head = text.lstrip()[:1]
    if head in ("{", "["):
        raise ProfileError("%s: this is JSON, not a profile in COZ's text format. bcoz reads "
                           "the tab-separated records that `bcoz run` and `coz run` write "
                           "(lines such as 'experiment<TAB>selected=file.c:12<TAB>...'); "
                           "plot a JSON profile with the viewer that made it" % source)
    lines = text.splitlines()
    cut = len(lines) if lines and not text.endswith(("\n", "\r")) else 0
    for lineno, raw in enumerate(lines, 1):
        where = "%s:%d" % (source, lineno)
        if lineno == cut:
            if warn and raw.strip():
                warn("%s: the last line is incomplete (no newline: the run was cut off "
                     "while writing it); skipped" % where)
            break
        line = raw.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        kind = parts[0]
        if kind not in _REQUIRED:
            raise ProfileError("%s: unknown record type %r (expected one of %s)"
                               % (where, kind[:40], ", ".join(sorted(_REQUIRED))))
        rec = {}
        for p in parts[1:]:
            if "=" not in p:
                raise ProfileError("%s: field %r is not key=value" % (where, p[:40]))
            k, v = p.split("=", 1)
            if k in rec:
                raise ProfileError("%s: field %r given twice" % (where, k))
            rec[k] = v
        missing = _REQUIRED[kind] - set(rec)
        if missing:
            raise ProfileError("%s: %s record lacks %s" % (where, kind, ", ".join(sorted(missing))))
        for k in _INT_FIELDS[kind] & set(rec):
            try:
                rec[k] = int(rec[k])
            except ValueError:
                raise ProfileError("%s: %s=%r is not an integer" % (where, k, rec[k][:40]))
            if rec[k] < 0 and k != "difference":
                raise ProfileError("%s: %s=%d is negative" % (where, k, rec[k]))
        if kind == "experiment":
            try:
                sp = float(rec["speedup"])
            except ValueError:
                raise ProfileError("%s: speedup=%r is not a number" % (where, rec["speedup"][:40]))
            if not (0.0 <= sp <= 1.0) or math.isnan(sp):
                raise ProfileError("%s: speedup=%s outside 0..1" % (where, rec["speedup"]))
            if not rec["selected"]:
                raise ProfileError("%s: empty selected=" % where)
            cur = {"selected": rec["selected"], "speedup": int(round(sp * 100)),
                   "duration": rec["duration"], "run": len(run_exps) - 1,
                   "selected_samples": rec.get("selected-samples", 0), "points": []}
            experiments.append(cur)
            run_exps[-1].append(cur)
        elif kind in ("throughput-point", "progress-point", "latency-point"):
            if cur is None:
                raise ProfileError("%s: %s before any experiment record" % (where, kind))
            if not rec["name"]:
                raise ProfileError("%s: empty point name" % where)
            if kind == "latency-point":
                cur["points"].append({"kind": "latency", "name": rec["name"],
                                      "arrivals": rec["arrivals"],
                                      "departures": rec["departures"],
                                      "difference": rec["difference"]})
            else:
                cur["points"].append({"kind": "throughput", "name": rec["name"],
                                      "delta": rec["delta"]})
        elif kind == "samples":
            # cumulative within a run (dumped every 32 experiments): keep the max
            loc = rec["location"]
            run_samples[loc] = max(run_samples.get(loc, 0), rec["count"])
        elif kind == "startup":
            runs += 1
            cur = None
            if run_exps[-1]:
                run_exps.append([])
            for loc, c in run_samples.items():
                samples[loc] = samples.get(loc, 0) + c
            run_samples = {}
        else:
            cur = None if kind == "shutdown" else cur
    for loc, c in run_samples.items():
        samples[loc] = samples.get(loc, 0) + c
    for run in run_exps:
        local_baselines(run)
    return experiments, samples, runs


def _point(e, name):
    for p in e["points"]:
        if p["kind"] == "throughput" and p["name"] == name:
            return p
    return None


def local_baselines(run):
    """Give each throughput point of one run's experiments (in their order)
    the rate its point had at 0 % speedup around the same time: the mean
    rate of the nearest 0 % experiment before it and the nearest after it
    (either, at the run's ends), whatever line they selected (a 0 %
    experiment delays nothing), never the experiment itself.  A point with
    fewer than two 0 % experiments in the run gets none.

    The program's speed drifts while it is profiled: a shared host's rate
    moved by a fifth from one half-second experiment to the next.  Compared
    with its neighbours in time, a level's experiments are compared with
    the program as it ran then (analysis.program_speedups); and summing each
    level apart, as COZ does, also weighs a sped-up level's experiments by
    their duration less the delay, which is shorter when the program ran
    fast: on that host it read a line with no effect about a point lower.
    The baseline stays with its point, so a resample of the experiments
    (analysis.standard_errors) keeps each one's baseline."""
    names = {p["name"] for e in run for p in e["points"] if p["kind"] == "throughput"}
    run_id = run[0].get("run", 0) if run else 0
    for name in names:
        points = [_point(e, name) for e in run]
        zero = [p["delta"] / e["duration"]
                if p and e["speedup"] == 0 and e["duration"] > 0 and p["delta"] > 0 else None
                for e, p in zip(run, points)]
        if sum(r is not None for r in zero) < 2:
            continue
        before, after, last = [], [None] * len(run), None
        for i, r in enumerate(zero):
            before.append(last)
            last = i if r is not None else last
        last = None
        for i in range(len(run) - 1, -1, -1):
            after[i] = last
            last = i if zero[i] is not None else last
        # for the error of a prediction (analysis.baseline_errors): which
        # 0 % experiments gave each baseline, and the noise of one 0 % rate
        # (relative, squared): how far each is from the mean of the two
        # around it, over 1.5 (that mean's own noise), so a steady drift
        # is not counted as noise; with only two, their difference (one
        # degree of freedom, drift included)
        rates = [r for r in zero if r is not None]
        if len(rates) >= 3:
            noise = sum(((y - (x + z) / 2) / y) ** 2
                        for x, y, z in zip(rates, rates[1:], rates[2:])) / (len(rates) - 2) / 1.5
        else:
            noise = ((rates[1] - rates[0]) / ((rates[0] + rates[1]) / 2)) ** 2 / 2
        for p, b, a in zip(points, before, after):
            near = [k for k in (b, a) if k is not None]
            if p and near:
                p["base"] = sum(zero[k] for k in near) / len(near)
                p["base_from"] = tuple((run_id, k, zero[k]) for k in near)
                p["base_noise"] = noise


def read_profile(path, warn=None):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ProfileError("cannot read %s: %s" % (path, e.strerror))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ProfileError("%s: byte %d is not UTF-8 text (not a bcoz/COZ profile?)"
                           % (path, e.start))
    if "\0" in text:
        raise ProfileError("%s: contains NUL bytes (not a bcoz/COZ profile?)" % path)
    return parse_profile(text, path, warn)
