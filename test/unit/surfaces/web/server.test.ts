/**
 * The web page's server on a real loopback port against a relay with a fake host UI: the answer
 * path through the core's one check, each refusal of the security checks (a 4xx with a one-line
 * reason that changes nothing), request links, the live stream, and a close that leaves nothing.
 */
import http from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SECURITY_HEADERS } from "../../../../extensions/checkpoint-bridge/surfaces/web/http/guard.ts";
import { until } from "../../../support/until.ts";
import { linkPathOf, pagePath, type pageWithRelay, postAnswer, raw, readEvents, trackedPages } from "./support.ts";

const BATCH = [
	{ id: "db", question: "Which database?", options: ["Postgres", "SQLite"], allowOther: false },
	{ id: "targets", question: "Which targets?", options: ["linux", "mac"], multiSelect: true },
	{ id: "go", question: "Ship it?", kind: "confirm" as const },
];
const VALID = ["SQLite", ["mac"], "yes"];

const pages = trackedPages();
const setup = pages.setup;
afterEach(() => pages.closeAll());

/** The request is still open and its dialog untouched. */
function unchanged(s: Awaited<ReturnType<typeof pageWithRelay>>, requestId: string) {
	expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toContain(requestId);
	expect(s.settled).toEqual([]);
	expect(s.fake.dialogs[0]?.closedBy).toBeUndefined();
}

describe("web page: answering", () => {
	it("a valid answer from the page settles the call with source web and closes the host's dialog", async () => {
		const s = await setup();
		const { requestId, call } = await s.ask(BATCH, { label: "planner" });
		const response = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: VALID });
		expect(response.status).toBe(200);
		expect(JSON.parse(response.body)).toEqual({ ok: true });
		const envelope = await call;
		expect(envelope.status).toBe("ok");
		expect(envelope.answers.map((a) => [a.answer, a.source])).toEqual([
			["SQLite", "web"],
			["mac", "web"],
			["yes", "web"],
		]);
		expect(s.fake.dialogs[0]?.closedBy).toBe("signal");
		// A second submit comes too late and says how the request ended.
		const late = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: VALID });
		expect(late.status).toBe(409);
		expect(late.body).toBe("not applied: this request is already closed (answered on the page)\n");
	});

	it("an invalid answer is refused with the core's reason and changes nothing", async () => {
		const s = await setup();
		const { requestId } = await s.ask(BATCH);
		const bad = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: ["MySQL", ["mac"], "yes"] });
		expect(bad.status).toBe(422);
		expect(bad.body).toMatch(/^answers\[0\]: "MySQL" was not offered\n$/);
		const short = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: ["SQLite"] });
		expect(short.status).toBe(400);
		expect(short.body).toMatch(/expected 3 answers/);
		unchanged(s, requestId);
	});

	it("a child's own screen is answered in the terminal only: an answer from the page is refused and changes nothing", async () => {
		const s = await setup();
		const screen = { question: "question.ts shows its own screen in the terminal", kind: "confirm" as const, dialog: "custom" as const, id: "token-1" };
		const { requestId } = await s.ask([screen]);
		const refused = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: ["yes"] });
		expect([refused.status, refused.body]).toEqual([422, "answers[0]: answers a child's own screen, which is answered in the host's terminal only\n"]);
		unchanged(s, requestId);
	});

	it("the body cannot pick another source or cancel: only its answers are taken", async () => {
		const s = await setup();
		const { requestId, call } = await s.ask(BATCH);
		const cancel = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, cancel: true });
		expect(cancel.status).toBe(400);
		unchanged(s, requestId);
		expect((await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: VALID, source: "dialog" })).status).toBe(200);
		expect((await call).answers.every((a) => a.source === "web")).toBe(true);
	});

	it("answers already given at the host stand; the page's value for them is ignored", async () => {
		const s = await setup();
		const { requestId, call } = await s.ask(BATCH);
		s.fake.current()!.answer("Postgres");
		await new Promise((resolve) => setImmediate(resolve));
		const card = (await readEvents(s.page, `${pagePath(s.page)}events`, (e) => e.length > 0))[0]!.data.cards[0];
		// The page is told which question is on screen, and guesses nothing about the others.
		expect(card).toMatchObject({ requestId, state: "shown", question: 1 });
		expect(card.answered).toBeUndefined();
		expect((await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: VALID })).status).toBe(200);
		expect((await call).answers.map((a) => [a.answer, a.source])).toEqual([
			["Postgres", "dialog"],
			["mac", "web"],
			["yes", "web"],
		]);
	});
});

