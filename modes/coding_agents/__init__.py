"""Coding agents' mode files (Roo Code, Kilo, OpenCode, Claude Code), read into the catalog and written from it."""
