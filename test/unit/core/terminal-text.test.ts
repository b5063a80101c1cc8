/**
 * Asker text never reaches the host's terminal unneutralised (issue 13, finding 5): escape
 * sequences and bidi overrides in any field an asker writes stay out of every select and input,
 * notice, status line, audit record and observer event; over-long session ids and labels are
 * refused or cut.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole, type SettledRecord } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { MAX_SHOWN_LABEL_LENGTH } from "../../../extensions/checkpoint-bridge/core/shared/identity.ts";
import { OBSERVER_EVENTS } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { PROTOCOL_VERSION, type RelayRequest, type RelayResult, replyChannel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { LIMITS, MAX_SESSION_ID_LENGTH } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { UNSAFE_CHARACTER } from "../../../extensions/checkpoint-bridge/model/sanitise.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { hostileText } from "../support/hostile-text.ts";
import { type Dialog, PropertyUI } from "../support/property-ui.ts";

const CLEAR_LINE = "\x1b[2K\x1b[1G";
const RED = "\x1b[31m";
const OSC_TITLE = "\x1b]0;pwned\x07";
const RLO = "\u202e";

/** Every string inside `value`, however deep. */
function stringsIn(value: unknown, out: string[] = []): string[] {
	if (typeof value === "string") out.push(value);
	else if (Array.isArray(value)) for (const item of value) stringsIn(item, out);
	else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) stringsIn(item, out);
	return out;
}

/** A host whose every way to the human and to the record is captured: dialogs, notices, status, audit, observers. */
function capturingHost(answer: (dialog: Dialog) => string | undefined) {
	const handle = createHandle();
	const ui = new PropertyUI({ respond: (dialog, self) => queueMicrotask(() => self.answer(dialog, answer(dialog))) });
	const statuses: string[] = [];
	const setStatus = ui.setStatus.bind(ui);
	ui.setStatus = (key, text) => {
		if (text !== undefined) statuses.push(text);
		setStatus(key, text);
	};
	const audit: SettledRecord[] = [];
	const observed: unknown[] = [];
	for (const event of Object.values(OBSERVER_EVENTS)) handle.bus.on(event, (e: unknown) => void observed.push(e));
	const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session", onSettled: (r) => audit.push(r) });
	if (!role) throw new Error("a fresh handle must accept the claim");
	/** Every string that reached the human or the record, by where it went. */
	const reached = () => ({
		select: ui.dialogs.filter((d) => d.kind === "select").flatMap((d) => [d.title, ...(d.options ?? [])]),
		input: ui.dialogs.filter((d) => d.kind === "input").flatMap((d) => [d.title, d.placeholder ?? ""]),
		notify: ui.notices.map((n) => n.message),
		setStatus: statuses,
		audit: stringsIn(audit),
		observers: stringsIn(observed),
		snapshot: stringsIn(handle.snapshot()),
	});
	/** Puts a request on the bus as any transport would, unchecked by an asker, and resolves with its result. */
	const emitRaw = (request: Omit<RelayRequest, "v" | "deadline" | "dialogTimeoutMs" | "createdAt">) =>
		new Promise<RelayResult>((resolve) => {
			handle.bus.on(replyChannel(request.id), (reply) => {
				if (reply.kind === "result") resolve(reply);
			});
			handle.bus.emit("request", { v: PROTOCOL_VERSION, deadline: Date.now() + 60_000, dialogTimeoutMs: 60_000, createdAt: Date.now(), ...request });
		});
	return { handle, ui, audit, reached, emitRaw };
}

