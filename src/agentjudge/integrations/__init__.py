"""Ways to run agentjudge inside other systems (eval-hub)."""
