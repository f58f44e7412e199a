"""Validates rendered Kubernetes objects against the Kubernetes JSON schemas, strictly.

Run by ../validate with the venv it prepares (kubernetes-validate, which carries the schemas of
every Kubernetes release it supports, so nothing is downloaded here):

    python check.py --kubernetes-version 1.35.0 --httproute-checker node,httproute.mjs \
        [--json OUT] NAME=RENDERED.yaml ...

Each object is checked against its kind's schema with additionalProperties false at every
level (kubernetes-validate's "strict" schemas): an unknown field, a wrong type, a missing
required field or a bad enum value is an error. HTTPRoute (Gateway API, a CRD the core schemas
do not have) goes to the checker command, which reads the objects as JSON on stdin and prints
one error a line. A kind that neither knows is an error too: nothing passes unchecked.

Prints every error as `NAME: Kind/name: path: message` and exits 1 if there was any. With
--json, writes {NAME: [objects...]} to OUT ("-" for stdout).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import importlib_resources
import jsonschema
import referencing
import yaml

GATEWAY_GROUP = "gateway.networking.k8s.io/"


def schema_dir(version: str) -> Path:
    root = importlib_resources.files("kubernetes_validate") / "kubernetes-json-schema"
    folder = Path(str(root)) / f"v{version}-local-strict"
    if not folder.is_dir():
        have = sorted(p.name for p in Path(str(root)).iterdir())
        sys.exit(f"kubernetes-validate has no schemas for Kubernetes {version}; it has: {', '.join(have)}")
    return folder


class Schemas:
    def __init__(self, version: str):
        self.dir = schema_dir(version)
        definitions = json.loads((self.dir / "_definitions.json").read_text())
        self.registry = referencing.Resource.from_contents(definitions) @ referencing.Registry()
        self.cache = {}

    def for_object(self, obj):
        # rbac.authorization.k8s.io/v1 -> rbac-v1, v1 -> v1 (kubernetes-validate's file names)
        api = obj.get("apiVersion", "")
        group, _, version = api.rpartition("/")
        name = f"{obj.get('kind', '').lower()}-{group.split('.')[0] + '-' if group else ''}{version}.json"
        if name not in self.cache:
            path = self.dir / name
            if not path.is_file():
                self.cache[name] = None
            else:
                schema = json.loads(path.read_text())
                registry = referencing.Resource.from_contents(schema) @ self.registry
                self.cache[name] = jsonschema.Draft202012Validator(schema, registry=registry)
        return self.cache[name]


def label(obj) -> str:
    return f"{obj.get('kind', '?')}/{(obj.get('metadata') or {}).get('name', '?')}"


def path_of(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(object)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubernetes-version", required=True)
    parser.add_argument("--httproute-checker", required=True, help="command, comma-separated")
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("rendered", nargs="+", help="NAME=FILE")
    args = parser.parse_args()

    schemas = Schemas(args.kubernetes_version)
    errors = []
    rendered = {}
    routes = []
    for item in args.rendered:
        name, _, file = item.partition("=")
        objects = [o for o in yaml.safe_load_all(Path(file).read_text()) if o]
        rendered[name] = objects
        for obj in objects:
            if obj.get("kind") == "HTTPRoute" and obj.get("apiVersion", "").startswith(GATEWAY_GROUP):
                routes.append((name, obj))
                continue
            validator = schemas.for_object(obj)
            if validator is None:
                errors.append(
                    f"{name}: {label(obj)}: no schema for {obj.get('apiVersion')} {obj.get('kind')} "
                    f"in Kubernetes {args.kubernetes_version}"
                )
                continue
            for error in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
                errors.append(f"{name}: {label(obj)}: {path_of(error)}: {error.message}")

    if routes:
        checker = subprocess.run(
            args.httproute_checker.split(","),
            input=json.dumps([obj for _, obj in routes]),
            capture_output=True,
            text=True,
        )
        if checker.returncode not in (0, 1) or (checker.returncode == 1 and not checker.stdout.strip()):
            errors.append(f"the HTTPRoute checker failed: {checker.stderr.strip() or checker.returncode}")
        for line in dict.fromkeys(checker.stdout.splitlines()):
            # "INDEX\tmessage": which route, and what is wrong with it.
            index, _, message = line.partition("\t")
            name, obj = routes[int(index)]
            errors.append(f"{name}: {label(obj)}: {message}")

    if args.json_out:
        text = json.dumps(rendered, indent=1, sort_keys=True)
        if args.json_out == "-":
            print(text)
        else:
            Path(args.json_out).write_text(text)
    for error in errors:
        print(error, file=sys.stderr)
    count = sum(len(v) for v in rendered.values())
    print(
        f"{'FAILED' if errors else 'ok'}: {count} objects in {len(rendered)} builds, "
        f"{len(errors)} errors (Kubernetes {args.kubernetes_version}, strict)",
        file=sys.stderr,
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
