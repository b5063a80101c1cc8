// The extension's layers (ADR-0011): model < core < surfaces, transports, tool, interop, mcp < the
// extension's root files (index.ts registers). A lower folder never imports a higher one, and the
// folders of one layer never import each other. `npm run lint` runs this (`depcruise`).
const EXT = "^extensions/checkpoint-bridge/";
const LAYER_FOLDERS = ["model", "core", "surfaces", "transports", "tool", "interop", "mcp"];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
	forbidden: [
		{
			name: "no-circular",
			severity: "error",
			comment: "No import cycle, type-only imports included: a cycle means two modules are one concern, or share a type that belongs lower.",
			from: {},
			to: { circular: true },
		},
		{
			name: "model-imports-only-model",
			severity: "error",
			comment: "model/ is the bottom layer: questions, answers, results, limits, validation, sanitising, the answer check.",
			from: { path: `${EXT}model/` },
			to: { path: EXT, pathNot: `${EXT}model/` },
		},
		{
			name: "core-imports-model-and-core",
			severity: "error",
			comment: "core/ (the relay) sees the model below it, never a surface, a transport, the tool or the root.",
			from: { path: `${EXT}core/` },
			to: { path: EXT, pathNot: `${EXT}(model|core)/` },
		},
		{
			name: "core-shared-imports-model-and-shared",
			severity: "error",
			comment:
				"core/shared/ holds the contracts both sides speak (bus messages, names, budgets, the record, the shared handle): it sees only the model and itself.",
			from: { path: `${EXT}core/shared/` },
			to: { path: EXT, pathNot: `${EXT}(model|core/shared)/` },
		},
		{
			name: "asking-side-never-imports-the-host",
			severity: "error",
			comment: "core/asking/ (a call's life on the asking side) runs in processes without a host: it sees the model, core/shared/ and itself only.",
			from: { path: `${EXT}core/asking/` },
			to: { path: EXT, pathNot: `${EXT}(model|core/shared|core/asking)/` },
		},
		{
			name: "core-rooms-below-the-host",
			severity: "error",
			comment:
				"core/answering/ (the seam to where the human answers), core/delivery/ (the route home) and core/bridge/ (the host side of a transport) never import the host's queue (core/host/) or the asking side.",
			from: { path: `${EXT}core/(answering|delivery|bridge)/` },
			to: { path: `${EXT}core/(host|asking)/` },
		},
		{
			name: "host-internals-only-from-the-root",
			severity: "error",
			comment:
				"core/host/ (the book, the queue, the role) is wired by the extension's root files only: surfaces, transports, the tool, interop and MCP reach the host over the bus and the shared handle.",
			from: { path: `${EXT}(surfaces|transports|tool|interop|mcp)/` },
			to: { path: `${EXT}core/host/` },
		},
		{
			name: "middle-layer-imports-down-only",
			severity: "error",
			comment: "surfaces/, transports/, tool/, interop/ and mcp/ import model/, core/ and their own folder: never each other, never the root.",
			from: { path: `${EXT}(surfaces|transports|tool|interop|mcp)/` },
			to: { path: EXT, pathNot: [`${EXT}(model|core)/`, `${EXT}$1/`] },
		},
		{
			name: "no-folder-outside-the-layers",
			severity: "error",
			comment: `A folder of the extension is one of the layers (${LAYER_FOLDERS.join(", ")}); a new one needs its place in this file and in ADR-0011.`,
			from: {},
			to: { path: `${EXT}[^/]+/`, pathNot: `${EXT}(${LAYER_FOLDERS.join("|")})/` },
		},
		{
			name: "no-unresolvable-import",
			severity: "error",
			comment: "An import that resolves to nothing.",
			from: {},
			to: { couldNotResolve: true },
		},
	],
	options: {
		doNotFollow: { path: "node_modules" },
		exclude: { path: ["^test/compat/pi-0\\.85/", "^\\.tmp/", "^\\.stryker-tmp/"] },
		// Type-only imports count: a cycle of types is still a cycle.
		tsPreCompilationDeps: true,
		tsConfig: { fileName: "tsconfig.json" },
		enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
	},
};
