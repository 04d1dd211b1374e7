// Fuel metering by binary rewrite: the JS SDK cannot count instructions, so the module counts them itself. A new
// mutable i64 global holds the fuel; every function body and every loop body starts by subtracting its length and
// traps once the fuel is below zero. Every exported function gets a wrapper that fills the tank and calls it, so
// each host call starts with the full limit while internal calls (recursion included) keep draining it.
//
// Unit: one WebAssembly instruction (each opcode, block markers included). Code outside any loop runs at most once
// per function call and code in a loop at most once per iteration (the only backward jumps go to a loop's start),
// so charging a region's whole length when it is entered over-approximates: fuel used >= instructions executed.
import {
  concat,
  Reader,
  readImport,
  section,
  sectionOrder,
  uleb,
  WasmBinaryError,
  WebAssemblyApi,
} from "./wasmBinary.ts";

/**
 * V8's message for the trap the fuel check raises (i32.div_s of INT32_MIN by -1): toolchains do not emit that
 * division for ordinary code, so it tells fuel exhaustion apart from a plugin's own trap (unreachable, bounds...).
 */
export const FUEL_EXHAUSTED_TRAP = "divide result unrepresentable";

const REF_NULL = 0x63;
const REF = 0x64;

interface Section {
  id: number;
  /** Offset of the section's id byte. */
  start: number;
  contentStart: number;
  end: number;
}

/** What the rewrite needs to know: the sections, how function and global indices are laid out, the exports. */
interface Layout {
  sections: Section[];
  /** Parameter count of each type. */
  paramCounts: number[];
  importedFunctions: number;
  importedGlobals: number;
  /** Type index of each function defined in the module. */
  functionTypes: number[];
  /** The global section's entries after its count (kept as they are). */
  globalEntries: Uint8Array;
  globalCount: number;
  exports: { name: Uint8Array; kind: number; index: number }[];
}

/** `wasm` (a valid module) metered with `fuel` units per host call; throws WasmBinaryError on code it cannot decode. */
export function meterWasm(wasm: Uint8Array, fuel: number): Uint8Array {
  if (!Number.isSafeInteger(fuel) || fuel < 1) throw new WasmBinaryError(`invalid fuel limit ${fuel}`);
  const layout = readLayout(wasm);
  if (!layout.sections.some((s) => s.id === 10)) return wasm; // no function bodies: no code can run
  const fuelGlobal = layout.importedGlobals + layout.globalCount;
  const limit = sleb(BigInt(fuel));

  // One wrapper per exported function defined here (an exported import runs no WebAssembly code).
  const wrappers = new Map<number, number>();
  for (const e of layout.exports) {
    if (e.kind !== 0 || e.index < layout.importedFunctions || wrappers.has(e.index)) continue;
    wrappers.set(e.index, layout.importedFunctions + layout.functionTypes.length + wrappers.size);
  }
  const typeOf = (f: number) => layout.functionTypes[f - layout.importedFunctions]!;
  const wrapped = [...wrappers.keys()];

  const parts: Uint8Array[] = [wasm.subarray(0, 8)];
  let globalsDone = false;
  for (const s of layout.sections) {
    // A module without globals gets a global section before the first section that must follow it.
    if (!globalsDone && s.id !== 0 && sectionOrder(s.id) > 6) {
      parts.push(section(6, [uleb(1), fuelGlobalEntry(limit)]));
      globalsDone = true;
    }
    if (s.id === 3) {
      const types = [...layout.functionTypes, ...wrapped.map(typeOf)];
      parts.push(section(3, [uleb(types.length), types.flatMap(uleb)]));
    } else if (s.id === 6) {
      parts.push(section(6, [uleb(layout.globalCount + 1), layout.globalEntries, fuelGlobalEntry(limit)]));
      globalsDone = true;
    } else if (s.id === 7) {
      const entries = layout.exports.map((e) => {
        const index = e.kind === 0 ? (wrappers.get(e.index) ?? e.index) : e.index;
        return [...uleb(e.name.length), ...e.name, e.kind, ...uleb(index)];
      });
      parts.push(section(7, [uleb(entries.length), entries.flat()]));
    } else if (s.id === 10) {
      const bodies = meterCode(new Reader(wasm, s.contentStart, s.end), fuelGlobal);
      const added = wrapped.map((f) => wrapperBody(f, layout.paramCounts[typeOf(f)]!, limit, fuelGlobal));
      parts.push(section(10, [uleb(bodies.count + added.length), ...bodies.parts, ...added]));
    } else {
      parts.push(wasm.subarray(s.start, s.end));
    }
  }
  const bytes = concat(parts);
  if (!WebAssemblyApi.validate(bytes)) throw new WasmBinaryError("the metered module does not validate");
  return bytes;
}

