"""The expiry merge is claimed before Claude is asked (issue 19): two replicas sweeping one store while
the first one's summary request is in flight ask for one summary per idle fork, merged or drafted."""
import pytest

from bot.domain.model import ForkStatus
from bot.eval.recording import RecordingChat
from bot.app import wire_services
from bot.services.policy import Policy
from bot.services.ports import Chat

from ..fakes.ports import ScriptedModel
from .conftest import BOT, UseCases


class SweepsWhileAsked(ScriptedModel):
    """A model that, while the first summary request is in flight, lets the other replica sweep."""

    def __init__(self):
        super().__init__()
        self.meanwhile = None

    def complete(self, model_input, events=None):
        if self.meanwhile and "[Merge request]" in model_input.blocks[-1].text:
            other, self.meanwhile = self.meanwhile, None
            other()
        return super().complete(model_input, events)


def summary_requests(model) -> int:
    return sum(1 for i in model.inputs if "[Merge request]" in i.blocks[-1].text)


@pytest.mark.parametrize("review", [False, True])
def test_two_replicas_sweeping_during_an_expiry_summary_request_ask_for_it_once(review):
    cases = UseCases(merge_review=review)
    model = SweepsWhileAsked()
    cases.model = model
    first = cases.services = wire_services(cases.store, Chat.all_in(cases.chat), model, BOT,
                                      Policy.knobs(merge_review=review))
    elsewhere = RecordingChat(cases.new_ts)
    second = wire_services(cases.store, Chat.all_in(elsewhere), model, BOT, Policy.knobs(merge_review=review))
    fork = cases.open_fork("idle topic")
    cases.clock.advance(days=8)
    model.meanwhile = second.sweep
    first.sweep()
    second.sweep()
    cases.clock.advance(minutes=5)  # well past any claim of the first replica
    first.sweep(), second.sweep()
    assert summary_requests(model) == 1
    after = cases.store.sessions.fork(fork.id)
    posted = [said for chat in (cases.chat, elsewhere) for said in chat.of("post_draft" if review else "post_merge")]
    assert after.status is (ForkStatus.OPEN if review else ForkStatus.MERGED) and len(posted) == 1


def test_an_expiry_draft_a_person_cancelled_is_not_drafted_again_until_the_fork_goes_idle_again():
    cases = UseCases(merge_review=True)
    fork = cases.open_fork("idle topic")
    cases.clock.advance(days=8)
    cases.services.sweep()
    [drafted] = cases.chat.of("post_draft")
    cases.services.reviews.cancel(fork.id, cases.fork().draft.number, "UALICE01", fork.channel)
    for _ in range(3):
        cases.clock.advance(minutes=1)
        cases.services.sweep()
    assert summary_requests(cases.model) == 1 and len(cases.chat.of("post_draft")) == 1
    cases.say("UBOB0001", "one more thought", thread_ts=fork.root_ts)
    cases.clock.advance(days=8)
    cases.services.sweep()
    assert summary_requests(cases.model) == 2 and len(cases.chat.of("post_draft")) == 2  # a new idle period
