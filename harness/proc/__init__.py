"""Bot processes and their isolation: the protocol client, the sandbox and
its launcher, the syscall filter, the bot catalog, and the process and text
utilities they share. Nothing here knows leagues, storage or the CLI."""
