import { z } from "zod";

// Keyword classification of a chat message into exactly one of the six chat categories (docs/models.md).
// Cheap on purpose: it runs on every message before any model is involved. Each category has weighted keywords
// in English and French; the highest score wins, ties go to the earlier category in CATEGORY_ORDER, and a
// message that matches nothing is `conversation`.

export const CHAT_CATEGORIES = [
  "conversation",
  "code_generation",
  "creative_writing",
  "scientific_analysis",
  "data_analysis",
  "system_diagnostic",
] as const;

export type ChatCategory = (typeof CHAT_CATEGORIES)[number];

export const classificationSchema = z.object({
  category: z.enum(CHAT_CATEGORIES),
  /** Score per category; the winner has the highest. */
  scores: z.record(z.enum(CHAT_CATEGORIES), z.number()),
  /** The keywords that matched, for debugging routes. */
  matched: z.array(z.string()),
});

export type Classification = z.infer<typeof classificationSchema>;

type Keywords = Array<[pattern: string, weight: number]>;

// Patterns are matched on word boundaries against the lower-cased message; a trailing * matches any suffix.
const KEYWORDS: Record<Exclude<ChatCategory, "conversation">, Keywords> = {
  code_generation: [
    ["code", 2],
    ["function", 2],
    ["fonction", 2],
    ["bug", 2],
    ["debug*", 2],
    ["refactor*", 3],
    ["compile*", 2],
    ["typescript", 3],
    ["javascript", 3],
    ["python", 3],
    ["rust", 2],
    ["golang", 3],
    ["java", 2],
    ["sql", 1],
    ["regex", 3],
    ["api", 1],
    ["class", 1],
    ["method", 1],
    ["script", 2],
    ["program*", 2],
    ["implement*", 2],
    ["unit test*", 3],
    ["stack trace", 3],
    ["exception", 2],
    ["git", 2],
    ["npm", 2],
    ["snippet", 2],
    ["algorithm*", 2],
    ["algorithme*", 2],
    ["```", 3],
    ["variable", 1],
    ["endpoint", 1],
    ["html", 2],
    ["css", 2],
    ["react", 2],
    ["développe*", 1],
    ["coder", 2],
  ],
  creative_writing: [
    ["poem*", 3],
    ["poème*", 3],
    ["poésie", 3],
    ["story", 3],
    ["stories", 3],
    ["histoire", 2],
    ["conte", 3],
    ["novel", 3],
    ["roman", 3],
    ["lyrics", 3],
    ["song", 2],
    ["chanson", 2],
    ["haiku", 3],
    ["fiction", 3],
    ["character*", 2],
    ["personnage*", 2],
    ["screenplay", 3],
    ["scénario", 2],
    ["creative", 2],
    ["créati*", 2],
    ["imagine", 2],
    ["write a", 1],
    ["écris", 1],
    ["rédige", 1],
    ["slogan", 2],
    ["metaphor*", 2],
  ],
  scientific_analysis: [
    ["physics", 3],
    ["physique", 3],
    ["chemistry", 3],
    ["chimie", 3],
    ["biology", 3],
    ["biologie", 3],
    ["hypothes*", 3],
    ["experiment*", 2],
    ["expérience*", 1],
    ["theorem", 3],
    ["théorème", 3],
    ["proof", 2],
    ["démonstration", 2],
    ["equation*", 3],
    ["équation*", 3],
    ["quantum", 3],
    ["quantique", 3],
    ["molecul*", 3],
    ["scientific", 3],
    ["scientifique", 3],
    ["research paper", 3],
    ["astronom*", 3],
    ["genetic*", 3],
    ["génétique", 3],
    ["calculus", 3],
    ["derivative", 2],
    ["integral", 2],
    ["intégrale", 2],
    ["evolution", 1],
  ],
  data_analysis: [
    ["data", 2],
    ["données", 2],
    ["dataset*", 3],
    ["csv", 3],
    ["spreadsheet*", 3],
    ["tableur", 3],
    ["excel", 3],
    ["statistic*", 3],
    ["statistique*", 3],
    ["average", 2],
    ["moyenne", 2],
    ["median", 2],
    ["médiane", 2],
    ["correlation", 3],
    ["corrélation", 3],
    ["regression", 3],
    ["régression", 3],
    ["chart", 2],
    ["graph", 1],
    ["graphique", 2],
    ["trend*", 2],
    ["tendance*", 2],
    ["pivot", 2],
    ["analy*", 1],
    ["metrics", 1],
    ["forecast*", 2],
    ["prévision*", 2],
    ["percent*", 1],
    ["pourcentage*", 1],
    ["kpi", 3],
    ["dashboard", 2],
  ],
  system_diagnostic: [
    ["error", 2],
    ["erreur", 2],
    ["crash*", 3],
    ["log", 1],
    ["logs", 2],
    ["diagnos*", 3],
    ["troubleshoot*", 3],
    ["dépann*", 3],
    ["cpu", 3],
    ["memory leak", 3],
    ["ram", 2],
    ["disk", 2],
    ["disque", 2],
    ["network", 2],
    ["réseau", 2],
    ["latency", 2],
    ["latence", 2],
    ["daemon", 2],
    ["service", 1],
    ["server", 1],
    ["serveur", 1],
    ["timeout", 2],
    ["permission denied", 3],
    ["port", 1],
    ["systemd", 3],
    ["kernel", 3],
    ["noyau", 2],
    ["install*", 1],
    ["doesn't work", 2],
    ["ne marche pas", 2],
    ["ne fonctionne pas", 2],
    ["slow", 1],
    ["lent", 1],
    ["status", 1],
    ["health", 1],
    ["docker", 2],
  ],
};

