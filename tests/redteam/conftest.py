"""The floor tests' throwaway PostgreSQL (one cluster for this directory) for the red-team
tests that run a floor service."""

from tests.floor.conftest import database, postgres  # noqa: F401 - the fixtures
