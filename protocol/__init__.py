"""Sans-I/O cryptography of the table: the mental-poker deck and its audit, and
joint randomness (docs/mental-poker.md).  The table session
(:mod:`p2pcards.table`) signs, seals and orders the messages.

Installed as ``p2pcards.protocol``, it imports nothing else of ``p2pcards``.  No
sockets and no clocks: a test runs several parties in one process and can make
any of them cheat (:mod:`p2pcards.protocol.simulate`).
"""
