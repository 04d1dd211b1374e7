import { describe, expect, it } from "vitest";
import { inspectWasm, PluginCallError } from "../../src/plugins/runtime.ts";
import { prepareWasm, WasmBinaryError, WebAssemblyApi } from "../../src/plugins/wasmBinary.ts";
import { FUEL_EXHAUSTED_TRAP, meterWasm } from "../../src/plugins/wasmMetering.ts";
import { buildTestPlugin } from "./buildFixtures.ts";

// The metering pass on hand-assembled modules, where the fuel an export needs can be counted exactly, and on the
// compiled test plugins. Unit: one instruction; a function charges its top level on entry, a loop its body on
// every iteration (see wasmMetering.ts).

const I32 = 0x7f;

function leb(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    const low = rest & 0x7f;
    rest >>>= 7;
    out.push(rest ? low | 0x80 : low);
  } while (rest);
  return out;
}

const vec = (items: number[][]) => [...leb(items.length), ...items.flat()];
const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
const str = (s: string) => vec([...new TextEncoder().encode(s)].map((b) => [b]));

interface Func {
  type: number;
  locals?: number[][];
  code: number[];
}

interface ModuleSpec {
  types: number[][];
  funcs: Func[];
  exports: [string, number][];
  /** Raw sections placed by id: 4 table, 5 memory, 9 element, 13 tag... */
  extra?: Record<number, number[]>;
}

function assemble(spec: ModuleSpec): Uint8Array {
  const extra = (id: number) => (spec.extra?.[id] ? section(id, spec.extra[id]) : []);
  const bodies = spec.funcs.map((f) => {
    const body = [...vec(f.locals ?? []), ...f.code];
    return [...leb(body.length), ...body];
  });
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(spec.types)),
    ...section(3, vec(spec.funcs.map((f) => leb(f.type)))),
    ...extra(4),
    ...extra(5),
    ...extra(13),
    ...section(7, vec(spec.exports.map(([name, index]) => [...str(name), 0x00, ...leb(index)]))),
    ...extra(9),
    ...section(10, vec(bodies)),
  ]);
}

type Exports = Record<string, (...args: number[]) => number>;

/** Node's synchronous WebAssembly API (the project's TypeScript lib declares the types, not the value). */
const Wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: { new (bytes: Uint8Array): WebAssembly.Module; exports(module: WebAssembly.Module): { name: string }[] };
      Instance: new (module: WebAssembly.Module, imports: object) => { exports: Exports };
    };
  }
).WebAssembly;

function instantiate(bytes: Uint8Array): Exports {
  return new Wasm.Instance(new Wasm.Module(bytes), {}).exports;
}

function fuelTrap(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  return "no trap";
}

// count(n): loop { n = n - 1; br_if n } -> 3 instructions at the top level, 6 per iteration.
// rec(n): n ? rec(n - 1) + 1 : 0 -> 12 instructions per call.
const counting = assemble({
  types: [[0x60, 1, I32, 1, I32]],
  funcs: [
    { type: 0, code: [0x03, 0x40, 0x20, 0, 0x41, 1, 0x6b, 0x22, 0, 0x0d, 0, 0x0b, 0x20, 0, 0x0b] },
    {
      type: 0,
      code: [0x20, 0, 0x04, I32, 0x20, 0, 0x41, 1, 0x6b, 0x10, 1, 0x41, 1, 0x6a, 0x05, 0x41, 0, 0x0b, 0x0b],
    },
  ],
  exports: [
    ["count", 0],
    ["rec", 1],
  ],
});
const loopFuel = (n: number) => 3 + 6 * n;
const recursionFuel = (n: number) => 12 * (n + 1);