const CATEGORY_ORDER: ChatCategory[] = [
  "code_generation",
  "system_diagnostic",
  "data_analysis",
  "scientific_analysis",
  "creative_writing",
  "conversation",
];

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function compile(pattern: string): RegExp {
  const prefix = pattern.endsWith("*");
  const body = escapeRegex(prefix ? pattern.slice(0, -1) : pattern);
  // \p{L} boundaries instead of \b so accented French words match whole words too.
  const start = /^[\p{L}\p{N}]/u.test(pattern) ? "(?<![\\p{L}\\p{N}])" : "";
  const end = prefix || !/[\p{L}\p{N}]$/u.test(body) ? "" : "(?![\\p{L}\\p{N}])";
  return new RegExp(`${start}${body}${prefix ? "[\\p{L}\\p{N}]*" : ""}${end}`, "gu");
}

type CompiledKeywords = Record<
  Exclude<ChatCategory, "conversation">,
  Array<{ pattern: string; weight: number; regex: RegExp }>
>;
let compiled: CompiledKeywords | undefined;

/** Built on first use: the ~200 Unicode-class regexes take ~20 ms to build, which the daemon's start must not pay. */
function compiledKeywords(): CompiledKeywords {
  compiled ??= Object.fromEntries(
    Object.entries(KEYWORDS).map(([category, words]) => [
      category,
      words.map(([pattern, weight]) => ({ pattern, weight, regex: compile(pattern) })),
    ]),
  ) as CompiledKeywords;
  return compiled;
}

/** Classifies a message; always returns one of the six categories. */
export function classifyMessage(message: string): Classification {
  const text = message.toLowerCase().slice(0, 20_000); // bounded work on huge pastes
  const scores = Object.fromEntries(CHAT_CATEGORIES.map((c) => [c, 0])) as Record<ChatCategory, number>;
  const matched: string[] = [];
  for (const [category, words] of Object.entries(compiledKeywords()) as Array<
    [ChatCategory, CompiledKeywords["code_generation"]]
  >) {
    for (const { pattern, weight, regex } of words) {
      regex.lastIndex = 0;
      const hits = text.match(regex)?.length ?? 0;
      if (hits > 0) {
        scores[category] += weight * Math.min(hits, 3);
        matched.push(`${category}:${pattern}`);
      }
    }
  }
  let best: ChatCategory = "conversation";
  for (const category of CATEGORY_ORDER) {
    if (scores[category] > scores[best]) best = category;
  }
  // One weak keyword ("log", "api", "graph") is not enough to leave plain conversation.
  if (scores[best] < 2) best = "conversation";
  return { category: best, scores, matched };
}
