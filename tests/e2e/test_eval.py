"""`python -m bot.eval` as a real process against the fake Messages API (thinking, as the default model does):
the three arms' plumbing end to end (which requests Claude receives, in which order, with which context), the
JSON result, the printout that says an offline accuracy means nothing, and the refusals that spend nothing."""
import json
import subprocess
import sys

from bot.config import Settings
from bot.eval.scenario import load

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from ..harness import API_KEY
from ..processes import clean_env

SCENARIO = load("launch-planning")
DONT_KNOW = "I don't know: nothing here records that."
# the default model's prices per million tokens (bot/domain/spend.py): input, output, cache read and writes
PRICE_IN, PRICE_OUT, PRICE_READ, PRICE_WRITE, PRICE_WRITE_1H = 2.00, 10.00, 0.10, 2.50, 4.00


def run_eval(tmp_path, env, *args):
    return subprocess.run([sys.executable, "-m", "bot.eval", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


def answer(arm: str, question) -> str:
    """What the fake answers: right everywhere in `forks`, nowhere in `inline`, facts only in `none`."""
    right = arm == "forks" or (arm == "none" and question.kind == "fact")
    return question.reference if right else DONT_KNOW


def script(arm: str) -> list[str]:
    """The text of every answer the arm asks Claude for, in the order it asks."""
    texts = [f"Noted ({arm}, opening turn {i})." for i, _ in enumerate(SCENARIO.parent, 1)]
    for e, exploration in enumerate(SCENARIO.explorations, 1) if arm != "none" else ():
        texts += [f"EXPLORATION-ANSWER-{e}-{t}: a long analysis." for t, _ in enumerate(exploration.turns, 1)]
        if arm == "forks":
            texts.append(f"MERGED-SUMMARY-{e}: the decision and its constraints.")
    return texts + [answer(arm, q) for q in SCENARIO.questions]


def joined(request: dict) -> str:
    return "\n".join(request_texts(request))


def test_the_eval_plays_three_arms_through_threadfork_and_says_offline_accuracy_means_nothing(tmp_path, claude):
    arms = {arm: script(arm) for arm in ("forks", "inline", "none")}
    claude.script(*[Script(text=text) for texts in arms.values() for text in texts])

    done = run_eval(tmp_path, clean_env(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=claude.url),
                    "--out", "result.json")

    assert done.returncode == 0, done.stderr
    assert API_KEY not in done.stdout + done.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["offline"] is True and result["model"] == Settings.model_fields["threadfork_model"].default
    # the default model thinks on the fake as on the API: every answer began with a signed thinking block
    assert all(claude.answers[i][0]["type"] == "thinking" and claude.answers[i][0]["signature"]
               for i in range(len(claude.requests)))
    assert set(result["arms"]) == {"forks", "inline", "none"}
    facts = sum(q.kind == "fact" for q in SCENARIO.questions)
    questions = len(SCENARIO.questions)
    assert result["arms"]["forks"]["accuracy"] == 1.0
    assert result["arms"]["inline"]["accuracy"] == 0.0
    assert result["arms"]["none"]["accuracy"] == round(facts / questions, 4)
    assert result["arms"]["none"]["accuracy_by_kind"] == {"fact": 1.0, "outcome": 0.0}
    assert "accuracy means nothing" in done.stdout
    rows = {"forks": f"{questions}/{questions}", "inline": f"0/{questions}", "none": f"{facts}/{questions}"}
    for arm, row in rows.items():
        assert any(line.startswith(arm) and row in line for line in done.stdout.splitlines()), done.stdout

    # the requests, arm after arm, in the order each arm plays the scenario
    assert len(claude.requests) == sum(len(texts) for texts in arms.values())
    forks = claude.requests[:len(arms["forks"])]
    inline = claude.requests[len(arms["forks"]):len(arms["forks"]) + len(arms["inline"])]
    none = claude.requests[len(arms["forks"]) + len(arms["inline"]):]
    opening = [line.text for line in SCENARIO.parent]
    explored = [t.text for e in SCENARIO.explorations for t in e.turns]
    later_fork_turns = [t.text for e in SCENARIO.explorations for t in e.turns[1:]]

    # forks: each exploration's turns in a fork that inherited the opening turns, then one merge request
    merges = [r for r in forks if is_merge_request(r)]
    assert len(merges) == len(SCENARIO.explorations)
    for exploration, merge in zip(SCENARIO.explorations, merges):
        assert all(t.text in joined(merge) for t in exploration.turns)
    first_fork_request = forks[len(opening)]
    assert all(text in joined(first_fork_request) for text in opening)
    assert SCENARIO.explorations[0].turns[0].text in joined(first_fork_request)
    final = joined(forks[-1])
    assert all(f"MERGED-SUMMARY-{e}" in final for e in range(1, len(SCENARIO.explorations) + 1))
    assert "EXPLORATION-ANSWER" not in final
    assert not [text for text in later_fork_turns if text in final]
    assert all(text in final for text in opening)

    # inline: the exploration turns and answers are the parent's own; nothing is merged
    final = joined(inline[-1])
    assert not any(is_merge_request(r) for r in inline)
    assert all(text in final for text in explored + opening)
    assert final.count("EXPLORATION-ANSWER") == sum(len(e.turns) for e in SCENARIO.explorations)
    assert "MERGED-SUMMARY" not in final

    # none: the opening turns, then the questions
    final = joined(none[-1])
    assert all(text in final for text in opening)
    assert not [text for text in explored if text in final] and "EXPLORATION-ANSWER" not in final
    assert all(SCENARIO.asked(q) in final for q in SCENARIO.questions)

    # the final parent's input is what the API reported for the arm's last request; the cost is its usage priced
    first = 0
    for arm, requests in (("forks", forks), ("inline", inline), ("none", none)):
        entry = result["arms"][arm]
        reported = [claude.usages[i] for i in range(first, first + len(requests))]
        first += len(requests)
        last = reported[-1]
        assert entry["final_parent_input_tokens"] == (last["input_tokens"] + last["cache_read_input_tokens"]
                                                      + last["cache_creation_input_tokens"])
        total = {key: sum(u[key] for u in reported) for key in
                 ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")}
        hour = sum(u["cache_creation"]["ephemeral_1h_input_tokens"] for u in reported)
        assert entry["usage"] == {"input_tokens": total["input_tokens"], "output_tokens": total["output_tokens"],
                                  "cache_read_tokens": total["cache_read_input_tokens"],
                                  "cache_write_tokens": total["cache_creation_input_tokens"],
                                  "cache_write_1h_tokens": hour}
        assert total["output_tokens"] == sum(max(1, len(text) // 4) for text in arms[arm])
        five = total["cache_creation_input_tokens"] - hour
        assert entry["cost_usd"] == round((total["input_tokens"] * PRICE_IN + total["output_tokens"] * PRICE_OUT
                                           + total["cache_read_input_tokens"] * PRICE_READ + five * PRICE_WRITE
                                           + hour * PRICE_WRITE_1H) / 1e6, 4)
        assert entry["requests"] == len(requests)
    assert result["arms"]["forks"]["usage"]["cache_read_tokens"] > 0  # forks read their parent's cached prefix
    assert result["arms"]["forks"]["final_parent_input_tokens"] < result["arms"]["inline"]["final_parent_input_tokens"]
    graded = {a["question"]: a for a in result["runs"][0]["answers"]}
    assert set(graded) == {q.id for q in SCENARIO.questions} and all(a["passed"] for a in graded.values())


def test_repeat_model_and_a_scenario_file_select_what_runs(tmp_path, claude):
    tiny = {"name": "tiny", "title": "one fact, one fork",
            "people": {"ann": {"id": "U0ANN0001", "name": "Ann"}},
            "parent": [{"from": "ann", "text": "The budget is 42 euros."}],
            "explorations": [{"topic": "colour", "merged_by": "ann",
                              "turns": [{"from": "ann", "text": "Which colour?"}, {"from": "ann", "text": "Blue."}]}],
            "questions": [{"id": "budget", "kind": "fact", "from": "ann", "text": "What is the budget?",
                           "expect": ["\\b42\\b"], "reference": "42 euros."}]}
    (tmp_path / "tiny.json").write_text(json.dumps(tiny))

    done = run_eval(tmp_path, clean_env(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=claude.url),
                    "--scenario", "tiny.json", "--repeat", "2", "--model", "claude-unpriced-test", "--out", "r.json")

    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["scenarios"] == ["tiny"] and result["repeat"] == 2
    assert {arm: entry["runs"] for arm, entry in result["arms"].items()} == {"forks": 2, "inline": 2, "none": 2}
    # per run: forks 1 opening + 2 fork turns + 1 merge + 1 question, inline 4, none 2
    assert len(claude.requests) == 2 * (5 + 4 + 2)
    assert {r["model"] for r in claude.requests} == {"claude-unpriced-test"}
    assert all(entry["cost_usd"] is None for entry in result["arms"].values())
    assert "no price known for claude-unpriced-test" in done.stdout


def test_without_an_api_key_the_eval_refuses_and_calls_nothing(tmp_path, claude):
    done = run_eval(tmp_path, clean_env(ANTHROPIC_BASE_URL=claude.url), "--out", "result.json")

    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY is not set" in done.stderr and "Traceback" not in done.stderr
    assert claude.requests == [] and not (tmp_path / "result.json").exists()


def test_an_unknown_scenario_is_refused_before_any_call(tmp_path, claude):
    done = run_eval(tmp_path, clean_env(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=claude.url),
                    "--scenario", "no-such-scenario")

    assert done.returncode == 2 and "no scenario named 'no-such-scenario'" in done.stderr
    assert "launch-planning" in done.stderr and claude.requests == []


def test_the_memory_arm_remembers_each_merges_conclusions_and_recalls_them_after_the_parent_is_compacted(
        tmp_path, claude):
    """Offline: the fake says what a forks arm's summaries would, with a `Worth remembering` section; the parent
    is compacted (its summary keeps nothing of the forks), and every question's request still carries the
    remembered facts in its system content."""
    facts = [f"REMEMBERED-FACT-{e}" for e, _ in enumerate(SCENARIO.explorations, 1)]
    texts = [f"Noted (memory, opening turn {i})." for i, _ in enumerate(SCENARIO.parent, 1)]
    for e, exploration in enumerate(SCENARIO.explorations, 1):
        texts += [f"EXPLORATION-ANSWER-{e}-{t}: a long analysis." for t, _ in enumerate(exploration.turns, 1)]
        texts.append(f"MERGED-SUMMARY-{e}: the decision.\n\n**Worth remembering**\n- {facts[e - 1]} was decided.")
    texts.append("COMPACTED: the channel planned a launch.")
    texts += [q.reference for q in SCENARIO.questions]
    claude.script(*[Script(text=text) for text in texts])

    done = run_eval(tmp_path, clean_env(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=claude.url),
                    "--arm", "memory", "--out", "result.json")

    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["arms"]["memory"]["runs"] == 1 and result["arms"]["memory"]["accuracy"] == 1.0
    assert result["arms"]["forks"]["runs"] == 0
    assert len(claude.requests) == len(texts)  # remembering makes no model call; the compaction makes one
    compaction = claude.requests[len(texts) - len(SCENARIO.questions) - 1]
    assert "[Compaction request]" in request_texts(compaction)[-1]
    for question in claude.requests[len(texts) - len(SCENARIO.questions):]:
        system = "".join(block["text"] for block in question["system"])
        assert all(f"{fact} was decided." in system for fact in facts)
        assert "COMPACTED" in joined(question) and "MERGED-SUMMARY-1" not in joined(question)
