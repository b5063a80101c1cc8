/**
 * Figure 8: a NATS room flooded by one raw client on a real local nats-server, and what the host
 * process holds afterwards. The host (a forked process, so its RSS is its own) holds the host role
 * with a UI that never answers and serves the room as the extension does. The flooder sends, with
 * the held requests kept alive by pings as a real asker's are: the largest allowed requests under
 * one session id, the same under a fresh session id and inbox each (only the room's byte bound
 * stops those), and 10,000 small ones under one session id. Prints one JSON document on stdout
 * ({ skipped } when nats-server is not installed). `node --expose-gc bench/nats-flood.mjs [N]` sends N
 * of the largest (default 300); with `host` as argument it is the host process.
 */
import { fork, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { FRAME_VERSION } from "../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { claimHostRole } from "../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { LIMITS } from "../extensions/checkpoint-bridge/model/limits.ts";
import { dialogSurface } from "../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { encodeNatsFrame } from "../extensions/checkpoint-bridge/transports/nats/frames.ts";
import { closeProcessRoom, ensureProcessRoom, readNatsConfig } from "../extensions/checkpoint-bridge/transports/nats/index.ts";
import { newCancelSecret, newKeyPair } from "../extensions/checkpoint-bridge/transports/nats/seal.ts";
import { requireNatsServer, startNatsServer } from "./nats-server.mjs";

const MB = 1024 * 1024;
/** How many of the largest requests each of the first two floods sends (the attack run sent 300). @default 300 */
const LARGEST = Number(process.argv[2]) || 300;
const rss = () => {
	globalThis.gc?.();
	return process.memoryUsage().rss;
};

if (process.argv[2] === "host") {
	// The host: dialogs that stay open until the request is taken off, RSS on request.
	const never = (_title, _options, opts) => new Promise((resolve) => opts?.signal?.addEventListener("abort", () => resolve(undefined)));
	const ui = { select: never, input: (title, _placeholder, opts) => never(title, undefined, opts), notify() {}, setStatus() {} };
	const handle = createHandle();
	const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session" });
	const config = readNatsConfig();
	if (!role || config.kind !== "ok") throw new Error("host set-up failed");
	await ensureProcessRoom(handle, config.config);
	process.on("message", (message) => {
		if (message === "rss") process.send({ rss: rss(), heap: process.memoryUsage().heapUsed, open: handle.snapshot()?.open.length ?? 0 });
	});
	process.on("disconnect", async () => {
		await closeProcessRoom("bench over");
		process.exit(0);
	});
	process.send({ ready: true });
} else {
	await flood();
}

async function flood() {
	requireNatsServer();
	const url = await startNatsServer("flood");

	const env = { ...process.env, CHECKPOINT_BRIDGE_NATS: url, CHECKPOINT_BRIDGE_ROOM: "flood" };
	const host = fork(fileURLToPath(import.meta.url), ["host"], { env, execArgv: ["--expose-gc"], stdio: ["ignore", "ignore", "inherit", "ipc"] });
	await new Promise((resolve) => host.once("message", resolve));
	const measure = () =>
		new Promise((resolve) => {
			host.once("message", resolve);
			host.send("rss");
		});

	const { connect } = await import("@nats-io/transport-node");
	const nc = await connect({ servers: url, name: "flooder" });
	const keys = newKeyPair();
	const cancel = newCancelSecret();
	const x = (n) => "x".repeat(n);
	// The largest request the limits allow: every question, option and text field at its longest.
	const largest = Array.from({ length: LIMITS.questions.max }, (_, q) => ({
		question: `${q} ${x(LIMITS.question - 3)}`,
		header: x(LIMITS.header),
		details: x(LIMITS.details),
		options: Array.from({ length: LIMITS.options.max }, (_, o) => ({
			label: `${o} ${x(LIMITS.label - 3)}`,
			description: x(LIMITS.description),
			preview: x(LIMITS.preview),
		})),
	}));
	const small = [{ question: "Deploy now?", options: [{ label: "yes" }, { label: "no" }] }];
	const frame = (id, questions, sessionId) => {
		const now = Date.now();
		return encodeNatsFrame({
			type: "request",
			v: FRAME_VERSION.nats,
			id,
			asker: { label: "flood", sessionId },
			questions,
			deadline: now + 600_000,
			dialogTimeoutMs: 600_000,
			createdAt: now,
			budgetMs: 600_000,
			pid: 4242,
			machine: "flood",
			key: keys.publicKey,
			cancelHash: cancel.hash,
		});
	};

	let refused = 0;
	const held = new Map();
	nc.subscribe("_INBOX.flood.>", {
		callback: (_error, m) => {
			const reply = JSON.parse(new TextDecoder().decode(m.data));
			if (reply.type === "result" && reply.status === "error") refused++;
			if (reply.type === "pong" || reply.type === "progress") held.set(`${m.subject}\n${reply.id}`, m.subject);
		},
	});
	// Keeps alive whatever the host took, as a real asker does.
	const pinger = setInterval(() => {
		for (const [key, inbox] of held)
			nc.publish("cpb.flood.ping", encodeNatsFrame({ type: "ping", v: FRAME_VERSION.nats, id: key.split("\n")[1] }), { reply: inbox });
	}, 300);

	const scenarios = [
		{ name: "largest requests, one session id, one inbox", count: LARGEST, questions: largest, fresh: false },
		{ name: "largest requests, a fresh session id and inbox each", count: LARGEST, questions: largest, fresh: true },
		{ name: "small requests, one session id, one inbox", count: 10_000, questions: small, fresh: false },
	];
	const before = await measure();
	const rows = [];
	let n = 0;
	let openBefore = 0;
	for (const scenario of scenarios) {
		const refusedBefore = refused;
		const frameBytes = frame("probe", scenario.questions, "s").byteLength;
		for (let i = 0; i < scenario.count; i++) {
			n++;
			const inbox = scenario.fresh ? `_INBOX.flood.${n}` : "_INBOX.flood.one";
			nc.publish("cpb.flood.request", frame(`r${n}`, scenario.questions, scenario.fresh ? `s${n}` : "one-session"), { reply: inbox });
			// Paced, so the host's connection is never a slow consumer the server drops messages for.
			if (i % (scenario.questions === small ? 500 : 5) === 0) {
				await nc.flush();
				await new Promise((r) => setTimeout(r, scenario.questions === small ? 10 : 20));
			}
		}
		await nc.flush();
		// Until every request is refused or held (or nothing changed for 2 s).
		let after = await measure();
		for (let still = 0, last = -1; still < 20 && refused - refusedBefore + after.open - openBefore < scenario.count; ) {
			await new Promise((r) => setTimeout(r, 100));
			after = await measure();
			const seen = refused + after.open;
			still = seen === last ? still + 1 : 0;
			last = seen;
		}
		rows.push({
			scenario: scenario.name,
			sent: scenario.count,
			frameBytes,
			refused: refused - refusedBefore,
			openAfter: after.open,
			rssMB: after.rss / MB,
			heapMB: after.heap / MB,
		});
		openBefore = after.open;
	}
	clearInterval(pinger);
	await nc.close();
	host.disconnect();
	process.stdout.write(
		`${JSON.stringify({
			server: spawnSync("nats-server", ["--version"], { encoding: "utf8" }).stdout.trim(),
			rssBeforeMB: before.rss / MB,
			heapBeforeMB: before.heap / MB,
			rows,
		})}\n`,
	);
	process.exit(0);
}
