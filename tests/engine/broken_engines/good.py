"""A well-behaved fake engine (the control case)."""

import _fake

_fake.hello()
_fake.play(_fake.read_job())
