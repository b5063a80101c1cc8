#!/usr/bin/env node
/** `checkpoint-bridge-mcp`: the MCP server over stdio (extensions/checkpoint-bridge/mcp.ts). */
import { loadPackageModule } from "./load-package.mjs";

const server = await loadPackageModule("checkpoint-bridge-mcp", new URL("../extensions/checkpoint-bridge/mcp.ts", import.meta.url));
await server.serveStdio();