function readLayout(wasm: Uint8Array): Layout {
  const layout: Layout = {
    sections: [],
    paramCounts: [],
    importedFunctions: 0,
    importedGlobals: 0,
    functionTypes: [],
    globalEntries: new Uint8Array(),
    globalCount: 0,
    exports: [],
  };
  const top = new Reader(wasm, 8, wasm.length);
  while (top.offset < wasm.length) {
    const start = top.offset;
    const id = top.byte();
    const size = top.uleb();
    const contentStart = top.offset;
    top.offset += size;
    if (top.offset > wasm.length) throw new WasmBinaryError("section past the end of the module");
    layout.sections.push({ id, start, contentStart, end: top.offset });
    const r = new Reader(wasm, contentStart, top.offset);
    if (id === 1) {
      for (let n = r.uleb(); n > 0; n--) layout.paramCounts.push(readFunctionType(r));
    } else if (id === 2) {
      for (let n = r.uleb(); n > 0; n--) {
        const kind = readImport(r, r.name()).kind;
        if (kind === "function") layout.importedFunctions++;
        else if (kind === "global") layout.importedGlobals++;
      }
    } else if (id === 3) {
      for (let n = r.uleb(); n > 0; n--) layout.functionTypes.push(r.uleb());
    } else if (id === 6) {
      layout.globalCount = r.uleb();
      layout.globalEntries = wasm.subarray(r.offset, r.end);
    } else if (id === 7) {
      for (let n = r.uleb(); n > 0; n--) {
        const length = r.uleb();
        const name = wasm.subarray(r.offset, r.offset + length);
        r.offset += length;
        layout.exports.push({ name, kind: r.byte(), index: r.uleb() });
      }
    }
  }
  return layout;
}

/** Reads one type section entry; returns its parameter count. */
function readFunctionType(r: Reader): number {
  if (r.byte() !== 0x60) throw new WasmBinaryError("garbage-collection types (rec, struct, array) are not supported");
  const params = r.uleb();
  for (let n = params; n > 0; n--) valueType(r);
  for (let n = r.uleb(); n > 0; n--) valueType(r);
  return params;
}

/** The fuel counter: a mutable i64 starting full (a module's own start section runs on it). */
function fuelGlobalEntry(limit: number[]): number[] {
  return [0x7e, 0x01, 0x42, ...limit, 0x0b];
}

/** Refills the tank, then calls the original with the wrapper's own parameters. */
function wrapperBody(target: number, params: number, limit: number[], fuelGlobal: number): Uint8Array {
  const body = [0x00, 0x42, ...limit, 0x24, ...uleb(fuelGlobal)];
  for (let i = 0; i < params; i++) body.push(0x20, ...uleb(i));
  body.push(0x10, ...uleb(target), 0x0b);
  return Uint8Array.from([...uleb(body.length), ...body]);
}

/** fuel -= cost; if (fuel < 0) INT32_MIN / -1 (traps with FUEL_EXHAUSTED_TRAP). Leaves the operand stack as it was. */
function charge(cost: number, fuelGlobal: number): Uint8Array {
  const g = uleb(fuelGlobal);
  return Uint8Array.from([
    ...[0x23, ...g, 0x42, ...sleb(BigInt(cost)), 0x7d, 0x24, ...g],
    ...[0x23, ...g, 0x42, 0x00, 0x53, 0x04, 0x40],
    ...[0x41, 0x80, 0x80, 0x80, 0x80, 0x78, 0x41, 0x7f, 0x6d, 0x1a, 0x0b],
  ]);
}

