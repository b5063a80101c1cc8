/**
 * Requests a replaced host parks for the next one. What goes on the shared handle is the record
 * written down (any copy of the extension reads it); the record itself stays in this process, by
 * the very request object it was written down with, so that the next host of this process goes on
 * with it (queued again, the same record) instead of a copy.
 */
import { processSlot } from "../../shared/process-slot.ts";
import type { RelayRequest } from "../../shared/protocol.ts";
import { type ParkedRequest, type RequestRecord, storedRecord } from "../../shared/request-record.ts";

/** Registry key of the process's parked records, shared by every copy of the extension. */
const PARKED_KEY = Symbol.for("checkpoint-bridge.parked-records");

/** Weak: a record nobody adopts goes when its written-down request does. */
const parkedRecords = (): WeakMap<object, RequestRecord> => processSlot(globalThis, PARKED_KEY, () => new WeakMap<object, RequestRecord>());

/** Writes a handed-over record down for the next host, and keeps the record itself for a host of this process. */
export function park(record: RequestRecord): ParkedRequest {
	const stored = storedRecord(record);
	parkedRecords().set(stored.request, record);
	return stored;
}

/**
 * The parked record a request written down by `park` stands for, still parked, now queued again
 * with the request as the next host checked it (`checked`); undefined when there is none (another
 * process, or a copy that wrote it down only).
 */
export function adopt(request: RelayRequest, checked: RequestRecord): RequestRecord | undefined {
	const records = parkedRecords();
	const record = records.get(request);
	records.delete(request);
	if (record?.state.is !== "parked" || record.request.id !== checked.request.id) return undefined;
	record.request = checked.request;
	record.questions = checked.questions;
	record.state = { is: "queued" };
	return record;
}
