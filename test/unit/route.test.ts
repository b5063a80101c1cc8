/**
 * The way an asker's call goes (route.ts): the order host here, local endpoint, NATS room, none;
 * what the environment makes of it; and each route carrying a call to a real host role.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { AskerPlace, TransportEntry } from "../../extensions/checkpoint-bridge/core/asking/transport.ts";
import { claimHostRole } from "../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { askAlong, chooseRoute, noticeAlong, type Route, reachesHost, TRANSPORTS } from "../../extensions/checkpoint-bridge/route.ts";
import { dialogSurface } from "../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { addressOf, ENDPOINT_ENV, type EndpointAddress } from "../../extensions/checkpoint-bridge/transports/local/address.ts";
import { startEndpoint } from "../../extensions/checkpoint-bridge/transports/local/server.ts";
import { ENV_NATS, ENV_ROOM, readNatsConfig } from "../../extensions/checkpoint-bridge/transports/nats/config.ts";
import * as natsTransport from "../../extensions/checkpoint-bridge/transports/nats/index.ts";
import { closePooledBrokers } from "../../extensions/checkpoint-bridge/transports/nats/pool.ts";
import { until } from "../support/until.ts";
import { FakeNats } from "./support/fake-broker.ts";
import { fakeUI } from "./support/fake-ui.ts";
import { PREFIX } from "./support/nats-room.ts";

const ENDPOINT = { socketPath: "/run/cpb/socket", tokenPath: "/run/cpb/token" };
const NATS_OK_ENV = { [ENV_NATS]: "nats://127.0.0.1:4222" };
const NATS_BAD_ENV = { [ENV_NATS]: "http://example.com" };
const NATS_OK = readNatsConfig(NATS_OK_ENV);
/** A working directory no host advertises an endpoint for. */
const NO_ADVERT = mkdtempSync(join(tmpdir(), "cb-route-"));

/** Where an asker looks from: a host on its handle or not, an endpoint named in its environment, the NATS settings there. */
function place(hostHere: boolean, endpoint: EndpointAddress | undefined, nats: NodeJS.ProcessEnv): AskerPlace {
	const handle = createHandle();
	if (hostHere) {
		const role = claimHostRole(handle, { ui: fakeUI().ui, surface: dialogSurface(fakeUI().ui), sessionId: "host" });
		cleanups.push(() => role?.release("quit", "done"));
	}
	return { handle, env: { ...(endpoint ? { [ENDPOINT_ENV]: endpoint.socketPath } : {}), ...nats }, cwd: NO_ADVERT };
}

/** The list with the NATS transport's code over `connect` (a test's broker), counting its loads. */
function withNats(connect: Parameters<typeof natsTransport.natsOver>[0]) {
	const counted = { loads: 0 };
	const transports: TransportEntry[] = TRANSPORTS.map((entry) =>
		entry.kind === "nats" ? { ...entry, load: async () => (counted.loads++, natsTransport.natsOver(connect)) } : entry,
	);
	return { transports, counted };
}

