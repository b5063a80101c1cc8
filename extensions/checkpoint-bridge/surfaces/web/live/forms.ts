/**
 * The page's answers to forms open elsewhere (another extension's questionnaire in the host's
 * terminal, core/answering/elsewhere.ts): `POST /t/<page token>/form` with `{ formId, answers }`, under the
 * page token only. Checks run in this order: Origin, body, then the registry's (the one answer
 * check, then the tool's verdict). Each refusal is a 4xx with its reason.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FormRefusalCode, FormsElsewhere } from "../../../core/answering/elsewhere.ts";
import { readPostedObject, refuse, SECURITY_HEADERS } from "../http/guard.ts";

/** What the route needs. */
export interface FormRouteContext {
	forms: Pick<FormsElsewhere, "submit">;
	origins: ReadonlySet<string>;
	maxBodyBytes: number;
}

/** Status of each refusal (the answer check's codes in the observer contract's snake case, docs/observers.md). */
const STATUS: Record<FormRefusalCode, number> = {
	invalid_payload: 400,
	not_found: 404,
	"read-only": 409,
	invalid_answer: 422,
	refused: 409,
	"no-verdict": 409,
};

/** Handles one answer to a form; never throws into the server. */
export async function answerForm(ctx: FormRouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
	const value = await readPostedObject(req, res, ctx.origins, ctx.maxBodyBytes, "{ formId, answers }");
	if (!value) return;
	const { formId, answers } = value;
	if (typeof formId !== "string" || formId === "") return refuse(res, { status: 400, reason: "formId must be a non-empty string" });
	const reply = await ctx.forms.submit(formId, answers);
	if (!reply.ok) return refuse(res, { status: STATUS[reply.code], reason: reply.reason });
	const text = JSON.stringify({ ok: true });
	res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(text)) });
	res.end(text);
}
