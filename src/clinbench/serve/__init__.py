"""`clinbench serve`: a local browser app over campaign stores, and clinician mode for diagnosis cases.

* ``sources``: the stores given on the command line and the one rule for reaching a file in them;
* ``campaigns``: a campaign's statistics (the code `clinbench stats` runs), runs table filters, progress;
* ``evidence_view``: a run's evidence as page data (transcript steps, encounter turns, hashes);
* ``play``: clinician sessions replayed through the dx encounter loop and recorded like an agent's;
* ``app`` / ``play_routes``: the Starlette routes, the token and path guard, the security headers;
* ``launch``: what the command prepares before it listens.
"""