describe("web page: refusals (each a 4xx with a one-line reason, nothing changed)", () => {
	const oneLine = (body: string) => expect(body).toMatch(/^[^\n]+\n$/);

	it("a wrong or missing token", async () => {
		const s = await setup();
		const { requestId } = await s.ask(BATCH);
		const wrong = pagePath(s.page).replace(/\/t\/([^/]+)\//, (_, t: string) => `/t/${t.slice(0, -1)}${t.endsWith("A") ? "B" : "A"}/`);
		for (const path of [wrong, `${wrong}answer`, `${wrong}events`, "/t//", "/", "/answer", "/t/x/"]) {
			const response = path.endsWith("answer") ? await postAnswer(s.page, path, { requestId, answers: VALID }) : await raw(s.page, { path });
			expect([403, 404], path).toContain(response.status);
			oneLine(response.body);
		}
		unchanged(s, requestId);
	});

	it("a foreign Host header (DNS rebinding), or none", async () => {
		const s = await setup();
		const { requestId } = await s.ask(BATCH);
		for (const host of ["evil.example", `evil.example:${s.page.address.port}`, `127.0.0.1:${s.page.address.port + 1}`, "127.0.0.1"]) {
			const get = await raw(s.page, { path: pagePath(s.page), headers: { host } });
			expect(get.status, host).toBe(403);
			expect(get.body).toContain("does not name this server");
			const post = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: VALID }, { host });
			expect(post.status, host).toBe(403);
			oneLine(post.body);
		}
		const hostless = await raw(s.page, { path: pagePath(s.page), headers: { host: null } });
		expect(hostless.status).toBe(403);
		expect(hostless.body).toMatch(/^the Host header "" does not name this server/);
		// A request line that is not HTTP at all gets a one-line reason too.
		const garbage = await new Promise<string>((resolve) => {
			const socket = net.connect(s.page.address.port, "127.0.0.1", () => socket.end("BREW /coffee HTCPCP/1.0\r\n\r\n"));
			let text = "";
			socket.on("data", (d) => (text += d)).on("close", () => resolve(text));
		});
		expect(garbage).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\r\n\r\nthe request could not be parsed as HTTP\/1\.1\n$/);
		// localhost names a loopback server too.
		expect((await raw(s.page, { path: pagePath(s.page), headers: { host: `localhost:${s.page.address.port}` } })).status).toBe(200);
		unchanged(s, requestId);
	});

	it("a foreign Origin, a cross-site Sec-Fetch-Site, or neither (CSRF)", async () => {
		const s = await setup();
		const { requestId } = await s.ask(BATCH);
		const path = `${pagePath(s.page)}answer`;
		const cases: Record<string, string | null>[] = [
			{ origin: "http://evil.example" },
			{ origin: "null" },
			{ origin: `http://127.0.0.1:${s.page.address.port + 1}` },
			{ origin: null, "sec-fetch-site": "cross-site" },
			{ origin: null, "sec-fetch-site": "same-site" },
			{ origin: null },
		];
		for (const headers of cases) {
			const response = await postAnswer(s.page, path, { requestId, answers: VALID }, headers);
			expect(response.status, JSON.stringify(headers)).toBe(403);
			oneLine(response.body);
		}
		unchanged(s, requestId);
		// Without Origin, a same-origin Sec-Fetch-Site is the page itself.
		expect((await postAnswer(s.page, path, { requestId, answers: VALID }, { origin: null, "sec-fetch-site": "same-origin" })).status).toBe(200);
	});

	it("an oversized body, declared or streamed, and a body that is not JSON", async () => {
		const s = await setup({ maxBodyBytes: 1024 });
		const { requestId } = await s.ask(BATCH);
		const path = `${pagePath(s.page)}answer`;
		const big = JSON.stringify({ requestId, answers: ["SQLite", ["mac"], "yes"], pad: "x".repeat(2000) });
		const declared = await postAnswer(s.page, path, big);
		expect(declared.status).toBe(413);
		expect(declared.body).toBe("the body is larger than 1024 bytes\n");
		const streamed = await postAnswer(s.page, path, big, { "transfer-encoding": "chunked" });
		expect(streamed.status).toBe(413);
		for (const body of ["{", "", "null x", "\u0000"]) {
			const response = await postAnswer(s.page, path, body);
			expect(response.status, JSON.stringify(body)).toBe(400);
			expect(response.body).toBe("the body is not valid JSON\n");
		}
		for (const body of ["[]", "1", '"text"', "null"]) expect((await postAnswer(s.page, path, body)).status, body).toBe(400);
		const form = await postAnswer(s.page, path, "requestId=x", { "content-type": "application/x-www-form-urlencoded" });
		expect(form.status).toBe(415);
		unchanged(s, requestId);
	});

	it("the default cap is 64 KiB", async () => {
		const s = await setup({ maxBodyBytes: undefined });
		const { requestId } = await s.ask(BATCH);
		const response = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: VALID, pad: "x".repeat(64 * 1024) });
		expect(response.status).toBe(413);
		expect(response.body).toBe("the body is larger than 65536 bytes\n");
		unchanged(s, requestId);
	});

	it("an unknown request id, a wrong method, an unknown path", async () => {
		const s = await setup();
		const { requestId } = await s.ask(BATCH);
		const unknown = await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId: "no-such-request", answers: VALID });
		expect(unknown.status).toBe(404);
		expect(unknown.body).toMatch(/^no open request "no-such-request"/);
		expect((await postAnswer(s.page, `${pagePath(s.page)}answer`, { answers: VALID })).status).toBe(400);
		expect((await raw(s.page, { path: `${pagePath(s.page)}answer` })).status).toBe(405);
		expect((await raw(s.page, { method: "POST", path: pagePath(s.page), headers: { origin: s.page.origin } })).status).toBe(405);
		expect((await raw(s.page, { method: "DELETE", path: `${pagePath(s.page)}events` })).status).toBe(405);
		expect((await raw(s.page, { path: `${pagePath(s.page)}secrets.json` })).status).toBe(404);
		expect((await raw(s.page, { path: `${pagePath(s.page)}../../etc/passwd` })).status).toBe(404);
		unchanged(s, requestId);
	});

	it("every response carries the security headers; the page loads no inline script", async () => {
		const s = await setup();
		for (const path of ["", "app.js", "app.css"]) {
			const response = await raw(s.page, { path: `${pagePath(s.page)}${path}` });
			expect(response.status).toBe(200);
			for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(response.headers[name], `${path} ${name}`).toBe(value);
		}
		const refused = await raw(s.page, { path: "/nothing" });
		for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(refused.headers[name]).toBe(value);
		expect(SECURITY_HEADERS["content-security-policy"]).toContain("frame-ancestors 'none'");
		expect(SECURITY_HEADERS["content-security-policy"]).not.toContain("unsafe-inline");
		const html = (await raw(s.page, { path: pagePath(s.page) })).body;
		expect(html).toMatch(/<script src="app\.js" defer><\/script>/);
		// Every script element has a src: no inline script anywhere.
		expect([...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].every(([, attrs, body]) => /src=/.test(attrs!) && body!.trim() === "")).toBe(true);
		expect(html).not.toMatch(/https?:\/\//);
	});
});

