"""Compact long LLM conversations into a concise DSL within hard token budgets

Modules:

- `llmsurgery.cli`: `llmsurgery-compact`: turn an agent's session file into a continuation document
- `llmsurgery.compact`: A concise, budgeted text form for long LLM conversations
- `llmsurgery.dialogs`: Compacting Solveit dialogs: replies re-rendered in place, or the whole dialog as one document
- `llmsurgery.discover`: Finding sessions in every host's store: a directory's, by id, or the one the agent runs in; and listing them
- `llmsurgery.docstyle`: How a continuation document renders a conversation: for the model that picks up the work, at a size it can take
- `llmsurgery.document`: The continuation document: its format, repeated compaction, and what a compaction kept
- `llmsurgery.files`: Writing a file whole or not at all, writing through devices, FIFOs and pipes, and reading only regular files
- `llmsurgery.fit`: Fitting a whole conversation to a target size by choosing its budgets
- `llmsurgery.hist`: Conversations as dialogs, and dialog replies back as messages
- `llmsurgery.hookgate`: Whether a hook event may ask for a job, told from the event and the hook's own command before anything heavy is imported
- `llmsurgery.hooks`: llmsurgery's hooks as a host runs them: a job or nothing, within the host's timeout, never a failure the host sees
- `llmsurgery.hookstate`: What llmsurgery's hooks give a host: the state of the part it just compacted, and a resumable session in its place
- `llmsurgery.hosts.base`: The agents llmsurgery works with: one `Host` subclass each, registered as it is made, with working defaults
- `llmsurgery.hosts.claude`: Claude Code: its sessions read, found and continued, and llmsurgery's hooks inside it
- `llmsurgery.hosts.codex`: Codex: its rollouts read, found and continued, and llmsurgery's hooks inside it
- `llmsurgery.hosts.gemini`: Gemini CLI: its session logs replayed, found and continued, and llmsurgery's hook inside it
- `llmsurgery.hosts.opencode`: opencode: its sessions, read from its SQLite store without ever writing to it
- `llmsurgery.inject`: What agent hosts write into the conversation that nobody typed: plumbing, reminders, skill texts, summaries
- `llmsurgery.install`: llmsurgery inside every host: its hooks (or its plugin) installed in the host's settings, and taken out again
- `llmsurgery.jsonl`: A host's JSONL log: its records read into messages, numbered by line, and records written as the hosts write them
- `llmsurgery.par`: Two cores for a long list: a forked child shares the chunks of a map, and the results are the same as in one process
- `llmsurgery.recall`: A transcript's messages whole, by number or by pattern, within what an agent's shell tool passes on
- `llmsurgery.render`: The compact DSL: each message class rendered within its token budget
- `llmsurgery.search`: Every session of every host in one full-text index, kept current before each search, and searched in milliseconds
- `llmsurgery.service`: One way through: a compaction job for the command line, the skill and the hooks alike
- `llmsurgery.sessions`: Sessions of any host, and aidialog notebooks: the format told from the content, read, and continued in a host
- `llmsurgery.skill`: Compact a Solveit dialog or a coding agent's session that has grown too long for the context into a short continuation document, and carry on in a fresh one
- `llmsurgery.state`: The state of the work, read from a session: task, plans, files, commits, latest request, last error and word
- `llmsurgery.toks`: Counting o200k tokens offline, and the budgeted middle cut every renderer goes through"""

__version__ = "0.1.0"
