"""Chaos test of whole campaigns (issue 47): faults at random moments, then a checker of the
invariants.

Each trial runs a small campaign with Snakemake (two training tasks with a 2-rank evolve job
each, MLA, the LCM, transfer to a new task with TLA1 and TLA2, the tuning database, the report)
in a fresh directory, injects one fault at a random moment drawn from the trial's seed, restarts
the campaign as the README tells users (``snakemake --unlock``, then ``snakemake
--rerun-incomplete``) until it completes, waits until every process of the trial is gone, and
checks the invariants of :mod:`chaos_check`. The faults (:data:`KINDS`):

``rank``       SIGKILL, or SIGTERM then SIGKILL after a grace period, of one evolve rank
``job``        the same to every process of an evolve job (its shell, mpiexec, the ranks)
``snakemake``  the same to Snakemake itself (its jobs go on, orphaned, when it is SIGKILLed)
``writer``     SIGKILL of the tuning database's writer (``tuningdb update``) at a random moment
``publish``    SIGKILL of the writer while its new version exists, between copy and rename
``suggest``    SIGKILL of a ``suggest`` reading the database while the writer writes
``concurrent`` ``snakemake --unlock`` and a second Snakemake while the first runs
``disk``       the campaign's file system (a tmpfs) filled up for a moment, then freed
``clock``      SIGKILL of Snakemake, and the re-run on a clock 45 s behind (its jobs take the
               run directories over from the orphaned ones, which keep the right time)

A third of the ``snakemake`` and ``clock`` trials SIGKILL the first re-run too, 0.2-2 s after
its first job started, while its jobs wait for or take over the orphaned jobs' leases.

    python benchmarks/chaos.py --trials 20 --seed 1         # about 45 s per trial here
    python benchmarks/chaos.py --long --seed 1               # 200 trials

Trial ``i`` uses seed ``S + i``: ``--trials 1 --seed S+i`` repeats its fault, target and moment
(the processes' own timing varies). The last line is ``violations: K``; the exit status is 1
when K > 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chaos_check  # noqa: E402
import chaos_faults as faults  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: What a trial copies of the repository: the pipeline, its configs and profiles.
WORKFLOW_FILES = ("Snakefile", "workflow", "config", "profiles", "benchmarks/results")

#: The fault kinds and their weights in the draw.
KINDS: dict[str, int] = {
    "rank": 3,
    "job": 2,
    "snakemake": 3,
    "writer": 1,
    "publish": 1,
    "suggest": 1,
    "concurrent": 1,
    "disk": 1,
    "clock": 1,
}

NAME, RANKS, BUDGET, MLA_BUDGET, TLA2_BUDGET = "chaos", 2, 16, 4, 2
TRAINING, NEW = ["train00", "train01"], ["t_new"]

#: The campaign: every stage, small budgets.
CONFIG: dict[str, Any] = {
    "name": NAME,
    "objective": "chaosobj:loss",
    "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
    "task_space": {"t": {"type": "float", "low": 0.0, "high": 10.0}},
    "training_tasks": {"latin_hypercube": {"n": len(TRAINING), "seed": 0}},
    "new_tasks": {NEW[0]: {"t": 4.5}},
    "evolve": {"seeds": [1], "max_evaluations": BUDGET, "time_limit": 300, "pop_size": 4},
    "mla": {"budget": MLA_BUDGET, "initial": 2},
    "lcm": {"latent": 1, "restarts": 1, "max_points": 16},
    "transfer": {"tla2_budget": TLA2_BUDGET},
}

#: The campaign's objective: GPTune's demo function, slowed down so that faults land inside
#: evaluations; each call first appends one line naming its run to $CHAOS_CALLS (O_APPEND:
#: whole lines from concurrent processes), so the checker counts what was spent, recorded or not.
OBJECTIVE = """
import json
import os
import sys
import time

from propulate.problems.demo import demo_loss


def _out():
    argv = sys.argv
    return argv[argv.index("--out") + 1] if "--out" in argv else "?"


def loss(params, task):
    line = json.dumps({"out": _out(), "t": task["t"], "x": params["x"], "pid": os.getpid()})
    fd = os.open(os.environ["CHAOS_CALLS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\\n").encode())
    finally:
        os.close(fd)
    time.sleep(float(os.environ.get("CHAOS_SLEEP", "0.2")))
    return demo_loss(params, task)
