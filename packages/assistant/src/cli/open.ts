import type { Command } from "commander";
import { type CliContext, output } from "./context.ts";
import { connectDaemon, withDaemon } from "./daemonClient.ts";

// `assistant open [--print] [--json]`: logs the browser in with a one-time login code from the daemon
// (docs/http-api.md "Browser login"). The URL carries the code, never the API token, and works once.

export function registerOpenCommand(program: Command, ctx: CliContext): void {
  program
    .command("open")
    .description("open the web UI in the browser, logged in by a one-time link (printed when no browser can open)")
    .option("--print", "only print the login link (valid 120 s, usable once); do not open a browser")
    .option("--json", "print {url, expires_in, opened, reason}")
    .action(async (opts: { print?: boolean; json?: boolean }) => {
      const what = "no login link can be made";
      const client = await connectDaemon(ctx, what);
      const login = await withDaemon(what, () => client.createLoginCode());
      const { openBrowser } = await import("./openBrowser.ts");
      const result = opts.print ? undefined : await openBrowser(login.url, ctx.env);
      const reason = result && !result.opened ? result.reason : null;
      const opened = result?.opened ?? false;
      if (opts.json) {
        output(ctx, true, { url: login.url, expires_in: login.expires_in, opened, reason }, () => "");
      } else if (opened) {
        ctx.stdout.write(`opened ${client.baseUrl} in your browser (logged in by a one-time link)\n`);
      } else {
        if (reason) {
          ctx.stderr.write(
            `no browser opened: ${reason}. Open this link yourself within ${login.expires_in} s (it works once):\n`,
          );
        }
        ctx.stdout.write(`${login.url}\n`);
      }
    });
}
