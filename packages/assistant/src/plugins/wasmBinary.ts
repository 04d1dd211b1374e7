// Section-level surgery on a WebAssembly binary before the plugin runtime instantiates it: the JS SDK has no memory
// limit and runs start functions outside any timeout, so the memory maximum is capped here and the start section is
// turned into an export the runtime calls like any other (under its timeout).

/** The binary is malformed or uses something the sandbox refuses (imported memory, a memory larger than the cap). */
export class WasmBinaryError extends Error {}

export interface WasmImport {
  module: string;
  name: string;
  kind: "function" | "table" | "memory" | "global" | "tag";
}

export interface PreparedWasm {
  /** The rewritten binary: every memory has a maximum of at most the cap, no start section. */
  bytes: Uint8Array;
  imports: WasmImport[];
  /** Names of exported functions, without the start export added here. */
  exports: string[];
  /** The export that runs the module's former start function, or null when it had none. */
  startExport: string | null;
}

/** Node's WebAssembly global: the project's TypeScript lib (es2023, no DOM) declares its types but not the value. */
export const WebAssemblyApi = (globalThis as unknown as { WebAssembly: WebAssemblyValue }).WebAssembly;

interface WebAssemblyValue {
  validate(bytes: Uint8Array): boolean;
  compile(bytes: Uint8Array): Promise<WebAssembly.Module>;
  Instance: new (module: WebAssembly.Module, imports: Record<string, Record<string, () => number>>) => unknown;
}

/** Added export for the former start function; a name no plugin toolchain emits. */
export const START_EXPORT = "__assistant_start";
const MAX_PAGES_32 = 65_536;
const IMPORT_KINDS = ["function", "table", "memory", "global", "tag"] as const;

export class Reader {
  offset: number;
  readonly bytes: Uint8Array;
  readonly end: number;
  constructor(bytes: Uint8Array, offset: number, end: number) {
    this.bytes = bytes;
    this.offset = offset;
    this.end = end;
  }
  byte(): number {
    if (this.offset >= this.end) throw new WasmBinaryError("unexpected end of section");
    return this.bytes[this.offset++]!;
  }
  /** Unsigned LEB128; exact up to 2^53, enough for page counts and indices. */
  uleb(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
      if (scale > 2 ** 63) throw new WasmBinaryError("LEB128 too long");
    }
  }
  name(): string {
    const length = this.uleb();
    const start = this.offset;
    this.offset += length;
    if (this.offset > this.end) throw new WasmBinaryError("name past end of section");
    return new TextDecoder().decode(this.bytes.subarray(start, this.offset));
  }
  limits(): { flags: number; min: number; max: number | null } {
    const flags = this.byte();
    const min = this.uleb();
    return { flags, min, max: flags & 1 ? this.uleb() : null };
  }
}

export function uleb(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    const low = rest % 128;
    rest = Math.floor(rest / 128);
    out.push(rest > 0 ? low | 0x80 : low);
  } while (rest > 0);
  return out;
}

function encodeName(name: string): number[] {
  const bytes = new TextEncoder().encode(name);
  return [...uleb(bytes.length), ...bytes];
}

/** A section from its id and content pieces (the size prefix is computed). */
export function section(id: number, content: ReadonlyArray<number[] | Uint8Array>): Uint8Array {
  const size = content.reduce((sum, c) => sum + c.length, 0);
  return concat([
    Uint8Array.from([id, ...uleb(size)]),
    ...content.map((c) => (c instanceof Uint8Array ? c : Uint8Array.from(c))),
  ]);
}

/** Where a section id sits in the required order: tag (13) between memory and global, data count (12) between
 * element and code. */
export function sectionOrder(id: number): number {
  if (id === 13) return 5.5;
  return id === 12 ? 9.5 : id;
}

