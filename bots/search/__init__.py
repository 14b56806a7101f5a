"""The search bot's parts (the bot itself: ``bots/search_bot.py``).

core/   the search for any game, and how a game's settings are found
games/  each game's settings and parts, one module or package per slug,
        imported when a match of that game starts
lab/    the experiment tools; the bot never imports them
"""
