import type { ToolInfo } from "../tools/services.ts";

// Which offered tools a message asks for (docs/agent.md#how-the-model-sees-tools). Plain word matching, no model
// call: a tool is *named* when the text holds its name (`web_search`, `github__create_issue`), the words of its
// name as a phrase ("web search", "create issues") or, for a name of two words or more, all of its words
// ("read the file" names read_file); a named tool always gets its full schema. Other tools are *relevant* by how
// many of the text's words their name (2 points) and first sentence (1 point) share.

const STOPWORDS = new Set(
  (
    "the and for are but not you your yours can could would should will with from that this these those what when " +
    "where which who whom why how into onto about over under then than there here have has had was were been being " +
    "does did doing its it's all any each some such only own same too very just also please thanks thank hello " +
    "tell give make let get got want need like know use using one two out off our ours they them their his her " +
    "him she hers mine may might must shall yes no"
  ).split(" "),
);

/** Lower-case words of a text, stemmed lightly ("issues" and "issue" meet), in order. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0)
    .map(stem);
}

function stem(word: string): string {
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The distinct words of a text worth matching on (no stopwords, at least 3 letters). */
export function keywords(text: string): Set<string> {
  return new Set(words(text).filter((w) => w.length >= 3 && !STOPWORDS.has(w)));
}

/** The tool's own name: a plugin tool `<plugin>__<tool>` is called `<tool>` by people. */
function ownName(name: string): string {
  const at = name.lastIndexOf("__");
  return at >= 0 ? name.slice(at + 2) : name;
}

/** The first sentence of a description, at most `max` characters (cut on a word): the tool's line in the index. */
export function shortLine(description: string, max = 60): string {
  const first = description
    .split(/(?<=[.!?])\s|:\s|\s\(/)[0]!
    .replace(/[.!?]$/, "")
    .trim();
  if (first.length <= max) return first;
  const cut = first.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

function containsPhrase(haystack: readonly string[], phrase: readonly string[]): boolean {
  if (phrase.length === 0 || phrase.length > haystack.length) return false;
  outer: for (let i = 0; i + phrase.length <= haystack.length; i++) {
    for (let j = 0; j < phrase.length; j++) if (haystack[i + j] !== phrase[j]) continue outer;
    return true;
  }
  return false;
}

/** The offered tools a text names (see the header), in the order given. */
export function namedTools(tools: readonly ToolInfo[], text: string): ToolInfo[] {
  const lower = text.toLowerCase();
  const textWords = words(text);
  const present = new Set(textWords);
  return tools.filter((tool) => {
    const own = ownName(tool.name);
    for (const name of new Set([tool.name, own])) {
      if (new RegExp(`(^|[^a-z0-9_])${escapeRegExp(name.toLowerCase())}($|[^a-z0-9_])`).test(lower)) return true;
    }
    const ownWords = words(own);
    if (containsPhrase(textWords, ownWords) || containsPhrase(textWords, words(tool.name))) return true;
    return ownWords.length >= 2 && ownWords.every((w) => present.has(w));
  });
}

/** How relevant a tool is to a text's keywords: 2 per word of its name, 1 per word of its first sentence. */
export function relevance(tool: ToolInfo, textKeywords: ReadonlySet<string>): number {
  const nameWords = keywords(tool.name.replaceAll("_", " "));
  const lineWords = keywords(shortLine(tool.description, 200));
  let score = 0;
  for (const word of textKeywords) {
    if (nameWords.has(word)) score += 2;
    else if (lineWords.has(word)) score += 1;
  }
  return score;
}

/** Exact tool names (with their underscores) that a text mentions, such as a rule or the skills index. */
export function mentionedTools(tools: readonly ToolInfo[], text: string): Set<string> {
  const mentioned = new Set<string>();
  for (const tool of tools) {
    if (new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(tool.name)}($|[^A-Za-z0-9_])`).test(text)) mentioned.add(tool.name);
  }
  return mentioned;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
