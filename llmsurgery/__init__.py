"""Compact long LLM conversations into a concise DSL within hard token budgets

Modules:

- `llmsurgery.skill`: Compact a Solveit dialog or a Claude Code or Codex session that has grown too long for the context into a short continuation document, and carry on in a fresh one"""

__version__ = "0.1.0"
