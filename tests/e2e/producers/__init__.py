"""Small drivers of real agent frameworks, run by tests/e2e/test_live_producers.py in the
producers' virtualenv (`.venv/peers/producers`): each runs the toy task world's agents
against a model URL (our test server playing the model) and writes their spans as OTLP/JSON.
They import nothing of agentjudge: that virtualenv does not have it."""
