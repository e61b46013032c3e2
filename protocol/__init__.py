"""Sans-I/O cryptography of the table: the mental-poker deck and its audit, and
joint randomness (docs/mental-poker.md); the table session's messages, signing,
sealing and transcripts join them with issue 7.

No sockets and no clocks: a test runs several parties in one process and can
make any of them cheat (``protocol.simulate``).
"""
