"""The client's HTTP: JSON calls to serve over a kept-alive connection
(one per thread), HTTPS verified against the system's CAs or a PEM file,
every failure turned into ApiError or ConnectionFailed."""

from __future__ import annotations

import http.client
import json
import select
import ssl
import threading
import urllib.parse
from typing import Any

from .errors import ApiError, ConnectionFailed

# How long a call waits for its reply beyond the wait it asked serve for.
REPLY_S = 60.0

# A reused connection that fails with no reply was closed by serve while
# it was idle; a fresh one is tried for these (a request sent twice
# changes nothing).
_SAFE = ("GET",)


class Http:
    def __init__(self, server: str, token: str | None, cacert: str | None) -> None:
        url = urllib.parse.urlsplit(server)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"server {server!r}: expected http://HOST:PORT or https://HOST:PORT")
        self.server = server.rstrip("/")
        self._https = url.scheme == "https"
        self._host = url.hostname
        self._port = url.port or (443 if self._https else 80)
        self._prefix = url.path.rstrip("/")
        self._cacert = cacert
        self._headers = {"Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._tls: ssl.SSLContext | None = None
        if self._https:
            try:
                self._tls = ssl.create_default_context(cafile=cacert)
            except (OSError, ssl.SSLError) as e:
                raise ConnectionFailed(f"cacert {cacert}: cannot be read as PEM certificates ({e})") from e
        self._local = threading.local()

    def call(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None,
             wait_s: float = 0) -> Any:
        """The reply's JSON; ApiError for the API's error, ConnectionFailed
        for no reply or one that is not the API's."""
        target = self._prefix + path
        if query:
            target += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None
        headers = dict(self._headers)
        if body is not None:
            data = json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
            headers["Content-Type"] = "application/json"
        timeout = REPLY_S + wait_s
        for fresh in (False, True):
            conn, reused = self._connection(timeout, fresh)
            try:
                conn.request(method, target, body=data, headers=headers)
                reply = conn.getresponse()
                status, text = reply.status, reply.read()
            except ssl.SSLCertVerificationError as e:
                self._drop()
                raise ConnectionFailed(self._untrusted(e)) from e
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                self._drop()
                if reused and method in _SAFE:
                    continue
                raise ConnectionFailed(f"{self.server}: the connection was closed with no reply ({e})") from e
            except TimeoutError as e:
                self._drop()
                raise ConnectionFailed(f"{self.server}: no reply within {timeout:g} s") from e
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                raise ConnectionFailed(f"{self.server}: {e}") from e
            if reply.will_close:
                self._drop()
            return self._decode(method, path, status, text)
        raise AssertionError("unreachable: the second try is on a fresh connection")

    def _connection(self, timeout: float, fresh: bool) -> tuple[http.client.HTTPConnection, bool]:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None and (fresh or _closed(conn)):
            self._drop()
            conn = None
        reused = conn is not None
        if conn is None:
            if self._tls is not None:
                conn = http.client.HTTPSConnection(self._host, self._port, timeout=timeout, context=self._tls)
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
            self._local.conn = conn
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn, reused

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _untrusted(self, e: ssl.SSLCertVerificationError) -> str:
        why = e.verify_message or str(e)
        if self._cacert:
            return (f"{self.server}: the server's certificate is not trusted ({why}); it must be signed by "
                    f"a CA in {self._cacert} and name the server's host")
        return f"{self.server}: the server's certificate is not trusted ({why}); pass cacert= or set EBB_CACERT"

    def _decode(self, method: str, path: str, status: int, text: bytes) -> Any:
        try:
            value = json.loads(text) if text else None
        except ValueError:
            value = None
        if status >= 400:
            err = value.get("error") if isinstance(value, dict) else None
            if isinstance(err, dict) and isinstance(err.get("code"), str):
                raise ApiError(err["code"], str(err.get("message", "")), err.get("field"), status)
        if value is None or status >= 400:
            raise ConnectionFailed(f"{self.server}: {method} {path}: HTTP {status} with a reply that is not "
                                   f"ebb's JSON: {text[:200]!r}")
        return value


def _closed(conn: http.client.HTTPConnection) -> bool:
    """Did serve close this idle connection (readable: its end of file)?"""
    sock = conn.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)

