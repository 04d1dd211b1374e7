import { basename } from "node:path";
import {
  ENV_GROUPS,
  ENV_VARIABLES,
  type EnvGroup,
  type EnvVariableSpec,
  PLANNED_ENV_VARIABLES,
} from "./envVariables.ts";

// The variables tables of docs/configuration.md, generated from the registry (`npm run docs:env` writes them,
// test/config/envDocs.test.ts fails when the page is out of date), and the words both the page and
// `assistant config env list` use for a default.

export const DOCS_BEGIN = "<!-- env:begin: generated, edit packages/assistant/src/config/envVariables.ts -->";
export const DOCS_END = "<!-- env:end -->";

/** A variable's default in words: its fixed value, how it is computed, or "" when there is none. */
export function defaultText(spec: EnvVariableSpec): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  return spec.default === undefined ? "" : spec.type.show(spec.default);
}

/** The generated part of docs/configuration.md: one table per domain, then the names reserved for later. */
export function envVariablesMarkdown(): string {
  const sections: string[] = [];
  for (const group of Object.keys(ENV_GROUPS) as EnvGroup[]) {
    const specs: EnvVariableSpec[] = Object.values(ENV_VARIABLES).filter((spec) => spec.group === group);
    const { title, doc } = ENV_GROUPS[group];
    sections.push(
      `### ${title} ([${basename(doc)}](${basename(doc)}))\n\n${table(
        ["variable", "default", "allowed", "meaning"],
        specs.map((spec) => [
          `\`${spec.name}\``,
          code(defaultText(spec)),
          placeholders(spec.type.allowed),
          spec.meaning,
        ]),
      )}`,
    );
  }
  sections.push(
    `### Reserved for features not built yet\n\nThese names are taken by features to come; this version reads none of them, so setting one changes nothing.\n\n${table(
      ["variable", "feature", "meaning"],
      PLANNED_ENV_VARIABLES.map((planned) => [`\`${planned.name}\``, planned.feature, planned.meaning]),
    )}`,
  );
  return `${DOCS_BEGIN}\n\n${sections.join("\n\n")}\n\n${DOCS_END}`;
}

/** `text` with the generated block replaced; throws when the markers are missing. */
export function replaceGeneratedBlock(text: string): string {
  const begin = text.indexOf(DOCS_BEGIN);
  const end = text.indexOf(DOCS_END);
  if (begin < 0 || end < begin) throw new Error(`the markers ${DOCS_BEGIN} and ${DOCS_END} are missing`);
  return text.slice(0, begin) + envVariablesMarkdown() + text.slice(end + DOCS_END.length);
}

/** A plain value in backticks; words ("the calibration, else ...") and blanks stay as they are. */
function code(value: string): string {
  if (value === "" || value.includes("`") || value.includes(" ")) return value;
  return `\`${value}\``;
}

/** `<provider>:<model>` would read as an HTML tag in Markdown: such words go in backticks. */
function placeholders(text: string): string {
  return text.replace(/(\S*<[^>]+>\S*)/g, "`$1`");
}

function table(header: string[], rows: string[][]): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => cell.replace(/\|/g, "\\|")));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(cells[0]!), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...cells.slice(1).map(line)].join(
    "\n",
  );
}
