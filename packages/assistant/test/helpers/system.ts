import { statSync } from "node:fs";
import { createServer } from "node:net";

/** A TCP port nothing listens on right now: bind port 0, read it, release it. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** The permission bits of a file (0o600 and so on). */
export function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}
