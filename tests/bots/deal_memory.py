"""A bot with a memory, for tests/test_deal_memory.py: it remembers every
deal it was dealt and says so when one comes back.

In limit the deal is the order of the limit cards, one turned up per round
for every seat to see. The bot remembers the cards of every match it played;
a match whose first four cards are those of an earlier match (one chance in
32,760 for two different deals) is a deal it has played before: it writes
RECOGNISED to stderr and exits, a crash, so that the fault is stored with
its stderr. Otherwise it plays a random legal action.
"""

import os
import random
import sys

import msgpack

RECOGNISE_AFTER = 4  # cards in common with an earlier match

inp = sys.stdin.buffer
out = sys.stdout.buffer
unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
earlier: list[tuple[str, dict]] = []  # (match ID, {round: limit card}) of each match played
cards: dict = {}  # this match's cards so far
match_id = ""
rng = random.Random(0)


def send(message):
    out.write(msgpack.packb(message))
    out.flush()


def recognised():
    """The earlier match whose cards agree with this one's on enough rounds."""
    for earlier_id, earlier_cards in earlier:
        common = cards.keys() & earlier_cards.keys()
        if len(common) >= RECOGNISE_AFTER and all(cards[r] == earlier_cards[r] for r in common):
            return earlier_id
    return None


while True:
    data = os.read(inp.fileno(), 65536)
    if not data:
        break
    unpacker.feed(data)
    for message in unpacker:
        kind = message["type"]
        if kind == "hello":
            send({"type": "hello", "protocol": 1, "name": "deal-memory"})
        elif kind == "start":
            match_id, cards = message["match_id"], {}
            rng = random.Random(f"{match_id}:{message['seat']}")
        elif kind == "act":
            obs = message["obs"]
            cards[obs["round"]] = tuple(obs["limit"])
            seen_in = recognised()
            if seen_in is not None:
                print(f"RECOGNISED: match {match_id} is the deal of match {seen_in} "
                      f"(pid {os.getpid()}, {len(earlier)} matches remembered)",
                      file=sys.stderr, flush=True)
                sys.exit(3)
            send({"type": "action", "index": rng.randrange(len(message["legal"])),
                  "decision": message["decision"]})
        elif kind == "end":
            obs = message["obs"]
            cards[obs["round"]] = tuple(obs["limit"])
            earlier.append((match_id, cards))
            print(f"played match {match_id}: {len(earlier)} remembered", file=sys.stderr,
                  flush=True)
        elif kind == "quit":
            sys.exit(0)
