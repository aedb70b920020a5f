"""Prints the data of the first result of `tosa-lsp run --format=json`."""
import json
import sys

print(json.dumps(json.load(sys.stdin)["results"][0]["data"]))