"""

#: Put on the path of every process of a trial: with $CHAOS_CLOCK_OFFSET set, the process's
#: wall clock (time.time, time.time_ns) is that many seconds off, as on a node whose clock
#: drifted; monotonic clocks are untouched.
CLOCK = """
import os
import time

_OFFSET = float(os.environ.get("CHAOS_CLOCK_OFFSET") or 0.0)
if _OFFSET:
    _time, _time_ns = time.time, time.time_ns
    time.time = lambda: _time() + _OFFSET
    time.time_ns = lambda: _time_ns() + int(_OFFSET * 1e9)
"""

#: Seconds the clock of a ``clock`` trial's re-run is behind.
CLOCK_BEHIND = 45.0


def expected() -> chaos_check.Expected:
    """The campaign's runs with their budgets and ranks."""
    evolve = [f"runs/{t}/propulate-s1" for t in TRAINING]
    budgets = {run: BUDGET for run in evolve}
    budgets.update({f"mla/{t}": MLA_BUDGET for t in TRAINING})
    budgets.update({f"transfer/{t}/tla2": TLA2_BUDGET for t in NEW})
    budgets.update({f"transfer/{t}/tla1": 1 for t in NEW})
    ranks = {run: RANKS for run in evolve}
    return chaos_check.Expected(budgets, ranks, TRAINING, NEW, evolve)


@dataclass
class Trial:
    """One trial's setting and what happened."""

    index: int
    seed: int
    kind: str
    stage: str = ""
    mode: str = "kill"
    grace: float = 0.0
    delay: float = 0.0
    again: float | None = None
    injected: str = ""
    moment: float | None = None
    restarts: int = 0
    seconds: float = 0.0
    violations: list[str] = field(default_factory=list)
    beyond: int = 0
    concurrent: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Campaign:
    """A trial's copy of the workflow, its environment and its Snakemake commands."""

    def __init__(self, workdir: Path, trial: str, calls: Path) -> None:
        self.workdir = workdir
        self.trial = trial
        self.calls = calls
        self.root = workdir / "results" / NAME
        self.env = dict(os.environ)
        for key in [k for k in self.env if k.startswith(("SLURM_", "PMI_", "HYDRA_", "SBATCH_"))]:
            del self.env[key]
        self.env.update(
            {
                faults.MARK: trial,
                "CHAOS_CALLS": str(calls),
                "OMP_NUM_THREADS": "1",
                "PYTHONPATH": os.pathsep.join([str(workdir), str(REPO)]),
                "PATH": os.pathsep.join([str(BIN), self.env.get("PATH", "")]),
            }
        )
        self.outputs: list[Path] = []

    def write(self) -> None:
        """Copy the workflow and write the config and the objective."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        for name in WORKFLOW_FILES:
            src, dest = REPO / name, self.workdir / name
            if src.is_dir():
                shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
        (self.workdir / "chaos.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
        (self.workdir / "chaosobj.py").write_text(OBJECTIVE)
        (self.workdir / "sitecustomize.py").write_text(CLOCK)

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        """Start ``snakemake --cores 2 --configfile chaos.yaml ARGS``, output to a log file."""
        log = self.workdir / f"snakemake-{len(self.outputs)}.out"
        self.outputs.append(log)
        with open(log, "wb") as fh:
            return subprocess.Popen(
                [str(BIN / "snakemake"), "--cores", "2", "--configfile", "chaos.yaml", *args],
                cwd=self.workdir,
                env=self.env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def unlock(self) -> int:
        """``snakemake --unlock``."""
        return self.start("--unlock").wait(timeout=120)

    def tail(self, log: Path, lines: int = 15) -> str:
        """The last lines of a Snakemake output."""
        try:
            return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def draw(index: int, seed: int, long: bool) -> Trial:
    """Trial ``index``'s fault, signal mode, grace and moment, from its seed."""
    rng = random.Random(seed)
    kinds = list(KINDS)
    kind = rng.choices(kinds, weights=[KINDS[k] for k in kinds])[0]
    mode = rng.choice(["kill", "term"]) if kind in ("rank", "job", "snakemake") else "kill"
    grace = rng.choice([1.0, 3.0, 30.0] if long else [1.0, 3.0]) if mode == "term" else 0.0
    delay = {
        "rank": rng.uniform(0.0, 3.0),
        "job": rng.uniform(0.0, 3.0),
        "snakemake": rng.uniform(1.0, 30.0),
        "writer": rng.uniform(0.0, 2.0),
        "publish": 0.0,
        "suggest": rng.uniform(0.0, 1.0),
        "concurrent": rng.uniform(1.0, 25.0),
        "disk": rng.uniform(1.0, 25.0),
        "clock": rng.uniform(1.0, 30.0),
    }[kind]
    trial = Trial(index, seed, kind, mode=mode, grace=grace, delay=delay)
    trial.notes.append(f"choice {rng.random():.6f}")  # which rank or job: the same draw
    if kind in STAGED:  # the moment: a time from the start, or within a stage's first job
        trial.stage = rng.choice(STAGES)
        if trial.stage:
            trial.delay = rng.uniform(0.0, 2.0)
    if kind in ("snakemake", "clock") and rng.random() < 1 / 3:
        trial.again = rng.uniform(0.5, 5.0)  # the first re-run SIGKILLed too, that long in
    return trial


