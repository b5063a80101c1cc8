/**
 * ADR-0011's result convention, pinned where a test can: one spelling of error codes on the wire
 * and in frames, one shape of a check's outcome (the id length limits defined once: limits.test.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, FRAME_VERSION } from "../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { parseOutsideAnswer, resolveOutsideAnswer } from "../../../extensions/checkpoint-bridge/core/shared/outside-answers.ts";
import { END_REASONS, STATUSES } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { decodeFrame } from "../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { decodeNatsFrame } from "../../../extensions/checkpoint-bridge/transports/nats/frames.ts";

const ROOT = join(import.meta.dirname, "../../..");
const SRC = join(ROOT, "extensions/checkpoint-bridge");
const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** The observer contract's answer codes (docs/observers.md): fixed outside this package, snake case. */
const OBSERVER_CODES = ["not_found", "invalid_payload", "invalid_answer"];

function sources(dir: string): { path: string; text: string }[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const full = join(dir, entry.name);
		if (entry.isDirectory()) return sources(full);
		return entry.name.endsWith(".ts") ? [{ path: relative(SRC, full), text: readFileSync(full, "utf8") }] : [];
	});
}
const SOURCES = sources(SRC);

describe("one spelling of error codes (ADR-0011)", () => {
	it("every code of the local socket and of NATS frames, every status and every end reason is kebab-case", () => {
		for (const code of [...ERROR_CODES, ...STATUSES, ...END_REASONS]) expect(code).toMatch(KEBAB);
	});

	it("a refused frame, on the socket or on NATS, carries one of the wire's codes", () => {
		const frames = fc.oneof(
			fc.uint8Array({ maxLength: 64 }),
			fc.json().map((text) => new TextEncoder().encode(text)),
			fc
				.record(
					{
						type: fc.constantFrom("hello", "auth", "request", "cancel", "result", "error", "ping", "host", "x"),
						v: fc.oneof(fc.constant(FRAME_VERSION.endpoint), fc.integer()),
					},
					{ requiredKeys: [] },
				)
				.map((frame) => new TextEncoder().encode(JSON.stringify(frame))),
		);
		fc.assert(
			fc.property(frames, (bytes) => {
				for (const checked of [decodeFrame(bytes), decodeNatsFrame(bytes, 32)]) if (!checked.ok) expect(ERROR_CODES).toContain(checked.code);
			}),
		);
	});

	it("the observer contract's codes keep their snake case, are the ones docs/observers.md lists, and are the only snake-case strings in the source", () => {
		const documented = [...readFileSync(join(ROOT, "docs/observers.md"), "utf8").matchAll(/^\| `([a-z_]+)`/gm)].map((m) => m[1]);
		expect(documented).toEqual(OBSERVER_CODES);
		expect(parseOutsideAnswer({})).toMatchObject({ ok: false, reply: { code: "invalid_payload" } });
		expect(resolveOutsideAnswer([{ question: "Go?", kind: "confirm" }], ["maybe"])).toMatchObject({ ok: false, reply: { code: "invalid_answer" } });
		// pi's own names (events, the tools' names, pi-agent-ask's tool) are not codes of this package.
		const PI_NAMES = [
			"session_start",
			"session_shutdown",
			"tool_execution_start",
			"tool_execution_end",
			"tool_call",
			"ask_user",
			"ask_user_via_host",
			"wait_for_host_answers",
			"custom_message",
		];
		const snake = SOURCES.flatMap(({ path, text }) => [...text.matchAll(/"([a-z0-9]+_[a-z0-9_]+)"/g)].map((m) => `${path}: ${m[1]}`));
		expect(snake.filter((hit) => !OBSERVER_CODES.concat(PI_NAMES).includes(hit.split(": ")[1]!))).toEqual([]);
		// Where a contract code is spelled, the file says why it is snake case.
		for (const { path, text } of SOURCES.filter(({ text }) => OBSERVER_CODES.some((code) => text.includes(`"${code}"`))))
			expect(text, path).toMatch(/observers\.md/);
	});
});

describe("one shape of a check's outcome (ADR-0011)", () => {
	it("no function returns a value or a failure's text, and only the environment's reads of a transport or mail set-up are three-way", () => {
		const valueOrString = SOURCES.flatMap(({ path, text }) =>
			[...text.matchAll(/\): (?!string \| undefined)[^=\n]*\| string>? \{/g)].map((m) => `${path}: ${m[0]}`),
		);
		expect(valueOrString).toEqual([]);
		expect(SOURCES.filter(({ text }) => text.includes('kind: "error"')).map(({ path }) => path)).toEqual([
			"surfaces/mail/config.ts",
			"transports/nats/config.ts",
		]);
	});
});