describe("web page: a request's own link", () => {
	it("shows and answers its request only, needs no other credential, and is dead once the request settles", async () => {
		const s = await setup();
		const first = await s.ask([{ question: "First?", options: ["a", "b"] }], { label: "one" });
		const second = await s.ask([{ question: "Second?", options: ["c", "d"] }], { label: "two" });
		const link = linkPathOf(s.page, second.requestId);
		expect(link).toMatch(/^\/r\/[A-Za-z0-9_-]{43}\/$/);
		const state = (await readEvents(s.page, `${link}events`, (e) => e.length > 0))[0]!;
		expect(state.event).toBe("state");
		expect(state.data.scope).toBe("request");
		expect(state.data.cards.map((c: { requestId: string }) => c.requestId)).toEqual([second.requestId]);
		expect(state.data.cards[0].link).toBeUndefined();
		expect(state.data.traces).toEqual([]);
		// It cannot answer another request, even when it names it.
		const other = await postAnswer(s.page, `${link}answer`, { requestId: first.requestId, answers: ["a"] });
		expect(other.status).toBe(403);
		expect(s.handle.snapshot()!.open).toHaveLength(2);
		expect((await postAnswer(s.page, `${link}answer`, { answers: ["d"] })).status).toBe(200);
		expect((await second.call).answers).toMatchObject([{ answer: "d", source: "web" }]);
		// Dead: the page, its stream and its answer path.
		for (const path of [link, `${link}events`, `${link}app.js`]) {
			const response = await raw(s.page, { path });
			expect(response.status, path).toBe(410);
			expect(response.body).toBe("this request has settled: answered through the request's own link\n");
		}
		expect((await postAnswer(s.page, `${link}answer`, { answers: ["c"] })).status).toBe(410);
		expect((await raw(s.page, { path: `/r/${"A".repeat(43)}/` })).status).toBe(404);
		expect(s.page.linkFor(second.requestId)).toBeUndefined();
		expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([first.requestId]);
	});

	it("serves its QR code under its own link only (an SVG), never under the page token, and none once it settled", async () => {
		const s = await setup();
		const { requestId, call } = await s.ask([{ question: "Phone?", options: ["a", "b"] }], { label: "one" });
		const link = linkPathOf(s.page, requestId);
		const qr = await raw(s.page, { path: `${link}qr.svg` });
		expect(qr.status).toBe(200);
		expect(qr.headers["content-type"]).toBe("image/svg+xml");
		expect(qr.body).toMatch(/^<svg [^>]*viewBox/);
		expect((await raw(s.page, { path: `${pagePath(s.page)}qr.svg` })).status).toBe(404);
		expect((await raw(s.page, { method: "POST", path: `${link}qr.svg`, headers: { origin: s.page.origin } })).status).toBe(405);
		expect((await postAnswer(s.page, `${link}answer`, { answers: ["a"] })).status).toBe(200);
		await call;
		expect((await raw(s.page, { path: `${link}qr.svg` })).status).toBe(410);
	});

	it("its stream ends when the request settles at the host", async () => {
		const s = await setup();
		const { requestId } = await s.ask([{ question: "Only?", options: ["a", "b"] }]);
		const link = linkPathOf(s.page, requestId);
		const reading = readEvents(s.page, `${link}events`, () => false);
		await new Promise((resolve) => setTimeout(resolve, 50));
		s.fake.current()!.answer("a");
		const events = await reading;
		expect(events.map((e) => e.event)).toEqual(["state", "gone"]);
		expect(events[1]!.data).toMatchObject({ requestId, trace: { outcome: "answered in the terminal", asker: "child" } });
	});
});

