"""One owner per run directory: a lease that works on a cluster's shared file system.

A run directory (``evolve --out DIR``) is written by one job at a time. The job that owns it
holds a *lease*: a small JSON file under ``DIR/lease/`` naming the owner (host, process id,
start time) with a heartbeat that a background thread of the owner renews every
``heartbeat`` seconds. Another job that wants the directory waits until the owner releases the
lease, or takes it over once the lease is *stale*:

* the owner's heartbeat has not changed for ``expiry`` seconds, as timed by the waiting job's
  own clock (so the hosts' clocks need not agree), or
* the owner runs on the same host and its process is gone.

No ``flock``/``fcntl`` locks (NFS, Lustre and GPFS honour them only in some configurations):
only ``link`` (fails when the name exists) and ``rename``, atomic across hosts on these file
systems. Leases are numbered (``DIR/lease/00000007.json`` is the seventh owner's); taking the
directory creates the next number, and of jobs trying at once exactly one succeeds. The owner
renews its file by renaming a fresh copy over it; finding a newer lease at a renewal (taken
over after a stall longer than the expiry), it stops its run, so two jobs never both write.

Defaults: a heartbeat every :data:`HEARTBEAT` seconds, stale after :data:`EXPIRY` seconds
without one. ``evolve`` sets them with ``--lease-heartbeat`` and ``--lease-expiry``.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

#: Folder of the lease files inside a run directory.
LEASE_DIR = "lease"

#: Default seconds between two heartbeats of the owner.
HEARTBEAT = 10.0

#: Default seconds without a heartbeat after which a lease is stale.
EXPIRY = 60.0

#: Environment variable naming this host in leases (default: ``socket.gethostname()``); set it
#: when several nodes share a host name, or in tests to stand for another host.
HOST_VARIABLE = "PROPULATE_LEASE_HOST"


class LeaseHeld(RuntimeError):
    """The run directory has a live owner (raised when not waiting for it)."""

    def __init__(self, directory: Path, owner: LeaseInfo) -> None:
        self.owner = owner
        super().__init__(f"run directory {directory} is owned by {owner.describe()}")


def this_host() -> str:
    """The host name recorded in leases (``$PROPULATE_LEASE_HOST`` or the host name)."""
    return os.environ.get(HOST_VARIABLE) or socket.gethostname()


@dataclass(frozen=True)
class LeaseInfo:
    """The content of one lease file.

    Attributes
    ----------
    generation : int
        The lease's number (one more than the previous owner's).
    host : str
        Host name of the owner.
    pid : int
        Process id of the owner on that host.
    started : float
        Unix time (seconds) at which the owner took the lease.
    heartbeat : float
        Unix time of the owner's latest renewal (by the owner's clock).
    beats : int
        Renewals so far; a waiting job watches it change.
    interval : float
        Seconds between renewals the owner promised.
    expiry : float
        Seconds without a renewal after which the lease may be taken over.
    released : bool
        Whether the owner gave the directory up.
    token : str
        Random id of this owner (tells two owners with the same host and pid apart).
    """

    generation: int
    host: str
    pid: int
    started: float
    heartbeat: float
    beats: int = 0
    interval: float = HEARTBEAT
    expiry: float = EXPIRY
    released: bool = False
    token: str = ""

    def describe(self) -> str:
        """The owner in words: ``host:pid (started ..., last heartbeat N s ago)``."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        age = max(time.time() - self.heartbeat, 0.0)
        return f"{self.host}:{self.pid} (started {when}, last heartbeat {age:.0f} s ago)"

    def process_gone(self) -> bool:
        """Whether the owner ran on this host and its process no longer exists."""
        if self.host != this_host():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, another user's
            pass
        return False

    def looks_alive(self, now: float | None = None) -> bool:
        """A one-look guess (``status``): not released, process not known gone, and a heartbeat
        within ``expiry`` by this host's clock."""
        now = time.time() if now is None else now
        if self.released or self.process_gone():
            return False
        return now - self.heartbeat <= self.expiry


