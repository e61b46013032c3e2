"""Sans-I/O wire format and cryptography: framing, messages, identities, sealing,
the mental-poker deck and its audit, joint randomness, transcript hashing.

No sockets and no clocks: a test runs several parties in one process.  The
deck arrives with issue 6; see DESIGN.md section 2.
"""
