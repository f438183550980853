"""One small exception tree. Every error carries a message fit to show the person who caused it."""


class ThreadforkError(Exception):
    """Base: `str(error)` is the user-facing explanation."""


class UsageError(ThreadforkError):
    """A command was malformed (unknown flag, conflicting flags)."""


class ForkNotFound(ThreadforkError):
    """The named fork does not exist in this channel, or the caller has none."""


class ForkClosed(ThreadforkError):
    """The fork is already merged, being merged, or abandoned."""


class NothingToMerge(ThreadforkError):
    """The fork has no turns yet."""


class ChildrenOpen(ForkClosed):
    """The fork has forks of its own still open: they must be merged or abandoned first."""

    def __init__(self, message: str, children: list):
        super().__init__(message)
        self.children = children  # the open child forks, to offer their Merge/Abandon buttons


class TooDeep(ThreadforkError):
    """A fork of a fork beyond THREADFORK_MAX_FORK_DEPTH."""


class NotAllowed(ThreadforkError):
    """The caller may not do this under the configured policy."""


class ModelUnavailable(ThreadforkError):
    """Claude could not answer (overload, rate limit, timeout, server error)."""


class ChatUnavailable(ThreadforkError):
    """Slack refused a call that a person is waiting on (not in channel, rate limited…)."""


class ReviewMoved(ThreadforkError):
    """A summary draft is already waiting, being written, replaced, or no longer live."""


class CapReached(ThreadforkError):
    """The channel's estimated spend this month reached its cap: no new turns or forks until it is raised."""


class NoSecretKey(ThreadforkError):
    """A connector's token can't be kept: THREADFORK_SECRET_KEY is not set."""
