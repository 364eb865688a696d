"""What the client raises: an error of the API as it answered it, a
server out of reach, a job that failed, a wait that ran out."""

from __future__ import annotations

from typing import Any


class Error(Exception):
    """Every error the client raises is one of these."""


class ApiError(Error):
    """The API's JSON error ({"error": {"code", "message", "field"}},
    docs/API.md "Errors") and the HTTP status it came with."""

    def __init__(self, code: str, message: str, field: str | None, status: int) -> None:
        super().__init__(f"{code}: {message}" + (f" (field {field})" if field else "") + f" [HTTP {status}]")
        self.code = code
        self.message = message
        self.field = field
        self.status = status


class ConnectionFailed(Error):
    """No reply from the server: refused, reset, a certificate not
    trusted, a reply that is not the API's JSON."""


class JobFailed(Error):
    """A job ended failed, dead or cancelled where its result was wanted
    (Client.map); the job as GET /v1/jobs/ID gives it."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.id: int = job["id"]
        self.state: str = job["state"]
        self.error: str | None = job.get("error")
        super().__init__(f"job {self.id} is {self.state}" + (f": {self.error}" if self.error else ""))


class WaitTimeout(Error, TimeoutError):
    """Client.wait's timeout passed before the jobs finished; pending
    holds the ids of those that had not."""

    def __init__(self, pending: list[int], timeout: float) -> None:
        self.pending = pending
        super().__init__(f"{len(pending)} job(s) not finished after {timeout:g} s: " +
                         ", ".join(str(i) for i in pending[:10]) + (", ..." if len(pending) > 10 else ""))


class SubmitError(Error):
    """Client.submit_many: some jobs were refused. The others are queued:
    ids holds each job's id in the order given (None for one refused),
    errors each refused job's ApiError by its index."""

    def __init__(self, ids: list[int | None], errors: dict[int, ApiError]) -> None:
        self.ids = ids
        self.errors = errors
        first = min(errors)
        super().__init__(f"{len(errors)} of {len(ids)} job(s) refused; job {first}: {errors[first]}")
