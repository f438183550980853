"""Pure rendering of the `/forks` listing, `/context` and the App Home tab.

A private fork (the agent pane) is only ever listed to its owner: marked 🔒, named as the private fork of
its channel, linked to its thread in their DM with the bot.

Each stays within what Slack accepts however many forks there are and however long their topics:
an answer's text holds at most LIST_BUDGET characters (topics are shown whole while the list fits,
then shortened, then the list ends with how many more there are), and the Home tab at most
HOME_FORKS forks and HOME_CHANNELS channels (Slack allows 100 blocks in a view), each topic shortened
to fit its section.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from ..domain.agent import is_dm
from ..domain.model import ChannelEconomy, ContextReport, Fork, ForkListing, ForkStatus
from ..domain.spend import ESTIMATED, Spent, cap_micros, dollars
from ..domain.settings import shown
from ..domain.tree import as_tree
from .render import permalink, quoted_topic, section

LIST_BUDGET = 12_000  # characters of a private answer's list (Slack takes 40,000; people read less)
SHORT_TOPIC = 200  # characters of a topic when the whole topics would not fit
HOME_FORKS = 40
HOME_CHANNELS = 40


def slack_date(moment: datetime | None) -> str:
    """Slack's date formatting, shown in each reader's own time zone."""
    if moment is None:
        return "never"
    epoch = int(moment.replace(tzinfo=timezone.utc).timestamp())
    fallback = moment.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{epoch}^{{date_short_pretty}} at {{time}}|{fallback}>"


def fork_line(listing: ForkListing, with_channel: bool = False, topic_limit: int | None = None,
              level: int = 0) -> str:
    """One fork; a fork of a fork under its parent, indented one step per level."""
    fork, stats = listing.fork, listing.stats
    link = f"<{permalink(fork.channel_id, fork.root_ts)}|open thread>" if fork.root_ts else "no thread"
    where = f" in <#{fork.channel_id}>" if with_channel and not fork.private else ""
    topic = quoted_topic(fork, missing=" _(no topic)_", limit=topic_limit)
    bullet = "• " if level == 0 else "\u2003" * level + "↳ "
    origin = f" (from #{fork.parent_number})" if fork.nested and level == 0 else ""
    if fork.private:
        origin = f" 🔒 your private fork of <#{fork.private_of}>"
    review = f" · 📝 draft {fork.draft.number} waiting for review" if fork.draft is not None else ""
    return (f"{bullet}*#{fork.number}*{origin}{topic}{where}{review} — by <@{fork.owner_id}>, {fork.mode}, "
            f"{stats.turns} turns, "
            f"{stats.burned.total:,} tokens burned{connector_calls(stats.connector_calls)}, "
            f"last active {slack_date(fork.last_activity_at)} — {link}")


def fitted(items: list, line: Callable[[object, int | None], str], what: str, budget: int = LIST_BUDGET) -> list[str]:
    """One line per item, topics whole if all fit in `budget` characters, else shortened; if even
    then they do not fit, the first that do and a last line saying how many more there are."""
    for limit in (None, SHORT_TOPIC):
        lines = [line(item, limit) for item in items]
        if sum(len(text) + 1 for text in lines) <= budget:
            return lines
    kept, size = [], 0
    for text in lines:
        if size + len(text) + 1 > budget - 100:  # room for the last line
            break
        kept.append(text)
        size += len(text) + 1
    return kept + [f"…and {len(lines) - len(kept)} more {what}."]


def forks_text(listings: list[ForkListing], counts: dict[ForkStatus, int]) -> str:
    head = "*Open forks in this channel*" if listings else "There are no open forks in this channel."
    lines = [head] + fitted(as_tree(listings, lambda item: item.fork),
                            lambda item, limit: fork_line(item[0], topic_limit=limit, level=item[1]), "open forks")
    lines.append(f"Merged: {counts.get(ForkStatus.MERGED, 0)} · Abandoned: {counts.get(ForkStatus.ABANDONED, 0)}")
    return "\n".join(lines)


def open_forks_text(forks: list[Fork]) -> str:
    """The short list shown beside a refused `/merge`, to say which forks could be merged."""
    if not forks:
        return "There are no open forks in this channel."
    lines = fitted(forks, lambda f, _: f"• {f.label} — opened by <@{f.owner_id}>, {f.mode}", "open forks")
    return "Open forks here:\n" + "\n".join(lines)


def home_view(listings: list[ForkListing], economy: list[ChannelEconomy], spend: dict[str, Spent] | None = None,
              memory: dict[str, int] | None = None) -> dict:
    """`spend`: each channel's month, shown to the workspace's admins only; `memory`: each channel's memory size
    in tokens (the workspace's under "")."""
    blocks: list[dict] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Threadfork"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": "*Your open forks*"}},
    ]
    if listings:
        shown = as_tree(listings[:HOME_FORKS], lambda item: item.fork)
        blocks += [section(fork_line(i, with_channel=True, topic_limit=SHORT_TOPIC, level=level))
                   for i, level in shown]
        blocks += _more(len(listings) - HOME_FORKS, "open forks")
    else:
        blocks.append(_context("None — open one with `/fork [topic]` in a channel."))
    burned = sum(e.burned for e in economy)
    returned = sum(e.returned for e in economy)
    kept = f"{(1 - returned / burned):.0%} kept out of the parents" if burned else "nothing burned yet"
    blocks += [
        {"type": "divider"},
        section(f"*Token economy* — forks burned *{burned:,}* tokens; their summaries returned *{returned:,}* "
                 f"to the channels' conversations ({kept})."),
    ]
    blocks += [_context(f"<#{entry.channel_id}>: {entry.burned:,} burned in forks → {entry.returned:,} returned"
                        f" · {research(entry)} · {feedback(entry)}")
               for entry in economy[:HOME_CHANNELS]]
    blocks += _more(len(economy) - HOME_CHANNELS, "channels")
    if memory:
        blocks += [{"type": "divider"}, section(memory_text(memory))]
    if spend:
        blocks += [{"type": "divider"}, section(spend_text(spend))]
    return {"type": "home", "blocks": blocks}


