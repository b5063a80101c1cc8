/**
 * What both bins do before their own work: the package ships TypeScript, which Node strips itself
 * except under node_modules, where an install puts it, so a load hook strips this package's own `.ts`
 * files with Node's stripTypeScriptTypes. Needs Node >= 22.19, the Node pi needs; an older one is
 * told so on stderr (never stdout: the MCP bin's stdout is the protocol).
 */
import { readFileSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

/** Loads the package module `file` (a URL under extensions/) for the bin `name`, or ends the process saying why not. */
export async function loadPackageModule(name, file) {
	const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
	if (major < 22 || (major === 22 && minor < 19) || typeof module.registerHooks !== "function") {
		process.stderr.write(`${name} needs Node >= 22.19 (the Node pi needs); this is Node ${process.versions.node}.\n`);
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
	// stripTypeScriptTypes is still marked experimental: its one warning tells a bin's user nothing.
	process.removeAllListeners("warning");
	process.on("warning", (warning) => {
		if (warning.name !== "ExperimentalWarning") process.stderr.write(`${warning.stack ?? warning}\n`);
	});
	try {
		return await import(file.href);
	} catch (error) {
		// typebox is a peer dependency (pi supplies it to extensions): an install made with --omit=peer lacks it.
		const missing = error?.code === "ERR_MODULE_NOT_FOUND" ? ` (install the package's dependencies and its peer typebox: npm install typebox)` : "";
		process.stderr.write(`${name} cannot start${missing}: ${error instanceof Error ? error.message : String(error)}\n`);
		process.exit(1);
	}
}