/** The code section's bodies, each with charges inserted at its start and at the start of every loop body. */
function meterCode(r: Reader, fuelGlobal: number): { count: number; parts: Uint8Array[] } {
  const count = r.uleb();
  const parts: Uint8Array[] = [];
  for (let n = count; n > 0; n--) {
    const size = r.uleb();
    const end = r.offset + size;
    if (end > r.end) throw new WasmBinaryError("function body past the end of the code section");
    parts.push(...meterBody(new Reader(r.bytes, r.offset, end), fuelGlobal));
    r.offset = end;
  }
  return { count, parts };
}

/**
 * Splits the body into regions (the function's top level, and each loop's body without its nested loops), counts
 * each region's instructions, and charges that count where the region is entered.
 */
function meterBody(r: Reader, fuelGlobal: number): Uint8Array[] {
  const start = r.offset;
  for (let n = r.uleb(); n > 0; n--) {
    r.uleb();
    valueType(r);
  }
  const costs = [0];
  const entries = [{ at: r.offset, region: 0 }];
  const open = [0]; // the region each open block belongs to; the function body is the outermost block
  while (open.length > 0) {
    const region = open[open.length - 1]!;
    costs[region]!++;
    const effect = instruction(r);
    if (effect === "loop") {
      entries.push({ at: r.offset, region: costs.length });
      open.push(costs.length);
      costs.push(0);
    } else if (effect === "block") open.push(region);
    else if (effect === "end") open.pop();
  }
  if (r.offset !== r.end) throw new WasmBinaryError("a function body continues after its final end");
  const pieces: Uint8Array[] = [];
  let from = start;
  for (const { at, region } of entries) {
    pieces.push(r.bytes.subarray(from, at), charge(costs[region]!, fuelGlobal));
    from = at;
  }
  pieces.push(r.bytes.subarray(from, r.end));
  const size = pieces.reduce((sum, p) => sum + p.length, 0);
  return [Uint8Array.from(uleb(size)), ...pieces];
}

type Effect = "block" | "loop" | "end" | "none";

/** Decodes one instruction, skipping its immediates; says whether it opens or closes a block. */
function instruction(r: Reader): Effect {
  const at = r.offset;
  const op = r.byte();
  if (op >= 0x45 && op <= 0xc4) return "none"; // numeric operators, sign extension
  if (op >= 0x28 && op <= 0x3e) {
    memarg(r); // loads and stores
    return "none";
  }
  switch (op) {
    case 0x00: // unreachable
    case 0x01: // nop
    case 0x05: // else
    case 0x0a: // throw_ref
    case 0x0f: // return
    case 0x19: // catch_all
    case 0x1a: // drop
    case 0x1b: // select
    case 0xd1: // ref.is_null
    case 0xd3: // ref.eq
    case 0xd4: // ref.as_non_null
      return "none";
    case 0x02: // block
    case 0x04: // if
    case 0x06: // try (legacy exceptions)
      blockType(r);
      return "block";
    case 0x03:
      blockType(r);
      return "loop";
    case 0x1f: // try_table: block type, then catch clauses (kind, [tag], label)
      blockType(r);
      for (let n = r.uleb(); n > 0; n--) {
        const kind = r.byte();
        if (kind > 3) throw new WasmBinaryError(`unknown catch clause ${kind} at byte ${at}`);
        if (kind < 2) r.uleb();
        r.uleb();
      }
      return "block";
    case 0x0b:
      return "end";
    case 0x18: // delegate: a label, and it closes its try like end
      r.uleb();
      return "end";
    case 0x07: // catch tag
    case 0x08: // throw tag
    case 0x09: // rethrow label
    case 0x0c: // br
    case 0x0d: // br_if
    case 0x10: // call
    case 0x12: // return_call
    case 0x14: // call_ref
    case 0x15: // return_call_ref
    case 0x20: // local.get
    case 0x21: // local.set
    case 0x22: // local.tee
    case 0x23: // global.get
    case 0x24: // global.set
    case 0x25: // table.get
    case 0x26: // table.set
    case 0x3f: // memory.size
    case 0x40: // memory.grow
    case 0xd2: // ref.func
    case 0xd5: // br_on_null
    case 0xd6: // br_on_non_null
      r.uleb();
      return "none";
    case 0x11: // call_indirect: type, table
    case 0x13: // return_call_indirect
      r.uleb();
      r.uleb();
      return "none";
    case 0x0e: // br_table: the labels, then the default
      for (let n = r.uleb() + 1; n > 0; n--) r.uleb();
      return "none";
    case 0x1c: // select with types
      for (let n = r.uleb(); n > 0; n--) valueType(r);
      return "none";
    case 0x41: // i32.const
    case 0x42: // i64.const
    case 0xd0: // ref.null heap type
      skipLeb(r);
      return "none";
    case 0x43:
      skip(r, 4);
      return "none";
    case 0x44:
      skip(r, 8);
      return "none";
    case 0xfc:
      miscInstruction(r, at);
      return "none";
    case 0xfd:
      simdInstruction(r, at);
      return "none";
    case 0xfe:
      atomicInstruction(r, at);
      return "none";
    case 0xfb:
      throw new WasmBinaryError(`garbage-collection instructions are not supported (byte ${at})`);
  }
  throw new WasmBinaryError(`unknown opcode 0x${op.toString(16)} at byte ${at}`);
}