/** Caps every declared memory at `maxPages`, moves the start function to an export, lists imports and exports. */
export function prepareWasm(wasm: Uint8Array, maxPages: number): PreparedWasm {
  if (!WebAssemblyApi.validate(wasm)) throw new WasmBinaryError("not a valid WebAssembly module");
  const header = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (header.some((b, i) => wasm[i] !== b)) throw new WasmBinaryError("not a WebAssembly 1.0 binary");
  const cap = Math.min(maxPages, MAX_PAGES_32);

  const parts: Uint8Array[] = [wasm.subarray(0, 8)];
  const imports: WasmImport[] = [];
  const exports: string[] = [];
  let startFunction: number | null = null;
  let exportEntries: number[] = [];
  let exportCount = 0;
  let exportPart = -1;
  const top = new Reader(wasm, 8, wasm.length);
  while (top.offset < wasm.length) {
    const id = top.byte();
    const size = top.uleb();
    const start = top.offset;
    const end = start + size;
    const body = new Reader(wasm, start, end);
    top.offset = end;
    if (id === 2) {
      for (let n = body.uleb(); n > 0; n--) {
        imports.push(readImport(body, body.name()));
      }
    } else if (id === 5) {
      const memories: number[] = [];
      let n = body.uleb();
      memories.push(...uleb(n));
      for (; n > 0; n--) memories.push(...capLimits(body.limits(), cap));
      parts.push(section(5, [memories]));
      continue;
    } else if (id === 7) {
      exportCount = body.uleb();
      for (let n = exportCount; n > 0; n--) {
        const name = body.name();
        const kind = body.byte();
        body.uleb();
        if (kind === 0) exports.push(name);
      }
      exportEntries = [...wasm.subarray(start + uleb(exportCount).length, end)];
      exportPart = parts.length;
    } else if (id === 8) {
      startFunction = body.uleb();
      continue;
    }
    parts.push(wasm.subarray(start - 1 - uleb(size).length, end));
  }
  if (imports.some((i) => i.kind === "memory")) throw new WasmBinaryError("the module imports its memory");
  if (startFunction !== null) {
    if (exports.includes(START_EXPORT)) throw new WasmBinaryError(`the module already exports ${START_EXPORT}`);
    const entry = [...encodeName(START_EXPORT), 0x00, ...uleb(startFunction)];
    const exportSection = section(7, [[...uleb(exportCount + 1), ...exportEntries, ...entry]]);
    // The export section (id 7) comes after the memory section (5) and before the start section (8).
    if (exportPart >= 0) parts[exportPart] = exportSection;
    else parts.splice(insertionIndex(parts), 0, exportSection);
  }
  const bytes = concat(parts);
  if (!WebAssemblyApi.validate(bytes)) throw new WasmBinaryError("the rewritten module does not validate");
  return { bytes, imports, exports, startExport: startFunction === null ? null : START_EXPORT };
}

export function readImport(body: Reader, module: string): WasmImport {
  const name = body.name();
  const kindByte = body.byte();
  const kind = IMPORT_KINDS[kindByte];
  if (!kind) throw new WasmBinaryError(`unknown import kind ${kindByte}`);
  if (kind === "function") body.uleb();
  else if (kind === "table") {
    body.byte();
    body.limits();
  } else if (kind === "memory") body.limits();
  else if (kind === "global") {
    body.byte();
    body.byte();
  } else {
    body.byte();
    body.uleb();
  }
  return { module, name, kind };
}

function capLimits(limits: { flags: number; min: number; max: number | null }, cap: number): number[] {
  if (limits.flags & ~0x03) throw new WasmBinaryError("64-bit or custom-page memories are not supported");
  if (limits.min > cap) {
    throw new WasmBinaryError(`the module needs ${limits.min} memory pages at start; the limit is ${cap}`);
  }
  const max = limits.max === null ? cap : Math.min(limits.max, cap);
  return [limits.flags | 0x01, ...uleb(limits.min), ...uleb(max)];
}

/** Where a new export section goes: before the first section that must follow it (start, element, code, data...). */
function insertionIndex(parts: Uint8Array[]): number {
  const index = parts.findIndex((part, i) => i > 0 && part[0] !== 0 && sectionOrder(part[0]!) > 7);
  return index === -1 ? parts.length : index;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