def _name(generation: int) -> str:
    return f"{generation:08d}.json"


def _generation(path: Path) -> int | None:
    stem = path.name.removesuffix(".json")
    return int(stem) if path.name.endswith(".json") and stem.isdigit() else None


def _read(path: Path) -> LeaseInfo | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    known = {f.name for f in fields(LeaseInfo)}
    try:
        return LeaseInfo(**{k: v for k, v in data.items() if k in known})
    except TypeError:
        return None


def current(directory: str | Path, name: str = LEASE_DIR) -> LeaseInfo | None:
    """The newest lease of a run directory (``None``: it never had an owner); ``name`` is the
    lease folder inside it."""
    folder = Path(directory) / name
    try:
        names = [(g, p) for p in folder.iterdir() if (g := _generation(p)) is not None]
    except OSError:
        return None
    for _, path in sorted(names, reverse=True):
        info = _read(path)  # None: being written right now (link makes it whole), or removed
        if info is not None:
            return info
    return None


def _write_tmp(folder: Path, info: LeaseInfo) -> Path:
    tmp = folder / f".tmp.{info.host}.{info.pid}.{secrets.token_hex(4)}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(asdict(info)) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


def _create(folder: Path, info: LeaseInfo) -> bool:
    """Create lease ``info.generation`` whole, unless it exists (atomic on NFS: ``link``)."""
    tmp = _write_tmp(folder, info)
    try:
        os.link(tmp, folder / _name(info.generation))
        return True
    except FileExistsError:
        return False
    except OSError:
        # NFS may report a failure of a link that succeeded (a lost reply): count the links.
        try:
            return os.stat(tmp).st_nlink == 2
        except OSError:
            return False
    finally:
        tmp.unlink(missing_ok=True)


def _live(owner: LeaseInfo | None, seen: dict[str, Any]) -> bool:
    """Whether ``owner`` still holds its lease, as watched over the calls sharing ``seen``."""
    if owner is None or owner.released or owner.process_gone():
        return False
    key = (owner.generation, owner.token, owner.beats)
    now = time.monotonic()
    if seen.get("key") != key:
        seen["key"], seen["since"] = key, now
    return now - seen["since"] < owner.expiry


def wait_until_free(
    directory: str | Path,
    on_wait: Callable[[LeaseInfo], None] | None = None,
    name: str = LEASE_DIR,
) -> None:
    """Wait until ``directory`` has no live owner (without taking the lease).

    For a job that only prepares a directory for the next owner (the workflow's
    ``prepare-run``). ``on_wait`` is called once with the owner it waits for.
    """
    seen: dict[str, Any] = {}
    told = False
    while _live(owner := current(directory, name), seen):
        assert owner is not None
        if on_wait is not None and not told:
            told = True
            on_wait(owner)
        time.sleep(min(max(owner.interval / 4, 0.05), 5.0))


