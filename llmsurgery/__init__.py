"""Compact long LLM conversations into a concise DSL within hard token budgets

Modules:

- `llmsurgery.cli`: `llmsurgery-compact`: turn an agent's session file into a continuation document
- `llmsurgery.compact`: A concise, budgeted text form for long LLM conversations
- `llmsurgery.dialogs`: Compacting Solveit dialogs: replies re-rendered in place, or the whole dialog as one document
- `llmsurgery.discover`: Finding sessions in every host's store: by folder, by id, or the agent's own; and listing them
- `llmsurgery.docstyle`: How a document renders a conversation: for the model that picks up the work, within its budget
- `llmsurgery.document`: The continuation document: its format, repeated compaction, and what a compaction kept
- `llmsurgery.files`: Writing a file whole or not at all, or through a device, FIFO or pipe; reading only regular files
- `llmsurgery.fit`: Fitting a whole conversation to a target size by choosing its budgets
- `llmsurgery.hist`: Conversations as dialogs, and dialog replies back as messages
- `llmsurgery.hookgate`: Whether a hook event asks for a job, told from the event and command before any heavy import
- `llmsurgery.hooks`: llmsurgery's hooks as a host runs them: a job or nothing, in its timeout, never a failure it sees
- `llmsurgery.hookstate`: What hooks give a host: the state of what it just compacted, and a resumable session instead
- `llmsurgery.hosts.agentmsg`: The message format two hosts share: user, assistant and tool-result messages as `Msg`s
- `llmsurgery.hosts.base`: Agent hosts: one `Host` subclass each, registered as it is made, with working defaults
- `llmsurgery.hosts.claude`: Claude Code: its sessions read, found and continued, and llmsurgery's hooks inside it
- `llmsurgery.hosts.cline`: Cline: its sessions read, found and continued, and llmsurgery's state inside it
- `llmsurgery.hosts.codex`: Codex: its rollouts read, found and continued, and llmsurgery's hooks inside it
- `llmsurgery.hosts.copilot`: GitHub Copilot CLI: its sessions read, found and continued, and llmsurgery's hooks in it
- `llmsurgery.hosts.gemini`: Gemini CLI: its session logs replayed, found and continued, and llmsurgery's hook inside it
- `llmsurgery.hosts.openclaw`: OpenClaw: its SQLite store only read, continued by import, and llmsurgery as compactor
- `llmsurgery.hosts.opencode`: opencode: its sessions, read from its SQLite store without ever writing to it
- `llmsurgery.hosts.pi`: Pi: its session trees replayed, found and continued, and llmsurgery as Pi's own compactor
- `llmsurgery.hosts.qwen`: Qwen Code: its sessions replayed, found and continued, and llmsurgery inside its compression
- `llmsurgery.inject`: What hosts put in a conversation that nobody typed: plumbing, reminders, skill texts, summaries
- `llmsurgery.install`: llmsurgery in every host: its hooks (or plugin) installed in the host's settings, and removed
- `llmsurgery.jsonl`: A host's JSONL log: records read into messages numbered by line, and written as the hosts do
- `llmsurgery.mcp_server`: search, show, grep and compact as MCP tools, served on stdio to any agent host
- `llmsurgery.par`: Two cores for a long list: a forked child shares a map's chunks; the results are as in one process
- `llmsurgery.recall`: A transcript's messages whole, by number or pattern, within what an agent's shell tool passes on
- `llmsurgery.render`: The compact DSL: each message class rendered within its token budget
- `llmsurgery.search`: All hosts' sessions in one full-text index, updated before each search, searched in milliseconds
- `llmsurgery.service`: One way through: a compaction job for the command line, the skill and the hooks alike
- `llmsurgery.sessions`: Sessions of any host, and dialog notebooks: their format told from content, read, and continued
- `llmsurgery.skill`: Compact a Solveit dialog or agent session grown too long into a short document, and carry on fresh
- `llmsurgery.state`: The state of the work, from a session: task, plans, files, commits, last request, error and word
- `llmsurgery.toks`: Counting o200k tokens offline, and the budgeted middle cut every renderer goes through"""

__version__ = "0.1.0"
