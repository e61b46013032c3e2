"""Our search measured against OpenSpiel (the optional extra ``compare``).

OpenSpiel's ``spades`` and ``hearts`` presented through the search's protocol
with exact determinization (:mod:`.adapters`), and a duplicate match against
OpenSpiel's own ISMCTS bots (``python -m p2pcards.compare.match``).  Only this
package imports open_spiel, and nothing else of the project imports it; its pure
parts (:mod:`.rules`, :mod:`.seen`, :mod:`.deal`, :mod:`.worlds`, :mod:`.tally`,
:mod:`.policy`, and :mod:`.fasthearts`, OpenSpiel's hearts without passing in pure
Python for the search's worlds) need no OpenSpiel.  docs/bots.md, "Against
OpenSpiel", describes it.
"""
