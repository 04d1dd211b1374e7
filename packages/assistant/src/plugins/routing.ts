import { matchRules, type RoutingRule, type RuleMatch } from "./routingRules.ts";

// All routing rules in force (plugins' and skills'), read fresh from their registries so an install, reload or
// uninstall applies at once. The agent asks it for every message that arrives without a task type.

export class MessageRouting {
  readonly #sources: ReadonlyArray<() => readonly RoutingRule[]>;

  constructor(sources: ReadonlyArray<() => readonly RoutingRule[]>) {
    this.#sources = sources;
  }

  rules(): RoutingRule[] {
    return this.#sources.flatMap((source) => source());
  }

  match(message: string): RuleMatch | null {
    return matchRules(this.rules(), message);
  }
}
