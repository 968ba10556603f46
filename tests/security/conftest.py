"""The suite's one hostile campaign (see hostile_campaign.py), shared by every test file."""

from hostile_campaign import hostile  # noqa: F401  (a session fixture)
