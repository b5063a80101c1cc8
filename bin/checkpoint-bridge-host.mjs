#!/usr/bin/env node
/**
 * `checkpoint-bridge-host [--cwd DIR]`: a host with no screen for a directory
 * (extensions/checkpoint-bridge/headless-host.ts, ADR-0035). The package ships TypeScript, which
 * Node strips itself except under node_modules, where an install puts it: a load hook strips this
 * package's own `.ts` files with Node's stripTypeScriptTypes, as the MCP bin does. Needs Node >= 22.19.
 */
import { readFileSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19) || typeof module.registerHooks !== "function") {
	process.stderr.write(`checkpoint-bridge-host needs Node >= 22.19 (the Node pi needs); this is Node ${process.versions.node}.\n`);
	process.exit(1);
}

const root = new URL("../extensions/", import.meta.url).href;
module.registerHooks({
	load(url, context, nextLoad) {
		if (!url.startsWith(root) || !url.endsWith(".ts")) return nextLoad(url, context);
		const source = readFileSync(fileURLToPath(url), "utf8");
		return { format: "module", source: module.stripTypeScriptTypes(source, { sourceUrl: url }), shortCircuit: true };
	},
});
// stripTypeScriptTypes is still marked experimental: its one warning says nothing about the host.
process.removeAllListeners("warning");
process.on("warning", (warning) => {
	if (warning.name !== "ExperimentalWarning") process.stderr.write(`${warning.stack ?? warning}\n`);
});

let host;
try {
	host = await import("../extensions/checkpoint-bridge/headless-host.ts");
} catch (error) {
	const missing = error?.code === "ERR_MODULE_NOT_FOUND" ? ` (install the package's dependencies and its peer typebox: npm install typebox)` : "";
	process.stderr.write(`checkpoint-bridge-host cannot start${missing}: ${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(1);
}
await host.runHeadlessHost();