class Lease:
    """The lease on one run directory, held by this process.

    Parameters
    ----------
    directory : path
        The run directory.
    heartbeat : float
        Seconds between two renewals (a background thread; nothing per evaluation).
    expiry : float
        Seconds without a renewal after which another job may take the lease over; at least
        twice ``heartbeat``.
    on_lost : callable, optional
        Called once (from the heartbeat thread) when the lease was taken over by another job
        after this one stalled; ``evolve`` stops its run then.
    name : str
        The lease folder inside ``directory`` (default ``lease``; the tuning database uses
        ``tuning.sqlite.lease``).
    """

    def __init__(
        self,
        directory: str | Path,
        heartbeat: float = HEARTBEAT,
        expiry: float = EXPIRY,
        on_lost: Callable[[], None] | None = None,
        name: str = LEASE_DIR,
    ) -> None:
        if heartbeat <= 0 or expiry < 2 * heartbeat:
            raise ValueError(
                f"lease expiry ({expiry} s) must be at least twice the heartbeat ({heartbeat} s)"
            )
        self.directory = Path(directory)
        self.name = name
        self.folder = self.directory / name
        self.heartbeat, self.expiry, self.on_lost = heartbeat, expiry, on_lost
        self.info: LeaseInfo | None = None
        self.lost = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- taking it
    def try_acquire(self, seen: dict[str, Any] | None = None) -> LeaseInfo | None:
        """Take the lease if it is free or stale; else return the live owner.

        ``seen`` carries what earlier calls observed of the owner (its heartbeat and since
        when, by this process's monotonic clock): a lease is stale once its heartbeat did not
        change for its ``expiry`` seconds while watched.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        owner = current(self.directory, self.name)
        if _live(owner, {} if seen is None else seen):
            return owner
        generation = 1 if owner is None else owner.generation + 1
        stamp = time.time()
        info = LeaseInfo(
            generation=generation,
            host=this_host(),
            pid=os.getpid(),
            started=stamp,
            heartbeat=stamp,
            interval=self.heartbeat,
            expiry=self.expiry,
            token=secrets.token_hex(8),
        )
        if not _create(self.folder, info):
            return current(self.directory, self.name) or owner  # another job was faster
        newest = current(self.directory, self.name)
        if newest is None or newest.token != info.token:
            # A job that looked long ago recreated a number already taken and cleaned up.
            (self.folder / _name(generation)).unlink(missing_ok=True)
            return newest or owner
        self.info = info
        self._cleanup()
        self._start_heartbeat()
        return None

    def acquire(
        self,
        wait: bool = True,
        on_wait: Callable[[LeaseInfo], None] | None = None,
        poll: float | None = None,
    ) -> None:
        """Take the lease, waiting for a live owner (or raising :class:`LeaseHeld`).

        Parameters
        ----------
        wait : bool
            False: raise :class:`LeaseHeld` at once when the directory has a live owner.
        on_wait : callable, optional
            Called once with the owner when this job starts waiting (and again for a new owner).
        poll : float, optional
            Seconds between two looks at the lease (default: a quarter of the heartbeat,
            between 0.05 and 5 s).
        """
        seen: dict[str, Any] = {}
        told: tuple[int, str] | None = None
        while True:
            owner = self.try_acquire(seen)
            if owner is None:
                return
            if not wait:
                raise LeaseHeld(self.directory, owner)
            if on_wait is not None and told != (owner.generation, owner.token):
                told = (owner.generation, owner.token)
                on_wait(owner)
            time.sleep(poll if poll is not None else min(max(owner.interval / 4, 0.05), 5.0))

    # ----------------------------------------------------------------- holding it
    def _cleanup(self) -> None:
        """Remove older leases, and temporary files a killed writer left (an hour old)."""
        assert self.info is not None
        for path in self.folder.iterdir():
            gen = _generation(path)
            try:
                if gen is not None and gen < self.info.generation:
                    path.unlink(missing_ok=True)
                elif path.name.startswith(".tmp.") and time.time() - path.stat().st_mtime > 3600:
                    path.unlink(missing_ok=True)
            except OSError:
                pass  # another job cleans up at the same time

    def _start_heartbeat(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name="propulate-lease", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat):
            if not self.renew():
                self.lost = True
                if self.on_lost is not None:
                    self.on_lost()
                return

    def _superseded(self) -> bool:
        assert self.info is not None
        newest = current(self.directory, self.name)
        return newest is not None and (
            newest.generation > self.info.generation or newest.token != self.info.token
        )

    def renew(self, released: bool = False) -> bool:
        """Write a fresh heartbeat; False when another job has taken the lease over."""
        if self.info is None:
            return False
        if self._superseded():
            return False
        info = LeaseInfo(
            **{
                **asdict(self.info),
                "heartbeat": time.time(),
                "beats": self.info.beats + 1,
                "released": released,
            }
        )
        tmp = _write_tmp(self.folder, info)
        os.replace(tmp, self.folder / _name(info.generation))
        self.info = info
        return True

    def release(self) -> None:
        """Stop the heartbeat and mark the lease released (the next job takes it at once)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.info is not None and not self.lost:
            try:
                self.renew(released=True)
            except OSError:
                pass  # the directory went away: nothing to release
        self.info = None
