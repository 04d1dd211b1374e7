// The text form of tool calls for models with neither native tool calls nor a grammar (docs/agent.md#the-tool-loop):
// a line `TOOL: <name> <args>` where args is a JSON object, or, for a tool with one required parameter, the rest
// of the line (`TOOL: run_command VAULT:github_token=GH_TOKEN gh repo list`). Parsing is strict: only lines that
// start with `TOOL:` count, the name must be a registered tool, and anything malformed is reported back to the
// model instead of being guessed at.

export interface TextToolSpec {
  name: string;
  /** The one required parameter the bare form fills, or null when only the JSON form is accepted. */
  primary: string | null;
}

export type TextToolCall =
  | { ok: true; name: string; input: Record<string, unknown> }
  | { ok: false; line: string; problem: string };

const PREFIX = /^[ \t]*TOOL:[ \t]*/;
const MAX_CALLS = 16;

/** The single required parameter of a JSON Schema object, if it has exactly one. */
export function primaryParameter(schema: Record<string, unknown>): string | null {
  const required = schema.required;
  return Array.isArray(required) && required.length === 1 && typeof required[0] === "string" ? required[0] : null;
}

export function parseTextToolCalls(text: string, tools: readonly TextToolSpec[]): TextToolCall[] {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const calls: TextToolCall[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && calls.length < MAX_CALLS; i++) {
    const line = lines[i]!;
    const prefix = PREFIX.exec(line);
    if (!prefix) continue;
    const rest = line.slice(prefix[0].length);
    const nameMatch = /^([A-Za-z0-9_]+)(?:[ \t]+|$)/.exec(rest);
    if (!nameMatch) {
      calls.push({ ok: false, line, problem: "expected `TOOL: <name> <arguments>`" });
      continue;
    }
    const name = nameMatch[1]!;
    const tool = byName.get(name);
    if (!tool) {
      calls.push({ ok: false, line, problem: `unknown tool ${name}; tools: ${[...byName.keys()].join(", ")}` });
      continue;
    }
    const args = rest.slice(nameMatch[0].length);
    if (args.trimStart().startsWith("{")) {
      // JSON arguments may span lines: take the balanced object starting here.
      const joined = [args, ...lines.slice(i + 1)].join("\n");
      const end = balancedObjectEnd(joined, joined.indexOf("{"));
      if (end < 0) {
        calls.push({ ok: false, line, problem: "the JSON arguments are not a complete object" });
        continue;
      }
      const json = joined.slice(joined.indexOf("{"), end + 1);
      i += json.split("\n").length - 1;
      try {
        const input = JSON.parse(json) as unknown;
        if (!input || typeof input !== "object" || Array.isArray(input)) throw new Error("not an object");
        calls.push({ ok: true, name, input: input as Record<string, unknown> });
      } catch {
        calls.push({ ok: false, line, problem: "the arguments are not valid JSON" });
      }
      continue;
    }
    const value = args.trim();
    if (tool.primary === null) {
      calls.push({ ok: false, line, problem: `${name} takes several parameters: give them as a JSON object` });
    } else if (value.length === 0) {
      calls.push({ ok: false, line, problem: `${name} needs its ${tool.primary}` });
    } else {
      calls.push({ ok: true, name, input: { [tool.primary]: value } });
    }
  }
  return calls;
}

/** Index of the `}` closing the object that opens at `start`, honouring strings; -1 when it never closes. */
function balancedObjectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
