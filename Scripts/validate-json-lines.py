#!/usr/bin/python3
"""Validates JSON Lines against a JSON Schema (draft 2020-12) with python3-jsonschema.

    Scripts/validate-json-lines.py Schemas/probe.schema.json < lines.jsonl

Prints one line per violation, "LINE: PATH: MESSAGE", and exits 1 when there is any (2 when a
line is not JSON or the schema is not a valid schema), 0 when every line is valid. Run with
Debian's /usr/bin/python3 (Scripts/install-deps.sh installs python3-jsonschema).
"""
import json
import sys

from jsonschema import Draft202012Validator


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: validate-json-lines.py SCHEMA < LINES", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as file:
        schema = json.load(file)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    violations = 0
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            instance = json.loads(line)
        except json.JSONDecodeError as error:
            print(f"{number}: not JSON: {error}")
            return 2
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
            path = "/".join(str(part) for part in error.absolute_path) or "(line)"
            print(f"{number}: {path}: {error.message}")
            violations += 1
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
