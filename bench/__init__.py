"""Benchmarks that print figures (not tests): one module each, run from the repository's
root as ``.venv/bin/python -m bench.<name>`` (README: "Benchmarks").

They share ``bench.serving`` (the real server, its memory and CPU, PostgreSQL),
``bench.apps`` (an app in the benchmark's own process) and ``bench.history`` (a
household's years of matches), and they drive the app with the tests' own helpers:
``tests.driver``, ``tests.servers`` and ``tests.chromium``.
"""
