"""Agent runs recorded in formats other than ATIF (OTLP GenAI and OpenInference spans,
Claude Code and Codex sessions, Inspect logs), read into ATIF documents so that everything
after loading walks the one tree it already knows."""
