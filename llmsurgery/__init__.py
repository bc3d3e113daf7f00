"""Compact long LLM conversations into a concise DSL within hard token budgets

Modules:

- `llmsurgery.claude`: Claude Code: its session files, read into canonical messages
- `llmsurgery.cli`: `llmsurgery-compact`: turn an agent's session file into a continuation document
- `llmsurgery.codex`: Codex: its rollout files, read into canonical messages
- `llmsurgery.compact`: A concise, budgeted text form for long LLM conversations
- `llmsurgery.dialogs`: Compacting Solveit dialogs: replies re-rendered in place, or the whole dialog as one document
- `llmsurgery.docstyle`: How a continuation document renders a conversation: for the model that picks up the work, at a size it can take
- `llmsurgery.document`: The continuation document: its format, repeated compaction, and what a compaction kept
- `llmsurgery.files`: Writing a file whole or not at all, writing through devices, FIFOs and pipes, and reading only regular files
- `llmsurgery.fit`: Fitting a whole conversation to a target size by choosing its budgets
- `llmsurgery.gemini`: Gemini CLI: its session logs, read into canonical messages
- `llmsurgery.hist`: Conversations as dialogs, and dialog replies back as messages
- `llmsurgery.hookjobs`: Which job a host's hook event asks for, told from the event alone, before anything heavy is imported
- `llmsurgery.hooks`: llmsurgery inside Claude Code and Codex: its hooks installed in the host's settings, and run by the host
- `llmsurgery.inject`: What agent hosts write into the conversation that nobody typed: plumbing, reminders, skill texts, summaries
- `llmsurgery.jsonl`: A host's JSONL log: reading its records into messages, writing records, and the `Host` that bundles one host's parts
- `llmsurgery.opencode`: opencode: its sessions, read from its SQLite store without ever writing to it
- `llmsurgery.par`: Two cores for a long list: a forked child shares the chunks of a map, and the results are the same as in one process
- `llmsurgery.render`: The compact DSL: each message class rendered within its token budget
- `llmsurgery.service`: One way through: a compaction job for the command line, the skill and the hooks alike
- `llmsurgery.sessions`: Session files of any host, and aidialog notebooks: the format told from the content, read into canonical messages
- `llmsurgery.skill`: Compact a Solveit dialog or a Claude Code or Codex session that has grown too long for the context into a short continuation document, and carry on in a fresh one
- `llmsurgery.state`: The state of the work, read from a session: task, plans, files, commits, latest request, last error and word
- `llmsurgery.toks`: Counting o200k tokens offline, and the budgeted middle cut every renderer goes through"""

__version__ = "0.1.0"
