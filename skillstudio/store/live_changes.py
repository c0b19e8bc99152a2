"""Committed changes of a team library, pushed by the server (PostgreSQL LISTEN/NOTIFY).

Every transaction that writes a team library notifies the channel ``skillstudio_changes`` once,
when it commits (postgresql_schema.sql, ``studio_note_change``), with the *origin* of the
writer as payload: a token each SkillStudio process sets on its own connections
(``skillstudio.origin``). Writes from any other client (psql, a script) carry no origin and are
heard as someone else's.

:class:`ChangeListener` holds one extra connection per open library, blocks on it in a daemon
thread, and tells its callbacks (on that thread) that others committed, and when the connection
to the server is lost and back. Nothing polls the server.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skillstudio.store.backends import CHANGE_CHANNEL

if TYPE_CHECKING:
    from psycopg import Connection

log = logging.getLogger(__name__)

ORIGIN_SETTING = "skillstudio.origin"  # read by studio_note_change
RECONNECT_DELAYS = (0.2, 0.5, 1.0, 2.0)  # then every 2 s until the server is back


def new_origin() -> str:
    return uuid.uuid4().hex


class ChangeListener:
    """Listens on its own connection until :meth:`stop`; reconnects when the server comes back.

    ``on_change()`` hears that another writer committed (once per burst of commits);
    ``on_connection(connected, reason)`` hears the connection drop and come back. Both run on the
    listener's thread: a GUI re-emits them as queued signals."""

    def __init__(
        self,
        connect: Callable[[], Connection[Any]],
        origin: str,
        on_change: Callable[[], None],
        on_connection: Callable[[bool, str], None] | None = None,
        *,
        wait: float = 0.5,
    ) -> None:
        self._connect = connect  # a new connection in autocommit mode
        self.origin = origin
        self.on_change = on_change
        self.on_connection = on_connection
        self._wait = wait
        self._stopped = threading.Event()
        self._listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="skillstudio-changes", daemon=True)

    def start(self) -> ChangeListener:
        self._thread.start()
        return self

    def wait_listening(self, timeout: float = 10.0) -> bool:
        """True once LISTEN is in effect (a change committed after this is heard)."""
        return self._listening.wait(timeout)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5 * self._wait + 5)

    def _run(self) -> None:
        failures = 0
        lost = False
        while not self._stopped.is_set():
            try:
                connection = self._connect()
            except Exception as error:  # noqa: BLE001 - any failure to reach the server: try again
                if not lost:
                    lost = True
                    self._tell_connection(False, _reason(error))
                delay = RECONNECT_DELAYS[min(failures, len(RECONNECT_DELAYS) - 1)]
                failures += 1
                self._stopped.wait(delay)
                continue
            failures = 0
            try:
                self._listen(connection, lost)
                lost = False
            except Exception as error:  # noqa: BLE001 - the server went away mid-wait
                self._listening.clear()
                if not self._stopped.is_set():
                    lost = True
                    self._tell_connection(False, _reason(error))
            finally:
                with contextlib.suppress(Exception):  # closing a broken connection may fail too
                    connection.close()

    def _listen(self, connection: Connection[Any], was_lost: bool) -> None:
        connection.execute(f"LISTEN {CHANGE_CHANNEL}")
        self._listening.set()
        if was_lost:
            # Back: what others committed meanwhile was not heard, so it may all have changed.
            self._tell_connection(True, "")
            self._tell_change()
        while not self._stopped.is_set():
            heard, others = self._heard(connection, timeout=self._wait, stop_after=1)
            if heard:  # collect the rest of a burst of commits, to answer it once
                others |= self._heard(connection, timeout=0.02, stop_after=None)[1]
            if others:
                self._tell_change()

    def _heard(self, connection: Connection[Any], *, timeout: float, stop_after: int | None) -> tuple[bool, bool]:
        """(anything heard, anything from another writer)."""
        heard = others = False
        for notice in connection.notifies(timeout=timeout, stop_after=stop_after):
            heard = True
            others |= notice.payload != self.origin
        return heard, others

    def _tell_change(self) -> None:
        try:
            self.on_change()
        except Exception:  # a subscriber's bug must not stop the listening
            log.exception("a change subscriber failed")

    def _tell_connection(self, connected: bool, reason: str) -> None:
        if self.on_connection is None:
            return
        try:
            self.on_connection(connected, reason)
        except Exception:
            log.exception("a connection subscriber failed")


def _reason(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
