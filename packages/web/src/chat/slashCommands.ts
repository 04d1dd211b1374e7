import { client } from "../api.ts";

// The daemon's slash commands, for completion. No endpoint lists them as data; `/help` sent as a chat line is
// answered by the daemon's one registry without a model (chat/slashCommands.ts in the daemon), so the page asks it
// once and reads its lines ("  /usage    summary", a long usage with its summary on the next lines).

export interface SlashCommand {
  /** What is typed: "/status". */
  name: string;
  usage: string;
  summary: string;
}

export function parseHelp(text: string): SlashCommand[] {
  const commands: SlashCommand[] = [];
  for (const line of text.split("\n")) {
    const entry = /^ {2}(\/\S.*?)(?: {2,}(.*))?$/.exec(line);
    if (entry) {
      const usage = entry[1]!.trim();
      commands.push({ name: usage.split(/[\s,]/)[0]!, usage, summary: entry[2]?.trim() ?? "" });
      continue;
    }
    const last = commands.at(-1);
    const more = line.trim();
    if (!last || !more) continue;
    // Summaries continue at the summary column (24); a long usage continues at 4.
    if (/^ {24}/.test(line)) last.summary = last.summary ? `${last.summary} ${more}` : more;
    else if (/^ {4}/.test(line)) last.usage = `${last.usage} ${more}`;
  }
  return commands;
}

/** Asks the daemon's `/help` in `sessionId` (a new session when none: the answer names it). */
export async function loadSlashCommands(sessionId: string | undefined): Promise<{
  commands: SlashCommand[];
  sessionId: string;
}> {
  const answer = await client.sendMessage({ message: "/help", ...(sessionId ? { session_id: sessionId } : {}) });
  const reply = "reply" in answer ? answer.reply : "";
  return { commands: parseHelp(reply), sessionId: answer.session_id };
}

/** The commands that complete what is typed: the line is one word starting with "/". */
export function completions(commands: SlashCommand[], draft: string): SlashCommand[] {
  if (!/^\/\S*$/.test(draft)) return [];
  return commands.filter((c) => c.name.startsWith(draft) && c.name !== draft);
}
