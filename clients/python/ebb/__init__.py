"""The Python client of ebb (docs/PYTHON.md): ebb.Client submits jobs and
waits for their results; ebb.job and ebb.handler are the side of the
jobs themselves."""

from . import job
from .client import FINAL, Client, Job, LogLine
from .errors import ApiError, ConnectionFailed, Error, JobFailed, SubmitError, WaitTimeout
from .handler import Context, Handler, handler

__all__ = ["ApiError", "Client", "ConnectionFailed", "Context", "Error", "FINAL", "Handler", "Job", "JobFailed",
           "LogLine", "SubmitError", "WaitTimeout", "handler", "job"]