/** No character a terminal interprets anywhere; with `whole`, not even the rest of a sequence ("[2K", "0;pwned"). */
const expectClean = (reached: Record<string, string[]>, whole = false) => {
	for (const [where, texts] of Object.entries(reached))
		for (const text of texts) {
			expect(text, `${where}: ${JSON.stringify(text)}`).not.toMatch(UNSAFE_CHARACTER);
			if (whole) expect(text, `${where}: ${JSON.stringify(text)}`).not.toMatch(/\[2K|\[31m|pwned/);
		}
};

/** Every field an asker writes, poisoned. */
const poisoned: QuestionInput[] = [
	{
		id: `db${CLEAR_LINE}`,
		header: `${RED}Storage`,
		question: `${CLEAR_LINE}Which database?${RLO}`,
		details: `Both work.${OSC_TITLE}\r\nSecond line${RED}`,
		options: [{ label: `Postgres${RED}`, description: `relational${CLEAR_LINE}` }, `SQLite${RLO}`],
		recommended: `Postgres${RED}`,
	},
	{ id: `name${RLO}`, question: `Project name?${OSC_TITLE}`, placeholder: `e.g. ${CLEAR_LINE}atlas` },
	{ question: `Deploy${RED} now?`, kind: "confirm" },
];

describe("escape sequences and bidi overrides in every field an asker writes", () => {
	it("reach no select, input, notice, status line, audit record or observer; the asker still accepts the answers", async () => {
		const { handle, ui, reached } = capturingHost((d) => (d.kind === "input" ? "atlas" : d.options![0]));
		const envelope = await askViaHost({
			handle,
			asker: { label: `${CLEAR_LINE}[main] Approve?${RLO}`, sessionId: `child${RED}-session` },
			questions: poisoned,
			budgetMs: 60_000,
			dialogTimeoutMs: 60_000,
		});
		// Both sides neutralised the option labels alike, so the asker's answer check matches the host's labels.
		expect(envelope.status).toBe("ok");
		expect(envelope.answers.map((a) => [a.id, a.question, a.answer])).toEqual([
			["db", "Which database?", "Postgres"],
			["name", "Project name?", "atlas"],
			[undefined, "Deploy now?", "yes"],
		]);
		expect(ui.dialogs.map((d) => d.title)).toEqual([
			"[[main] Approve?] (1/3) Storage: Which database?\nBoth work.\nSecond line",
			"[[main] Approve?] (2/3) Project name?",
			"[[main] Approve?] (3/3) Deploy now?",
		]);
		expect(ui.dialogs[0]!.options).toEqual(["Postgres (recommended) — relational", "SQLite", "Other (type your own)"]);
		expect(ui.dialogs[1]!.placeholder).toBe("e.g. atlas");
		expectClean(reached(), true);
	});

	it("reach none of them either when the request comes straight onto the bus, as a transport delivers it", async () => {
		const { audit, reached, emitRaw, ui } = capturingHost((d) => (d.kind === "input" ? "atlas" : d.options![0]));
		const reply = await emitRaw({ id: "raw-1", asker: { label: `evil${CLEAR_LINE}${OSC_TITLE}`, sessionId: `s${RLO}id` }, questions: poisoned });
		expect(reply).toMatchObject({ kind: "result", status: "ok" });
		expect(reply.answers.map((a) => a.answer)).toEqual(["Postgres", "atlas", "yes"]);
		expect(audit[0]).toMatchObject({ asker: "evil", askerSessionId: "sid", questions: ["Which database?", "Project name?", "Deploy now?"] });
		expect(ui.notices[0]?.message).toBe("checkpoint-bridge: [evil] asks 3 questions");
		expectClean(reached(), true);
	});

	it("refuses a request id carrying control characters, before anything is shown or recorded", async () => {
		const { reached, emitRaw, ui } = capturingHost(() => "x");
		const reply = await emitRaw({ id: `r${CLEAR_LINE}`, asker: { label: "a", sessionId: "s" }, questions: [{ question: "Q?" }] });
		expect(reply).toMatchObject({ status: "error", note: expect.stringContaining("control or bidi characters") });
		expect(ui.dialogs).toEqual([]);
		expect(Object.values(reached()).flat()).toEqual([]);
	});
});

describe("over-long asker identities", () => {
	it("refuses a 900,009-character session id with an error naming the cap; nothing is shown or recorded", async () => {
		const { handle, ui, audit } = capturingHost(() => "x");
		const envelope = await askViaHost({
			handle,
			asker: { label: "a", sessionId: "s".repeat(900_009) },
			questions: [{ question: "Q?" }],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		expect(envelope.status).toBe("error");
		expect(envelope.note).toContain(`session id is 900009 characters, at most ${MAX_SESSION_ID_LENGTH}`);
		expect(ui.dialogs).toEqual([]);
		expect(audit).toEqual([]);
	});

	it(`cuts a 900,009-character label to ${MAX_SHOWN_LABEL_LENGTH} in titles, notices, the audit trail and observer events`, async () => {
		const { handle, ui, audit, reached } = capturingHost(() => "x");
		const envelope = await askViaHost({
			handle,
			asker: { label: "L".repeat(900_009), sessionId: "s" },
			questions: [{ question: "Q?" }],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		expect(envelope.status).toBe("ok");
		const shown = `${"L".repeat(MAX_SHOWN_LABEL_LENGTH - 1)}…`;
		expect(ui.dialogs[0]!.title).toBe(`[${shown}] Q?`);
		expect(audit[0]!.asker).toBe(shown);
		for (const text of Object.values(reached()).flat()) expect(text.length).toBeLessThan(MAX_SHOWN_LABEL_LENGTH + 100);
	});
});

describe("random text in every field (property)", () => {
	it("never puts a control, escape or bidi character in front of the human or into the record", async () => {
		// Cut to the field's limit (less the one-letter prefix below), so most requests are valid and shown.
		const field = (max: number) => hostileText(60).map((t) => t.slice(0, max - 1));
		const statuses: string[] = [];
		await fc.assert(
			fc.asyncProperty(
				fc.record({
					label: hostileText(),
					sessionId: hostileText(),
					id: field(LIMITS.id),
					header: field(LIMITS.header),
					question: field(LIMITS.question),
					details: field(LIMITS.details),
					a: field(LIMITS.label),
					b: field(LIMITS.label),
					description: field(LIMITS.description),
					placeholder: field(LIMITS.placeholder),
					text: field(LIMITS.question),
				}),
				fc.boolean(),
				async (f, viaAsker) => {
					const { handle, reached, emitRaw } = capturingHost((d) => (d.kind === "input" ? "typed" : d.options![0]));
					const questions: QuestionInput[] = [
						{
							id: `i${f.id}`,
							header: `h${f.header}`,
							question: `q${f.question}`,
							details: `d${f.details}`,
							options: [{ label: `a${f.a}`, description: `x${f.description}` }, `b${f.b}`],
						},
						{ question: `t${f.text}`, placeholder: `p${f.placeholder}` },
					];
					const asker = { label: f.label, sessionId: `s${f.sessionId}` };
					const status = viaAsker
						? (await askViaHost({ handle, asker, questions, budgetMs: 60_000, dialogTimeoutMs: 60_000 })).status
						: (await emitRaw({ id: "raw", asker, questions })).status;
					// Escapes may empty a text or make two labels equal, which is refused; what is shown is clean either way.
					expect(["ok", "error"]).toContain(status);
					statuses.push(status);
					expectClean(reached());
				},
			),
			{ numRuns: 300 },
		);
		// The property is about what is shown: most runs must have shown something.
		expect(statuses.filter((s) => s === "ok").length).toBeGreaterThan(statuses.length / 2);
	});
});
