"""The committed Slack facts are exactly what their refresh script writes: hand edits to
web_api_methods.json, or a NEWER entry the file lacks, show up here instead of in a fake."""
import json
import re

from tests.fakes.slack_spec import refresh


def test_the_committed_methods_file_is_what_refresh_writes_from_the_same_facts():
    committed = refresh.HERE.joinpath("web_api_methods.json").read_text()
    known = json.loads(committed)
    version = re.search(r"version (\S+):", known["source"]).group(1)
    openapi = {"info": {"version": version},
               "paths": {f"/{method}": {"post": {"parameters": [{"name": a, "required": True} for a in args]}}
                         for method, args in known["methods"].items()}}
    assert refresh.methods_json(openapi) == committed
    assert set(known["newer_methods"]) == set(refresh.NEWER)