/** 0xFC: saturating truncations, bulk memory, table operations. */
function miscInstruction(r: Reader, at: number): void {
  const op = r.uleb();
  if (op <= 7) return; // trunc_sat
  // memory.init (data, memory), data.drop, memory.copy (2 memories), memory.fill, table.init (element, table),
  // elem.drop, table.copy (2 tables), table.grow, table.size, table.fill
  const immediates = [2, 1, 2, 1, 2, 1, 2, 1, 1, 1][op - 8];
  if (immediates === undefined) throw new WasmBinaryError(`unknown opcode 0xfc ${op} at byte ${at}`);
  for (let n = immediates; n > 0; n--) r.uleb();
}

/** 0xFD: fixed-width SIMD and relaxed SIMD. */
function simdInstruction(r: Reader, at: number): void {
  const op = r.uleb();
  if (op <= 11 || op === 92 || op === 93)
    memarg(r); // loads, store, load32_zero, load64_zero
  else if (op === 12 || op === 13)
    skip(r, 16); // v128.const, i8x16.shuffle
  else if (op >= 21 && op <= 34)
    skip(r, 1); // extract_lane, replace_lane
  else if (op >= 84 && op <= 91) {
    memarg(r); // load*_lane, store*_lane
    skip(r, 1);
  } else if (op > 0x113) throw new WasmBinaryError(`unknown opcode 0xfd ${op} at byte ${at}`);
}

/** 0xFE: threads (notify, wait, fence, atomic loads, stores and read-modify-writes). */
function atomicInstruction(r: Reader, at: number): void {
  const op = r.uleb();
  if (op === 3)
    skip(r, 1); // atomic.fence
  else if (op <= 2 || (op >= 0x10 && op <= 0x4e)) memarg(r);
  else throw new WasmBinaryError(`unknown opcode 0xfe ${op} at byte ${at}`);
}

/** Alignment (bit 6 set: a memory index follows) and offset. */
function memarg(r: Reader): void {
  if (r.uleb() & 0x40) r.uleb();
  r.uleb();
}

/** A value type: one byte, or (ref [null] heap type) with an s33 heap type. */
function valueType(r: Reader): void {
  const b = r.byte();
  if (b === REF || b === REF_NULL) skipLeb(r);
}

/** 0x40, a value type, or a type index as a multi-byte s33. */
function blockType(r: Reader): void {
  const b = r.byte();
  if (b === REF || b === REF_NULL || b & 0x80) skipLeb(r);
}

function skipLeb(r: Reader): void {
  for (let length = 1; r.byte() & 0x80; length++) {
    if (length >= 10) throw new WasmBinaryError("LEB128 too long");
  }
}

function skip(r: Reader, n: number): void {
  r.offset += n;
  if (r.offset > r.end) throw new WasmBinaryError("unexpected end of section");
}

function sleb(value: bigint): number[] {
  const out: number[] = [];
  let rest = value;
  for (;;) {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    const done = (rest === 0n && !(low & 0x40)) || (rest === -1n && low & 0x40);
    out.push(done ? low : low | 0x80);
    if (done) return out;
  }
}
