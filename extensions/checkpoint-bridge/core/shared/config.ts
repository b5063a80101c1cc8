/**
 * Budgets of a call and of each dialog, and where they come from.
 * Precedence: the call's `timeoutMs` parameter, then the environment, then the defaults below.
 * 0 is no limit (NO_LIMIT): a call without a budget waits until it is answered, dismissed or
 * aborted; a request's `deadline` of 0 says so to the host, its `dialogTimeoutMs` of 0 that a
 * dialog has no limit of its own.
 */

/** Budget of one `ask_user_via_host` call, queue wait included. @default 300_000 (5 min) */
export const DEFAULT_CALL_TIMEOUT_MS = 300_000;
/** Longest a single dialog stays open, never beyond what is left of the call's budget. @default 180_000 (3 min) */
export const DEFAULT_DIALOG_TIMEOUT_MS = 180_000;
/** Lower clamp for any budget: shorter would close dialogs before a human can read them. */
export const MIN_TIMEOUT_MS = 1_000;
/** Upper clamp for any budget: a workflow must not block for longer than an hour. */
export const MAX_TIMEOUT_MS = 3_600_000;

/** A budget, a deadline or a dialog time of 0: no limit. */
export const NO_LIMIT = 0;
/**
 * Timers, and pi closing its dialogs at their own timeout, may fire a millisecond early by the wall
 * clock: what closes this close to its end (a dialog's own time, the call's deadline) ran out of time.
 */
export const CLOCK_TOLERANCE_MS = 2;

/** Milliseconds left until `deadline` (epoch ms); Infinity for NO_LIMIT. */
export const msLeft = (deadline: number, now = Date.now()): number => (deadline === NO_LIMIT ? Number.POSITIVE_INFINITY : deadline - now);
/** A limit in ms as a length of time: Infinity for NO_LIMIT. */
export const asMs = (limit: number): number => (limit === NO_LIMIT ? Number.POSITIVE_INFINITY : limit);
/** The shorter of two limits, NO_LIMIT being the longest. */
export const shorterLimit = (a: number, b: number): number => (a === NO_LIMIT ? b : b === NO_LIMIT ? a : Math.min(a, b));

/** Environment variable that sets the default call budget in milliseconds. */
const ENV_CALL_TIMEOUT = "CHECKPOINT_BRIDGE_TIMEOUT_MS";
/** Environment variable that sets the default per-dialog budget in milliseconds. */
const ENV_DIALOG_TIMEOUT = "CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS";

export interface BridgeConfig {
	/** Default budget of a call when the call sets none; NO_LIMIT for none. @default DEFAULT_CALL_TIMEOUT_MS */
	callTimeoutMs: number;
	/** Budget of each dialog; NO_LIMIT for none. @default DEFAULT_DIALOG_TIMEOUT_MS */
	dialogTimeoutMs: number;
	/** What was wrong with the environment, if anything: ignored values fall back to the defaults. */
	warnings: string[];
}

/** Clamps a budget to [MIN_TIMEOUT_MS, MAX_TIMEOUT_MS]; NO_LIMIT stays as it is. */
function clampTimeout(ms: number): number {
	if (ms === NO_LIMIT) return NO_LIMIT;
	return Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, Math.round(ms)));
}

function fromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, warnings: string[]): number {
	const raw = env[name];
	if (raw === undefined || raw.trim() === "") return fallback;
	const value = Number(raw);
	if (!Number.isFinite(value) || value < 0) {
		warnings.push(`${name}=${JSON.stringify(raw)} is not a number of milliseconds (0: no limit); using ${fallback}.`);
		return fallback;
	}
	return clampTimeout(value);
}

/** Reads the budgets from the environment; read per call so a changed variable takes effect at once. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): BridgeConfig {
	const warnings: string[] = [];
	return {
		callTimeoutMs: fromEnv(env, ENV_CALL_TIMEOUT, DEFAULT_CALL_TIMEOUT_MS, warnings),
		dialogTimeoutMs: fromEnv(env, ENV_DIALOG_TIMEOUT, DEFAULT_DIALOG_TIMEOUT_MS, warnings),
		warnings,
	};
}

/** The budget of one call: its own `timeoutMs` (clamped; 0 is no budget) when given, else the configured default. */
export function callBudget(requested: number | undefined, config: BridgeConfig): number {
	return requested === undefined ? config.callTimeoutMs : clampTimeout(requested);
}

/** Environment variable: how long an asker in another process whose host went away waits for the next one, in ms (local endpoint and NATS). */
const ENV_HOST_GRACE = "CHECKPOINT_BRIDGE_HOST_GRACE_MS";
/** Default of the host grace: a restarted host (pi started again in the same directory) has a minute. @default 60_000 */
const DEFAULT_HOST_GRACE_MS = 60_000;

/**
 * The host grace from the environment: 0 is none (`no-host` at once), a bad value is the default
 * with a warning, a longer one is clamped to MAX_TIMEOUT_MS. Read per call.
 */
export function readHostGrace(env: NodeJS.ProcessEnv = process.env): { graceMs: number; warning?: string } {
	const raw = env[ENV_HOST_GRACE]?.trim();
	if (!raw) return { graceMs: DEFAULT_HOST_GRACE_MS };
	const value = Number(raw);
	if (!Number.isFinite(value) || value < 0)
		return {
			graceMs: DEFAULT_HOST_GRACE_MS,
			warning: `${ENV_HOST_GRACE}=${JSON.stringify(raw)} is not a number of milliseconds ≥ 0; using ${DEFAULT_HOST_GRACE_MS}.`,
		};
	return { graceMs: Math.min(Math.round(value), MAX_TIMEOUT_MS) };
}

/** A grace cut short by the call's budget ends this long before it, so the call says `no-host` rather than `timeout`. @default 25 */
const GRACE_BEFORE_DEADLINE_MS = 25;

/** When a grace that starts now must end: `graceMs` from now, never past the call's `deadline` (epoch ms, NO_LIMIT for none). */
export const graceEnd = (graceMs: number, deadline: number, now = Date.now()): number =>
	deadline === NO_LIMIT ? now + graceMs : Math.min(now + graceMs, deadline - GRACE_BEFORE_DEADLINE_MS);
