"""server.json, quire's entry for the MCP registry (`05-mcp.md`,
"Registry entry"), against the registry's published schema.

Usage:
  python check.py SERVER_JSON SCHEMA VERSION REPOSITORY

SCHEMA is the registry's server.schema.json of the release server.json
names in `$schema` (scripts/test takes it from a PyPI wheel that carries it
byte for byte). Prints "registry: ok", or every failure and exits 1.
"""

import json
import sys

import jsonschema


def main():
    path, schema_path, version, repository = sys.argv[1:5]
    entry = json.load(open(path))
    schema = json.load(open(schema_path))
    failures = []
    if entry.get("$schema") != schema["$id"]:
        failures.append(f"$schema {entry.get('$schema')!r} is not {schema['$id']!r}")
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    failures += [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(entry)]
    if entry.get("name", "").count("/") != 1:
        failures.append(f"name {entry.get('name')!r} needs exactly one /")
    if entry.get("version") != version:
        failures.append(f"version {entry.get('version')!r} is not the workspace's {version!r}")
    if entry.get("repository", {}).get("url") != repository:
        failures.append(f"repository {entry.get('repository')} is not {repository!r}")
    stdio = [
        p for p in entry.get("packages", [])
        if p.get("transport", {}).get("type") == "stdio"
        and [a.get("value") for a in p.get("packageArguments", [])] == ["mcp", "stdio"]
    ]
    if not stdio:
        failures.append("no package runs `quire mcp stdio` over stdio")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("registry: ok")


if __name__ == "__main__":
    main()