def memory_text(memory: dict[str, int]) -> str:
    """Each channel's memory size, the largest first (a DM's is its person's own: never shown here)."""
    lines = [("the workspace" if channel == "" else f"<#{channel}>") + f": ~{tokens:,} tokens"
             for channel, tokens in sorted(memory.items(), key=lambda item: (-item[1], item[0]))
             if not is_dm(channel)]
    return "*Memory*, carried by every request of each channel:\n" + "\n".join(
        fitted(lines, lambda line, _: line, "channels", budget=2_600))


def spend_text(spend: dict[str, Spent]) -> str:
    """Each channel's month, the costliest first, within one section's 3,000 characters. Direct messages are
    one line, everyone's together: a person's DM (and the private forks in it) is nobody else's to see."""
    head = f"*Spend this month, by channel* ({ESTIMATED}; you see this as a workspace admin)"
    channels = {c: month for c, month in spend.items() if not is_dm(c)}
    dms = [month for c, month in spend.items() if is_dm(c)]
    lines = [f"<#{channel}>: {amount(month)} — forks {part(month, month.fork_micros)}, caching "
             f"{_saved(month)}" + (f", n/a for {month.unpriced} calls" if month.unpriced else "")
             for channel, month in sorted(channels.items(), key=lambda item: (-item[1].cost_micros, item[0]))]
    kept = fitted(lines, lambda line, _: line, "channels", budget=2_600)
    if dms:
        everyone = sum(dms, Spent())
        kept.append(f"Direct messages with Threadfork (everyone's, together): {amount(everyone)}")
    return "\n".join([head, *kept])



