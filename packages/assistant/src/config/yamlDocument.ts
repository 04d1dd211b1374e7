import { isDeepStrictEqual } from "node:util";
import { type Document, isCollection, isNode, isScalar, isSeq, parseDocument } from "yaml";
import type * as z from "zod";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { ConfigError } from "../util/errors.ts";
import { readConfigText } from "../util/fileText.ts";
import { validateConfigValue } from "./configValue.ts";
import { detectIndent, type IndentStyle, preserveFormatting } from "./yamlFormat.ts";

// Reading and editing the YAML config files through yaml's Document API, so that the user's comments, key order
// and quoting survive every edit the CLI, the UI or doctor makes.

export type YamlKeyPath = string | readonly (string | number)[];

// lineWidth 0: never fold long strings the user wrote on one line.
const STRINGIFY = { lineWidth: 0, indent: 2, indentSeq: true };

/** Parses YAML text; a syntax error (or a second document) is a ConfigError naming the line and column. */
export function parseYaml(text: string, file: string): Document {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const pos = error.linePos?.[0];
    const reason = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigError(file, pos ? `line ${pos.line}, column ${pos.col}` : "", `YAML syntax error: ${reason}`);
  }
  return doc;
}

/** The plain value of a parsed document (null for an empty one). Alias bombs are refused by yaml's alias limit. */
export function yamlDocumentValue(doc: Document, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ConfigError(file, "", `YAML error: ${(error as Error).message}`);
  }
}

/** Serializes a document for writing; an emptied document keeps its comments instead of becoming `null`. */
export function renderYaml(doc: Document, style: IndentStyle = STRINGIFY): string {
  if (doc.contents !== null) return doc.toString({ ...STRINGIFY, ...style });
  const comments = [doc.commentBefore, doc.comment].filter((c): c is string => Boolean(c));
  return comments.length === 0
    ? ""
    : `${comments
        .join("\n")
        .split("\n")
        .map((line) => `#${line}`)
        .join("\n")}\n`;
}

function toPath(path: YamlKeyPath): (string | number)[] {
  return typeof path === "string" ? path.split(".") : [...path];
}

/** The plain value at `path` (`"task_types.conversation.primary"` or an array for keys containing dots). */
export function getYamlValue(doc: Document, path: YamlKeyPath): unknown {
  const node = doc.getIn(toPath(path), true);
  return isNode(node) ? node.toJS(doc) : node;
}

/**
 * Sets the value at `path`, creating missing mappings on the way (undefined deletes it). Replacing a scalar keeps
 * the comments attached to it; objects and lists become proper YAML nodes so later edits can reach inside them.
 */
export function setYamlValue(doc: Document, path: YamlKeyPath, value: unknown): void {
  const keys = toPath(path);
  if (value === undefined) {
    doc.deleteIn(keys);
    return;
  }
  const parent = keys.length > 1 ? doc.getIn(keys.slice(0, -1), true) : doc.contents;
  if (parent !== undefined && parent !== null && !isCollection(parent)) {
    throw new Error(`cannot set ${keys.join(".")}: ${keys.slice(0, -1).join(".") || "the document"} is not a mapping`);
  }
  const current = doc.getIn(keys, true);
  if (isNode(current) && isDeepStrictEqual(current.toJS(doc), value)) return; // unchanged: keep its formatting
  if (isScalar(current) && (value === null || typeof value !== "object")) {
    current.value = value;
    return;
  }
  doc.setIn(keys, value !== null && typeof value === "object" ? doc.createNode(value) : value);
}

/**
 * Appends `value` to the list at `path` unless it is already there (creating the list if needed). The existing
 * items and their comments stay, which replacing the whole list with setYamlValue would lose.
 */
export function addToYamlList(doc: Document, path: YamlKeyPath, value: unknown): boolean {
  const keys = toPath(path);
  const list = doc.getIn(keys, true);
  if (list === undefined || list === null || (isScalar(list) && list.value === null)) {
    setYamlValue(doc, keys, [value]);
    return true;
  }
  if (!isSeq(list)) throw new Error(`cannot add to ${keys.join(".")}: it is not a list`);
  if (list.items.some((item) => isDeepStrictEqual(isNode(item) ? item.toJS(doc) : item, value))) return false;
  list.add(doc.createNode(value));
  return true;
}

export function deleteYamlValue(doc: Document, path: YamlKeyPath): boolean {
  return doc.deleteIn(toPath(path));
}

/** Reads a YAML file into a Document; a missing file gives an empty document. */
export function readYamlFile(path: string): { doc: Document; exists: boolean; text: string } {
  const text = readConfigText(path);
  return { doc: parseYaml(text ?? "", path), exists: text !== undefined, text: text ?? "" };
}

/**
 * Applies `edit` to the file's document and writes it back atomically (mode 0600). With a schema the edited
 * document is validated first, so an edit can never leave an invalid file: on error the file is untouched.
 * An edit that changes nothing writes nothing, so the file stays byte-identical.
 */
export function updateYamlFile(
  path: string,
  edit: (doc: Document) => void,
  schema?: z.ZodType,
): { changed: boolean; text: string } {
  const { doc, exists, text } = readYamlFile(path);
  const before = doc.toString(STRINGIFY);
  edit(doc);
  if (doc.toString(STRINGIFY) === before && (exists || doc.contents === null)) return { changed: false, text };
  if (schema) validateConfigValue(schema, yamlDocumentValue(doc, path), path);
  const after = preserveFormatting(text, renderYaml(doc, detectIndent(text)));
  writeFileAtomic(path, after, 0o600);
  return { changed: true, text: after };
}
