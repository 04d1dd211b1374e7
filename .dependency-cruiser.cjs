// Dependency direction: surfaces (server, cli, chat, tui, bin) -> services (domain folders) -> store/config/util.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "services-not-to-surfaces",
      comment:
        "Domain services never import a surface (HTTP routes, CLI, slash commands and chat wiring, TUI, bins, the daemon composition root): surfaces are thin adapters over services.",
      severity: "error",
      from: { path: "^packages/assistant/src/(?!server/|cli/|chat/|tui/|bin/|daemon/)" },
      to: { path: "^packages/assistant/src/(server|cli|chat|tui|bin|daemon)/" },
    },
    {
      name: "agent-below-the-other-domains",
      comment:
        "The agent runs tasks over the router and the tools and knows no other domain: it depends only on llm, tools, events, store, config, util and the logger (log/). What it needs from memory, skills, plugins or the scheduler comes in as functions and interfaces it declares (TaskMemory, route, promptAddition), provided by the chat wiring (chat/services.ts).",
      severity: "error",
      from: { path: "^packages/assistant/src/agent/" },
      to: { path: "^packages/assistant/src/(?!agent/|llm/|tools/|events/|store/|config/|util/|log/)" },
    },
    {
      name: "store-is-the-bottom",
      comment: "The store depends only on config and util, never on a domain service.",
      severity: "error",
      from: { path: "^packages/assistant/src/store/" },
      to: { path: "^packages/assistant/src/(?!store/|config/|util/)" },
    },
    {
      name: "util-depends-on-nothing",
      severity: "error",
      from: { path: "^packages/assistant/src/util/" },
      to: { path: "^packages/assistant/src/(?!util/)" },
    },
    {
      name: "cli-reads-answers-through-the-client",
      comment:
        "The CLI reads the daemon's answers as the typed client declares them (@assistant/client), never as a domain's record type (TaskRecord, MemoryRecord, StoredEvent...): no type-only import from the domains whose records travel over HTTP. llm/ is left out: the router file commands edit llm_router.yaml locally with its types.",
      severity: "error",
      from: { path: "^packages/assistant/src/cli/" },
      to: {
        path: "^packages/assistant/src/(agent|events|memory|scheduler|tools|plugins|skills|mission)/",
        dependencyTypes: ["type-only"],
      },
    },
    {
      name: "client-is-standalone",
      comment: "The typed client is shared by every surface and must not pull in the daemon.",
      severity: "error",
      from: { path: "^packages/client/" },
      to: { path: "^packages/(?!client/)" },
    },
    {
      name: "no-circular",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)test/" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".mjs", ".js"] },
  },
};
