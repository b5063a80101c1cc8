/** What is read of an entry of a pi session: its type and, for a custom one, its custom type and data. */
export interface EntryLike {
	type: string;
	customType?: string;
	data?: unknown;
	/** A custom message's details (pi's `custom_message` entry). */
	details?: unknown;
}
