import type { Tool } from "./tool.ts";

// The tools the runner knows: the built-ins, then what extensions provide (skills, WASM plugins). Providers are
// asked on every lookup, so an installed, reloaded or disabled plugin shows up or disappears at once without a
// restart. A built-in name always wins: an extension can never replace read_file.

export class ToolRegistry {
  readonly #builtin: ReadonlyMap<string, Tool>;
  readonly #providers: Array<() => readonly Tool[]> = [];

  constructor(builtin: readonly Tool[]) {
    this.#builtin = new Map(builtin.map((t) => [t.name, t]));
  }

  /** Adds a source of tools (called on every lookup, so it must be cheap). */
  addProvider(provider: () => readonly Tool[]): void {
    this.#providers.push(provider);
  }

  list(): Tool[] {
    const tools = new Map(this.#builtin);
    for (const provider of this.#providers) {
      for (const tool of provider()) if (!tools.has(tool.name)) tools.set(tool.name, tool);
    }
    return [...tools.values()];
  }

  get(name: string): Tool | undefined {
    const builtin = this.#builtin.get(name);
    if (builtin) return builtin;
    for (const provider of this.#providers) {
      const tool = provider().find((t) => t.name === name);
      if (tool) return tool;
    }
    return undefined;
  }
}
