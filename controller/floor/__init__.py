"""The floor: every table's CMS stream stored in PostgreSQL, with ratings and theoretical win.

``config`` reads floor.toml, ``migrations`` holds the schema (versioned SQL), ``store`` writes
batches and reads resume points, ``feed`` follows one table, ``service`` runs them all,
``report`` prints the ratings, ``local_cluster`` starts a throwaway PostgreSQL (tests, bench).
The schema and its views are documented in docs/floor.md.
"""