def _context(text: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _more(count: int, what: str) -> list[dict]:
    return [_context(f"…and {count:,} more {what}.")] if count > 0 else []


def context_text(report: ContextReport) -> str:
    size, budget = report.size, report.budget
    share = f"{size.tokens / budget:.0%}" if budget else "?"
    lines = [f"*This channel's conversation*: ~{size.tokens:,} tokens of its {budget:,}-token budget ({share}) "
             f"in {size.turns} turns" + (f", compacted {report.compactions}×" if report.compactions else "") + "."]
    if report.merged:
        lines.append("*Merged forks*:")
        lines += fitted(report.merged, lambda m, limit: f"• #{m.fork.number}" + quoted_topic(m.fork, limit=limit)
                        + f" — {m.stats.burned.total:,} tokens burned → {m.stats.summary_tokens:,}-token summary",
                        "merged forks")
    else:
        lines.append("No forks merged yet.")
    if report.open:
        lines.append("*Open forks*: " + ", ".join(fitted(report.open, lambda f, _: f.label, "open forks")))
    lines.append(f"Forks kept *{report.kept_out:,} tokens* out of this conversation.")
    if report.economy is not None:
        lines.append(f"Research: {research(report.economy)}. Feedback: {feedback(report.economy)}.")
    if report.spend is not None:
        lines.append(spend_line(report))
    if report.effort is not None:
        lines.append(f"*Effort*: {shown('effort', report.effort)} — lower effort thinks less: sooner, cheaper answers "
                     "(thinking is billed as output).")
    if report.memory is not None:
        lines.append(memory_line(*report.memory))
    if report.stop_reasons:
        lines.append(stop_reasons_line(report.stop_reasons))
    if report.connector_calls:
        lines.append("Connector calls: " + "; ".join(
            f"{'this conversation' if number == 0 else f'#{number}'}: "
            + ", ".join(f"{name} {count}" for name, count in calls.items())
            for number, calls in report.connector_calls.items()) + ".")
    return "\n".join(lines)


def memory_line(entries: int, tokens: int, budget: int) -> str:
    """`/context`'s memory: what every request of the channel carries, against its budget."""
    if not entries:
        return "*Memory*: nothing remembered yet — `@Threadfork remember <text>` adds an entry."
    of = f" of its {budget:,}-token budget" if budget else ""
    return (f"*Memory*: ~{tokens:,} tokens{of} in {entries} entr{'y' if entries == 1 else 'ies'}, carried by every "
            "request here — `/threadfork memory` to edit.")


STOP_REASON_WORDS = {"end_turn": "ended", "max_tokens": "cut at the length limit", "refusal": "declined",
                     "model_context_window_exceeded": "cut by a full context window", "pause_turn": "paused"}


def stop_reasons_line(reasons: dict[str, int]) -> str:
    """`*Answers*: 12 ended · 1 declined · 2 cut at the length limit`."""
    return "*Answers*: " + " · ".join(f"{count} {STOP_REASON_WORDS.get(reason, reason)}"
                                      for reason, count in sorted(reasons.items(), key=lambda r: -r[1])) + "."


def spend_line(report: ContextReport) -> str:
    """`*Spend* (estimated …): today $0.42 · December 2026 $3.10, of which forks $1.20; caching saved $2.05`,
    the cap in force, and the answers no price applies to."""
    spend = report.spend
    month = spend.month
    line = (f"*Spend* ({ESTIMATED}): today {amount(spend.today)} · {spend.month_name} {amount(month)}, "
            f"of which forks {part(month, month.fork_micros)}; caching {_saved(month)} this month")
    cap = cap_micros(report.cap_usd)
    if cap:
        line += f". Monthly cap {dollars(cap)} ({month.cost_micros / cap:.0%} used)"
    if month.unpriced:
        line += (f". n/a for {month.unpriced} call{'s' if month.unpriced > 1 else ''} by a model missing from the "
                 "price table")
    return line + "."


def amount(spent: Spent) -> str:
    """A period's cost: n/a when nothing in it could be priced."""
    return part(spent, spent.cost_micros)


def part(spent: Spent, micros: int) -> str:
    """A part of a period's cost (its forks', what caching saved): n/a, as the whole, when nothing in the
    period could be priced — never $0.00 for calls no price applies to."""
    return "n/a" if spent.unpriced and not spent.cost_micros else dollars(micros)


def _saved(spent: Spent) -> str:
    micros = spent.saved_micros
    if micros >= 0:
        return f"saved {part(spent, micros)}"
    return f"cost {part(spent, -micros)} more than it saved"


def connector_calls(calls: tuple[tuple[str, int], ...]) -> str:
    """`, connector calls: tracker 3, wiki 1` after a fork's figures (nothing without calls)."""
    return (", connector calls: " + ", ".join(f"{name} {count}" for name, count in calls)) if calls else ""


def research(economy: ChannelEconomy) -> str:
    return f"{economy.searches} searches · {economy.fetches} fetches"


def feedback(economy: ChannelEconomy) -> str:
    return f"👍 {economy.good} · 👎 {economy.bad}"
