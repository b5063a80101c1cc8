/**
 * Figure 3, one sample: how long pi's own resource loader takes to load a set of extensions, in a
 * fresh process. `node bench/load.mjs <none|empty|bridge> <warm reloads>`; prints one JSON line.
 *
 * - cold: the process's first loader.reload(), pi and its module loader already imported.
 * - warm: later reload()s of the same loader. pi clears its extension cache on every reload after
 *   the first, so each re-imports and re-runs the extension (what every pi-subagents child pays,
 *   as pi-subagents marks the child's loader as loaded for that very reason).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const EXTENSIONS = {
	none: [],
	empty: [join(here, "fixtures/empty-extension.ts")],
	bridge: [join(here, "../extensions/checkpoint-bridge/index.ts")],
};
const TOOL = "ask_user_via_host";

const kind = process.argv[2] ?? "none";
const warmReloads = Number(process.argv[3] ?? 0);
const paths = EXTENSIONS[kind];
if (!paths) throw new Error(`unknown extension set ${kind}; one of ${Object.keys(EXTENSIONS).join(", ")}`);

const importStart = performance.now();
const { DefaultResourceLoader, SettingsManager, createEventBus } = await import("@earendil-works/pi-coding-agent");
const importMs = performance.now() - importStart;

const root = mkdtempSync(join(tmpdir(), "cb-bench-load-"));
try {
	const loader = new DefaultResourceLoader({
		cwd: root,
		agentDir: join(root, "agent"),
		settingsManager: SettingsManager.inMemory(),
		eventBus: createEventBus(),
		additionalExtensionPaths: paths,
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
	});
	const timedReload = async () => {
		const start = performance.now();
		await loader.reload();
		const ms = performance.now() - start;
		// A figure for a load that failed would be meaningless: check what was loaded every time.
		const { extensions, errors } = loader.getExtensions();
		if (errors.length > 0) throw new Error(`extension load failed: ${JSON.stringify(errors)}`);
		if (extensions.length !== paths.length) throw new Error(`loaded ${extensions.length} extensions, expected ${paths.length}`);
		if (kind === "bridge" && !extensions[0].tools.has(TOOL)) throw new Error(`the extension loaded without registering ${TOOL}`);
		return ms;
	};
	const coldMs = await timedReload();
	const warmMs = [];
	for (let i = 0; i < warmReloads; i++) warmMs.push(await timedReload());
	process.stdout.write(`${JSON.stringify({ kind, importMs, coldMs, warmMs })}\n`);
} finally {
	rmSync(root, { recursive: true, force: true });
}
