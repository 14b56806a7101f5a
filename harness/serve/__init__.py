"""``league serve``: a self-hosted site where people submit bots.

One process: a FastAPI app (harness.serve.app, with the JSON API in
harness.serve.routes and the pages in harness.serve.pages) served by
uvicorn, validation workers (harness.serve.validation) that check each
new version in the sandbox where the ladder's matches run (the server's
threads, or a Ray cluster's workers), and the state in SQLite
(harness.serve.db) beside the uploaded files (harness.serve.storage).
Uploads are unpacked by harness.serve.archive, which treats every archive
as hostile; names and credentials follow harness.serve.names and
harness.serve.auth. The ladder file (harness.serve.ladder) says which games
and player counts a bot must pass, its limits and the quotas.
"""