describe("web page: live stream", () => {
	it("starts with the open requests, oldest first, then reports each new, changed and settled one", async () => {
		const s = await setup();
		const first = await s.ask([{ question: "One?" }, { question: "Two?" }], { label: "planner" });
		let received = "";
		const reading = readEvents(
			s.page,
			`${pagePath(s.page)}events`,
			(e) => e.filter((x) => x.event === "gone").length === 2,
			(chunk) => void (received += chunk),
		);
		// Each step once the page has streamed the one before, however slow the machine.
		const streamed = async (count: number, event: string) => {
			while (received.split(`event: ${event}\n`).length - 1 < count) await new Promise((resolve) => setTimeout(resolve, 5));
		};
		await streamed(1, "state");
		const second = await s.ask([{ question: "Three?", options: ["x", "y"] }], { label: "reviewer" });
		await streamed(1, "added");
		s.fake.current()!.answer("first answer");
		await streamed(1, "update");
		s.fake.current()!.answer("second answer");
		await first.call;
		expect((await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId: second.requestId, answers: ["y"] })).status).toBe(200);
		const events = await reading;
		expect(events.map((e) => [e.event, e.data.card?.requestId ?? e.data.requestId])).toEqual([
			["state", undefined],
			["added", second.requestId],
			["update", first.requestId],
			["gone", first.requestId],
			["update", second.requestId],
			["update", second.requestId],
			["gone", second.requestId],
		]);
		const [state, opened, nextQuestion, goneFirst, movedUp, shown, goneSecond] = events;
		expect(state!.data).toMatchObject({ scope: "page", host: true, traces: [] });
		expect(state!.data.cards).toMatchObject([{ requestId: first.requestId, asker: "planner", state: "shown", question: 0, position: 1 }]);
		expect(state!.data.cards[0].link).toMatch(/^\/r\/[A-Za-z0-9_-]{43}\/$/);
		// The asker's budget (300 s by default) counts from its call, a moment before the host took it.
		const { deadline, queuedAt } = state!.data.cards[0];
		expect(deadline - queuedAt).toBeGreaterThan(290_000);
		expect(deadline - queuedAt).toBeLessThanOrEqual(300_000);
		expect(opened!.data.card).toMatchObject({
			asker: "reviewer",
			state: "queued",
			position: 2,
			questions: [{ question: "Three?", options: [{ label: "x" }, { label: "y" }] }],
		});
		expect(nextQuestion!.data.card).toMatchObject({ state: "shown", question: 1 });
		expect(goneFirst!.data).toMatchObject({ trace: { outcome: "answered in the terminal", asker: "planner" } });
		expect(movedUp!.data.card).toMatchObject({ position: 1, state: "queued" });
		expect(shown!.data.card).toMatchObject({ position: 1, state: "shown" });
		expect(goneSecond!.data).toMatchObject({ trace: { outcome: "answered on the page", asker: "reviewer" } });
	});
});

