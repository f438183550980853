"""The recall eval: does a parent session that explored in merged forks remember its early context
better than one that explored inline? (`python -m bot.eval`; docs/eval.md)

One scenario (bot/eval/scenarios/*.json) is played three ways — arms — each on a database of its
own, through Threadfork's real use cases (bot.services over bot.store and the bot.llm adapter), with
Slack's ports only recorded (recording.py):
- `forks`: the parent's turns, then each exploration in a fork opened with `/fork --inherit` and
  merged with `/merge`, then the questions in the parent;
- `inline`: the same exploration turns asked in the parent itself;
- `none`: no exploration, just the questions.
Every question is one parent turn, graded by the scenario's own patterns (grading.py): nothing is
model-graded. Costs come from the token usage the API reports (bot/domain/spend.py).
"""
