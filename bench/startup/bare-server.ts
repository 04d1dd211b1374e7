// The baseline of bench/startup: a bare Fastify server with one health route, started the same way as the daemon.
import Fastify from "fastify";

const app = Fastify({ logger: false });
app.get("/api/health", async () => ({ status: "ok" }));
await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? 0) });
const address = app.server.address();
process.stdout.write(`${typeof address === "object" && address ? address.port : 0}\n`);