describe("meterWasm", () => {
  it("keeps the module valid, its exports and its results", () => {
    const metered = meterWasm(counting, 1_000_000);
    expect(WebAssemblyApi.validate(metered)).toBe(true);
    const names = (m: Uint8Array) => Wasm.Module.exports(new Wasm.Module(m)).map((e) => e.name);
    expect(names(metered)).toEqual(names(counting));
    const [plain, fueled] = [instantiate(counting), instantiate(metered)];
    for (const n of [1, 2, 17, 500]) {
      expect(fueled.count!(n)).toBe(plain.count!(n));
      expect(fueled.rec!(n)).toBe(plain.rec!(n));
    }
  });

  it("re-points exports to wrappers appended after the module's functions", () => {
    // V8 names an exported function after its index.
    expect(instantiate(counting).count!.name).toBe("0");
    const metered = instantiate(meterWasm(counting, 1_000_000));
    expect([metered.count!.name, metered.rec!.name]).toEqual(["2", "3"]);
  });

  it("runs a loop the fuel covers and traps one instruction short", () => {
    expect(instantiate(meterWasm(counting, loopFuel(1000))).count!(1000)).toBe(0);
    const short = instantiate(meterWasm(counting, loopFuel(1000) - 1));
    expect(fuelTrap(() => short.count!(1000))).toBe(FUEL_EXHAUSTED_TRAP);
  });

  it("meters recursion through the original function, not the wrapper", () => {
    expect(instantiate(meterWasm(counting, recursionFuel(100))).rec!(100)).toBe(100);
    const short = instantiate(meterWasm(counting, recursionFuel(100) - 1));
    expect(fuelTrap(() => short.rec!(100))).toBe(FUEL_EXHAUSTED_TRAP);
  });

  it("refills the fuel on every call from the host", () => {
    const exports = instantiate(meterWasm(counting, loopFuel(1000)));
    for (let i = 0; i < 5; i++) expect(exports.count!(1000)).toBe(0);
    expect(fuelTrap(() => exports.count!(1001))).toBe(FUEL_EXHAUSTED_TRAP);
    expect(exports.count!(10)).toBe(0);
  });

  it("meters a start section with the full limit", () => {
    // (module (func $spin (loop (br 0))) (start $spin))
    const spinsAtStart = Uint8Array.from([
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x08,
      0x01, 0x00, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b,
    ]);
    const metered = meterWasm(spinsAtStart, 10_000);
    expect(fuelTrap(() => instantiate(metered))).toBe(FUEL_EXHAUSTED_TRAP);
  });

  it("decodes SIMD, bulk memory, atomics, br_table, call_indirect, typed select, exceptions and type-index blocks", () => {
    const dummies = Array.from({ length: 68 }, () => [0x60, 0, 0]);
    // Type 70: [i32] -> [i32], used as a loop's block type (a two-byte s33 index).
    const types = [[0x60, 1, I32, 1, I32], [0x60, 0, 0], ...dummies, [0x60, 1, I32, 1, I32]];
    const simd = (op: number, ...immediates: number[]) => [0xfd, ...leb(op), ...immediates];
    const code = [
      // br_table [0, 1] default 2: x == 0 -> x = 7; x <= 1 -> x += 100
      ...[0x02, 0x40, 0x02, 0x40, 0x02, 0x40, 0x20, 0, 0x0e, 2, 0, 1, 2, 0x0b, 0x41, 7, 0x21, 0, 0x0b],
      ...[0x20, 0, 0x41, 0xe4, 0x00, 0x6a, 0x21, 0, 0x0b],
      // call_indirect: x = double(x) through table 0
      ...[0x20, 0, 0x41, 0, 0x11, 0, 0, 0x21, 0],
      // memory: store splat(x) at 0, fill 16..32 with 0xab, copy 0..16 to 32
      ...[0x41, 0, 0x20, 0, ...simd(17), ...simd(11, 4, 0)],
      ...[0x41, 16, 0x41, 0xab, 0x01, 0x41, 16, 0xfc, 11, 0],
      ...[0x41, 32, 0x41, 0, 0x41, 16, 0xfc, 10, 0, 0],
      // extract lane 1 of shuffle(load 32, const) -> x
      ...[0x41, 32, ...simd(0, 4, 0), ...simd(12, ...Array.from({ length: 16 }, (_, i) => i))],
      ...simd(13, ...Array.from({ length: 16 }, (_, i) => 15 - i)),
      ...simd(27, 1),
      // + byte lane 3 loaded from 16 (0xab)
      ...[0x41, 16, ...simd(12, ...new Array(16).fill(0)), ...simd(84, 0, 0, 3), ...simd(22, 3), 0x6a],
      // + typed select(1, 2, x)
      ...[0x41, 1, 0x41, 2, 0x20, 0, 0x1c, 1, I32, 0x6a],
      // + trunc_sat(1e300) wraps into the sum, + wrap(i64 -123456789012), + ref.is_null(ref.null func), + table.size
      ...[0x44, 0x9c, 0x75, 0x00, 0x88, 0x3c, 0xe4, 0x37, 0x7e, 0xfc, 2, 0x6a],
      ...[0x42, 0xec, 0xcb, 0x9b, 0x8b, 0xb4, 0x7c, 0xa7, 0x6a, 0xd0, 0x70, 0xd1, 0x6a, 0xfc, 16, 0, 0x6a],
      // + atomic add at 48 (old value 0), fence
      ...[0x41, 48, 0x41, 5, 0xfe, 0x1e, 2, 0, 0x6a, 0xfe, 3, 0],
      // + try { throw } catch_all { 3 }
      ...[0x06, I32, 0x08, 0, 0x19, 0x41, 3, 0x0b, 0x6a],
      // + loop of type 70 counting 4 down to 0 through its parameter
      ...[0x41, 4, 0x03, 0xc6, 0x00, 0x41, 1, 0x6b, 0x22, 1, 0x20, 1, 0x0d, 0, 0x0b, 0x6a],
      0x0b,
    ];
    const module = assemble({
      types,
      funcs: [
        { type: 0, locals: [[1, I32]], code },
        { type: 0, code: [0x20, 0, 0x41, 2, 0x6c, 0x0b] },
      ],
      exports: [["sink", 0]],
      extra: {
        4: vec([[0x70, 0x00, 1]]),
        5: vec([[0x00, 1]]),
        13: vec([[0x00, 1]]),
        9: vec([[0x00, 0x41, 0, 0x0b, ...vec([[1]])]]),
      },
    });
    expect(WebAssemblyApi.validate(module)).toBe(true);
    const metered = meterWasm(module, 1_000_000);
    expect(WebAssemblyApi.validate(metered)).toBe(true);
    for (const x of [0, 1, 2, 12345]) expect(instantiate(metered).sink!(x)).toBe(instantiate(module).sink!(x));
    expect(fuelTrap(() => instantiate(meterWasm(module, 50)).sink!(1))).toBe(FUEL_EXHAUSTED_TRAP);
  });

  it("counts one unit per instruction, whatever its immediates", () => {
    const v128 = [0xfd, 12, ...new Array(16).fill(0)];
    const code = [
      ...[0x41, 1, 0x41, 2, 0x41, 0, 0x1c, 1, I32, 0x1a], // typed select: 5
      ...[0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 10, 0, 0], // memory.copy: 4
      ...[0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 11, 0], // memory.fill: 4
      ...[...v128, 0xfd, 27, 3, 0x1a], // extract_lane: 3
      ...[0x41, 0, ...v128, 0xfd, 84, 0, 0, 1, 0x1a], // load8_lane: 4
      ...[0x44, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x1a, 0x42, 0xec, 0xcb, 0x9b, 0x8b, 0xb4, 0x7c, 0x1a], // 4
      ...[0x02, 0x40, 0x41, 0, 0x0e, 2, 0, 0, 0, 0x0b], // br_table in a block: 4
      0x0b, // 1
    ];
    const module = assemble({
      types: [[0x60, 0, 0]],
      funcs: [{ type: 0, code }],
      exports: [["f", 0]],
      extra: { 5: vec([[0x00, 1]]) },
    });
    expect(() => instantiate(meterWasm(module, 29)).f!()).not.toThrow();
    expect(fuelTrap(() => instantiate(meterWasm(module, 28)).f!())).toBe(FUEL_EXHAUSTED_TRAP);
  });

  it("meters the compiled test plugins", async () => {
    for (const name of ["echo", "hostile"] as const) {
      const prepared = prepareWasm(await buildTestPlugin(name), 256);
      expect(WebAssemblyApi.validate(meterWasm(prepared.bytes, 1_000_000))).toBe(true);
    }
  });

  it("refuses an opcode it does not know instead of emitting a broken module", () => {
    const reserved = assemble({
      types: [[0x60, 0, 0]],
      funcs: [{ type: 0, code: [0x27, 0x0b] }],
      exports: [["f", 0]],
    });
    expect(() => meterWasm(reserved, 1000)).toThrow(WasmBinaryError);
    expect(() => meterWasm(reserved, 1000)).toThrow(/unknown opcode 0x27/);
  });

  it("refuses garbage-collection code the runtime would otherwise load, as invalid_module", () => {
    // (func (export "f") (result i32) (drop (ref.i31 (i32.const 1))) (i32.const 0)): valid, but not decodable here
    const gc = assemble({
      types: [[0x60, 0, 1, I32]],
      funcs: [{ type: 0, code: [0x41, 1, 0xfb, 0x1c, 0x1a, 0x41, 0, 0x0b] }],
      exports: [["f", 0]],
    });
    expect(WebAssemblyApi.validate(gc)).toBe(true);
    const error = (() => {
      try {
        inspectWasm(gc);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PluginCallError);
    expect((error as PluginCallError).kind).toBe("invalid_module");
    expect((error as PluginCallError).message).toMatch(/garbage-collection/);
  });
});
