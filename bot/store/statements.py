"""The statements on every turn's path, built once.

Building a Core statement and its cache key costs about twice what SQLite takes to run it; these
are built at import with bind parameters, and only their values change per call. The writes among them
are run with the transaction's `execute`, on SQLite and PostgreSQL alike.
"""
from __future__ import annotations

from sqlalchemy import Boolean, bindparam, case, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ..domain.model import TurnStatus
from ..domain.queue import held_by, lease_takeable
from .moves import clause
from .tables import attachments, files, messages, sessions, turns

_session = sessions.c.id == bindparam("session_id")

NEXT_SEQ = (update(sessions).where(_session)
            .values(next_seq=sessions.c.next_seq + 1, last_activity_at=bindparam("now"))
            .returning(sessions.c.next_seq))

INSERT_TURN = insert(turns).returning(turns.c.id)

# the lease rules are the domain's (bot/domain/queue.py), spelled here once with bind parameters
_takeable = clause(lease_takeable(bindparam("owner"), bindparam("now")))
TAKE_LEASE = (update(sessions).where(_session, _takeable)
              .values(lease_owner=bindparam("owner"), lease_until=bindparam("until")))

# a submitted turn's seq and the session's lease in one statement, the session as it then is returned: the
# lease went to `owner` if the row says so (taken only where it was takeable, kept as it was elsewhere), and
# then the seq after the turn's is reserved too, for the reply its batch will need (unused if none is)
SEQ_AND_LEASE = (update(sessions).where(_session)
                 .values(next_seq=sessions.c.next_seq + case((_takeable, 2), else_=1),
                         last_activity_at=bindparam("now"),
                         lease_owner=case((_takeable, bindparam("owner", type_=sessions.c.lease_owner.type)),
                                          else_=sessions.c.lease_owner),
                         lease_until=case((_takeable, bindparam("until", type_=sessions.c.lease_until.type)),
                                          else_=sessions.c.lease_until))
                 .returning(*sessions.c))

RENEW_LEASE = (update(sessions).where(_session, clause(held_by(bindparam("owner"))))
               .values(lease_until=bindparam("until"), last_activity_at=bindparam("now"))
               .returning(*sessions.c))

RELEASE_LEASE = (update(sessions).where(_session, clause(held_by(bindparam("owner"))))
                 .values(lease_owner=None, lease_until=None))

VERSION = select(sessions.c.version).where(_session)

PENDING = (select(turns).where(turns.c.session_id == bindparam("session_id"),
                               turns.c.status == TurnStatus.PENDING.value)
           .order_by(turns.c.seq))

TURNS_AFTER = (select(turns).where(turns.c.session_id == bindparam("session_id"), turns.c.deleted.is_(False),
                                   turns.c.seq > bindparam("after"))
               .order_by(turns.c.seq))

_ids = bindparam("ids", expanding=True)
SETTLE = (update(turns).where(turns.c.id.in_(_ids), turns.c.status == TurnStatus.PENDING.value)
          .values(status=bindparam("status")))

COUNT_ATTEMPT = update(turns).where(turns.c.id.in_(_ids)).values(attempts=turns.c.attempts + 1)

# a complete answer forgets a Stop that came too late; a stopped one keeps who stopped it
FINISH_REPLY = (update(turns).where(turns.c.id == bindparam("turn_id"))
                .values(text=bindparam("text"), status=bindparam("status"), slack_ts=bindparam("slack_ts"),
                        stopped_by=case((bindparam("stopped", type_=Boolean), turns.c.stopped_by), else_=None),
                        stop_reason=bindparam("stop_reason"),
                        input_tokens=bindparam("input_tokens"), output_tokens=bindparam("output_tokens"),
                        cache_read_tokens=bindparam("cache_read_tokens"),
                        cache_write_tokens=bindparam("cache_write_tokens"), searches=bindparam("searches"),
                        fetches=bindparam("fetches"), cache_write_1h_tokens=bindparam("cache_write_1h_tokens"),
                        cost_micros=bindparam("cost_micros"), uncached_micros=bindparam("uncached_micros"),
                        unpriced=bindparam("unpriced")))

ATTACHMENTS = (select(attachments.c.turn_id, attachments.c.name, attachments.c.slack_file_id,
                      attachments.c.deleted, files.c.sha256, files.c.kind, files.c.media_type, files.c.file_id,
                      files.c.text)
               .join(files, files.c.sha256 == attachments.c.sha256)
               .where(attachments.c.turn_id.in_(bindparam("turn_ids", expanding=True)))
               .order_by(attachments.c.turn_id, attachments.c.position))

INSERT_ATTACHMENT = insert(attachments)


def for_each_database(build) -> dict:
    """`build(dialect)` for SQLite and PostgreSQL, by the dialect's name (a connection finds its own by
    `conn.dialect.name`): an upsert is spelled with each dialect's own insert()."""
    return {dialect.dialect.name: build(dialect) for dialect in (sqlite, postgresql)}


INDEX = insert(messages)
# a message's index entry unless it has one: one statement where a SELECT then an INSERT were two
INDEX_ONCE = for_each_database(lambda dialect: dialect.insert(messages).on_conflict_do_nothing())
