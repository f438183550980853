"""Pure rendering of the `/forks` listing and the App Home tab."""
from __future__ import annotations

from datetime import datetime, timezone

from ..domain.model import ChannelEconomy, ContextReport, Fork, ForkListing, ForkStatus
from .render import permalink, quoted_topic


def slack_date(moment: datetime | None) -> str:
    """Slack's date formatting, shown in each reader's own time zone."""
    if moment is None:
        return "never"
    epoch = int(moment.replace(tzinfo=timezone.utc).timestamp())
    fallback = moment.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{epoch}^{{date_short_pretty}} at {{time}}|{fallback}>"


def fork_line(listing: ForkListing, with_channel: bool = False) -> str:
    fork, stats = listing.fork, listing.stats
    link = f"<{permalink(fork.channel_id, fork.root_ts)}|open thread>" if fork.root_ts else "no thread"
    where = f" in <#{fork.channel_id}>" if with_channel else ""
    topic = quoted_topic(fork, missing=" _(no topic)_")
    return (f"• *#{fork.number}*{topic}{where} — by <@{fork.owner_id}>, {fork.mode}, {stats.turns} turns, "
            f"{stats.burned.total:,} tokens burned, last active {slack_date(fork.last_activity_at)} — {link}")


def forks_text(listings: list[ForkListing], counts: dict[ForkStatus, int]) -> str:
    head = "*Open forks in this channel*" if listings else "There are no open forks in this channel."
    lines = [head] + [fork_line(item) for item in listings]
    lines.append(f"Merged: {counts.get(ForkStatus.MERGED, 0)} · Abandoned: {counts.get(ForkStatus.ABANDONED, 0)}")
    return "\n".join(lines)


def open_forks_text(forks: list[Fork]) -> str:
    """The short list shown beside a refused `/merge`, to say which forks could be merged."""
    if not forks:
        return "There are no open forks in this channel."
    return "Open forks here:\n" + "\n".join(f"• {f.label} — opened by <@{f.owner_id}>, {f.mode}" for f in forks)


def home_view(listings: list[ForkListing], economy: list[ChannelEconomy]) -> dict:
    blocks: list[dict] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Threadfork"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": "*Your open forks*"}},
    ]
    if listings:
        blocks += [{"type": "section", "text": {"type": "mrkdwn", "text": fork_line(i, with_channel=True)}}
                   for i in listings[:40]]
    else:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text":
                       "None — open one with `/fork [topic]` in a channel."}]})
    burned = sum(e.burned for e in economy)
    returned = sum(e.returned for e in economy)
    kept = f"{(1 - returned / burned):.0%} kept out of the parents" if burned else "nothing burned yet"
    blocks += [
        {"type": "divider"},
        {"type": "section", "text": {"type": "mrkdwn", "text": (
            f"*Token economy* — forks burned *{burned:,}* tokens; their summaries returned *{returned:,}* "
            f"to the channels' conversations ({kept}).")}},
    ]
    for entry in economy[:40]:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text":
                       f"<#{entry.channel_id}>: {entry.burned:,} burned in forks → {entry.returned:,} returned"}]})
    return {"type": "home", "blocks": blocks}


def context_text(report: ContextReport) -> str:
    size, budget = report.size, report.budget
    share = f"{size.tokens / budget:.0%}" if budget else "?"
    lines = [f"*This channel's conversation*: ~{size.tokens:,} tokens of its {budget:,}-token budget ({share}) "
             f"in {size.turns} turns" + (f", compacted {report.compactions}×" if report.compactions else "") + "."]
    if report.merged:
        lines.append("*Merged forks*:")
        lines += [f"• #{m.fork.number}" + quoted_topic(m.fork)
                  + f" — {m.stats.burned.total:,} tokens burned → {m.stats.summary_tokens:,}-token summary"
                  for m in report.merged]
    else:
        lines.append("No forks merged yet.")
    if report.open:
        lines.append("*Open forks*: " + ", ".join(f.label for f in report.open))
    lines.append(f"Forks kept *{report.kept_out:,} tokens* out of this conversation.")
    return "\n".join(lines)
