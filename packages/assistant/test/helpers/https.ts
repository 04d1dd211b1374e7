import { writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { generate } from "selfsigned";

// A local HTTPS server with a self-signed certificate for localhost and 127.0.0.1, standing in for remote hosts
// (skill install sources). A daemon trusts it through NODE_EXTRA_CA_CERTS=<caFile>, the normal Node mechanism.

export interface TestHttpsServer {
  url: string;
  port: number;
  /** The certificate as a PEM file, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  requests: string[];
  close(): Promise<void>;
}

export async function startHttpsServer(
  dir: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TestHttpsServer> {
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keySize: 2048,
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  });
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, pems.cert);
  const requests: string[] = [];
  const make = (): Server =>
    createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
      requests.push(req.url ?? "");
      handler(req, res);
    });
  const v4 = make();
  await new Promise<void>((resolve) => v4.listen(0, "127.0.0.1", resolve));
  const port = (v4.address() as { port: number }).port;
  // `localhost` may resolve to ::1 first: listen there too on the same port when the machine has IPv6.
  const v6 = make();
  const hasV6 = await new Promise<boolean>((resolve) => {
    v6.once("error", () => resolve(false));
    v6.listen(port, "::1", () => resolve(true));
  });
  const close = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));
  return {
    url: `https://localhost:${port}`,
    port,
    caFile,
    requests,
    close: async () => {
      await close(v4);
      if (hasV6) await close(v6);
    },
  };
}