const cleanups: (() => unknown)[] = [];
afterAll(() => rmSync(NO_ADVERT, { recursive: true, force: true }));
afterEach(async () => {
	// Each test has its own in-memory NATS: the process's kept connection must not carry over.
	closePooledBrokers();
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("chooseRoute", () => {
	it("takes the first of: a host here, an endpoint, a NATS room; a broken NATS configuration only when neither of the others is there", () => {
		const kinds: Record<string, Route["kind"]> = {};
		for (const hostHere of [true, false])
			for (const endpoint of [ENDPOINT, undefined])
				for (const [kind, nats] of [
					["ok", NATS_OK_ENV],
					["error", NATS_BAD_ENV],
					["off", {}],
				] as const) {
					kinds[`${hostHere ? "host" : "-"} ${endpoint ? "endpoint" : "-"} ${kind}`] = chooseRoute(place(hostHere, endpoint, nats)).kind;
				}
		expect(kinds).toEqual({
			"host endpoint ok": "host",
			"host endpoint error": "host",
			"host endpoint off": "host",
			"host - ok": "host",
			"host - error": "host",
			"host - off": "host",
			"- endpoint ok": "endpoint",
			"- endpoint error": "endpoint",
			"- endpoint off": "endpoint",
			"- - ok": "nats",
			"- - error": "misconfigured",
			"- - off": "none",
		});
	});

	it("carries what the route needs: the endpoint's address, the room's settings, the configuration's error naming the variable", () => {
		expect(chooseRoute(place(false, ENDPOINT, NATS_OK_ENV))).toEqual({ kind: "endpoint", endpoint: ENDPOINT });
		expect(chooseRoute(place(false, undefined, { [ENV_NATS]: "nats://a:4222", [ENV_ROOM]: "team" }))).toMatchObject({
			kind: "nats",
			config: { servers: ["nats://a:4222"], room: "team", prefix: "cpb.team" },
		});
		const broken = chooseRoute(place(false, undefined, NATS_BAD_ENV));
		expect(broken).toEqual({ kind: "misconfigured", error: expect.stringContaining(ENV_NATS) });
	});

	it("reads the environment as the tool does: an endpoint that is not an absolute path is no endpoint", () => {
		const route = (env: NodeJS.ProcessEnv) => chooseRoute({ handle: createHandle(), env, cwd: NO_ADVERT }).kind;
		expect(route({})).toBe("none");
		expect(route({ [ENDPOINT_ENV]: "relative/socket", [ENV_NATS]: " " })).toBe("none");
		expect(route({ [ENDPOINT_ENV]: "/tmp/x/socket", [ENV_NATS]: "nats://127.0.0.1:4222" })).toBe("endpoint");
		expect(route({ [ENDPOINT_ENV]: "relative/socket", [ENV_NATS]: "nats://127.0.0.1:4222" })).toBe("nats");
	});
});

describe("askAlong", () => {
	const budgets = { budgetMs: 10_000, dialogTimeoutMs: 10_000 };
	const asker = { label: "planner", sessionId: "planner-session" };
	const questions = [{ question: "Ship it?", kind: "confirm" as const }];
	/** A host role answering "Yes" on a handle of its own. */
	function answeringHost() {
		const handle = createHandle();
		const fake = fakeUI({ respond: (d) => d.answer("Yes") });
		const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
		if (!role) throw new Error("a fresh handle must accept the claim");
		cleanups.push(() => role.release("quit", "done"));
		return { handle, fake };
	}

	it("host: over the bus to the host role of this process", async () => {
		const { handle, fake } = answeringHost();
		const envelope = await askAlong({ kind: "host" }, { asker, questions, ...budgets }, handle);
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "yes" }], asker: "planner" });
		expect(fake.dialogs).toHaveLength(1);
	});

	it("none: settles no-host at once, through the call's life (the asker named)", async () => {
		const envelope = await askAlong({ kind: "none" }, { asker, questions, ...budgets }, createHandle());
		expect(envelope).toMatchObject({ status: "no-host", answers: [], asker: "planner" });
	});

	it("misconfigured: status error naming the configuration, waited 0, nothing loaded", async () => {
		const envelope = await askAlong({ kind: "misconfigured", error: "CHECKPOINT_BRIDGE_NATS: bad" }, { asker, questions, ...budgets }, createHandle());
		expect(envelope).toMatchObject({
			status: "error",
			answers: [],
			note: expect.stringMatching(/^checkpoint-bridge: CHECKPOINT_BRIDGE_NATS: bad /),
			asker: "planner",
			waitedMs: 0,
		});
	});

	it("endpoint: through the socket to a host in another handle", async () => {
		const { handle, fake } = answeringHost();
		const endpoint = await startEndpoint({ handle, env: {} });
		cleanups.push(() => endpoint.close());
		const envelope = await askAlong({ kind: "endpoint", endpoint: addressOf(endpoint.endpoint) }, { asker, questions, ...budgets }, createHandle());
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		expect(fake.dialogs).toHaveLength(1);
	});

	it("nats: loads the transport and asks the room's host", async () => {
		const { handle, fake } = answeringHost();
		const nats = new FakeNats();
		const server = natsTransport.serveRoom({ broker: nats.client(), handle, prefix: PREFIX });
		cleanups.push(() => server.close());
		const { transports, counted } = withNats(async () => nats.client());
		if (NATS_OK.kind !== "ok") throw new Error("the configuration must read");
		const route: Route = { kind: "nats", config: { ...NATS_OK.config, room: "test", prefix: PREFIX } };
		const envelope = await askAlong(route, { asker, questions, ...budgets }, createHandle(), transports);
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		expect(counted.loads).toBe(1);
		expect(fake.dialogs).toHaveLength(1);
	});
});

