import { defineConfig } from "vite";

// Static files the daemon serves at `/` (packages/assistant/src/server/webUi.ts). Its Content-Security-Policy
// allows no inline script, so the build must emit none: no module-preload polyfill (Vite would inline it).
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  logLevel: "warn",
});