describe("web page: keep-alive", () => {
	it("pings every stream, and re-reads the snapshot: a host going away, and a request no host adopted (it settles, once), reach the page", async () => {
		const s = await setup({ keepAliveMs: 50 });
		const { requestId } = await s.ask([{ question: "Parked?", options: ["a", "b"] }]);
		const chunks: string[] = [];
		const reading = readEvents(
			s.page,
			`${pagePath(s.page)}events`,
			(e) => e.some((x) => x.event === "gone"),
			(chunk) => chunks.push(chunk),
		);
		await new Promise((resolve) => setTimeout(resolve, 120));
		// Replaced, and nobody takes over within the grace period: the request settles host-gone, once (ADR-0025).
		s.role.release("reload", "replaced");
		await new Promise((resolve) => setTimeout(resolve, 1_200));
		const { fakeUI } = await import("../../support/fake-ui.ts");
		const { claimHostRole } = await import("../../../../extensions/checkpoint-bridge/core/host/host-role.ts");
		const { dialogSurface } = await import("../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts");
		const fake = fakeUI();
		const next = claimHostRole(s.handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "next" });
		const events = await reading;
		next?.release("quit", "test over");
		expect(chunks.join("")).toContain(": ping\n\n");
		expect(events.map((e) => [e.event, e.data.present ?? e.data.requestId])).toEqual([
			["state", undefined],
			["host", false],
			["gone", requestId],
		]);
		expect(events[2]!.data.trace).toMatchObject({ outcome: "closed: the host session ended" });
	});
});

describe("web page: life cycle", () => {
	const resources = () =>
		process
			.getActiveResourcesInfo()
			.filter((r) => r !== "TTYWrap" && r !== "FSReqCallback")
			.sort();

	it("close ends streams and connections, lets go of the bus and leaves no listener, timer or socket", async () => {
		// Sockets of earlier tests finish closing first.
		await new Promise((resolve) => setTimeout(resolve, 100));
		const baseline = resources();
		const s = await setup();
		const { bus } = s.handle;
		const listening = Object.fromEntries(["observe:queued", "observe:shown", "observe:settled", "answer"].map((e) => [e, bus.listenerCount(e as "answer")]));
		const { requestId } = await s.ask(BATCH);
		let streaming = false;
		const stream = readEvents(
			s.page,
			`${pagePath(s.page)}events`,
			() => false,
			() => void (streaming = true),
		);
		// A keep-alive connection held open by a client.
		const agent = new http.Agent({ keepAlive: true });
		await new Promise<void>((resolve) =>
			http.get({ host: "127.0.0.1", port: s.page.address.port, path: pagePath(s.page), agent }, (res) => res.resume().on("end", resolve)),
		);
		await until(() => streaming || undefined, "the stream to open");
		await s.page.close();
		expect((await stream).map((e) => e.event)).toEqual(["state"]);
		agent.destroy();
		for (const event of ["observe:queued", "observe:shown", "observe:settled"] as const) expect(bus.listenerCount(event)).toBe(listening[event]! - 1);
		expect(bus.listenerCount("answer")).toBe(listening.answer);
		// Nothing listens on the port any more.
		const refused = await new Promise<string>((resolve) =>
			http
				.get({ host: "127.0.0.1", port: s.page.address.port, path: "/" }, () => resolve("connected"))
				.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error")),
		);
		expect(refused).toBe("ECONNREFUSED");
		// The request itself is untouched by the page going away.
		unchanged(s, requestId);
		s.role.release("quit", "test over");
		await new Promise((resolve) => setTimeout(resolve, 20));
		expect(resources()).toEqual(baseline);
	});

	it("does not keep the process alive: a process serving the page, with a client connected, exits on its own", async () => {
		const script = [
			'import http from "node:http";',
			`import { startWebPage } from ${JSON.stringify(new URL("../../../../extensions/checkpoint-bridge/surfaces/web/server.ts", import.meta.url).pathname)};`,
			`import { createHandle } from ${JSON.stringify(new URL("../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts", import.meta.url).pathname)};`,
			'const page = await startWebPage({ handle: createHandle(), address: { host: "127.0.0.1", port: 0, loopback: true } });',
			// Held open only until the stream is up; after that only the page and its client remain.
			"const hold = setTimeout(() => {}, 60_000);",
			'const req = http.get(new URL("events", page.url), (res) => { res.resume(); console.log("streaming", res.statusCode); clearTimeout(hold); });',
			'req.on("socket", (s) => s.unref());',
		].join("\n");
		const { execFileSync } = await import("node:child_process");
		const out = execFileSync(process.execPath, ["--experimental-strip-types", "--no-warnings", "--input-type=module", "-e", script], {
			encoding: "utf8",
			timeout: 20_000,
		});
		expect(out).toContain("streaming 200");
	});
});