describe("noticeAlong", () => {
	const notice = { asker: { label: "subagent-gatekeeper", sessionId: "child" }, message: "Build started.", type: "warning" as const };
	function notedHost() {
		const handle = createHandle();
		const fake = fakeUI();
		const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
		if (!role) throw new Error("a fresh handle must accept the claim");
		cleanups.push(() => role.release("quit", "done"));
		return { handle, fake };
	}

	it("host: the host's human sees it over the bus, prefixed with who sends it", () => {
		const { handle, fake } = notedHost();
		noticeAlong({ kind: "host" }, notice, handle);
		expect(fake.notices).toEqual([{ message: "[subagent-gatekeeper] Build started.", type: "warning" }]);
	});

	it("endpoint: through the socket to a host in another process, marked with this process", async () => {
		const { handle, fake } = notedHost();
		const endpoint = await startEndpoint({ handle, env: {} });
		cleanups.push(() => endpoint.close());
		noticeAlong({ kind: "endpoint", endpoint: addressOf(endpoint.endpoint) }, notice, createHandle());
		await until(() => fake.notices.length > 0, "a notice", 5_000, 5);
		expect(fake.notices).toEqual([{ message: `[subagent-gatekeeper (pid ${process.pid})] Build started.`, type: "warning" }]);
	});

	it("nats: loads the transport and publishes on the room's notice subject, marked with this machine and process", async () => {
		const { handle, fake } = notedHost();
		const nats = new FakeNats();
		const server = natsTransport.serveRoom({ broker: nats.client(), handle, prefix: PREFIX });
		cleanups.push(() => server.close());
		const { transports } = withNats(async () => nats.client());
		if (NATS_OK.kind !== "ok") throw new Error("the configuration must read");
		noticeAlong({ kind: "nats", config: { ...NATS_OK.config, room: "test", prefix: PREFIX } }, notice, createHandle(), transports);
		await until(() => fake.notices.length > 0, "a notice", 5_000, 5);
		expect(fake.notices).toEqual([
			{ message: `[subagent-gatekeeper (${natsTransport.machineName().replace(/[^\w.-]+/g, "-")}:${process.pid})] Build started.`, type: "warning" },
		]);
	});

	it("nats with no server to reach: dropped, nothing thrown or rejected", async () => {
		const handle = createHandle();
		if (NATS_OK.kind !== "ok") throw new Error("the configuration must read");
		await expect(
			natsTransport.noticeOverNats({ connect: () => Promise.reject(new Error("ECONNREFUSED")), config: { prefix: PREFIX }, notice }),
		).resolves.toBeUndefined();
		const { transports } = withNats(() => Promise.reject(new Error("ECONNREFUSED")));
		expect(() => noticeAlong({ kind: "nats", config: NATS_OK.config }, notice, handle, transports)).not.toThrow();
	});

	it("none and misconfigured: dropped, as pi's own UI-less sessions drop a notice; nothing loaded", () => {
		const handle = createHandle();
		let heard = 0;
		handle.bus.on("relay:notice", () => heard++);
		for (const route of [{ kind: "none" }, { kind: "misconfigured", error: "bad" }] as Route[]) expect(() => noticeAlong(route, notice, handle)).not.toThrow();
		expect(heard).toBe(0);
	});
});

describe("reachesHost", () => {
	it("a host here and a NATS room reach one; an endpoint only while its socket is there; none and a broken NATS configuration do not", async () => {
		expect(reachesHost({ kind: "host" })).toBe(true);
		expect(reachesHost(chooseRoute(place(false, undefined, NATS_OK_ENV)))).toBe(true);
		expect(reachesHost({ kind: "none" })).toBe(false);
		expect(reachesHost(chooseRoute(place(false, undefined, NATS_BAD_ENV)))).toBe(false);
		// The variable alone is not a connection: no socket at the advertised path, no host.
		expect(reachesHost({ kind: "endpoint", endpoint: ENDPOINT })).toBe(false);
		const dir = mkdtempSync(join(tmpdir(), "cb-reach-"));
		cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
		const socketPath = join(dir, "socket");
		const server = createServer();
		await new Promise<void>((resolve) => server.listen(socketPath, resolve));
		expect(reachesHost({ kind: "endpoint", endpoint: addressOf(socketPath) })).toBe(true);
		await new Promise((resolve) => server.close(resolve));
		expect(reachesHost({ kind: "endpoint", endpoint: addressOf(socketPath) })).toBe(false);
	});
});
