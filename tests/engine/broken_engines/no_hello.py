"""Starts with a banner instead of the protocol hello."""

import sys

import _fake

sys.stderr.write("fake engine: I do not speak the protocol\n")
sys.stderr.flush()
sys.stdout.write("FakeEngine v0 starting up...\n")
sys.stdout.flush()
_fake.play(_fake.read_job())
