"""users.info at most once per person per hour per process (issue 32): a person's name beside their words
and their admin role (App Home's spend, /threadfork) come from one answer, however many times they speak,
fork, merge, open App Home or the settings within the hour."""
from ..harness import CHANNEL, wait_until
from .test_merge import open_fork_with_talk, summaries


def test_one_person_speaking_forking_merging_and_opening_home_and_settings_is_looked_up_once(bot, slack, claude):
    slack.person("UADMIN01", is_admin=True)
    bot.say("UADMIN01", "hello", mention=True)
    wait_until(lambda: slack.posts(CHANNEL, top_level=True), message="the answer")
    root = open_fork_with_talk(bot, slack, user="UADMIN01")
    bot.say("UADMIN01", "one more thought", thread_ts=root)
    bot.settled()
    bot.react("UADMIN01", root)
    wait_until(lambda: summaries(slack), message="the summary")
    for _ in range(2):
        bot.open_dm("UADMIN01", dm="D0ADMIN001", tab="home")
    bot.slash("/threadfork", "", user="UADMIN01")
    wait_until(lambda: slack.opened_views("threadfork_settings"), message="the settings modal")
    wait_until(lambda: len(slack.calls_to("views.publish")) == 2, message="App Home shown twice")
    bot.settled()
    assert [c["user"] for c in slack.calls_to("users.info")].count("UADMIN01") == 1
