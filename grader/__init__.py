"""Graders for the device-placement course: course metadata, learner-code loading, device legs,
the pytest plugin that runs the hidden checks, and the learner's command-line tool."""

from pathlib import Path

#: The repository root: course.toml, exercises/, solutions/ and book/ live here.
ROOT = Path(__file__).resolve().parent.parent