#: Faults whose moment is a time from the start or a moment inside a stage's first job
#: (drawn: "" for the former).
STAGED = ("snakemake", "clock", "concurrent", "disk")
STAGES = ("", "evolve", "mla", "fit-lcm", "transfer", "tuningdb", "report")


def _pick(procs: list[faults.Proc], trial: Trial) -> faults.Proc:
    share = float(trial.notes[0].split()[1])
    return sorted(procs, key=lambda p: p.pid)[int(share * len(procs))]


def inject(trial: Trial, campaign: Campaign, first: subprocess.Popen[bytes], t0: float) -> None:
    """Wait for the trial's target, then apply its fault (runs beside the first Snakemake)."""
    done = lambda: first.poll() is not None  # noqa: E731
    procs = lambda: faults.trial_processes(campaign.trial)  # noqa: E731
    signal_name = "SIGKILL" if trial.mode == "kill" else f"SIGTERM, SIGKILL after {trial.grace:g} s"

    def at_moment() -> bool:
        if trial.stage:  # from the moment the stage's first job runs
            staged = lambda: [p for p in procs() if faults.stage(p) == trial.stage]  # noqa: E731
            if not faults.wait_for(staged, done):
                return False
        deadline = time.monotonic() + trial.delay
        while time.monotonic() < deadline:
            if done():
                return False
            time.sleep(0.01)
        return True

    if trial.kind in ("rank", "job"):
        find = faults.evolve_ranks if trial.kind == "rank" else faults.evolve_jobs
        if not faults.wait_for(lambda: find(procs()), done) or not at_moment():
            return
        targets = find(procs())
        if not targets:
            return
        target = _pick(targets, trial)
        pids = (
            [target.pid]
            if trial.kind == "rank"
            else [p.pid for p in faults.subtree(procs(), target.pid)]
        )
        trial.moment = time.monotonic() - t0
        trial.injected = (
            f"{signal_name} to evolve {trial.kind} {_run_of(target)} ({len(pids)} processes)"
        )
        faults.terminate(pids, trial.mode, trial.grace)
    elif trial.kind in ("snakemake", "clock"):
        if not at_moment():
            return
        trial.moment = time.monotonic() - t0
        running = sorted({faults.stage(p) for p in procs()} - {""})
        trial.injected = f"{signal_name} to snakemake (pid {first.pid}) while {', '.join(running) or 'no job'} ran"
        faults.terminate([first.pid], trial.mode, trial.grace)
    elif trial.kind in ("writer", "suggest"):
        found = faults.wait_for(lambda: faults.writers(procs()), done)
        if not found:
            return
        if trial.kind == "suggest":
            reader = subprocess.Popen(
                [
                    str(BIN / "python"),
                    "-m",
                    "propulate",
                    "suggest",
                    "--campaign",
                    f"results/{NAME}",
                    "--task",
                    "t=4.5",
                ],
                cwd=campaign.workdir,
                env=campaign.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if at_moment():
                trial.moment = time.monotonic() - t0
                trial.injected = f"SIGKILL to suggest (pid {reader.pid}) while the writer writes"
                faults.terminate([reader.pid], "kill", 0.0)
            reader.wait()
            return
        if not at_moment():
            return
        trial.moment = time.monotonic() - t0
        trial.injected = f"SIGKILL to the tuning database's writer (pid {found[0].pid})"
        faults.terminate([found[0].pid], "kill", 0.0)
    elif trial.kind == "publish":
        pattern = ".tuning.sqlite.*.tmp"
        while not done():
            if any(campaign.root.glob(pattern)):
                found = faults.writers(procs())
                if found:
                    trial.moment = time.monotonic() - t0
                    faults.terminate([p.pid for p in found], "kill", 0.0)
                    trial.injected = (
                        "SIGKILL to the tuning database's writer between copy and rename"
                    )
                    return
            time.sleep(0.002)
    elif trial.kind == "concurrent":
        if not at_moment():
            return
        trial.moment = time.monotonic() - t0
        campaign.unlock()
        second = campaign.start()
        code = second.wait(timeout=600)
        trial.injected = f"snakemake --unlock and a second snakemake (exit status {code})"
        trial.notes.append(f"second snakemake: {campaign.tail(campaign.outputs[-1], 3)}")
    elif trial.kind == "disk":
        if not at_moment():
            return
        filler = campaign.workdir / "filler"
        trial.moment = time.monotonic() - t0
        size = faults.fill_disk(filler)
        hold = 0.5 + 2.5 * float(trial.notes[0].split()[1])
        time.sleep(hold)
        filler.unlink()
        trial.injected = f"disk full for {hold:.1f} s ({size >> 20} MB filler)"


def _run_of(proc: faults.Proc) -> str:
    argv = proc.argv
    for i, arg in enumerate(argv[:-1]):
        if arg == "--out":
            return argv[i + 1].split("/runs/", 1)[-1]
    line = proc.line
    at = line.find("--out ")
    return line[at + 6 :].split()[0].split("/runs/", 1)[-1] if at >= 0 else "?"


def kill_rerun(trial: Trial, campaign: Campaign, rerun: subprocess.Popen[bytes]) -> None:
    """SIGKILL the first re-run's Snakemake ``trial.again / 2.5`` s after its first job
    started, while its jobs wait for or take over the orphaned jobs' leases."""
    procs = lambda: faults.subtree(faults.trial_processes(campaign.trial), rerun.pid)[1:]  # noqa: E731
    faults.wait_for(procs, lambda: rerun.poll() is not None)
    try:
        rerun.wait(timeout=trial.again / 2.5 if trial.again else 0.0)
    except subprocess.TimeoutExpired:
        running = sorted({faults.stage(p) for p in faults.trial_processes(campaign.trial)} - {""})
        faults.terminate([rerun.pid], "kill", 0.0)
        trial.notes.append(
            f"re-run 1 SIGKILLed too, {(trial.again or 0.0) / 2.5:.2f} s after its first job, "
            f"while {', '.join(running) or 'no job'} ran"
        )


def run_trial(trial: Trial, base: Path, long: bool) -> None:
    """Run one trial in ``base/trial-<index>`` and check the invariants."""
    home = base / f"trial-{trial.index:04d}"
    mounted = False
    if trial.kind == "disk":
        problem = faults.mount_tmpfs(home, 96)
        if problem:
            trial.notes.append(f"disk fault skipped: {problem}")
            trial.kind = "disk-skipped"
        else:
            mounted = True
    campaign = Campaign(home / "wf", f"{home}", home / "calls.jsonl")
    t0 = time.monotonic()
    try:
        campaign.write()
        first = campaign.start()
        injector = threading.Thread(target=inject, args=(trial, campaign, first, t0), daemon=True)
        if trial.kind != "disk-skipped":
            injector.start()
        code = first.wait(timeout=900)
        injector.join(timeout=900)
        ok = code == 0
        while not ok and trial.restarts < 3:  # the README's re-run
            trial.restarts += 1
            if trial.kind == "clock" and trial.injected:
                campaign.env["CHAOS_CLOCK_OFFSET"] = str(-CLOCK_BEHIND)
                trial.notes.append(
                    f"re-run {trial.restarts} with its clock {CLOCK_BEHIND:g} s behind"
                )
            campaign.unlock()
            rerun = campaign.start("--rerun-incomplete")
            if trial.again is not None and trial.restarts == 1 and trial.injected:
                kill_rerun(trial, campaign, rerun)
            ok = rerun.wait(timeout=900) == 0
        left = faults.wait_until_gone(campaign.trial)
        if left:
            trial.violations.append(f"processes left after the campaign: {[p.line for p in left]}")
            faults.signal_all([p.pid for p in left], 9)
        if not ok:
            trial.violations.append(
                "the campaign did not complete after 3 re-runs:\n"
                + campaign.tail(campaign.outputs[-1], 25)
            )
        problems, spent = chaos_check.check_campaign(campaign.root, expected(), campaign.calls)
        trial.violations.extend(problems)
        trial.beyond = spent.total_beyond
        trial.concurrent = spent.concurrent
    finally:
        trial.seconds = time.monotonic() - t0
        if mounted:
            faults.wait_until_gone(campaign.trial, timeout=30)
            if trial.violations:  # keep the evidence off the tmpfs
                shutil.copytree(home, base / f"trial-{trial.index:04d}-kept", symlinks=True)
            faults.unmount(home)
        if not trial.violations and home.exists():
            shutil.rmtree(home, ignore_errors=True)


def describe(trial: Trial) -> str:
    """One line per trial: the fault, its moment, the re-runs, the violations."""
    what = trial.injected or "no target before the campaign ended (not injected)"
    when = f" at {trial.moment:.2f} s" if trial.moment is not None else ""
    if trial.stage:
        when += f" ({trial.delay:.2f} s into {trial.stage})"
    return (
        f"trial {trial.index} (seed {trial.seed}): {trial.kind}: {what}{when}; "
        f"re-runs {trial.restarts}; {trial.seconds:.0f} s; beyond budget {trial.beyond}; "
        f"violations {len(trial.violations)}"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the trials; print one line per trial and the counts."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--trials", type=int, default=None, help="trials (default 20; 200 with --long)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the first trial (trial i: seed + i)"
    )
    parser.add_argument(
        "--long", action="store_true", help="200 trials, Slurm's 30 s grace among the grace periods"
    )
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), help="draw only these faults")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where trials run (default: a temporary folder)"
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="start no trial after this many minutes (the counts cover the trials run)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the trials and counts here")
    args = parser.parse_args(argv)
    trials = args.trials if args.trials is not None else (200 if args.long else 20)
    if args.kinds:
        KINDS.update({k: (w if k in args.kinds else 0) for k, w in KINDS.items()})
    base = args.dir or Path(tempfile.mkdtemp(prefix="propulate-chaos-"))
    base.mkdir(parents=True, exist_ok=True)
    done: list[Trial] = []
    started = time.monotonic()
    for index in range(trials):
        if args.minutes is not None and time.monotonic() - started > 60 * args.minutes:
            print(f"stopped after {args.minutes:g} minutes, {index} of {trials} trials", flush=True)
            break
        trial = draw(index, args.seed + index, args.long)
        run_trial(trial, base, args.long)
        done.append(trial)
        print(describe(trial), flush=True)
        for note in trial.notes[1:]:
            print(f"  note: {note}", flush=True)
        for same in trial.concurrent:
            print(f"  concurrent duplicate: {same}", flush=True)
        for problem in trial.violations:
            print(f"  VIOLATION: {problem}", flush=True)
        if trial.violations:
            print(
                f"  reproduce: python benchmarks/chaos.py --trials 1 --seed {trial.seed}"
                f"{' --long' if args.long else ''}; kept in {base}",
                flush=True,
            )
    injected: dict[str, int] = {}
    missed: dict[str, int] = {}
    for t in done:
        (injected if t.injected else missed)[t.kind] = (injected if t.injected else missed).get(
            t.kind, 0
        ) + 1
    violations = sum(len(t.violations) for t in done)
    beyond = sum(t.beyond for t in done)
    counts = {
        "trials": len(done),
        "injected": injected,
        "missed": missed,
        "beyond_budget": beyond,
        "concurrent_duplicates": sum(len(t.concurrent) for t in done),
        "violations": violations,
        "seconds_per_trial": round(sum(t.seconds for t in done) / max(len(done), 1), 1),
    }
    if args.json:
        args.json.write_text(
            json.dumps({"counts": counts, "trials": [vars(t) for t in done]}, indent=1)
        )
    print(f"trials: {len(done)}")
    print(
        "faults injected: " + (", ".join(f"{k} {n}" for k, n in sorted(injected.items())) or "none")
    )
    print(
        "faults without a target: "
        + (", ".join(f"{k} {n}" for k, n in sorted(missed.items())) or "none")
    )
    print(f"seconds per trial: {counts['seconds_per_trial']}")
    concurrent = sum(len(t.concurrent) for t in done)
    print(f"configurations two ranks bred and evaluated at the same moment: {concurrent}")
    print(f"evaluations spent beyond the budget: {beyond}")
    print(f"violations: {violations}")
    if not violations and args.dir is None:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
