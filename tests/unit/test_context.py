"""Context assembly (invariants 1–4 and 6), on the pure domain."""
from bot.domain.context import SYSTEM_PROMPT, fork_input, parent_input, with_request
from bot.domain.model import Fork, ForkStatus, Mode, Role, Turn, TurnStatus


def turn(seq, role, text, author="UALICE01", name="alice", session=1):
    return Turn(session, seq, role, text, author if role is Role.USER else None,
                name if role is Role.USER else None)


def fork(mode=Mode.INHERIT, point=2, topic="pricing"):
    return Fork(id=9, channel_id="C1", team_id="T1", number=3, parent_id=1, mode=mode, topic=topic,
                owner_id="UALICE01", fork_point_seq=point, status=ForkStatus.OPEN)


PARENT = [turn(1, Role.USER, "plan the launch"), turn(2, Role.ASSISTANT, "here is a plan")]
OWN = [turn(1, Role.USER, "what about tiers?", "UBOB0001", "bob", session=9)]


def texts(model_input):
    return [b.text for b in model_input.blocks]


def test_parent_input_is_the_system_prompt_and_parent_turns_in_order():
    model_input = parent_input(PARENT)
    assert model_input.system == SYSTEM_PROMPT
    assert texts(model_input) == ["[alice <@UALICE01>]\nplan the launch", "here is a plan"]


def test_each_user_turn_names_its_speaker():
    lines = texts(parent_input([turn(1, Role.USER, "a"), turn(2, Role.USER, "b", "UBOB0001", "bob")]))
    assert lines == ["[alice <@UALICE01>]\na", "[bob <@UBOB0001>]\nb"]


def test_inherited_fork_reads_parent_up_to_the_fork_point_then_a_boundary_then_its_own_turns():
    lines = texts(fork_input(fork(), PARENT, OWN))
    assert lines[:2] == texts(parent_input(PARENT))
    assert "background from the channel" in lines[2] and "pricing" in lines[2]
    assert lines[3] == "[bob <@UBOB0001>]\nwhat about tiers?"


def test_fresh_fork_sees_only_its_own_turns():
    model_input = fork_input(fork(Mode.FRESH, point=None), PARENT, OWN)
    assert texts(model_input) == ["[bob <@UBOB0001>]\nwhat about tiers?"]


def test_inherited_prefix_ends_with_a_cache_breakpoint_and_the_last_block_has_one():
    blocks = fork_input(fork(), PARENT, OWN).blocks
    assert [b.breakpoint for b in blocks] == [False, True, False, True]


def test_consecutive_blocks_of_one_role_share_a_message():
    messages = fork_input(fork(), PARENT, OWN).messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert len(messages[2]["content"]) == 2


def test_messages_built_before_are_reused_and_never_changed_by_a_longer_input():
    from dataclasses import replace
    from bot.domain.context import Block
    first = parent_input(PARENT)  # a user's message, then the assistant's
    shown = first.messages()
    before = [dict(m, content=list(m["content"])) for m in shown]  # as sent, copied deeply enough to compare
    longer = replace(first, blocks=(*first.blocks, Block("assistant", "more of it"), Block("user", "and then?")))
    extended = longer.messages()
    assert extended[0] is shown[0]  # reused, not built again
    assert [c["text"] for c in extended[1]["content"]] == ["here is a plan", "more of it"]  # joined the last one…
    assert first.messages() == before and shown == before  # …which the shorter input still sends as it was
    merged: list = []  # built from scratch: one block a message, then consecutive roles joined
    for block in longer.blocks:
        if merged and merged[-1]["role"] == block.role:
            merged[-1]["content"].append(block.content())
        else:
            merged.append({"role": block.role, "content": [block.content()]})
    assert extended == merged


def test_rendering_is_byte_stable():
    assert fork_input(fork(), PARENT, OWN).messages() == fork_input(fork(), PARENT, OWN).messages()
    assert parent_input(PARENT).messages()[0] == fork_input(fork(), PARENT, OWN).messages()[0]


def test_a_request_after_the_history_moves_the_final_breakpoint_to_itself():
    model_input = with_request(parent_input(PARENT), "[Merge request] summarise")
    assert [b.breakpoint for b in model_input.blocks] == [False, False, True]
    assert model_input.blocks[-1].text == "[Merge request] summarise"


def test_an_interrupted_reply_is_marked_as_incomplete():
    broken = Turn(1, 2, Role.ASSISTANT, "half an ans", status=TurnStatus.INTERRUPTED)
    assert "interrupted" in texts(parent_input([PARENT[0], broken]))[1]


def test_a_changed_turn_renders_its_new_text_though_the_same_turn_is_rendered_once():
    from dataclasses import replace

    from bot.domain.context import render_turn

    turn = Turn(1, 1, Role.USER, "before", "U1", "Ann", TurnStatus.ANSWERED, id=7)
    assert render_turn(turn) is render_turn(turn)
    edited = replace(turn, text="after")  # the store reads a changed turn into a new object
    assert [b.text for b in render_turn(edited)] == ["[Ann <@U1>]\nafter"]
    assert parent_input([edited]).blocks[0].text == "[Ann <@U1>]\nafter"


def child(parent: Fork, mode=Mode.INHERIT, point=2, number=7, depth=2):
    return Fork(id=20 + number, channel_id="C1", team_id="T1", number=number, parent_id=parent.id, mode=mode,
                topic="tiers", owner_id="UBOB0001", fork_point_seq=point, status=ForkStatus.OPEN, depth=depth,
                parent_number=parent.number)


def test_a_fork_of_a_fork_starts_from_its_parent_forks_input_byte_for_byte():
    top = fork()
    top_turns = OWN + [turn(2, Role.ASSISTANT, "three tiers", session=9)]
    top_request = with_request(fork_input(top, PARENT, top_turns), "next question")
    kid = child(top)
    own = [turn(1, Role.USER, "price the middle tier", session=27)]
    request = fork_input(kid, PARENT, own, ancestors=[(top, top_turns)])
    prefix = [b.content() | {"cache_control": None} for b in top_request.blocks[:-1]]
    assert [b.content() | {"cache_control": None} for b in request.blocks[:len(prefix)]] == prefix
    note = request.blocks[len(prefix)].text
    assert "background from fork #3" in note and "fork #7" in note and "tiers" in note
    assert texts(request)[-1] == "[alice <@UALICE01>]\nprice the middle tier"
    grandchild = child(kid, number=9, depth=3, point=1)
    deeper = fork_input(grandchild, PARENT, [turn(1, Role.USER, "and the top tier?", session=29)],
                        ancestors=[(top, top_turns), (kid, own)])
    assert [b.text for b in deeper.blocks[:len(request.blocks)]] == texts(request)
    assert deeper.breakpoints <= 4  # the earliest markers make way for the deepest levels


def test_a_fresh_fork_in_the_chain_cuts_everything_above_it():
    top = fork()
    kid = child(top, mode=Mode.FRESH, point=None)
    grandchild = child(kid, number=9, depth=3, point=1)
    kid_turns = [turn(1, Role.USER, "clean slate", session=27)]
    request = fork_input(grandchild, PARENT, [turn(1, Role.USER, "go on", session=29)],
                         ancestors=[(top, OWN), (kid, kid_turns)])
    assert texts(request)[0] == "[alice <@UALICE01>]\nclean slate"
    assert "background from fork #7" in texts(request)[1]
