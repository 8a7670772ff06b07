"""One throwaway PostgreSQL cluster for the whole session (controller.floor.local_cluster),
a fresh database in it for each test that asks, and the floor service run in a thread on it. Without PostgreSQL's server binaries
these tests skip, saying how to install them (CI installs them: ``make deps`` as root)."""

from __future__ import annotations


