"""The reply shapes of tool calls written as text, as real local servers returned them (issue #30:
llama-cpp-python 0.3.36 serving Qwen2.5-Coder-0.5B): each builds the message text of a server
that did not parse the call into ``tool_calls``. Shared by the llm agent's and the dx roles' tests."""

from __future__ import annotations

import json


def fenced(name: str, args: dict) -> str:  # what the dxo panel answered on every turn
    return f'```json\n{{\n  "name": "{name}",\n  "arguments": {json.dumps(args, indent=2)}\n}}\n```'


def string_arguments_then_invented_text(name: str, args: dict) -> str:
    return (json.dumps({"name": name, "arguments": json.dumps(args)})
            + "\n\nThe result shows the table has the columns we need, so I will now write the output.")


def bare(name: str, args: dict) -> str:  # the judge's reply that was rejected as "no integer score"
    return json.dumps({"name": name, "arguments": args})


def hermes(name: str, args: dict) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"


def functions_line(name: str, args: dict) -> str:  # llama-cpp-python --chat_format chatml-function-calling
    return f"functions.{name}:" + (f"\n{json.dumps(args)}" if args else "")


SHAPES = {"fenced": fenced, "string-arguments": string_arguments_then_invented_text, "bare": bare,
          "hermes": hermes, "functions": functions_line}
SEVERAL_IN_A_ROW = ('{"name": "list_tables", "arguments": {}} '
                    '{"name": "describe_table", "arguments": {"table": "mimiciv_icu.icustays"}}')
