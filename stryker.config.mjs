// Mutation testing of the relay: `npm run mutation` (see test/mutation/README.md).
import { existsSync } from "node:fs";
import { matchesGlob } from "node:path";

const core = (name) => `extensions/checkpoint-bridge/core/${name}.ts`;
const model = (name) => `extensions/checkpoint-bridge/model/${name}.ts`;
/** Only the host answers: the shared handle and its seal, one call's life, the bus asker, the bridge from both transports to the bus: forwarding, the host checks, the caps, the seal check. */
const SEAL = [core("shared/shared-handle"), core("asking/call"), core("asking/asker"), core("bridge/bridge")];
/** Holding the host role (claim, release, hand-over) and asking the human once. */
const HOST = [core("host/host-role"), core("host/same-questions")];
/** The dialog queue: the dialog host whole, and the keeper that ends its requests. */
const QUEUE = [core("host/dialog-host"), core("host/dialog/keeper")];
/** The order of the dialogs: p-queue's queue class, pause and resume. */
const ORDER = [core("host/dialog/order")];
/** What comes back: the answer check for outside answers, the one answer check every reply goes through, the envelope, and the checks' one shape. */
const ANSWERS = [core("shared/outside-answers"), model("answer-check"), model("result"), model("check")];
/** Every call's validation, and the sanitising of asker text it starts with. */
const TOOL = [model("validate"), model("sanitise")];
/** The route: the transport a call takes to a host, and the route home of an ended request once its call has returned, with the box that posts it. */
const ROUTE = ["extensions/checkpoint-bridge/route.ts", "extensions/checkpoint-bridge/core/delivery/*.ts"];
/** The book: every request of the process from taken to gone, a request's one record and its states, and late requests as observers and the human see them. */
const BOOK = [
	"extensions/checkpoint-bridge/core/shared/request-record.ts",
	"extensions/checkpoint-bridge/core/host/late.ts",
	"extensions/checkpoint-bridge/core/host/dialog/late-side.ts",
	"extensions/checkpoint-bridge/core/host/book.ts",
];
/** The dialog host's parts: taking a request in and its open entry, showing one (a surface adapted into a Show, and the loop), its events out and views, outside answers. */
const DIALOG = [
	"extensions/checkpoint-bridge/core/host/dialog/*.ts",
	// In the book group: late requests as the book keeps them; in its own group: the order; with the dialog host: the keeper.
	"!extensions/checkpoint-bridge/core/host/dialog/late-side.ts",
	"!extensions/checkpoint-bridge/core/host/dialog/order.ts",
	"!extensions/checkpoint-bridge/core/host/dialog/keeper.ts",
];
/** The store: the records written down on disk, opening its database, and the answers kept for later waits. */
const STORE = ["extensions/checkpoint-bridge/core/store/*.ts"];
/** The wire: the frames both transports read and write, the protocol's constants, the process slot, the observer events. */
const WIRE = [core("bridge/frames"), core("shared/protocol"), core("shared/process-slot"), core("shared/observers")];
/** What every part reads: the settings, who asks, the late settings, a notice's window, the one wait helper, the tool-missing notice. */
const SHARED = [
	core("shared/config"),
	core("shared/identity"),
	core("shared/late-config"),
	core("shared/notice-window"),
	core("shared/wait"),
	core("asking/tool-missing"),
];
/** What the human is told beside the dialog: arrival notices, the audit trail, the status line, answers given elsewhere, the screens, a surface adapted. */
const NOTICES = [
	core("host/arrival-notices"),
	core("host/audit"),
	core("host/status-line"),
	core("answering/elsewhere"),
	core("answering/screens"),
	core("answering/surface"),
];
/**
 * The rest of the model: where an answer was given, the limits, terminal widths, a wait's outcomes, answers. Not
 * model/question.ts nor model/time-left.ts: the page runs their shownOrder and timeLeftText from the source the
 * server sends (surfaces/web/server.ts), where Stryker's instrumented copy cannot run.
 */
const MODEL = ["answer-places", "limits", "terminal-widths", "wait-outcome", "answer"].map(model);
const GROUPS = {
	seal: SEAL,
	host: HOST,
	queue: QUEUE,
	order: ORDER,
	answers: ANSWERS,
	tool: TOOL,
	route: ROUTE,
	book: BOOK,
	dialog: DIALOG,
	store: STORE,
	wire: WIRE,
	shared: SHARED,
	notices: NOTICES,
	model: MODEL,
};
const group = process.env.MUTATION_GROUP ?? "seal";
if (!(group in GROUPS)) throw new Error(`MUTATION_GROUP must be one of ${Object.keys(GROUPS).join(", ")}, not ${group}`);
/** MUTATION_ONLY (run.mjs --only): the files of the group mutated this run, paths under extensions/checkpoint-bridge/. */
const only = (process.env.MUTATION_ONLY ?? "")
	.split(",")
	.filter(Boolean)
	.map((file) => `extensions/checkpoint-bridge/${file.replace(/^extensions\/checkpoint-bridge\//, "")}`);
/** Whether `file` is one of the files the patterns name (Stryker's: a `!` pattern takes files out). */
const inGroup = (file, patterns) =>
	patterns.some((p) => !p.startsWith("!") && matchesGlob(file, p)) && !patterns.some((p) => p.startsWith("!") && matchesGlob(file, p.slice(1)));
for (const file of only)
	if (!existsSync(file) || !inGroup(file, GROUPS[group]))
		throw new Error(`MUTATION_ONLY: ${file} is not a file of the ${group} group (${GROUPS[group].join(", ")})`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
	testRunner: "vitest",
	// Forks, not threads: a test that sets process.env.TZ sees it only in a process of its own.
	vitest: { configFile: "test/mutation/vitest.config.ts", related: false, pool: "forks" },
	checkers: ["typescript"],
	tsconfigFile: "test/mutation/tsconfig.json",
	typescriptChecker: { prioritizePerformanceOverAccuracy: true },
	coverageAnalysis: "perTest",
	// Where the promise of docs/guarantees.md lives, in groups so that each run fits a shared 2-core machine:
	// MUTATION_GROUP=seal (default), host, queue, order, answers, tool, route, book, dialog, store, wire, shared, notices or model.
	mutate: only.length > 0 ? only : GROUPS[group],
	// `// @ts-nocheck` only where mutants go: test/unit/package.test.ts reads observers.ts as written.
	disableTypeChecks: "extensions/checkpoint-bridge/{core/**/*,model/**/*,route}.ts",

	// The machine's 2 cores are shared with other work: two test runners at most. A mutant's tests wait on
	// timers more than they compute (about half a core each), so a machine of its own takes
	// MUTATION_CONCURRENCY=4 (half of them type-check first, then all run tests).
	concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 2),
	// Mutants of module-level constants would each re-run every test; the constants that carry a promise
	// (HANDOVER_GRACE_MS, CLOCK_TOLERANCE_MS, MAX_TIMEOUT_MS) are pinned by literals in their tests.
	ignoreStatic: true,
	timeoutMS: 10_000,
	incremental: true,
	incrementalFile: `.tmp/mutation/incremental-${group}.json`,
	reporters: ["json", "progress-append-only"],
	jsonReporter: { fileName: `.tmp/mutation/${group}.json` },
	tempDirName: `.tmp/stryker-${group}`,
	ignorePatterns: ["test/compat/pi-0.85/node_modules", ".tmp"],
	cleanTempDir: "always",
};
