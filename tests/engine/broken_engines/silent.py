"""Says hello, then exits without playing anything."""

import _fake

_fake.hello()
