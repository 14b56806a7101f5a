"""A bot that plays well but for one habit: it print()s a debug line at
every decision without flushing, as a Python author might. The text sits
in Python's stdout buffer (8 KiB when stdout is a pipe) and reaches the
harness only when the buffer fills, mid-match, or at exit, after its last
reply: `league check` must catch it either way (tests/test_wire.py)."""

from bots.sdk import Bot, run


class PrintUnflushed(Bot):
    name = "print_unflushed"

    def choose(self, obs, legal, time_left_ms):
        print(f"thinking about {len(legal)} legal actions")
        return 0


if __name__ == "__main__":
    run(PrintUnflushed())
