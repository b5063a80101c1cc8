/**
 * Abuse of a NATS room on a real nats-server, by raw NATS clients that have the room's rights and
 * nothing more: a flood under one session id, a member cancelling another asker's request, a member
 * answering in the host's place, and the warning for a server that asks for no credentials. The
 * host is a host role with a programmatic UI serving the room as the extension does.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { FRAME_VERSION } from "../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { claimHostRole } from "../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle, type SharedHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { MAX_OPEN_PER_ASKER } from "../../extensions/checkpoint-bridge/model/limits.ts";
import type { Envelope } from "../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { decodeNatsFrame, encodeNatsFrame, type NatsFrame, type NatsRequestFrame } from "../../extensions/checkpoint-bridge/transports/nats/frames.ts";
import { askOverNats, closeProcessRoom, connectBroker, ensureProcessRoom } from "../../extensions/checkpoint-bridge/transports/nats/index.ts";
import { newCancelSecret, newKeyPair, seal, sharedKey } from "../../extensions/checkpoint-bridge/transports/nats/seal.ts";
import { until } from "../support/until.ts";
import { loadExtensionCopy, playedSessions } from "../unit/support/fake-pi.ts";
import { type FakeDialog, fakeUI } from "../unit/support/fake-ui.ts";
import { requestFrame } from "../unit/support/nats-room.ts";
import { NATS_SERVER_MISSING, type NatsServer, natsConfigOf, startNatsServer } from "./harness/nats-server.ts";

const Q = [{ question: "Deploy now?", options: [{ label: "yes" }, { label: "no" }] }];
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(options: Parameters<typeof startNatsServer>[0] = {}): Promise<NatsServer> {
	const started = await startNatsServer(options);
	cleanups.push(() => started.cleanup());
	return started;
}

/** A host role with a programmatic UI serving the room of `env`; `opened` lists its dialogs, `next()` waits for one. */
async function host(env: NodeJS.ProcessEnv) {
	const handle: SharedHandle = createHandle();
	const opened: FakeDialog[] = [];
	const waiting: ((d: FakeDialog) => void)[] = [];
	const fake = fakeUI({
		respond: (d) => {
			opened.push(d);
			waiting.shift()?.(d);
		},
	});
	if (!claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host-session" })) throw new Error("claim refused");
	const registry = {};
	const started = await ensureProcessRoom(handle, natsConfigOf(env), registry);
	cleanups.push(() => closeProcessRoom(undefined, registry));
	const next = () => (opened.length > 0 && !opened.at(-1)!.closedBy ? Promise.resolve(opened.at(-1)!) : new Promise<FakeDialog>((r) => waiting.push(r)));
	return { handle, started, opened, next };
}

/** A raw NATS client, as a room member with publish and subscribe rights would use. */
async function rawClient(url: string) {
	const { connect } = await import("@nats-io/transport-node");
	const nc = await connect({ servers: url, name: "raw member" });
	cleanups.push(() => nc.close());
	return nc;
}

/** Asks over NATS as the tool does (its own connection). */
function ask(env: NodeJS.ProcessEnv): Promise<Envelope> {
	const config = natsConfigOf(env);
	return askOverNats({
		asker: { label: "victim", sessionId: "victim-session" },
		questions: Q,
		budgetMs: 30_000,
		dialogTimeoutMs: 30_000,
		connect: () => connectBroker(config, { name: "victim asker" }),
		config,
		machine: "build-7",
		pid: 4242,
	});
}

if (NATS_SERVER_MISSING) console.warn(`nats-attacks.test.ts: skipped: ${NATS_SERVER_MISSING}`);
describe.skipIf(NATS_SERVER_MISSING)("a NATS room under abuse by raw clients on a real nats-server", () => {
	it("10,000 requests under one session id from one client: at most 16 open, every other one an error result naming the limit", async () => {
		const nats = await server();
		const env = { CHECKPOINT_BRIDGE_NATS: nats.url, CHECKPOINT_BRIDGE_ROOM: "flood" };
		const { handle } = await host(env);
		const nc = await rawClient(nats.url);
		const inbox = `_INBOX.flood.${Date.now()}`;
		const results: NatsFrame[] = [];
		nc.subscribe(inbox, {
			callback: (_e, m) => {
				const checked = decodeNatsFrame(m.data);
				if (checked.ok && checked.frame.type === "result") results.push(checked.frame);
			},
		});
		const TOTAL = 10_000;
		let forwarded = 0;
		let maxOpen = 0;
		handle.bus.on("request", () => {
			forwarded++;
			queueMicrotask(() => (maxOpen = Math.max(maxOpen, handle.snapshot()!.open.length)));
		});
		// The flooder keeps the requests that get through alive, as a real asker would: the first ones sent are the ones held.
		const ping = setInterval(() => {
			for (let i = 0; i < MAX_OPEN_PER_ASKER; i++)
				nc.publish("cpb.flood.ping", encodeNatsFrame({ type: "ping", v: FRAME_VERSION.nats, id: `r${i}` }), { reply: inbox });
		}, 300);
		cleanups.push(() => clearInterval(ping));
		for (let i = 0; i < TOTAL; i++) {
			nc.publish("cpb.flood.request", encodeNatsFrame(requestFrame(`r${i}`, Q)), { reply: inbox });
			if (i % 500 === 0) await nc.flush();
		}
		await nc.flush();
		const started = Date.now();
		await until(() => results.length + forwarded >= TOTAL, "every request refused or forwarded", 60_000);
		console.log(
			`${TOTAL} requests: ${results.length} refused, ${forwarded} reached the host, at most ${maxOpen} open; ${Date.now() - started} ms after the last was sent`,
		);
		// A loaded machine may starve the pings, and a request dropped for silence makes room: a few more than the cap may reach the host over time, never at once.
		expect(maxOpen).toBeLessThanOrEqual(MAX_OPEN_PER_ASKER);
		expect(results.length).toBeGreaterThanOrEqual(TOTAL - 10 * MAX_OPEN_PER_ASKER);
		expect(results.every((f) => f.type === "result" && f.status === "error" && f.note?.includes(`MAX_OPEN_PER_ASKER = ${MAX_OPEN_PER_ASKER}`))).toBe(true);
		// A fresh inbox for every request does not get round it.
		const sniffed: NatsFrame[] = [];
		nc.subscribe("_INBOX.fresh.>", {
			callback: (_e, m) => {
				const checked = decodeNatsFrame(m.data);
				if (checked.ok && checked.frame.type === "result") sniffed.push(checked.frame);
			},
		});
		for (let i = 0; i < 100; i++) nc.publish("cpb.flood.request", encodeNatsFrame(requestFrame(`f${i}`, Q)), { reply: `_INBOX.fresh.${i}` });
		await nc.flush();
		await until(() => results.length + sniffed.length + forwarded >= TOTAL + 100, "the fresh inboxes' refusals");
		expect(maxOpen).toBeLessThanOrEqual(MAX_OPEN_PER_ASKER);
		expect(sniffed.length).toBeGreaterThanOrEqual(100 - MAX_OPEN_PER_ASKER);
	}, 90_000);

	it("a member that reads the room cannot cancel another asker's request (it lacks the secret): the dialog stays, the human's answer arrives", async () => {
		const nats = await server();
		const env = { CHECKPOINT_BRIDGE_NATS: nats.url, CHECKPOINT_BRIDGE_ROOM: "cancel" };
		const { next } = await host(env);
		const nc = await rawClient(nats.url);
		const seen: { inbox: string; frame: NatsRequestFrame }[] = [];
		for (const subject of ["cpb.cancel.request", "cpb.cancel.ping"])
			nc.subscribe(subject, {
				callback: (_e, m) => {
					const checked = decodeNatsFrame(m.data);
					if (checked.ok && checked.frame.type === "request") seen.push({ inbox: m.reply!, frame: checked.frame });
				},
			});
		await nc.flush();
		const asked = ask(env);
		const dialog = await next();
		await until(() => seen.length > 0, "the request read off the room");
		const { inbox, frame } = seen[0]!;
		// Under the victim's inbox and id: no secret, a guessed one, and the hash the request carried.
		for (const secret of [undefined, newCancelSecret().secret, frame.cancelHash])
			nc.publish(
				"cpb.cancel.cancel",
				new TextEncoder().encode(JSON.stringify({ type: "cancel", v: FRAME_VERSION.nats, id: frame.id, reason: "cancelled", ...(secret ? { secret } : {}) })),
				{ reply: inbox },
			);
		await nc.flush();
		await new Promise((r) => setTimeout(r, 300));
		expect(dialog.closedBy).toBeUndefined();
		dialog.answer("no");
		expect(await asked).toMatchObject({ status: "ok", answers: [{ answer: "no" }] });
	});

	it("a member that reads the room cannot answer before the human: sealed with its own key, unsealed, or the host's seal replayed, it is ignored", async () => {
		const nats = await server();
		const env = { CHECKPOINT_BRIDGE_NATS: nats.url, CHECKPOINT_BRIDGE_ROOM: "answer" };
		const { next } = await host(env);
		const nc = await rawClient(nats.url);
		const seen: { inbox: string; frame: NatsRequestFrame }[] = [];
		nc.subscribe("cpb.answer.request", {
			callback: (_e, m) => {
				const checked = decodeNatsFrame(m.data);
				if (checked.ok && checked.frame.type === "request") seen.push({ inbox: m.reply!, frame: checked.frame });
			},
		});
		// It reads the host's frames to askers too.
		const hostFrames: Record<string, unknown>[] = [];
		nc.subscribe("_INBOX.>", { callback: (_e, m) => void hostFrames.push(JSON.parse(new TextDecoder().decode(m.data))) });
		await nc.flush();
		const asked = ask(env);
		const dialog = await next();
		await until(() => seen.length > 0 && hostFrames.some((f) => f.hostKey), "the request and the host's first frame");
		const { inbox, frame } = seen[0]!;
		const forged = {
			type: "result",
			v: FRAME_VERSION.nats,
			id: frame.id,
			kind: "result",
			status: "ok",
			answers: [{ question: Q[0]!.question, answer: "yes", kind: "option" }],
		};
		const mine = newKeyPair();
		const { hostKey, mac } = hostFrames.find((f) => f.hostKey)!;
		for (const bytes of [
			encodeNatsFrame(forged as NatsFrame),
			encodeNatsFrame(seal(forged as NatsFrame, mine.publicKey, sharedKey(mine.privateKey, frame.key)!)),
			encodeNatsFrame({ ...forged, hostKey, mac } as NatsFrame),
			encodeNatsFrame({ type: "pong", v: FRAME_VERSION.nats, id: frame.id, held: false, host: "h", hostKey, mac } as NatsFrame),
		])
			nc.publish(inbox, bytes);
		await nc.flush();
		await new Promise((r) => setTimeout(r, 300));
		expect(dialog.closedBy).toBeUndefined();
		dialog.answer("no");
		expect(await asked).toMatchObject({ status: "ok", answers: [{ answer: "no" }] });
	});

	it("a host serving a room on a server that asks for no credentials is warned, once; on a server with a token it is not", async () => {
		const open = await server();
		const first = await host({ CHECKPOINT_BRIDGE_NATS: open.url });
		expect(first.started).toMatchObject({ kind: "serving", warning: expect.stringMatching(/asks for no credentials/) });
		const locked = await server({ token: "s3cret-token" });
		const second = await host({ CHECKPOINT_BRIDGE_NATS: locked.url, CHECKPOINT_BRIDGE_NATS_TOKEN: "s3cret-token" });
		expect(second.started.kind).toBe("serving");
		expect(second.started.kind === "serving" && second.started.warning).toBeFalsy();
	});

	it("the extension's host session on a server that asks for no credentials gets one warning notice saying so", async () => {
		const open = await server();
		vi.stubEnv("CHECKPOINT_BRIDGE_NATS", open.url);
		vi.stubEnv("CHECKPOINT_BRIDGE_ROOM", "warned");
		const sessions = playedSessions();
		cleanups.push(async () => {
			await sessions.shutdownAll();
			vi.unstubAllEnvs();
		});
		const ui = fakeUI();
		const session = sessions.play(await loadExtensionCopy(), { sessionId: "host-1", ui: ui.ui });
		await session.start();
		expect(ui.notices.filter((n) => n.type === "warning")).toEqual([
			expect.objectContaining({ message: expect.stringMatching(/^checkpoint-bridge: the NATS server at nats:\/\/127\.0\.0\.1:\d+ asks for no credentials/) }),
		]);
	});
});
