"""Says hello in protocol version argv[1] (default 2; "none" leaves the field out; "true" sends true)."""

import sys

import _fake

version = sys.argv[1] if len(sys.argv) > 1 else "2"
_fake.hello({"none": None, "true": True}.get(version, version if not version.isdigit() else int(version)))
_fake.play(_fake.read_job())
