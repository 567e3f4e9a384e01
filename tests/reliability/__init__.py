"""Reliability tests: crashes mid-write, fuzzed inputs and the server under generated requests."""
