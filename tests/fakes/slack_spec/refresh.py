"""Regenerates this folder's data from Slack's public sources; never needed at test time.

    python -m tests.fakes.slack_spec.refresh [OPENAPI] [MANIFEST_SCHEMA]

Each argument is a URL or a local file (default: the upstream files on raw.githubusercontent.com).
The output depends only on the inputs and on NEWER below: the same inputs give the same bytes.
- web_api_methods.json: each Web API method's required arguments (token left out), sorted;
  "methods" from the OpenAPI description, "newer_methods" from NEWER for methods it lacks, and
  "documented_required" from DOCUMENTED: arguments the docs require that the OpenAPI file does not mark.
- manifest.schema.json: the manifest schema, byte for byte.
"""
from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
OPENAPI = ("https://raw.githubusercontent.com/slackapi/slack-api-specs/master/"
           "web-api/slack_web_openapi_v2_without_examples.json")
MANIFEST_SCHEMA = ("https://raw.githubusercontent.com/slackapi/manifest-schema/main/"
                   "schemas/manifest.schema.1.0.0.json")

# Methods newer than the OpenAPI file (last updated October 2020) that the fakes must answer.
# Required arguments as listed on https://docs.slack.dev/reference/methods/<method> (read 2026-12-01).
NEWER = {
    # docs.slack.dev/reference/methods/agents.sessions.setStatus and …/agents.sessions.rename (read 2026-12-02):
    # channel_id and thread_ts are optional there ("required for public channels", "for thread-based
    # sessions"); the fake holds Threadfork to those conditions (tests/fakes/slack_agents.py)
    "agents.sessions.rename": ["title"],
    "agents.sessions.setStatus": ["status"],
    "apps.connections.open": [],  # the app-level token, in the Authorization header, is all it takes
    "assistant.threads.setStatus": ["channel_id", "status", "thread_ts"],
    "assistant.threads.setSuggestedPrompts": ["channel_id", "prompts"],
    "assistant.threads.setTitle": ["channel_id", "thread_ts", "title"],
    "chat.appendStream": ["channel", "ts"],
    "chat.startStream": ["channel"],
    "chat.stopStream": ["channel", "ts"],
}

# Methods the OpenAPI file describes without marking arguments its docs.slack.dev page lists as
# required (read 2026-12-01); the fake refuses a call without them as it refuses any missing argument.
DOCUMENTED = {
    "conversations.info": ["channel"],  # read 2026-12-02
    "conversations.members": ["channel"],  # read 2026-12-02
    "conversations.replies": ["channel", "ts"],
    "files.info": ["file"],
    "users.info": ["user"],
    "views.update": ["view"],
}


def read(source: str) -> bytes:
    if source.startswith(("https://", "http://")):
        with urllib.request.urlopen(source, timeout=60) as response:
            return response.read()
    return Path(source).read_bytes()


def required_arguments(openapi: dict) -> dict[str, list[str]]:
    required = {}
    for path, operations in openapi["paths"].items():
        names = {parameter["name"] for operation in operations.values()
                 for parameter in operation.get("parameters", []) if parameter.get("required")}
        required[path.lstrip("/")] = sorted(names - {"token"})
    return dict(sorted(required.items()))


def _section(methods: dict[str, list[str]]) -> str:
    lines = [f"    {json.dumps(name)}: {json.dumps(args)}" for name, args in methods.items()]
    return "{\n" + ",\n".join(lines) + "\n  }"


def methods_json(openapi: dict) -> str:
    methods = required_arguments(openapi)
    newer = {name: sorted(args) for name, args in sorted(NEWER.items()) if name not in methods}
    source = (f"slackapi/slack-api-specs web-api/slack_web_openapi_v2_without_examples.json, "
              f"version {openapi['info']['version']}: each method's required arguments, token left out")
    newer_source = ("methods added after that file, from https://docs.slack.dev/reference/methods/<method>: "
                    "required arguments, token left out")
    documented = {name: sorted(set(args) - set(methods.get(name, []))) for name, args in sorted(DOCUMENTED.items())}
    documented_source = ("required arguments listed on https://docs.slack.dev/reference/methods/<method> that the "
                         "OpenAPI file does not mark required")
    return (
        "{\n"
        f'  "source": {json.dumps(source)},\n'
        f'  "methods": {_section(methods)},\n'
        f'  "newer_source": {json.dumps(newer_source)},\n'
        f'  "newer_methods": {_section(newer)},\n'
        f'  "documented_source": {json.dumps(documented_source)},\n'
        f'  "documented_required": {_section(documented)}\n'
        "}\n"
    )


def main(argv: list[str]) -> None:
    openapi_source = argv[0] if argv else OPENAPI
    schema_source = argv[1] if len(argv) > 1 else MANIFEST_SCHEMA
    openapi = json.loads(read(openapi_source))
    schema = read(schema_source)
    json.loads(schema)  # refuse to commit something that is not JSON
    covered = sorted(set(NEWER) & {path.lstrip("/") for path in openapi["paths"]})
    if covered:
        print(f"the OpenAPI file now describes {covered}; NEWER's entries for them are ignored")
    (HERE / "web_api_methods.json").write_text(methods_json(openapi))
    (HERE / "manifest.schema.json").write_bytes(schema)
    print(f"wrote {HERE / 'web_api_methods.json'} and {HERE / 'manifest.schema.json'}")


if __name__ == "__main__":
    main(sys.argv[1:])
